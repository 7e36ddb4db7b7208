//! What crosses between the host and whoever drives it (the desk's UI, or a scripted answerer
//! in `run`): `Command` in, `HostEvent` out, and for each question a one-shot reply.
//!
//! Everything here is plain data. Protocol types (rmcp, JSON) are turned into these before
//! they cross, so the UI never needs to know MCP. This module is the host's whole face: the
//! desk's UI imports nothing else of the host (CI checks it); the commands that start a host
//! also use `host::task` and `host::core::Storage`.

use std::collections::BTreeMap;

use tokio::sync::oneshot;

pub use super::events::{HostEvent, PromptInfo, ResourceInfo};
pub use crate::record::{Finding, Outcome, PersonPrompt};
pub mod form_answers;

pub use crate::record::owners::{ME, NOBODY};
pub use crate::record::transcript::{Entry, EntryKind};
pub use crate::record::{Conversation, Lifecycle, TicketState, rfc3339};
pub use crate::recording::summary::Summary;
pub use crate::replies::{SavedReply, Values as ReplyValues, fill as fill_reply};
pub use crate::report::Report;
pub use crate::sla::{Due, Sla, due_at};
pub use crate::tickets::Ticket;
pub use crate::views::SavedView;
pub use form_answers::{
    FieldProblem, check_answer, defaults, from_text, in_words, parse_number, validate,
};

/// A ticket's ID as the shop writes it (`T-0009`).
pub type TicketId = String;

/// What the driver asks the host to do.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    /// Work one ticket from its start.
    WorkTicket(TicketId),
    /// Work these tickets (the whole queue when empty), at the configured concurrency; with
    /// `prompt`, each one as a person who ran that server prompt for it.
    WorkQueue {
        tickets: Vec<TicketId>,
        prompt: Option<PersonPrompt>,
    },
    /// Add one resource to one ticket's context, for its next model call.
    AttachResource {
        ticket: TicketId,
        server: String,
        uri: String,
    },
    /// Stop a ticket's run on this desk: the call in flight is cancelled, the ticket needs a
    /// person, and the record says who stopped it.
    Stop(TicketId),
    /// Stop the queue's run: no other ticket starts, and those under way stop.
    StopQueue,
    /// The tools a person may call on a ticket, with their forms and the calls its results
    /// offer next (answered by `HostEvent::Tools`).
    ListTools(TicketId),
    /// Call `tool` on `ticket` as this desk's person, with the answer to its arguments' form:
    /// the same gate, lead routing and record as a model's call; choosing it is the yes.
    CallTool {
        ticket: TicketId,
        tool: String,
        answer: FormAnswer,
    },
    /// Read one resource for the person, as its server wrote it; nothing enters a context.
    ReadResource { server: String, uri: String },
    /// Run a server's prompt (`shop.review_refund`) for a ticket, with the person's arguments.
    RunPrompt {
        ticket: TicketId,
        prompt: PersonPrompt,
    },
    /// Send a ticket's reply (by mail for a ticket that came by mail when `[mail.smtp]` is
    /// set, else to the outbox). The text is checked against the ticket's call
    /// log first; refused while findings are open unless `override_reason` says why. With
    /// `solve` (a macro's `state = "solved"`), the person's solve is recorded after the send,
    /// and only when the send was.
    SendReply {
        ticket: TicketId,
        text: String,
        override_reason: Option<String>,
        solve: bool,
    },
    /// A person's word that a ticket's conversation is done, with an optional note.
    Solve {
        ticket: TicketId,
        note: Option<String>,
    },
    /// Ask the servers to cancel the ticket's tasks still running (the Tasks extension);
    /// how each ends is recorded when it does.
    CancelTasks { ticket: TicketId },
    /// Give a ticket to a person (`me`, a name) or to nobody (`None`).
    Assign {
        ticket: TicketId,
        to: Option<String>,
    },
    /// Add a tag to a ticket, or take it off.
    Tag {
        ticket: TicketId,
        tag: String,
        removed: bool,
    },
    /// The same thing done to several tickets (the person's marked ones), one after another:
    /// each is carried out, and each refusal reported, on its own.
    Each(Vec<Command>),
    /// Keep a person's edit of a reply, checked against the ticket's call log.
    EditDraft { ticket: TicketId, text: String },
    /// Hand a ticket over to someone, with a note for them.
    HandToPerson {
        ticket: TicketId,
        to: String,
        note: String,
    },
    /// An internal note on a ticket: never sent, never shown to the model.
    AddNote { ticket: TicketId, text: String },
    /// Take a ticket another desk holds (a lead's call), with why: recorded on the ticket and
    /// shown to whoever had it.
    TakeOver { ticket: TicketId, reason: String },
    /// List every server's resources again (the person's picker).
    ListResources,
    /// List the team's open approvals again.
    ListApprovals,
    /// Open an approval at this lead's desk: its form, then the call's next round as them.
    AnswerApproval(i64),
    /// Take back the open approval of a ticket this desk's person asked for, with why.
    WithdrawApproval { ticket: TicketId, reason: String },
    /// Sign in to a server that asked for it, and connect it.
    SignIn { server: String },
    /// Read one ticket's whole history from the record (answered with
    /// `HostEvent::Transcript`): the desk asks when the ticket comes on screen.
    Transcript(String),
    /// Report the tools people trust (answered with `HostEvent::Trust`).
    ListTrust,
    /// Compute the lead's report from the desk's record as it stands now (answered with
    /// `HostEvent::LeadReport`).
    LeadReport,
    /// Take back the trust in one tool (`prefix.tool`); it is asked about again.
    RevokeTrust { tool: String },
    /// Stop: close every server connection and end the host task.
    Shutdown,
}

/// An open approval, as the team's leads see it: a server's form that waits for a lead.
#[derive(Debug, Clone, PartialEq)]
pub struct ApprovalView {
    pub id: i64,
    pub ticket: TicketId,
    /// The prefix of the server that asked, where the asking desk reached it, and the tool.
    pub server: String,
    pub origin: String,
    pub tool: String,
    /// The call's arguments as `name = JSON value` pairs.
    pub arguments: Vec<(String, String)>,
    pub asked_by: String,
    /// Unix milliseconds.
    pub asked_at: i64,
    /// The form's message and fields, as the server wrote them.
    pub message: String,
    pub fields: Vec<Field>,
    /// The lead whose desk is answering it right now.
    pub answering_by: Option<String>,
    /// The lead it went to when no lead answered in time (`[approvals] fallback`).
    pub passed_to: Option<String>,
}

/// A server as the desk shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerSummary {
    pub prefix: String,
    /// Where it runs: the command line, `in-process`, or the URL.
    pub origin: String,
    /// The name the server gives itself (not used for routing).
    pub name: Option<String>,
    /// What the server says of itself for people (its `instructions`), as it wrote them (cut
    /// short when long): untrusted text to show as data, and never given to the model.
    pub instructions: Option<String>,
    pub revision: Option<String>,
    pub tools: Vec<String>,
    /// Connection trouble, if any; the rest of the desk keeps working without this server.
    pub error: Option<String>,
    /// The server asks for a sign-in: the command that signs in (`support-desk login shop`).
    pub sign_in: Option<String>,
}

/// What a tool's annotations claim (claims of the server, not facts).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolHints {
    pub title: Option<String>,
    pub read_only: Option<bool>,
    pub destructive: Option<bool>,
    pub idempotent: Option<bool>,
    pub open_world: Option<bool>,
}

/// Where an argument of a call came from, as the host found it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArgSource {
    /// A result of an earlier call of this ticket: which tool, on which turn.
    ToolResult { tool: String, turn: u32 },
    /// The customer's own text.
    Customer,
    /// Neither a tool result nor the customer's text.
    Nowhere,
}

impl ArgSource {
    /// How a consent card says it.
    pub fn describe(&self) -> String {
        match self {
            ArgSource::ToolResult { tool, turn } => format!("from {tool} (turn {turn})"),
            ArgSource::Customer => "from the customer's text".to_owned(),
            ArgSource::Nowhere => "seen nowhere".to_owned(),
        }
    }
}

/// One argument of a call with where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Provenance {
    pub argument: String,
    pub value: String,
    pub source: ArgSource,
}

/// What the earlier result that handed out a handle said (the quote a refund would pay).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Backing {
    pub argument: String,
    pub tool: String,
    pub turn: u32,
    /// The result's fields, as text.
    pub said: Vec<(String, String)>,
}

/// An argument value that appears neither in the ticket nor in an earlier tool result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnseenValue {
    pub argument: String,
    pub value: String,
}

/// The host asks a person whether a tool call may happen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsentAsk {
    pub ticket: TicketId,
    pub server: String,
    pub origin: String,
    /// `prefix.tool`.
    pub tool: String,
    pub hints: ToolHints,
    /// Every argument, name and value as JSON text, in the order the model sent them.
    pub arguments: Vec<(String, String)>,
    pub unseen: Vec<UnseenValue>,
    /// Where each ID, SKU, amount or handle among the arguments came from.
    pub provenance: Vec<Provenance>,
    /// What the earlier results behind the call's handles said.
    pub backing: Vec<Backing>,
    /// The tool's definition changed since it was pinned: a readable diff (or, for a tool
    /// held before the model may see it, the spans of its description that address the model).
    pub changed_definition: Option<String>,
    /// The tool is on the host's own read-only list: the person may trust it from now on.
    pub trustable: bool,
    /// Why the host asks (outside the allow list, or a changed definition).
    pub reason: String,
}

/// A person's answer to a consent question.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsentAnswer {
    pub approved: bool,
    /// Who answered: the person at the desk, or the person logged in for a headless run.
    pub by: String,
    /// With a yes to a tool the card offers to trust: allow it unasked from now on.
    pub trust: Option<TrustScope>,
    /// How the answer was given when no one chose it at the question: the flag of a headless
    /// run (`run --consent approve`), whose person is `by`. Recorded with the answer.
    pub rule: Option<String>,
}

/// How long a person's trust in one read-only tool lasts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TrustScope {
    /// Until this desk stops.
    Session,
    /// Until someone revokes it.
    Always,
}

/// A person's trust in one read-only tool: who gave it, when, and for which definition.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TrustGrant {
    /// `prefix.tool`.
    pub tool: String,
    pub scope: TrustScope,
    pub by: String,
    /// Unix seconds.
    pub at: i64,
    /// sha256 of the tool's definition when trusted; a changed tool is asked about again.
    pub definition: String,
    /// Where its server ran when trusted (command line or URL): a server of the same name
    /// elsewhere is not trusted. Empty in grants older than that, which cover nothing.
    #[serde(default)]
    pub origin: String,
}

/// A tool a person may call: what its server says of it (data, shown as written) and its
/// arguments as a form.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolInfo {
    /// `prefix.tool`.
    pub name: String,
    pub server: String,
    pub title: Option<String>,
    pub description: String,
    pub form: FormKind,
    /// Why the host holds it back until a person approves its definition, if it does.
    pub withheld: Option<String>,
    /// Each argument the ticket filled in (a suggestion in the form, never sent unseen): its
    /// name, its value and where in the ticket it was found (`T-0003's text`).
    pub suggested: Vec<(String, String, String)>,
}

/// A call a ticket's results offer next: a tool whose required arguments its earlier results
/// hold, by name, with the form prefilled from them.
#[derive(Debug, Clone, PartialEq)]
pub struct NextStep {
    /// `prefix.tool`.
    pub tool: String,
    /// Each prefilled argument with its value and the result it came from.
    pub values: Vec<(String, String, String)>,
    /// The tool's arguments' form, those values filled in.
    pub form: FormKind,
}

/// A server asks for input (elicitation), through the host.
#[derive(Debug, Clone, PartialEq)]
pub struct FormAsk {
    pub ticket: Option<TicketId>,
    /// The prefix of the server asking: people must always see who asks.
    pub server: String,
    pub origin: String,
    pub message: String,
    pub kind: FormKind,
    /// For a lead answering an approval: whose request it is, and since when.
    pub asked_by: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum FormKind {
    /// A form of fields to fill in.
    Fields(Vec<Field>),
    /// The server wants the person to visit a URL. The host never opens it.
    Url { url: String },
}

#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    pub required: bool,
    pub kind: FieldKind,
}

#[derive(Debug, Clone, PartialEq)]
pub enum FieldKind {
    Text {
        min_length: Option<u32>,
        max_length: Option<u32>,
        format: Option<TextFormat>,
        default: Option<String>,
    },
    Number {
        minimum: Option<f64>,
        maximum: Option<f64>,
        default: Option<f64>,
    },
    Integer {
        minimum: Option<i64>,
        maximum: Option<i64>,
        default: Option<i64>,
    },
    Boolean {
        default: Option<bool>,
    },
    /// Pick one.
    Choice {
        options: Vec<Choice>,
        default: Option<String>,
    },
    /// Pick several.
    Choices {
        options: Vec<Choice>,
        min_items: Option<u64>,
        max_items: Option<u64>,
        default: Vec<String>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextFormat {
    Email,
    Uri,
    Date,
    DateTime,
}

/// One option of a choice: the value sent back, and what a person reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choice {
    pub value: String,
    pub label: String,
}

#[derive(Debug, Clone, PartialEq)]
pub enum FieldValue {
    Text(String),
    Number(f64),
    Integer(i64),
    Boolean(bool),
    Choice(String),
    Choices(Vec<String>),
}

/// A person's answer to a form. Accept, decline and cancel are distinct: a decline says
/// "no", a cancel says "not now", and neither may read as "continue without the info".
#[derive(Debug, Clone, PartialEq)]
pub enum FormAnswer {
    Accept(BTreeMap<String, FieldValue>),
    Decline,
    Cancel,
}

/// A question and its one-shot reply. Dropping it unanswered means "cancel" (for a form)
/// or "decline" (for consent): silence is never a yes.
#[derive(Debug)]
pub struct Pending<Q, A> {
    pub ask: Q,
    reply: oneshot::Sender<A>,
}

impl<Q, A> Pending<Q, A> {
    pub fn new(ask: Q) -> (Self, oneshot::Receiver<A>) {
        let (reply, answer) = oneshot::channel();
        (Self { ask, reply }, answer)
    }

    /// Sends the answer. Returns false when the host no longer waits for it.
    pub fn answer(self, answer: A) -> bool {
        self.reply.send(answer).is_ok()
    }
}

#[derive(Debug)]
pub enum Question {
    Consent(Pending<ConsentAsk, ConsentAnswer>),
    Form(Pending<FormAsk, FormAnswer>),
}

/// The driver's ends of the channels.
pub struct HostHandle {
    pub commands: tokio::sync::mpsc::Sender<Command>,
    pub events: tokio::sync::mpsc::UnboundedReceiver<HostEvent>,
    pub questions: tokio::sync::mpsc::Receiver<Question>,
    pub task: tokio::task::JoinHandle<()>,
}
