//! What the report needs of each ticket, gathered from its events one at a time: when it
//! arrived, answered and was solved, its state folded as the record folds it, each reply and
//! how it was written, and its approvals. Nothing is decided here about what counts: that is
//! [`super::Report`]'s, once every event is in.

use std::collections::BTreeMap;

use crate::record::state::{Stamp, TicketState};
use crate::record::{Event, Outcome, Stored};

/// Who wrote the draft that stands now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Draft {
    /// The model's, as it wrote it.
    Model,
    /// The model's, which a person then changed.
    ModelEdited,
    /// A person's own, with no draft of the model's under it.
    Person,
}

/// How a reply that was sent had been written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Written {
    /// The model's draft, sent as it was.
    ModelUnchanged,
    /// The model's draft, edited by a person before it went.
    ModelEdited,
    /// A person wrote it, with no draft of the model's.
    ByHand,
}

/// One approval of a ticket: when it was asked, and how it ended.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ApprovalFacts {
    /// Unix ms; `None` when the record holds its answer but not its question (a record read
    /// from part-way).
    pub asked_at: Option<i64>,
    pub answer: Option<Answer>,
    pub withdrawn: bool,
    /// Declined by the desk's rule: no lead answered in time.
    pub lapsed: bool,
}

/// A lead's answer to an approval.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    pub at: i64,
    pub by: String,
    /// `accept`, `decline` or `cancel`.
    pub action: String,
    pub tool: String,
    pub content: Option<String>,
    pub outcome: Outcome,
    pub text: String,
}

/// Everything the report reads of one ticket.
#[derive(Debug, Clone)]
pub struct TicketFacts {
    /// Its first event's time (unix ms).
    pub first_event_at: i64,
    /// The first message that came in for it by mail, if it came by mail.
    pub first_message_at: Option<i64>,
    pub first_sent_at: Option<i64>,
    pub first_solved_at: Option<i64>,
    /// Its state as its events left it.
    pub state: TicketState,
    /// Each reply sent: when, and how it was written.
    pub replies: Vec<(i64, Written)>,
    pub handed_over: usize,
    pub approvals: BTreeMap<i64, ApprovalFacts>,
    draft: Option<Draft>,
}

impl TicketFacts {
    fn new(ticket: &str, at: i64) -> Self {
        Self {
            first_event_at: at,
            first_message_at: None,
            first_sent_at: None,
            first_solved_at: None,
            state: TicketState::new(ticket),
            replies: Vec::new(),
            handed_over: 0,
            approvals: BTreeMap::new(),
            draft: None,
        }
    }

    /// When the ticket arrived: its first message by mail; a ticket from a tickets.json
    /// has no message in the record, and arrives with its first event there (the moment the
    /// desk first touched it: the record does not know when the file got it).
    pub fn arrived_at(&self) -> i64 {
        self.first_message_at.unwrap_or(self.first_event_at)
    }

    fn add(&mut self, stored: &Stored, allow: &[String]) {
        let at = stored.at;
        match &stored.event {
            Event::MessageReceived { .. } => {
                self.first_message_at.get_or_insert(at);
            }
            Event::Draft { .. } => self.draft = Some(Draft::Model),
            Event::DraftEdited { .. } => {
                self.draft = Some(match self.draft {
                    Some(Draft::Model | Draft::ModelEdited) => Draft::ModelEdited,
                    None | Some(Draft::Person) => Draft::Person,
                });
            }
            Event::Sent { .. } => {
                self.first_sent_at.get_or_insert(at);
                let written = match self.draft.take() {
                    Some(Draft::Model) => Written::ModelUnchanged,
                    Some(Draft::ModelEdited) => Written::ModelEdited,
                    Some(Draft::Person) | None => Written::ByHand,
                };
                self.replies.push((at, written));
            }
            Event::Solved { .. } => {
                self.first_solved_at.get_or_insert(at);
            }
            Event::HandedOver { .. } => self.handed_over += 1,
            Event::ApprovalAsked { approval, .. } => {
                self.approvals.entry(*approval).or_default().asked_at = Some(at);
            }
            Event::ApprovalAnswered {
                approval,
                by,
                tool,
                action,
                content,
                outcome,
                text,
                ..
            } => {
                self.approvals.entry(*approval).or_default().answer = Some(Answer {
                    at,
                    by: by.clone(),
                    action: action.clone(),
                    tool: tool.clone(),
                    content: content.clone(),
                    outcome: *outcome,
                    text: text.clone(),
                });
            }
            Event::ApprovalWithdrawn { approval, .. } => {
                self.approvals.entry(*approval).or_default().withdrawn = true;
            }
            Event::ApprovalFellBack {
                approval, to: None, ..
            } => {
                self.approvals.entry(*approval).or_default().lapsed = true;
            }
            _ => {}
        }
        let stamp = Stamp { by: &stored.by, at };
        self.state.apply(&stored.event, &stamp, allow);
        // A sent reply leaves its text as the state's draft, but no draft waits any more; a
        // draft the state dropped (a new run, the customer writing again) is no one's.
        if self.state.draft.is_none() {
            self.draft = None;
        }
    }
}

/// Every ticket's facts, by ticket ID, from events added in the record's order.
#[derive(Debug, Default)]
pub struct Tally {
    pub tickets: BTreeMap<String, TicketFacts>,
    allow: Vec<String>,
    until: i64,
}

impl Tally {
    /// A tally that folds states with the host's `allow` list, of the record as it stood at
    /// `until` (unix ms): later events are left out.
    pub fn new(allow: &[String], until: i64) -> Self {
        Self {
            tickets: BTreeMap::new(),
            allow: allow.to_vec(),
            until,
        }
    }

    /// Counts `stored`, the next event of the record.
    pub fn add(&mut self, stored: &Stored) {
        if stored.at > self.until {
            return;
        }
        let Some(ticket) = stored.event.ticket() else {
            return;
        };
        let facts = match self.tickets.get_mut(ticket) {
            Some(facts) => facts,
            None => self
                .tickets
                .entry(ticket.to_owned())
                .or_insert_with(|| TicketFacts::new(ticket, stored.at)),
        };
        facts.add(stored, &self.allow);
    }
}
