//! The record's vocabulary: every event a desk appends (a run's calls and outcomes, people's
//! edits, sends and answers), the outcome of a tool call, a draft's findings, and the manifest
//! that opens a recording. The desk's record stores these; a recording is the same events as
//! JSONL ([`crate::recording`]). Nothing here knows how they are stored or who produced them.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::mail::message::Message;
use crate::model::chat::{PromptUse, Reply};

/// How a consent's `rule` starts when nobody was asked because a person trusted the tool.
pub const TRUSTED: &str = "trusted";

/// A consent's `rule` when the person made the call themselves: choosing it was the yes.
pub const OWN_CALL: &str = "the person's own call";

/// The turn a person's own call is recorded on: no model turn made it.
pub const PERSON_TURN: u32 = 0;

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
        /// When the reply streamed: seconds from the request to its first visible character
        /// (a word, or the tool a call names).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        first_visible_seconds: Option<f64>,
        /// Size of what the model was sent: the tool list and the attached context, in characters.
        tool_list_chars: usize,
        context_chars: usize,
        /// What the model server said of reading the prompt, when it said anything.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        prompt: Option<PromptUse>,
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
        /// How the answer was given when no one chose it at the question: the flag of a
        /// headless run (`run --consent approve`), whose person is `by`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rule: Option<String>,
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
    /// A reply left the desk (into the outbox, or queued for the mail server): the text as
    /// sent.
    Sent {
        ticket: String,
        by: String,
        text: String,
        /// Why it was sent with check findings open; `None` when none were.
        override_reason: Option<String>,
        /// A reply that goes by mail: its Message-ID, made and recorded before the mail server
        /// is asked, so a retry after a crash sends the same message again, never another.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message_id: Option<String>,
        /// The customer's message this reply answers (a ticket that came by mail): one
        /// reply per message, which a team's database holds to.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        answers: Option<String>,
    },
    /// The mail server's answer to the reply `message_id` of `ticket`: taken (`delivered`), or
    /// refused or unreachable, in its own words; `attempt` counts from 1.
    Delivery {
        ticket: String,
        message_id: String,
        delivered: bool,
        words: String,
        attempt: u32,
        /// A refusal the server says is final: the desk stops trying.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        permanent: bool,
    },
    /// A message came in for `ticket`; the first one opens it. Kept whether anyone answers it
    /// or not: an automatic reply or a bounce never goes to a model.
    MessageReceived {
        ticket: String,
        message: Box<Message>,
        /// Where it was read: `imap://user@host/INBOX`, or a Maildir's path.
        mailbox: String,
        /// The IMAP folder's UIDVALIDITY and the message's UID, for intake to resume.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        uid: Option<(u32, u32)>,
        /// The shop's customer the sender's address belongs to, when the desk knows it: ID
        /// and name.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        customer: Option<(String, String)>,
        /// Why it opened a ticket of its own though it names another ticket's thread.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mark: Option<String>,
    },
    /// Intake has read `mailbox` (UIDVALIDITY `validity`) up to `uid`: a restart reads on
    /// from there.
    MailboxRead {
        mailbox: String,
        validity: u32,
        uid: u32,
    },
    /// A person says the conversation is done, with an optional note; the customer's next
    /// message opens it again.
    Solved {
        ticket: String,
        by: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        note: Option<String>,
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
    /// A person gave the ticket to someone to answer (`to`), or back to nobody (`None`).
    /// Owning a ticket is not holding it: a run's claim comes and goes with the run.
    Assigned {
        ticket: String,
        by: String,
        to: Option<String>,
    },
    /// A person added a tag to the ticket (or took it off, `removed`): one tag an event.
    Tagged {
        ticket: String,
        by: String,
        tag: String,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        removed: bool,
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
    /// No lead answered `approval` within the time its asker's desk gave it (`[approvals]
    /// fallback_after`, as `after` in the config's words), and the rule that desk named took
    /// over: passed on to the lead `to`, and still open; or, without `to`, closed as declined
    /// with the ticket back in front of its asker. Carried out by whichever desk of the team
    /// saw it first; the database lets it happen once, and only when it is due.
    ApprovalFellBack {
        ticket: String,
        approval: i64,
        after: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        to: Option<String>,
    },
    /// A run stopped for `approval` goes on from the lead's answer: the model reads the
    /// call's outcome next.
    RunContinued {
        ticket: String,
        approval: i64,
    },
    /// The server runs the call on `turn` as its task `task` (the Tasks extension): the desk
    /// follows it until a [`Event::TaskEnded`] says how it ended, also after a restart.
    TaskStarted {
        ticket: String,
        turn: u32,
        /// The config's prefix for the server, and the tool (canonical name).
        server: String,
        tool: String,
        task: String,
    },
    /// A followed task ended at its server: `completed`, `failed` or `cancelled`, with what
    /// it came to as the desk read it (the call's outcome, or the one it would have had).
    TaskEnded {
        ticket: String,
        server: String,
        task: String,
        status: String,
        outcome: Outcome,
        text: String,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        truncated: bool,
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

    /// A consent question put to someone: a person, or a headless run's flag. A call a person
    /// trusted beforehand, or made themselves, is recorded as a consent too, with who decided,
    /// but asks nobody.
    pub fn is_consent_question(&self) -> bool {
        let Event::Consent { rule, .. } = self else {
            return false;
        };
        !rule
            .as_deref()
            .is_some_and(|rule| rule.starts_with(TRUSTED) || rule == OWN_CALL)
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
            Event::ApprovalFellBack { .. } => "approval_fell_back",
            Event::RunContinued { .. } => "run_continued",
            Event::TaskStarted { .. } => "task_started",
            Event::TaskEnded { .. } => "task_ended",
            Event::Delivery { .. } => "delivery",
            Event::MessageReceived { .. } => "message_received",
            Event::MailboxRead { .. } => "mailbox_read",
            Event::Solved { .. } => "solved",
            Event::Assigned { .. } => "assigned",
            Event::Tagged { .. } => "tagged",
        }
    }

    pub fn ticket(&self) -> Option<&str> {
        match self {
            Event::Manifest(_) | Event::MailboxRead { .. } => None,
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
            | Event::ApprovalFellBack { ticket, .. }
            | Event::RunContinued { ticket, .. }
            | Event::TaskStarted { ticket, .. }
            | Event::TaskEnded { ticket, .. }
            | Event::Delivery { ticket, .. }
            | Event::MessageReceived { ticket, .. }
            | Event::Solved { ticket, .. }
            | Event::Assigned { ticket, .. }
            | Event::Tagged { ticket, .. } => Some(ticket),
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

/// A server prompt a person chose for a ticket (`shop.refund_order`), with their arguments.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PersonPrompt {
    pub name: String,
    pub arguments: BTreeMap<String, String>,
}

/// The outcome of one tool call, as the model is told it.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The tool ran and answered.
    Result,
    /// The tool ran and reported an error (`isError`), which the model can act on.
    ToolError,
    /// A person declined the call; it never reached the server.
    Declined,
    /// The name matched no tool the host offered; nothing was called.
    UnknownTool,
    /// The call did not finish: timed out, ran past the input-request round cap, or the
    /// server went away.
    Failed,
}

impl Outcome {
    pub const ALL: [Outcome; 5] = [
        Outcome::Result,
        Outcome::ToolError,
        Outcome::Declined,
        Outcome::UnknownTool,
        Outcome::Failed,
    ];

    /// How the outcome is named in a `<tool_response>` block and in summaries.
    pub fn label(self) -> &'static str {
        match self {
            Outcome::Result => "result",
            Outcome::ToolError => "tool error",
            Outcome::Declined => "declined",
            Outcome::UnknownTool => "unknown tool",
            Outcome::Failed => "failed",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "check", rename_all = "snake_case")]
pub enum Finding {
    /// The reply tells the customer a refund is made or coming, but no issue_refund call in
    /// this ticket returned a released refund.
    RefundPromisedWithoutRefund { phrase: String },
    /// The reply states an amount that no tool result (nor the ticket text) contained.
    AmountNotFromTool { amount: String },
    /// The reply claims something a declined or failed call would have done.
    PromiseOfFailedCall { tool: String, phrase: String },
    /// The reply says a refund is done or paid while the shop holds it for a lead.
    HeldRefundCalledDone { phrase: String },
    /// The reply states the opposite of what the latest result of `tool` says (`state`): a
    /// released refund said to wait for a lead, a delivered order said not to have arrived.
    Contradicted {
        phrase: String,
        tool: String,
        state: String,
    },
    /// The reply states a fact (a tracking number, a date, an order's state) that no tool
    /// result of this ticket supports.
    Unsupported { kind: String, words: String },
    /// The reply holds what a customer must never read: a placeholder, a tool name, JSON or
    /// the host's markup.
    NotForCustomer { kind: String, words: String },
    /// The reply refuses the customer, says next to nothing (a greeting and the signature), or
    /// is empty.
    NoAnswer { words: String },
    /// The reply mostly repeats the customer's own message.
    Echo { percent: u32 },
    /// A finding an older desk file kept only as its sentence; carried over as it was.
    Carried { reason: String },
}

impl Finding {
    /// One sentence for the person reviewing the draft: what is wrong and what to check.
    pub fn reason(&self) -> String {
        match self {
            Finding::RefundPromisedWithoutRefund { phrase } => format!(
                "The reply promises a refund (\"{phrase}\") but no refund was released in this ticket; check the call log and the order, and reword the reply or issue the refund."
            ),
            Finding::AmountNotFromTool { amount } => format!(
                "The reply states EUR {amount}, which no tool result of this ticket contains (the customer's own figures do not count); check the amount against the order or the quote."
            ),
            Finding::Unsupported { kind, words } => format!(
                "The reply gives the {kind} \"{words}\", which no tool result of this ticket supports; check it against the order or the parcel, or leave it out."
            ),
            Finding::NotForCustomer { kind, words } => format!(
                "The reply holds {kind} (\"{words}\"), which must not reach a customer; rewrite that part."
            ),
            Finding::NoAnswer { words } if words.is_empty() => {
                "The reply is empty; write an answer to the customer.".to_owned()
            }
            Finding::NoAnswer { words } => format!(
                "The reply does not answer the customer (\"{words}\"): it refuses, or says next to nothing; write an answer to what they asked."
            ),
            Finding::Echo { percent } => format!(
                "The reply mostly repeats the customer's own message ({percent}% of it); write an answer to what they asked."
            ),
            Finding::PromiseOfFailedCall { tool, phrase } => format!(
                "The reply says \"{phrase}\" but {tool} did not succeed in this ticket; check the call log and tell the customer what really happened."
            ),
            Finding::HeldRefundCalledDone { phrase } => format!(
                "The reply calls the refund done (\"{phrase}\") but the shop holds it for a lead; tell the customer it awaits a lead's review."
            ),
            Finding::Contradicted {
                phrase,
                tool,
                state,
            } => format!(
                "The reply says \"{phrase}\", but {tool} last answered that it is {state}; tell the customer what the shop says."
            ),
            Finding::Carried { reason } => reason.clone(),
        }
    }
}
