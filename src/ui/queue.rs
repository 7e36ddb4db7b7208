//! The queue's state: where each ticket stands (`Status`), which tickets a filter shows,
//! and one ticket's place in the queue. It holds no keys and draws nothing.

use crate::host::api::{Conversation, Due, Lifecycle, SavedView, Ticket, TicketState};

/// Where a ticket stands, as the queue shows it: its state in the record, or the question it
/// waits on at this desk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    New,
    Working,
    NeedsConsent,
    NeedsLead,
    WaitingForLead,
    Drafted,
    NeedsPerson,
    HandedOver,
    Sent,
}

impl Status {
    /// Every status, in the order a ticket usually passes through them.
    pub const ALL: [Status; 9] = [
        Status::New,
        Status::Working,
        Status::NeedsConsent,
        Status::NeedsLead,
        Status::WaitingForLead,
        Status::Drafted,
        Status::NeedsPerson,
        Status::HandedOver,
        Status::Sent,
    ];

    /// The status word, as the queue and the ticket pane show it.
    pub fn label(self) -> &'static str {
        match self {
            Status::New => "new",
            Status::Working => "working",
            Status::NeedsConsent => "needs consent",
            Status::NeedsLead => "needs lead",
            Status::WaitingForLead => "waiting for a lead",
            Status::Drafted => "drafted",
            Status::NeedsPerson => "needs person",
            Status::HandedOver => "handed over",
            Status::Sent => "sent",
        }
    }

    /// The status in at most seven columns, for a queue too narrow for the whole word.
    pub fn short(self) -> &'static str {
        match self {
            Status::New => "new",
            Status::Working => "working",
            Status::NeedsConsent => "consent",
            Status::NeedsLead => "lead",
            Status::WaitingForLead => "waiting",
            Status::Drafted => "drafted",
            Status::NeedsPerson => "person",
            Status::HandedOver => "handed",
            Status::Sent => "sent",
        }
    }

    /// What the status means for the person at the desk (the help screen's legend).
    pub fn meaning(self) -> &'static str {
        match self {
            Status::New => "not worked yet",
            Status::Working => "the model is working it now",
            Status::NeedsConsent => "a tool call waits for your yes or no",
            Status::NeedsLead => "a server asks a lead for input",
            Status::WaitingForLead => "a lead's form went to the team's leads (A lists them)",
            Status::Drafted => "a reply is drafted: read, edit and send it",
            Status::NeedsPerson => "the model stopped: a person must answer it",
            Status::HandedOver => "handed to a person, with a note",
            Status::Sent => "the reply went to the customer",
        }
    }

    pub(crate) fn of(state: Lifecycle) -> Self {
        match state {
            Lifecycle::New => Status::New,
            Lifecycle::Working => Status::Working,
            Lifecycle::Drafted => Status::Drafted,
            Lifecycle::NeedsPerson => Status::NeedsPerson,
            Lifecycle::WaitingForLead => Status::WaitingForLead,
            Lifecycle::HandedOver => Status::HandedOver,
            Lifecycle::Sent => Status::Sent,
        }
    }
}

/// Which tickets the queue shows: the desk's own views, then the person's saved ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Filter {
    All,
    /// Waiting on a person: a question, a draft to send, a ticket that needs a person.
    NeedsMe,
    /// Needs a person, or handed over to one.
    NeedsPerson,
    /// Assigned to the person at this desk.
    Mine,
    /// Assigned to nobody.
    Unassigned,
    /// Due within the warning window of `[sla]`.
    DueSoon,
    /// Past its due time.
    Late,
    /// Its run stopped for a lead's answer, or a server asks a lead for input.
    WaitingForLead,
    /// Conversations waiting for us: the customer wrote and nobody has replied or solved.
    Open,
    /// We replied and wait for the customer.
    Pending,
    /// A person said the conversation is done.
    Solved,
    /// Solved since midnight, in the shop's time zone (UTC without `[sla]`).
    SolvedToday,
    /// The person's saved view at this place of the config's `[views]`.
    Saved(usize),
}

/// What a view needs to know besides the ticket: who is at the desk, and the time.
#[derive(Debug, Clone, Copy)]
pub struct ViewContext<'a> {
    pub me: &'a str,
    pub now: i64,
    /// The warning window of `[sla]`, when due times are on.
    pub warn_within: Option<std::time::Duration>,
    /// Midnight today, in the shop's time zone (unix ms).
    pub today: i64,
    pub saved: &'a [SavedView],
}

impl Filter {
    /// The desk's own views, in the order `f` steps through them.
    pub const BUILT_IN: [Filter; 12] = [
        Filter::All,
        Filter::NeedsMe,
        Filter::NeedsPerson,
        Filter::Mine,
        Filter::Unassigned,
        Filter::DueSoon,
        Filter::Late,
        Filter::WaitingForLead,
        Filter::Open,
        Filter::Pending,
        Filter::Solved,
        Filter::SolvedToday,
    ];

    /// The view's name, as the queue's title shows it.
    pub fn label(self, saved: &[SavedView]) -> String {
        match self {
            Filter::Saved(n) => saved.get(n).map_or("?", |v| v.name.as_str()).to_owned(),
            _ => self.name().replace('-', " "),
        }
    }

    /// The name `:view` knows a built-in view by (`due-soon`); a saved view goes by its own.
    pub fn name(self) -> &'static str {
        match self {
            Filter::All => "all",
            Filter::NeedsMe => "needs-me",
            Filter::NeedsPerson => "needs-a-person",
            Filter::Mine => "mine",
            Filter::Unassigned => "unassigned",
            Filter::DueSoon => "due-soon",
            Filter::Late => "late",
            Filter::WaitingForLead => "waiting-for-a-lead",
            Filter::Open => "open",
            Filter::Pending => "pending",
            Filter::Solved => "solved",
            Filter::SolvedToday => "solved-today",
            Filter::Saved(_) => "saved",
        }
    }

    /// The view `name` names: a built-in one, else a saved one.
    pub fn named(name: &str, saved: &[SavedView]) -> Option<Self> {
        Self::BUILT_IN
            .into_iter()
            .find(|f| f.name() == name)
            .or_else(|| saved.iter().position(|v| v.name == name).map(Filter::Saved))
    }

    /// The next view `f` shows: the built-in ones, then the saved ones, round again.
    pub(crate) fn next(self, saved: usize) -> Self {
        let last_built_in = Self::BUILT_IN.len() - 1;
        match self {
            Filter::Saved(n) if n + 1 < saved => Filter::Saved(n + 1),
            Filter::Saved(_) => Filter::All,
            other => match Self::BUILT_IN.iter().position(|f| *f == other) {
                Some(at) if at < last_built_in => Self::BUILT_IN[at + 1],
                _ if saved > 0 => Filter::Saved(0),
                _ => Filter::All,
            },
        }
    }

    pub(crate) fn admits(self, item: &QueueItem, cx: &ViewContext<'_>) -> bool {
        let status = item.status;
        let due = || {
            item.due_at
                .zip(cx.warn_within)
                .map(|(at, warn)| Due::of(at, cx.now, warn))
        };
        match self {
            Filter::All => true,
            Filter::NeedsMe => matches!(
                status,
                Status::NeedsConsent | Status::NeedsLead | Status::Drafted | Status::NeedsPerson
            ),
            Filter::NeedsPerson => matches!(status, Status::NeedsPerson | Status::HandedOver),
            Filter::Mine => item.state.assignee.as_deref() == Some(cx.me),
            Filter::Unassigned => item.state.assignee.is_none(),
            Filter::DueSoon => matches!(due(), Some(Due::Soon(_))),
            Filter::Late => matches!(due(), Some(Due::Late(_))),
            Filter::WaitingForLead => {
                matches!(status, Status::WaitingForLead | Status::NeedsLead)
            }
            Filter::Open => item.state.conversation == Conversation::Open,
            Filter::Pending => item.state.conversation == Conversation::Pending,
            Filter::Solved => matches!(
                item.state.conversation,
                Conversation::Solved | Conversation::Closed
            ),
            Filter::SolvedToday => {
                matches!(
                    item.state.conversation,
                    Conversation::Solved | Conversation::Closed
                ) && item.state.solved.as_ref().is_some_and(|s| s.at >= cx.today)
            }
            Filter::Saved(n) => cx
                .saved
                .get(n)
                .is_some_and(|view| view.admits(&item.ticket, &item.state, cx.me)),
        }
    }
}

/// One ticket in the queue: the ticket, its record state and what the desk shows of it.
#[derive(Debug, Clone)]
pub struct QueueItem {
    pub ticket: Ticket,
    /// The ticket's state as the desk's record holds it.
    pub state: TicketState,
    /// The question this desk is waiting on a person for, while the run is under way.
    pub asking: Option<Status>,
    pub status: Status,
    /// When its next answer is due (unix ms), with `[sla]`; `None` when nothing is due.
    pub due_at: Option<i64>,
}

impl QueueItem {
    pub(crate) fn new(ticket: Ticket) -> Self {
        let state = TicketState::new(&ticket.ticket_id);
        Self {
            ticket,
            state,
            asking: None,
            status: Status::New,
            due_at: None,
        }
    }

    pub(crate) fn set_state(&mut self, state: TicketState) {
        if state.state != Lifecycle::Working {
            self.asking = None;
        }
        self.state = state;
        self.refresh();
    }

    pub(crate) fn refresh(&mut self) {
        self.status = self.asking.unwrap_or(Status::of(self.state.state));
    }
}
