//! A ticket's state, derived from its events alone.
//!
//! [`TicketState::apply`] is the one place that says what an event does to a ticket: the
//! store calls it in the same transaction that appends the event, and replaying a record
//! from its first event through it gives the same states (a test checks that). It never
//! refuses anything; which events may be appended is the store's rule ([`TicketState::refuses`]).

use serde::{Deserialize, Serialize};

use crate::record::{Event, Finding, Outcome};

mod approvals;
mod tasks;

pub use tasks::OpenTask;

/// Where a ticket stands in its life at the desk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Lifecycle {
    /// Nothing has happened to it yet.
    New,
    /// A run is under way (by `TicketState::by`).
    Working,
    /// The model's (or a person's) draft passed every check.
    Drafted,
    /// A person must look at it: `TicketState::reason` says why.
    NeedsPerson,
    /// A lead's form is open as an approval (`TicketState::approval`); the run went as far
    /// as it could without the lead.
    WaitingForLead,
    Sent,
    HandedOver,
}

impl Lifecycle {
    /// As written in `queue --json` and on screen.
    pub fn as_str(self) -> &'static str {
        match self {
            Lifecycle::New => "new",
            Lifecycle::Working => "working",
            Lifecycle::Drafted => "drafted",
            Lifecycle::NeedsPerson => "needs_person",
            Lifecycle::WaitingForLead => "waiting_for_lead",
            Lifecycle::Sent => "sent",
            Lifecycle::HandedOver => "handed_over",
        }
    }
}

/// Where the conversation with the customer stands, beside the run's state: `open` while
/// the customer waits for us, `pending` once we replied, `solved` when a person says so.
/// Closed is solved and quiet for the config's days ([`TicketState::conversation_at`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Conversation {
    #[default]
    Open,
    Pending,
    Solved,
    Closed,
}

impl Conversation {
    pub fn as_str(self) -> &'static str {
        match self {
            Conversation::Open => "open",
            Conversation::Pending => "pending",
            Conversation::Solved => "solved",
            Conversation::Closed => "closed",
        }
    }
}

/// A person's word that the conversation is done.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SolvedBy {
    pub by: String,
    pub note: Option<String>,
    /// Unix milliseconds.
    pub at: i64,
}

/// How a reply that goes by mail stands with the mail server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeliveryState {
    pub message_id: String,
    /// `queued` (not yet taken), `delivered`, or `failed` (refused for good).
    pub state: String,
    /// The server's words on the latest attempt.
    pub words: Option<String>,
    pub attempts: u32,
}

/// A reply as it left the desk.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SentReply {
    pub text: String,
    pub by: String,
    /// Why it was sent with check findings open.
    pub override_reason: Option<String>,
    /// Unix milliseconds.
    pub at: i64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HandOver {
    pub by: String,
    pub to: String,
    pub note: String,
    /// Unix milliseconds.
    pub at: i64,
}

/// How far the run under way has come, so that a run cut off can say what may have happened.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct RunProgress {
    pub model_calls: u32,
    /// The latest call asked for in this run, and its outcome once it came back.
    pub last_call: Option<(String, Option<Outcome>)>,
    /// The latest call is outside the allow list and no yes for it is recorded: it has not
    /// been sent.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub waiting_for_yes: bool,
    /// Calls outside the allow list that reached (or may have reached) their server.
    pub side_effects: Vec<String>,
    /// Tools a person approved in this run (outside the allow list, by definition).
    pub approved: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TicketState {
    pub ticket: String,
    pub state: Lifecycle,
    /// Who acted last, and when (unix milliseconds); `None` for a new ticket.
    pub by: Option<String>,
    pub at: Option<i64>,
    /// Why a person must look at it (`NeedsPerson`), in words for that person.
    pub reason: Option<String>,
    /// The current draft: the model's, or a person's edit of it.
    pub draft: Option<String>,
    /// The open check findings on the draft, one sentence each.
    pub findings: Vec<String>,
    pub model_calls: u32,
    pub sent: Option<SentReply>,
    pub handed_over: Option<HandOver>,
    /// Set while a run is under way.
    pub run: Option<RunProgress>,
    /// The approval the ticket's run stopped for: open while waiting for a lead, answered
    /// until a run continues from it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval: Option<i64>,
    #[serde(default)]
    pub conversation: Conversation,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub solved: Option<SolvedBy>,
    /// The latest reply that went by mail, and how it stands.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delivery: Option<DeliveryState>,
    /// How many messages came in for the ticket by mail.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub messages: u32,
    /// Since when (unix ms) a customer's message by mail waits for an answer: the clock of
    /// its due time. `None` once answered or solved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waiting_since: Option<i64>,
    /// The desk has answered the ticket before (its next answer is a next reply).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub replied: bool,
    /// Whose ticket it is to answer; `None` while nobody's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub assignee: Option<String>,
    /// The ticket's tags, sorted, each once.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// Its calls that servers run as tasks and that have not ended yet.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tasks: Vec<OpenTask>,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// Who appended an event, and when.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stamp<'a> {
    pub by: &'a str,
    /// Unix milliseconds.
    pub at: i64,
}

/// Why the store refuses to append an event.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error("{ticket} was already sent by {by}; its reply cannot be changed or sent again")]
    AlreadySent { ticket: String, by: String },
    #[error("{ticket} has no reply to send: write one in the editor (e) first")]
    NoReply { ticket: String },
    #[error(
        "{ticket} has open check findings ({}): fix the reply, or send with an override reason",
        findings.join(" ")
    )]
    OpenFindings {
        ticket: String,
        findings: Vec<String>,
    },
}

impl TicketState {
    pub fn new(ticket: &str) -> Self {
        Self {
            ticket: ticket.to_owned(),
            state: Lifecycle::New,
            by: None,
            at: None,
            reason: None,
            draft: None,
            findings: Vec::new(),
            model_calls: 0,
            sent: None,
            handed_over: None,
            run: None,
            approval: None,
            conversation: Conversation::Open,
            solved: None,
            delivery: None,
            messages: 0,
            waiting_since: None,
            replied: false,
            assignee: None,
            tags: Vec::new(),
            tasks: Vec::new(),
        }
    }

    /// The conversation's state at `now` (unix milliseconds): solved and quiet for
    /// `close_after_days` is closed.
    pub fn conversation_at(&self, now: i64, close_after_days: u32) -> Conversation {
        match (&self.conversation, &self.solved) {
            (Conversation::Solved, Some(solved))
                if now - solved.at >= i64::from(close_after_days) * 86_400_000 =>
            {
                Conversation::Closed
            }
            (conversation, _) => *conversation,
        }
    }

    /// Whether a queue run takes this ticket: nobody has touched it, or its run stopped for a
    /// lead who has answered since, and goes on from the answer.
    pub fn is_for_the_queue(&self) -> bool {
        self.state == Lifecycle::New
            || (self.state == Lifecycle::NeedsPerson && self.approval.is_some())
    }

    /// Whether the store must refuse `event` for a ticket in this state.
    pub fn refuses(&self, event: &Event) -> Option<Refusal> {
        if let Some(sent) = &self.sent {
            return match event {
                // Notes, attachments, owners and tags are the desk's own; they never change a
                // reply. The mail server's answer, a person's word that it is solved and the
                // customer's next message come after a reply.
                Event::Noted { .. }
                | Event::Attached { .. }
                | Event::Assigned { .. }
                | Event::Tagged { .. }
                | Event::Delivery { .. }
                | Event::Solved { .. }
                | Event::MessageReceived { .. } => None,
                _ => Some(Refusal::AlreadySent {
                    ticket: self.ticket.clone(),
                    by: sent.by.clone(),
                }),
            };
        }
        match event {
            Event::Sent {
                text,
                override_reason,
                ..
            } => {
                if text.trim().is_empty() {
                    return Some(Refusal::NoReply {
                        ticket: self.ticket.clone(),
                    });
                }
                let overridden = override_reason
                    .as_deref()
                    .is_some_and(|r| !r.trim().is_empty());
                (!self.findings.is_empty() && !overridden).then(|| Refusal::OpenFindings {
                    ticket: self.ticket.clone(),
                    findings: self.findings.clone(),
                })
            }
            _ => None,
        }
    }

    /// What `event` does to the ticket. `allow` is the host's list of tools that change
    /// nothing, which decides what counts as a side effect of a run.
    pub fn apply(&mut self, event: &Event, stamp: &Stamp<'_>, allow: &[String]) {
        self.by = Some(stamp.by.to_owned());
        self.at = Some(stamp.at);
        match event {
            Event::Manifest(_)
            | Event::MailboxRead { .. }
            | Event::InputRequest { .. }
            | Event::Attached { .. }
            | Event::Noted { .. } => {}
            Event::Assigned { to, .. } => self.assignee = to.clone(),
            Event::Tagged { tag, removed, .. } => self.tag(tag, *removed),
            Event::TicketStarted { .. } => self.start_run(),
            Event::ModelCall { turn, .. } => {
                self.model_calls = *turn;
                if let Some(run) = &mut self.run {
                    run.model_calls = *turn;
                }
            }
            Event::ToolCall { tool, .. } => {
                if let Some(run) = &mut self.run {
                    run.last_call = Some((tool.clone(), None));
                    run.waiting_for_yes = !allow.contains(tool);
                }
            }
            Event::Consent { tool, approved, .. } => {
                if let Some(run) = &mut self.run
                    && *approved
                {
                    run.waiting_for_yes = false;
                    if !allow.contains(tool) {
                        run.approved.push(tool.clone());
                    }
                }
            }
            Event::Outcome { tool, outcome, .. } => self.came_back(tool, *outcome, allow),
            Event::Draft { text, findings, .. } => self.set_draft(text, findings),
            Event::TicketDone {
                model_calls,
                stopped_at_turn_limit,
                error,
                ..
            } => self.end_run(*model_calls, *stopped_at_turn_limit, error.as_deref()),
            Event::DraftEdited { text, findings, .. } => {
                let handed_over = self.state == Lifecycle::HandedOver;
                self.set_draft(text, findings);
                if handed_over {
                    self.state = Lifecycle::HandedOver;
                    self.reason = None;
                }
            }
            Event::Sent {
                by,
                text,
                override_reason,
                message_id,
                ..
            } => {
                self.sent(by, text, override_reason.as_deref(), stamp.at);
                self.delivery = message_id.as_ref().map(|id| DeliveryState {
                    message_id: id.clone(),
                    state: "queued".to_owned(),
                    words: None,
                    attempts: 0,
                });
            }
            Event::Delivery { .. } | Event::MessageReceived { .. } | Event::Solved { .. } => {
                self.mail_moved(event, stamp.at);
            }
            Event::HandedOver { by, to, note, .. } => {
                self.state = Lifecycle::HandedOver;
                self.reason = None;
                self.run = None;
                self.handed_over = Some(HandOver {
                    by: by.clone(),
                    to: to.clone(),
                    note: note.clone(),
                    at: stamp.at,
                });
            }
            Event::NeedsPerson { reason, .. } => {
                self.state = Lifecycle::NeedsPerson;
                self.reason = Some(reason.clone());
                self.run = None;
            }
            Event::ApprovalAsked { .. }
            | Event::ApprovalAnswered { .. }
            | Event::ApprovalWithdrawn { .. }
            | Event::ApprovalFellBack { .. }
            | Event::RunContinued { .. } => self.approval_moved(event),
            Event::TaskStarted { .. } | Event::TaskEnded { .. } => {
                self.task_moved(event, stamp.by, stamp.at)
            }
        }
    }

    /// The conversation's steps: the mail server's answer, a message in, a person's solve.
    fn mail_moved(&mut self, event: &Event, at: i64) {
        match event {
            Event::Delivery {
                message_id,
                delivered,
                words,
                attempt,
                permanent,
                ..
            } => {
                let state = match (delivered, permanent) {
                    (true, _) => "delivered",
                    (false, true) => "failed",
                    (false, false) => "queued",
                };
                self.delivery = Some(DeliveryState {
                    message_id: message_id.clone(),
                    state: state.to_owned(),
                    words: Some(words.clone()),
                    attempts: *attempt,
                });
            }
            Event::MessageReceived { message, .. } => {
                self.messages += 1;
                if let Some(automatic) = message.automatic {
                    if self.messages == 1 {
                        self.state = Lifecycle::NeedsPerson;
                        self.reason = Some(format!(
                            "opened by {}, which the desk never answers: read it, then solve the ticket or write yourself",
                            automatic.as_str()
                        ));
                    }
                    return;
                }
                self.conversation = Conversation::Open;
                self.solved = None;
                self.waiting_since.get_or_insert(at);
                if self.messages > 1 {
                    self.customer_wrote_again();
                }
            }
            Event::Solved { by, note, .. } => {
                self.waiting_since = None;
                self.conversation = Conversation::Solved;
                self.solved = Some(SolvedBy {
                    by: by.clone(),
                    note: note.clone(),
                    at,
                });
            }
            _ => {}
        }
    }

    /// The customer answered: the reply sent before answers an older message, so the
    /// ticket may be answered again, and a draft nobody sent is out of date. A run under
    /// way, a lead's approval and a hand-over keep their state.
    fn customer_wrote_again(&mut self) {
        self.sent = None;
        let stale = match self.state {
            Lifecycle::Sent | Lifecycle::Drafted | Lifecycle::New => true,
            Lifecycle::NeedsPerson => self.approval.is_none(),
            Lifecycle::Working | Lifecycle::WaitingForLead | Lifecycle::HandedOver => false,
        };
        if stale {
            self.state = Lifecycle::New;
            self.reason = None;
            self.draft = None;
            self.findings.clear();
        }
    }

    fn tag(&mut self, tag: &str, removed: bool) {
        match (self.tags.binary_search_by(|t| t.as_str().cmp(tag)), removed) {
            (Ok(at), true) => {
                self.tags.remove(at);
            }
            (Err(at), false) => self.tags.insert(at, tag.to_owned()),
            _ => {}
        }
    }

    fn start_run(&mut self) {
        self.state = Lifecycle::Working;
        self.reason = None;
        self.draft = None;
        self.findings.clear();
        self.model_calls = 0;
        self.handed_over = None;
        self.approval = None;
        self.run = Some(RunProgress::default());
    }

    /// A call's outcome: one outside the allow list that reached its server (or may have)
    /// is a side effect of the run.
    fn came_back(&mut self, tool: &str, outcome: Outcome, allow: &[String]) {
        let Some(run) = &mut self.run else {
            return;
        };
        run.last_call = Some((tool.to_owned(), Some(outcome)));
        let reached = matches!(
            outcome,
            Outcome::Result | Outcome::ToolError | Outcome::Failed
        );
        if reached && !allow.iter().any(|a| a == tool) {
            run.side_effects.push(tool.to_owned());
        }
    }

    fn end_run(&mut self, model_calls: u32, stopped_at_turn_limit: bool, error: Option<&str>) {
        self.model_calls = model_calls;
        self.run = None;
        let reason = match (error, stopped_at_turn_limit) {
            (Some(error), _) => Some(format!("the run ended without a draft: {error}")),
            (None, true) => Some(format!(
                "the model used its {model_calls} calls without writing a reply; answer the customer yourself or work the ticket again"
            )),
            (None, false) if self.draft.is_none() => {
                Some("the run ended without a draft".to_owned())
            }
            (None, false) => None,
        };
        if let Some(reason) = reason {
            self.state = Lifecycle::NeedsPerson;
            self.reason = Some(reason);
        }
    }

    fn sent(&mut self, by: &str, text: &str, override_reason: Option<&str>, at: i64) {
        self.state = Lifecycle::Sent;
        self.conversation = Conversation::Pending;
        self.waiting_since = None;
        self.replied = true;
        self.reason = None;
        self.draft = Some(text.to_owned());
        self.run = None;
        self.sent = Some(SentReply {
            text: text.to_owned(),
            by: by.to_owned(),
            override_reason: override_reason.map(str::to_owned),
            at,
        });
    }

    fn set_draft(&mut self, text: &str, findings: &[Finding]) {
        self.draft = Some(text.to_owned());
        self.findings = findings.iter().map(Finding::reason).collect();
        if self.findings.is_empty() {
            self.state = Lifecycle::Drafted;
            self.reason = None;
        } else {
            self.state = Lifecycle::NeedsPerson;
            self.reason = Some(format!(
                "the checks found {} in the draft",
                plural(self.findings.len(), "problem", "problems")
            ));
        }
    }

    /// Why a run that was under way when the desk stopped cannot simply be picked up: what
    /// it may already have done, in words for the person who takes the ticket.
    pub fn interrupted_reason(&self, allow: &[String]) -> String {
        format!(
            "interrupted {}. The desk stopped in the middle of this run and did not work it again.",
            self.under_way(allow)
        )
    }

    /// Where the run under way stood, for a person who must take it up: "while X waited for
    /// a person's yes: it was never called…", "after X: the result is unknown", ….
    pub fn under_way(&self, allow: &[String]) -> String {
        let run = self.run.clone().unwrap_or_default();
        let unanswered = match &run.last_call {
            Some((tool, None)) => Some(tool.as_str()),
            _ => None,
        };
        match (unanswered, run.side_effects.last()) {
            // No yes came, so the call was never sent.
            (Some(tool), None) if run.waiting_for_yes => format!(
                "while {tool} waited for a person's yes: it was never called, and nothing outside the allow list had run"
            ),
            (Some(tool), Some(earlier)) if run.waiting_for_yes => format!(
                "while {tool} waited for a person's yes (it was never called), after {earlier} had run: check what it did before answering the customer"
            ),
            (Some(tool), _) if !allow.iter().any(|a| a == tool) => {
                format!("after {tool}: the result is unknown")
            }
            (_, Some(tool)) => {
                format!("after {tool} had run: check what it did before answering the customer")
            }
            (Some(tool), None) => {
                format!("while {tool} ran; nothing outside the allow list had run")
            }
            (None, None) => format!(
                "during model call {}; nothing outside the allow list had run",
                run.model_calls + 1
            ),
        }
    }
}

fn plural(n: usize, one: &str, many: &str) -> String {
    if n == 1 {
        format!("{n} {one}")
    } else {
        format!("{n} {many}")
    }
}
