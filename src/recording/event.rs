//! What a recording holds.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::host::api::{Outcome, PersonPrompt};
use crate::host::checks::Finding;
use crate::model::chat::Reply;

/// The recording format's version, in every manifest.
pub const FORMAT: u32 = 1;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    Manifest(Box<Manifest>),
    TicketStarted {
        ticket: String,
        tools: Vec<String>,
        attached: Vec<String>,
        /// The request a person added to the ticket by running a server prompt, as the
        /// model read it after the ticket.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        request: Option<String>,
    },
    ModelCall {
        ticket: String,
        turn: u32,
        messages_hash: String,
        reply: Reply,
        seconds: f64,
        /// Size of what the model was sent: the tool list and the attached context, in characters.
        tool_list_chars: usize,
        context_chars: usize,
    },
    ToolCall {
        ticket: String,
        turn: u32,
        tool: String,
        arguments: Map<String, Value>,
    },
    Consent {
        ticket: String,
        turn: u32,
        tool: String,
        reason: String,
        unseen: Vec<String>,
        approved: bool,
        by: String,
        /// What the person was shown about the tool itself: the diff of a changed definition,
        /// or the spans of a description that addresses the model. Turn 0: a tool put to a
        /// person before the ticket's first model call, so the model may see it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        shown: Option<String>,
    },
    InputRequest {
        ticket: String,
        turn: u32,
        server: String,
        message: String,
        action: String,
        content: Option<String>,
    },
    Outcome {
        ticket: String,
        turn: u32,
        tool: String,
        outcome: Outcome,
        text: String,
        truncated: bool,
    },
    Draft {
        ticket: String,
        /// The reply with handles stripped, as staff would send it.
        text: String,
        findings: Vec<Finding>,
    },
    TicketDone {
        ticket: String,
        model_calls: u32,
        stopped_at_turn_limit: bool,
        /// Why the ticket could not finish (a replay that found no answer, a model error).
        error: Option<String>,
    },
    /// A person rewrote the draft; `findings` are the host's check of the new text against
    /// the ticket's call log.
    DraftEdited {
        ticket: String,
        by: String,
        text: String,
        findings: Vec<Finding>,
    },
    /// A reply left the desk (into the outbox): the text as sent.
    Sent {
        ticket: String,
        by: String,
        text: String,
        /// Why it was sent with check findings open; `None` when none were.
        override_reason: Option<String>,
    },
    /// A person handed the ticket over, with a note for whoever takes it.
    HandedOver {
        ticket: String,
        by: String,
        to: String,
        note: String,
    },
    /// A person added one of a server's resources to the ticket's context.
    Attached {
        ticket: String,
        by: String,
        server: String,
        uri: String,
        bytes: usize,
    },
    /// A person's internal note: never sent, never shown to the model.
    Noted {
        ticket: String,
        by: String,
        text: String,
    },
    /// The desk put the ticket in front of a person without a run to finish it: a run cut
    /// off by a crash, or a state carried over from an older desk file.
    NeedsPerson {
        ticket: String,
        reason: String,
    },
    /// A server's form that the config gives to a lead (`lead_forms`) went to the team's
    /// leads instead of this run's person, as `approval`; the run stops here until a lead
    /// answers it.
    ApprovalAsked {
        ticket: String,
        turn: u32,
        approval: i64,
        /// The config's prefix for the server that asked, and the tool (canonical name).
        server: String,
        tool: String,
        message: String,
    },
    /// A lead answered `approval`: their desk sent the call's next round as them, and the
    /// server's answer is the call's outcome, which the ticket's run continues from.
    ApprovalAnswered {
        ticket: String,
        turn: u32,
        approval: i64,
        by: String,
        tool: String,
        /// `accept`, `decline` or `cancel`.
        action: String,
        /// The accepted values as JSON text, when accepted.
        content: Option<String>,
        outcome: Outcome,
        text: String,
        truncated: bool,
    },
    /// The person who asked for `approval` took it back.
    ApprovalWithdrawn {
        ticket: String,
        approval: i64,
        by: String,
        reason: String,
    },
    /// A run stopped for `approval` goes on from the lead's answer: the model reads the
    /// call's outcome next.
    RunContinued {
        ticket: String,
        approval: i64,
    },
}

impl Event {
    /// A ticket's run that ended after one model call, without an error: for tests.
    #[cfg(test)]
    pub(crate) fn done_for_test(ticket: &str) -> Self {
        Event::TicketDone {
            ticket: ticket.to_owned(),
            model_calls: 1,
            stopped_at_turn_limit: false,
            error: None,
        }
    }

    /// The event's name as written in its `event` field.
    pub fn kind(&self) -> &'static str {
        match self {
            Event::Manifest(_) => "manifest",
            Event::TicketStarted { .. } => "ticket_started",
            Event::ModelCall { .. } => "model_call",
            Event::ToolCall { .. } => "tool_call",
            Event::Consent { .. } => "consent",
            Event::InputRequest { .. } => "input_request",
            Event::Outcome { .. } => "outcome",
            Event::Draft { .. } => "draft",
            Event::TicketDone { .. } => "ticket_done",
            Event::DraftEdited { .. } => "draft_edited",
            Event::Sent { .. } => "sent",
            Event::HandedOver { .. } => "handed_over",
            Event::Attached { .. } => "attached",
            Event::Noted { .. } => "noted",
            Event::NeedsPerson { .. } => "needs_person",
            Event::ApprovalAsked { .. } => "approval_asked",
            Event::ApprovalAnswered { .. } => "approval_answered",
            Event::ApprovalWithdrawn { .. } => "approval_withdrawn",
            Event::RunContinued { .. } => "run_continued",
        }
    }

    pub fn ticket(&self) -> Option<&str> {
        match self {
            Event::Manifest(_) => None,
            Event::TicketStarted { ticket, .. }
            | Event::ModelCall { ticket, .. }
            | Event::ToolCall { ticket, .. }
            | Event::Consent { ticket, .. }
            | Event::InputRequest { ticket, .. }
            | Event::Outcome { ticket, .. }
            | Event::Draft { ticket, .. }
            | Event::TicketDone { ticket, .. }
            | Event::DraftEdited { ticket, .. }
            | Event::Sent { ticket, .. }
            | Event::HandedOver { ticket, .. }
            | Event::Attached { ticket, .. }
            | Event::Noted { ticket, .. }
            | Event::NeedsPerson { ticket, .. }
            | Event::ApprovalAsked { ticket, .. }
            | Event::ApprovalAnswered { ticket, .. }
            | Event::ApprovalWithdrawn { ticket, .. }
            | Event::RunContinued { ticket, .. } => Some(ticket),
        }
    }
}

/// What produced a recording.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    pub format: u32,
    pub created_by: String,
    pub model: ModelManifest,
    /// sha256 of the system prompt's fixed text (without the ticket).
    pub prompt_hash: String,
    pub host: HostSettings,
    pub servers: Vec<ServerManifest>,
    /// Anything else worth keeping (commands used, the machine, notes).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub notes: BTreeMap<String, String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelManifest {
    pub source: String,
    pub name: String,
    pub recipe: String,
    pub temperature: Option<f32>,
    /// The cap on each reply's length, in tokens, when one was set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    pub seed: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runtime: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HostSettings {
    pub model_calls_per_ticket: u32,
    pub request_timeout_secs: u64,
    pub input_rounds: u32,
    pub attach_priority: f32,
    pub allow: Vec<String>,
    pub consent: String,
    pub lead: String,
    pub concurrency: usize,
    /// The server prompt the scripted person ran for every ticket of this batch, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub person_prompt: Option<PersonPrompt>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServerManifest {
    pub prefix: String,
    pub origin: String,
    pub name: Option<String>,
    pub revision: String,
    /// sha256 of each tool's pinned definition.
    pub tools: BTreeMap<String, String>,
}
