//! What the host reports as it works, for the desk to show. Plain data only.

use super::api::{Outcome, ServerSummary};
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
