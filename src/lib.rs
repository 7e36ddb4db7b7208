//! Support Desk: a terminal support desk that is an MCP host, and the shop it ships with.
//!
//! The host side (clients, consent, the ticket loop) and the UI meet only through channels;
//! the shop and its delivery partner are ordinary MCP servers that the desk reaches the same
//! way it would reach anyone else's.

pub mod auth;
pub mod cli;
pub mod clock;
pub mod commands;
pub mod config;
pub mod conformance;
pub mod evaluation;
pub mod host;
pub mod logging;
pub mod mail;
pub mod mailroom;
pub mod model;
pub mod money;
pub mod partner;
pub mod record;
pub mod recording;
pub mod replies;
pub mod report;
pub mod serve;
pub mod shop;
pub mod sla;
pub mod startup;
pub mod text;
pub mod tickets;
pub mod tls;
pub mod ui;
pub mod views;
pub mod wire;

/// The allocator the project's programs run on, for [`global_allocator!`].
#[doc(hidden)]
pub use mimalloc::MiMalloc;

/// Makes mimalloc the global allocator of the program it is written in: the desk's binaries
/// and the benchmarks each say `support_desk::global_allocator!();`. The library chooses no
/// allocator for whoever links it (the tests run on the system's).
///
/// A tool call allocates and frees a few dozen small blocks on each side of the pipe (parsed
/// messages, a task per request, the answer's text), and Tokio asks for its tasks aligned.
/// glibc's allocator spent about an eighth of the shop server's instructions per call there
/// and nearly a fifth of the desk's client's; mimalloc does the same work in fewer.
#[macro_export]
macro_rules! global_allocator {
    () => {
        #[global_allocator]
        static ALLOCATOR: $crate::MiMalloc = $crate::MiMalloc;
    };
}
