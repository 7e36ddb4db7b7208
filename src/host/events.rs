//! What the host reports as it works, for the desk to show. Plain data only.

use super::api::ServerSummary;
use crate::record::transcript::{Entry, entries_of};
use crate::record::{Stored, TicketState};
use crate::recording::summary::Summary;
use crate::tickets::Ticket;

#[derive(Debug)]
pub enum HostEvent {
    /// The servers as connected at start (or left out, with why).
    Servers(Vec<ServerSummary>),
    /// The desk's record as the host found it at start: the state of every ticket it knows
    /// (runs cut off by a crash already settled as needing a person). A ticket's history is
    /// read when asked for ([`Self::Transcript`]).
    Record(Vec<TicketState>),
    /// Tickets new to the queue, or whose conversation went on (mail came in, a reply went
    /// out): each replaces the one of its ID.
    Tickets(Vec<Ticket>),
    /// One ticket's whole history, as asked for (`Command::Transcript`): each event's `seq`
    /// in the record, in order, with the transcript entries it makes.
    Transcript {
        ticket: String,
        events: Vec<(i64, Vec<Entry>)>,
    },
    /// Something happened to a ticket, as the record now holds it: the event's `seq`, the
    /// transcript entries it adds, and the ticket's state after it.
    Happened {
        ticket: String,
        seq: i64,
        entries: Vec<Entry>,
        state: Box<TicketState>,
    },
    /// What the model has written so far on `ticket`'s `turn`, while its reply streams: the
    /// words, and the tool it is calling once named. Shown, never recorded: the record holds
    /// the whole reply when it has come.
    Writing {
        ticket: String,
        turn: u32,
        content: String,
        calling: Option<String>,
    },
    /// How far a call on `ticket`'s `turn` has got, as its server reports it while the call
    /// is under way: `progress` of `total` when the server knows the total, and its message,
    /// cut short (the server's words: data, to be shown cleaned). Shown, never recorded: the
    /// call's outcome takes its place.
    Progress {
        ticket: String,
        turn: u32,
        /// The tool as the host names it (`prefix.tool`).
        tool: String,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    },
    /// How a call its server runs as a task stands (the Tasks extension): its status, how
    /// long the desk has waited on it, and the server's message (its words: data, shown
    /// cleaned). Shown, never recorded: the task's start and end are.
    TaskStatus {
        ticket: String,
        turn: u32,
        /// The tool as the host names it (`prefix.tool`).
        tool: String,
        task: String,
        status: String,
        seconds: u64,
        message: Option<String>,
    },
    /// A server said its tools changed while the desk was open, and they were listed again
    /// and checked against their pins at once: `held` are kept from the model until a
    /// person approves them (asked before the model's next request), `added` are offered
    /// now, `gone` are no more (each `prefix.tool`). The server's summary follows in
    /// [`Self::Servers`].
    ToolsChanged {
        server: String,
        held: Vec<String>,
        added: Vec<String>,
        gone: Vec<String>,
    },
    /// Every server's prompts, for the person's picker.
    Prompts(Vec<PromptInfo>),
    /// Every server's resources, for the person's picker.
    Resources(Vec<ResourceInfo>),
    /// The tools a person may call on `ticket`, and the calls its results offer next
    /// (`Command::ListTools`).
    Tools {
        ticket: String,
        tools: Vec<super::api::ToolInfo>,
        next: Vec<super::api::NextStep>,
    },
    /// A resource's text, read for the person who asked (`Command::ReadResource`).
    ResourceText {
        server: String,
        uri: String,
        text: String,
    },
    /// The team's open approvals, oldest first (at start, and whenever they change).
    Approvals(Vec<super::api::ApprovalView>),
    /// The tools people trust, after a change or when asked.
    Trust(Vec<super::api::TrustGrant>),
    /// The lead's report, as asked for.
    LeadReport(Box<super::api::Report>),
    /// A queue run finished.
    QueueFinished(Box<Summary>),
    /// To sign in to `server`, the person opens `url` in a browser (the desk waits for it
    /// to come back; the server's `Servers` event follows once it is connected).
    SignInOpen { server: String, url: String },
    /// A command could not be carried out.
    Problem(String),
    /// The host task has ended.
    Stopped,
}

impl HostEvent {
    /// What the record's `stored` event did to its ticket, now in `state`; `None` for an
    /// event that is no ticket's.
    pub fn happened(stored: &Stored, state: TicketState) -> Option<Self> {
        Some(HostEvent::Happened {
            ticket: stored.event.ticket()?.to_owned(),
            seq: stored.seq,
            entries: entries_of(&stored.event, Some(&stored.by), Some(stored.at)),
            state: Box::new(state),
        })
    }
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
