//! The desk's state and how it changes: host events in, key presses in, commands out.
//!
//! A key goes through the keymap to an `Action`, and `update` applies it; a modal that is
//! open sees its keys first (`app/modal_keys.rs`). Drawing only reads this (see `render`);
//! nothing here draws, and nothing here talks to the host but the `Command`s it returns.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers, MouseEvent, MouseEventKind};

use super::command_line::CommandLine;
use super::keymap::{Action, Keymap};
use super::modals::consent::ConsentModal;
use super::modals::draft::DraftEditor;
use super::modals::form::FormModal;
use super::modals::note::NoteInput;
pub use super::questions::{Asked, Questions};
pub use super::queue::{Filter, QueueItem, Status, ViewContext};
use super::review::{ReviewKey, ReviewScreen};
use super::search::Search;
use super::transcript_cache::TranscriptCache;
use crate::host::api::{
    ApprovalView, Command, ConsentAnswer, ConsentAsk, FormAnswer, FormAsk, Pending, PromptInfo,
    Question, ResourceInfo, ServerSummary, Ticket,
};
use crate::host::api::{SavedReply, SavedView};
pub use notices::{Announced, notice_bytes};

mod command_keys;
mod due;
mod host_events;
mod modal_keys;
mod notices;
mod queue_actions;
mod search_keys;

pub enum Modal {
    Consent(ConsentModal, Pending<ConsentAsk, ConsentAnswer>),
    Form(FormModal, Pending<FormAsk, FormAnswer>),
    Draft(DraftEditor, String),
    /// An internal note being written for a ticket.
    Note(NoteInput, String),
    /// Why a person takes a ticket over.
    TakeOver(NoteInput, String),
    /// Why a person withdraws the approval their ticket waits on.
    Withdraw(NoteInput, String),
    /// A person solving a ticket's conversation, with an optional note.
    Solve(NoteInput, String),
    /// A form of the desk's own: a prompt's arguments.
    PromptArgs(FormModal, String),
    /// A form of the desk's own: the arguments of a tool the person calls (its name).
    CallArgs(FormModal, String),
    Picker(Picker),
    /// The keys and the legend, scrolled this many rows.
    Help {
        scroll: u16,
    },
    /// The address to open to sign in to a server.
    SignIn {
        server: String,
        url: String,
    },
    /// The tools people trust, with this one chosen.
    Trust {
        selected: usize,
    },
    /// The servers and what each says of itself, scrolled this many rows.
    Servers {
        scroll: u16,
    },
    /// The lead's report, as the host last computed it ([`App::report`]).
    Report,
    /// A server's resource being read, scrolled this many rows.
    Resource {
        server: String,
        uri: String,
        text: String,
        scroll: u16,
    },
}

pub enum PickerKind {
    Prompts,
    Resources,
    /// The tools a person may call on the ticket.
    Tools,
    /// What review mode can open: this desk's record, or a recording.
    Reviews,
    /// The team's open approvals.
    Approvals,
}

pub struct Picker {
    pub kind: PickerKind,
    pub selected: usize,
}

/// What the model has written so far on one turn of a ticket, while its reply streams.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Writing {
    pub turn: u32,
    pub content: String,
    /// The tool the reply calls, once named.
    pub calling: Option<String>,
}

/// How far a call under way has got, as its server last reported it.
#[derive(Debug, Clone, PartialEq)]
pub struct CallProgress {
    pub turn: u32,
    pub tool: String,
    pub progress: f64,
    pub total: Option<f64>,
    /// The server's own words: data, shown cleaned.
    pub message: Option<String>,
    /// The call runs as the server's task: its status (then `progress` counts the seconds
    /// the desk has waited on it).
    pub task: Option<String>,
}

pub struct App {
    pub items: Vec<QueueItem>,
    pub filter: Filter,
    pub selected: usize,
    /// The histories of the tickets looked at lately, read from the record on demand.
    pub transcripts: TranscriptCache,
    /// Questions no modal shows now.
    pub waiting: Questions,
    pub modal: Option<Modal>,
    pub review: Option<ReviewScreen>,
    /// The search being typed, or the last one while `n`/`N` step through what it finds.
    pub search: Option<Search>,
    pub servers: Vec<ServerSummary>,
    pub prompts: Vec<PromptInfo>,
    pub resources: Vec<ResourceInfo>,
    /// The tools a person may call, as the host last listed them.
    pub tools: Vec<crate::host::api::ToolInfo>,
    /// The ticket the host listed `tools` for: their suggested values are that ticket's.
    pub tools_ticket: Option<String>,
    /// The calls the current ticket's results offer next, listed first in the tools picker.
    pub next_steps: Vec<crate::host::api::NextStep>,
    /// What the model has written so far on each ticket whose reply is streaming, until the
    /// record holds the whole reply.
    pub writing: std::collections::BTreeMap<String, Writing>,
    /// How far the call under way on each ticket has got, until its outcome is recorded.
    pub progress: std::collections::BTreeMap<String, CallProgress>,
    /// The team's open approvals, as the host last listed them.
    pub approvals: Vec<ApprovalView>,
    /// The tools people trust to run unasked, as the host last reported them.
    pub trust: Vec<crate::host::api::TrustGrant>,
    /// The lead's report as the host last computed it; none while it is being read.
    pub report: Option<Box<crate::host::api::Report>>,
    pub model: String,
    pub staff: String,
    /// On a team's record: whether the person at this desk is a lead (the database's word).
    pub lead: Option<bool>,
    pub message: Option<String>,
    /// The approval a lead asked to answer, while the message says its form is on its way.
    pub opening_approval: Option<i64>,
    /// The ticket whose next step a person asked for (`C`), while the tools are on their way.
    pub opening_next_step: Option<String>,
    /// Lines scrolled up from the end of the ticket pane; 0 follows the live turn.
    pub scroll_back: u16,
    pub queue_run: Option<(usize, usize)>,
    pub exit: bool,
    /// Where the queue pane was last drawn, for mouse clicks (set by the renderer's caller).
    pub queue_area: Option<ratatui::layout::Rect>,
    /// The recording review mode offers beside the desk's record (`v`).
    pub review_source: Option<std::path::PathBuf>,
    /// The desk's record file, which review mode opens first.
    pub record_file: Option<std::path::PathBuf>,
    /// Due times, when the config has `[sla]`.
    pub sla: Option<crate::host::api::Sla>,
    /// Now (unix ms): the system's clock, or a test's.
    pub clock: fn() -> i64,
    /// The keys, with the config's `[keys]` applied.
    pub keymap: Keymap,
    /// The person's own views, from the config's `[views]`.
    pub views: Vec<SavedView>,
    /// The tickets marked (`space`) for a command to act on all at once.
    pub marked: std::collections::BTreeSet<String>,
    /// The command line, while it is open (`:`).
    pub command_line: Option<CommandLine>,
    /// Saved replies and macros (`:reply`, `:macro`).
    pub replies: Vec<SavedReply>,
    /// How the terminal announces an approval to a lead (`[approvals] notice`).
    pub notice: crate::config::Notice,
    /// The approvals announced so far.
    pub announced: Announced,
    /// Announcements the terminal has not given yet (see [`App::take_notices`]).
    pub notices: Vec<String>,
}

impl App {
    pub fn new(tickets: Vec<Ticket>, model: String, staff: String) -> Self {
        Self {
            items: tickets.into_iter().map(QueueItem::new).collect(),
            filter: Filter::All,
            selected: 0,
            transcripts: TranscriptCache::default(),
            waiting: Questions::default(),
            modal: None,
            review: None,
            search: None,
            servers: vec![],
            prompts: vec![],
            resources: vec![],
            tools: vec![],
            next_steps: vec![],
            tools_ticket: None,
            writing: std::collections::BTreeMap::new(),
            progress: std::collections::BTreeMap::new(),
            approvals: vec![],
            trust: vec![],
            report: None,
            model,
            staff,
            lead: None,
            message: None,
            opening_approval: None,
            opening_next_step: None,
            scroll_back: 0,
            queue_run: None,
            exit: false,
            queue_area: None,
            review_source: None,
            record_file: None,
            sla: None,
            clock: crate::clock::unix_ms,
            keymap: Keymap::default(),
            views: Vec::new(),
            marked: std::collections::BTreeSet::new(),
            command_line: None,
            replies: Vec::new(),
            notice: crate::config::Notice::default(),
            announced: Announced::default(),
            notices: Vec::new(),
        }
    }

    /// The desk with the team's saved replies and macros.
    pub fn with_replies(mut self, replies: Vec<SavedReply>) -> Self {
        self.replies = replies;
        self
    }

    /// The desk with the person's own views after its built-in ones.
    pub fn with_views(mut self, views: Vec<SavedView>) -> Self {
        self.views = views;
        self
    }

    /// What the views need besides the tickets: who is here, and now.
    pub fn view_context(&self) -> ViewContext<'_> {
        let now = self.now();
        let today = match &self.sla {
            Some(sla) => sla.hours.day_start(now),
            None => now - now.rem_euclid(86_400_000),
        };
        ViewContext {
            me: &self.staff,
            now,
            warn_within: self.warn_within(),
            today,
            saved: &self.views,
        }
    }

    /// The desk with this person's keys.
    pub fn with_keymap(mut self, keymap: Keymap) -> Self {
        self.keymap = keymap;
        self
    }

    /// The recording that `v` opens in review mode.
    pub fn with_review_source(mut self, path: std::path::PathBuf) -> Self {
        self.review_source = Some(path);
        self
    }

    /// A desk on a team's record, as a lead or as staff.
    pub fn on_team(mut self, lead: bool) -> Self {
        self.lead = Some(lead);
        self
    }

    /// The desk's record file, which `v` offers to review first.
    pub fn with_record(mut self, path: std::path::PathBuf) -> Self {
        self.record_file = Some(path);
        self
    }

    /// What `v` offers: (label, path, whether it is the desk's record).
    pub fn review_choices(&self) -> Vec<(String, std::path::PathBuf, bool)> {
        let mut choices = Vec::new();
        if let Some(path) = &self.record_file {
            choices.push((
                "this desk's record: every ticket's history, people's actions included".to_owned(),
                path.clone(),
                true,
            ));
        }
        if let Some(path) = &self.review_source {
            choices.push((
                format!("the recording {}", path.display()),
                path.clone(),
                false,
            ));
        }
        choices
    }

    fn open_review(&mut self, choice: usize) {
        let Some((_, path, is_record)) = self.review_choices().into_iter().nth(choice) else {
            self.message = Some(
                "nothing to review: this desk keeps no record and has no recording".to_owned(),
            );
            return;
        };
        let opened = if is_record {
            crate::recording::review::Review::open_record(&path).map_err(|e| e.to_string())
        } else {
            crate::recording::review::Review::open(&path).map_err(|e| e.to_string())
        };
        match opened {
            Ok(review) => self.review = Some(ReviewScreen::new(review)),
            Err(e) => self.message = Some(format!("cannot open {}: {e}", path.display())),
        }
    }

    /// Indices of the items the filter shows.
    pub fn visible(&self) -> Vec<usize> {
        let cx = self.view_context();
        (0..self.items.len())
            .filter(|&i| self.filter.admits(&self.items[i], &cx))
            .collect()
    }

    /// How many tickets the filter shows (without building the list when it shows all).
    pub fn visible_count(&self) -> usize {
        match self.filter {
            Filter::All => self.items.len(),
            _ => {
                let cx = self.view_context();
                self.items
                    .iter()
                    .filter(|i| self.filter.admits(i, &cx))
                    .count()
            }
        }
    }

    /// The item index of the `n`th ticket the filter shows.
    pub fn visible_at(&self, n: usize) -> Option<usize> {
        match self.filter {
            Filter::All => (n < self.items.len()).then_some(n),
            _ => {
                let cx = self.view_context();
                (0..self.items.len())
                    .filter(|&i| self.filter.admits(&self.items[i], &cx))
                    .nth(n)
            }
        }
    }

    pub fn current(&self) -> Option<&QueueItem> {
        self.visible_at(self.selected).map(|i| &self.items[i])
    }

    /// The ticket on screen, when its history must be asked of the host (once: the desk
    /// then holds it, and follows it as it changes). The driver asks after every change.
    pub fn transcript_wanted(&mut self) -> Option<String> {
        let ticket = self.current()?.ticket.ticket_id.clone();
        self.transcripts.want(&ticket).then_some(ticket)
    }

    fn item_mut(&mut self, ticket: &str) -> Option<&mut QueueItem> {
        self.items.iter_mut().find(|i| i.ticket.ticket_id == ticket)
    }

    /// The same customer's other tickets, for the ticket pane.
    pub fn same_customer(&self, item: &QueueItem) -> Vec<&QueueItem> {
        self.items
            .iter()
            .filter(|other| {
                other.ticket.who() == item.ticket.who()
                    && other.ticket.ticket_id != item.ticket.ticket_id
            })
            .collect()
    }

    /// Signs in to the first server that asks for it (the status bar names it).
    fn sign_in(&mut self) -> Option<Command> {
        let Some(server) = self.servers.iter().find(|s| s.sign_in.is_some()) else {
            self.message = Some("no server asks for a sign-in".to_owned());
            return None;
        };
        self.message = Some(format!("signing in to {}…", server.prefix));
        Some(Command::SignIn {
            server: server.prefix.clone(),
        })
    }

    /// A question from the host: queued, and shown at once when nothing else is open.
    pub fn on_question(&mut self, question: Question) {
        let asked = match question {
            Question::Consent(p) => Asked::Consent(p),
            Question::Form(p) => {
                if p.ask.asked_by.is_some() {
                    self.form_arrived();
                }
                Asked::Form(p)
            }
        };
        if let Some(ticket) = asked.ticket().map(str::to_owned)
            && let Some(item) = self.item_mut(&ticket)
        {
            item.asking = Some(match asked {
                Asked::Consent(_) => Status::NeedsConsent,
                Asked::Form(_) => Status::NeedsLead,
            });
            item.refresh();
        }
        self.waiting.push(asked);
        if self.modal.is_none() && self.review.is_none() {
            self.open_question(None);
        }
    }

    /// Opens a waiting question: `asked` when the person asked for one (put-back questions
    /// too), else only one nobody put back.
    fn open_question(&mut self, asked: Option<Asked>) {
        let Some(asked) = asked.or_else(|| self.waiting.take_unasked()) else {
            return;
        };
        self.modal = Some(match asked {
            Asked::Consent(pending) => {
                let ticket = self.ticket_line(&pending.ask.ticket);
                Modal::Consent(ConsentModal::new(pending.ask.clone(), ticket), pending)
            }
            Asked::Form(pending) => Modal::Form(FormModal::new(pending.ask.clone()), pending),
        });
    }

    fn ticket_line(&self, id: &str) -> String {
        match self.items.iter().find(|i| i.ticket.ticket_id == id) {
            Some(item) => format!("{} from {}: {}", id, item.ticket.who(), item.ticket.subject),
            None => id.to_owned(),
        }
    }

    /// Puts an open question back in the queue, as it is (the person answers it later).
    fn later(&mut self) {
        match self.modal.take() {
            Some(Modal::Consent(_, pending)) => self.waiting.put_back(Asked::Consent(pending)),
            Some(Modal::Form(_, pending)) => self.waiting.put_back(Asked::Form(pending)),
            other => self.modal = other,
        }
    }

    /// A key press: the open modal first, then a search being typed, then the desk's keys
    /// through the keymap. Returns a command for the host when the key asks for one.
    pub fn on_key(&mut self, key: KeyEvent) -> Option<Command> {
        // Ctrl-C quits from anywhere, review and modals included.
        if key.code == KeyCode::Char('c') && key.modifiers.contains(KeyModifiers::CONTROL) {
            self.exit = true;
            return None;
        }
        if let Some(review) = &mut self.review {
            if review.handle_key(key) == ReviewKey::Quit {
                self.review = None;
            }
            return None;
        }
        if self.modal.is_some() {
            if self.keymap.question_action(key) == Some(Action::PutBack) {
                return self.update(Action::PutBack);
            }
            return self.on_modal_key(key);
        }
        if self.command_line.is_some() {
            return self.on_command_key(key);
        }
        if self.search.as_ref().is_some_and(|s| s.typing) {
            self.on_search_key(key);
            return None;
        }
        self.message = None;
        if self.search.is_some() {
            match self.keymap.found_action(key) {
                Some(action) => return self.update(action),
                // Any other key ends the search and does what it always does.
                None => self.search = None,
            }
        }
        self.keymap
            .desk_action(key)
            .and_then(|action| self.update(action))
    }

    /// Applies what the person asked for; returns a command when the host must act.
    pub fn update(&mut self, action: Action) -> Option<Command> {
        match action {
            Action::Quit => self.exit = true,
            Action::SelectNext => self.select(1),
            Action::SelectPrevious => self.select(-1),
            Action::SelectFirst => {
                self.selected = 0;
                self.scroll_back = 0;
            }
            Action::FollowLive => self.scroll_back = 0,
            Action::ScrollBack => self.scroll_back = self.scroll_back.saturating_add(10),
            Action::ScrollForward => self.scroll_back = self.scroll_back.saturating_sub(10),
            Action::CycleFilter => {
                self.filter = self.filter.next(self.views.len());
                self.selected = 0;
            }
            Action::WorkSelected => return self.work_selected(),
            Action::WorkNew => return self.work_new(),
            Action::Stop => return self.stop_selected(),
            Action::StopQueue => {
                if self.queue_run.is_none() {
                    self.message =
                        Some("the queue is not being worked on this desk (W works it)".to_owned());
                    return None;
                }
                self.message =
                    Some("stopping the queue: tickets it finished stay as they are".to_owned());
                return Some(Command::StopQueue);
            }
            Action::OpenSelected => return self.open_selected(),
            Action::AnswerNext => match self.waiting.take_next() {
                Some(asked) => self.open_question(Some(asked)),
                None => self.message = Some("no question is waiting".to_owned()),
            },
            Action::EditSelected => self.edit_selected(),
            Action::AddNote => self.add_note(),
            Action::Solve => self.solve(),
            Action::TakeOver => self.take_over(),
            Action::PickApproval => {
                // Approvals are a team's: on one person's desk a lead's form is answered
                // where it is asked.
                let Some(lead) = self.lead else {
                    self.message = Some(
                        "approvals are a team's: on one person's desk a lead's form opens where it is asked; start the desk with --store to work on a team's record".to_owned(),
                    );
                    return None;
                };
                if !lead {
                    self.message = Some(
                        "approvals are answered by leads: you are on the team's staff, so a lead answers them".to_owned(),
                    );
                    return None;
                }
                self.open_picker(PickerKind::Approvals);
                return Some(Command::ListApprovals);
            }
            Action::Withdraw => self.withdraw(),
            Action::PickPrompt => {
                let ticket = self.current()?.ticket.ticket_id.clone();
                self.open_picker(PickerKind::Prompts);
                // What the host reads from the ticket for the prompt's arguments comes with
                // the tools, while the person picks.
                return Some(Command::ListTools(ticket));
            }
            Action::CallTool => {
                let ticket = self.current()?.ticket.ticket_id.clone();
                self.next_steps.clear();
                self.open_picker(PickerKind::Tools);
                // The tools as the host offers them now; the picker shows them when they come.
                return Some(Command::ListTools(ticket));
            }
            Action::NextStep => {
                let ticket = self.current()?.ticket.ticket_id.clone();
                self.next_steps.clear();
                self.message = Some(format!("reading {ticket}'s results for a next step…"));
                self.opening_next_step = Some(ticket.clone());
                return Some(Command::ListTools(ticket));
            }
            Action::PickResource => {
                self.open_picker(PickerKind::Resources);
                // The list as the servers have it now; the picker shows it when it comes.
                return Some(Command::ListResources);
            }
            Action::PickReview => self.open_picker(PickerKind::Reviews),
            Action::Help => self.modal = Some(Modal::Help { scroll: 0 }),
            Action::Servers => self.modal = Some(Modal::Servers { scroll: 0 }),
            Action::Report => {
                self.report = None;
                self.modal = Some(Modal::Report);
                return Some(Command::LeadReport);
            }
            Action::SignIn => return self.sign_in(),
            Action::Trust => {
                self.modal = Some(Modal::Trust { selected: 0 });
                return Some(Command::ListTrust);
            }
            Action::Search => self.search = Some(Search::new()),
            Action::NextMatch => self.find(true),
            Action::PreviousMatch => self.find(false),
            Action::EndSearch => self.search = None,
            Action::PutBack => self.later(),
            Action::Own => return self.own(),
            Action::Mark => self.toggle_mark(),
            Action::CommandLine => self.open_command_line(),
        }
        None
    }

    fn open_picker(&mut self, kind: PickerKind) {
        self.modal = Some(Modal::Picker(Picker { kind, selected: 0 }));
    }

    /// Text pasted into the terminal (bracketed paste): it goes to the editor or form field
    /// that is open, never to the queue's keys.
    pub fn on_paste(&mut self, text: &str) {
        match &mut self.modal {
            Some(Modal::Draft(editor, _)) => editor.paste(text),
            Some(Modal::Note(input, _))
            | Some(Modal::TakeOver(input, _))
            | Some(Modal::Withdraw(input, _))
            | Some(Modal::Solve(input, _)) => input.paste(text),
            Some(Modal::Form(view, _))
            | Some(Modal::PromptArgs(view, _))
            | Some(Modal::CallArgs(view, _)) => view.paste(text),
            _ => {}
        }
    }

    pub fn on_mouse(&mut self, mouse: MouseEvent) {
        match mouse.kind {
            MouseEventKind::ScrollUp => self.scroll_back = self.scroll_back.saturating_add(3),
            MouseEventKind::ScrollDown => self.scroll_back = self.scroll_back.saturating_sub(3),
            MouseEventKind::Down(_) => {
                if let Some(area) = self.queue_area
                    && mouse.column >= area.x
                    && mouse.column < area.x + area.width
                    && mouse.row > area.y
                    && mouse.row < area.y + area.height.saturating_sub(1)
                {
                    let rows = area.height.saturating_sub(2) as usize;
                    let row = queue_offset(self.selected, rows) + (mouse.row - area.y - 1) as usize;
                    if row < self.visible_count() {
                        self.selected = row;
                        self.scroll_back = 0;
                    }
                }
            }
            _ => {}
        }
    }

    /// How many questions wait, and for which tickets.
    pub fn waiting_summary(&self) -> Vec<String> {
        self.waiting.iter().map(Asked::summary).collect()
    }
}

/// Who a ticket handed over from the draft editor goes to.
pub const HAND_OVER_TO: &str = "a person";

/// The first queue row shown when `rows` fit and `selected` must be among them.
pub fn queue_offset(selected: usize, rows: usize) -> usize {
    (selected + 1).saturating_sub(rows.max(1))
}

/// What the desk says while an approval's form is on its way from the host.
pub(super) fn approval_opening(id: i64) -> String {
    format!("approval {id}: its form opens when the host has it")
}
