//! The desk's terminal UI. It holds no protocol code: it reads `HostEvent`s, answers
//! questions, and sends `Command`s, all through the host's channels.

pub mod app;
pub mod command_line;
pub mod keymap;
pub mod modals;
pub mod panes;
pub mod questions;
pub mod queue;
pub mod render;
pub mod report;
pub mod review;
pub mod sanitize;
pub mod search;
pub mod terminal;
pub mod text;
pub mod theme;
pub mod transcript;
pub mod transcript_cache;

/// What a modal says after a key press. A modal answers its own question and says so; it
/// holds no channel sender.
#[derive(Debug, Clone, PartialEq)]
pub enum ModalOutcome<A> {
    /// Still open.
    Pending,
    /// Closed with this answer.
    Answered(A),
}
