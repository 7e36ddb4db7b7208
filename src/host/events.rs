//! What the host reports as it works, for the desk to show. Plain data only.

use super::api::{Outcome, ServerSummary};
use super::desk_state::TicketState;
use super::summary::Summary;

#[derive(Debug)]
pub enum HostEvent {
    /// The servers as connected at start (or left out, with why).
    Servers(Vec<ServerSummary>),
    Started {
        ticket: String,
    },
    Turn {
        ticket: String,
        turn: u32,
        step: Step,
    },
    Done {
        ticket: String,
        model_calls: u32,
        stopped_at_turn_limit: bool,
        error: Option<String>,
    },
    /// Every server's prompts, for the person's picker.
    Prompts(Vec<PromptInfo>),
    /// Every server's resources, for the person's picker.
    Resources(Vec<ResourceInfo>),
    /// Each ticket's state as the desk kept it, at start and after a change by a person.
    States(Vec<TicketState>),
    /// A resource was added to one ticket's context.
    Attached {
        ticket: String,
        server: String,
        uri: String,
        bytes: usize,
    },
    /// A queue run finished.
    QueueFinished(Summary),
    /// A command could not be carried out.
    Problem(String),
    /// The host task has ended.
    Stopped,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    ModelAsked {
        tool_list_chars: usize,
        context_chars: usize,
    },
    ModelSaid {
        words: String,
    },
    Call {
        tool: String,
        arguments: Vec<(String, String)>,
    },
    Consent {
        tool: String,
        approved: bool,
        by: String,
    },
    Input {
        server: String,
        message: String,
        action: String,
    },
    Outcome {
        tool: String,
        outcome: Outcome,
        text: String,
        truncated: bool,
    },
    Draft {
        text: String,
        findings: Vec<String>,
    },
}

/// A server's prompt, offered to people.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptInfo {
    /// `prefix.prompt`.
    pub name: String,
    pub description: String,
    /// Name, description, required.
    pub arguments: Vec<(String, String, bool)>,
}

/// A server's resource, offered to people.
#[derive(Debug, Clone, PartialEq)]
pub struct ResourceInfo {
    pub server: String,
    pub uri: String,
    pub title: String,
    pub description: String,
    pub size: Option<u64>,
    pub priority: Option<f32>,
}
