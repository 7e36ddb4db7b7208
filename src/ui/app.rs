//! The desk's state and how it changes: host events in, key presses in, commands out.
//! Drawing only reads this (see `render`).

use std::collections::{BTreeMap, VecDeque};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers, MouseEvent, MouseEventKind};

use super::ModalOutcome;
use super::modals::consent::ConsentModal;
use super::modals::draft::{DraftAction, DraftEditor};
use super::modals::form::FormModal;
use super::modals::note::NoteInput;
use super::review::{ReviewKey, ReviewScreen};
use crate::host::api::{
    Command, ConsentAnswer, ConsentAsk, Entry, EntryKind, Field, FieldKind, FieldValue, FormAnswer,
    FormAsk, FormKind, HostEvent, Lifecycle, Pending, PersonPrompt, PromptInfo, Question,
    ResourceInfo, ServerSummary, Ticket, TicketState, rfc3339,
};

/// Where a ticket stands, as the queue shows it: its state in the record, or the question it
/// waits on at this desk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    New,
    Working,
    NeedsConsent,
    NeedsLead,
    Drafted,
    NeedsPerson,
    HandedOver,
    Sent,
}

impl Status {
    pub fn label(self) -> &'static str {
        match self {
            Status::New => "new",
            Status::Working => "working",
            Status::NeedsConsent => "needs consent",
            Status::NeedsLead => "needs lead",
            Status::Drafted => "drafted",
            Status::NeedsPerson => "needs person",
            Status::HandedOver => "handed over",
            Status::Sent => "sent",
        }
    }

    fn of(state: Lifecycle) -> Self {
        match state {
            Lifecycle::New => Status::New,
            Lifecycle::Working => Status::Working,
            Lifecycle::Drafted => Status::Drafted,
            Lifecycle::NeedsPerson => Status::NeedsPerson,
            Lifecycle::HandedOver => Status::HandedOver,
            Lifecycle::Sent => Status::Sent,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Filter {
    All,
    /// Waiting on a person: a question, a draft to send, a ticket that needs a person.
    NeedsMe,
    /// Needs a person, or handed over to one.
    NeedsPerson,
}

impl Filter {
    pub fn label(self) -> &'static str {
        match self {
            Filter::All => "all",
            Filter::NeedsMe => "needs me",
            Filter::NeedsPerson => "needs a person",
        }
    }

    fn next(self) -> Self {
        match self {
            Filter::All => Filter::NeedsMe,
            Filter::NeedsMe => Filter::NeedsPerson,
            Filter::NeedsPerson => Filter::All,
        }
    }

    fn admits(self, status: Status) -> bool {
        match self {
            Filter::All => true,
            Filter::NeedsMe => matches!(
                status,
                Status::NeedsConsent | Status::NeedsLead | Status::Drafted | Status::NeedsPerson
            ),
            Filter::NeedsPerson => matches!(status, Status::NeedsPerson | Status::HandedOver),
        }
    }
}

#[derive(Debug, Clone)]
pub struct QueueItem {
    pub ticket: Ticket,
    /// The ticket's state as the desk's record holds it.
    pub state: TicketState,
    /// The question this desk is waiting on a person for, while the run is under way.
    pub asking: Option<Status>,
    pub status: Status,
}

impl QueueItem {
    fn new(ticket: Ticket) -> Self {
        let state = TicketState::new(&ticket.ticket_id);
        Self {
            ticket,
            state,
            asking: None,
            status: Status::New,
        }
    }

    fn set_state(&mut self, state: TicketState) {
        if state.state != Lifecycle::Working {
            self.asking = None;
        }
        self.state = state;
        self.refresh();
    }

    fn refresh(&mut self) {
        self.status = self.asking.unwrap_or(Status::of(self.state.state));
    }
}

/// A question waiting for a person.
pub enum Asked {
    Consent(Pending<ConsentAsk, ConsentAnswer>),
    Form(Pending<FormAsk, FormAnswer>),
}

impl Asked {
    pub fn ticket(&self) -> Option<&str> {
        match self {
            Asked::Consent(p) => Some(&p.ask.ticket),
            Asked::Form(p) => p.ask.ticket.as_deref(),
        }
    }

    pub fn summary(&self) -> String {
        match self {
            Asked::Consent(p) => format!("{}: may {} run?", p.ask.ticket, p.ask.tool),
            Asked::Form(p) => format!("{} asks: {}", p.ask.server, p.ask.message),
        }
    }
}

pub enum Modal {
    Consent(ConsentModal, Pending<ConsentAsk, ConsentAnswer>),
    Form(FormModal, Pending<FormAsk, FormAnswer>),
    Draft(DraftEditor, String),
    /// An internal note being written for a ticket.
    Note(NoteInput, String),
    /// A form of the desk's own: a prompt's arguments.
    PromptArgs(FormModal, String),
    Picker(Picker),
    Help,
}

pub enum PickerKind {
    Prompts,
    Resources,
    /// What review mode can open: this desk's record, or a recording.
    Reviews,
}

pub struct Picker {
    pub kind: PickerKind,
    pub selected: usize,
}

pub struct App {
    pub items: Vec<QueueItem>,
    pub filter: Filter,
    pub selected: usize,
    /// Each ticket's whole history, as the record holds it.
    pub transcripts: BTreeMap<String, Vec<Entry>>,
    pub waiting: VecDeque<Asked>,
    pub modal: Option<Modal>,
    pub review: Option<ReviewScreen>,
    pub servers: Vec<ServerSummary>,
    pub prompts: Vec<PromptInfo>,
    pub resources: Vec<ResourceInfo>,
    pub model: String,
    pub staff: String,
    pub message: Option<String>,
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
}

impl App {
    pub fn new(tickets: Vec<Ticket>, model: String, staff: String) -> Self {
        Self {
            items: tickets.into_iter().map(QueueItem::new).collect(),
            filter: Filter::All,
            selected: 0,
            transcripts: BTreeMap::new(),
            waiting: VecDeque::new(),
            modal: None,
            review: None,
            servers: vec![],
            prompts: vec![],
            resources: vec![],
            model,
            staff,
            message: None,
            scroll_back: 0,
            queue_run: None,
            exit: false,
            queue_area: None,
            review_source: None,
            record_file: None,
        }
    }

    /// The recording that `v` opens in review mode.
    pub fn with_review_source(mut self, path: std::path::PathBuf) -> Self {
        self.review_source = Some(path);
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
        (0..self.items.len())
            .filter(|&i| self.filter.admits(self.items[i].status))
            .collect()
    }

    /// How many tickets the filter shows (without building the list when it shows all).
    pub fn visible_count(&self) -> usize {
        match self.filter {
            Filter::All => self.items.len(),
            _ => self
                .items
                .iter()
                .filter(|i| self.filter.admits(i.status))
                .count(),
        }
    }

    /// The item index of the `n`th ticket the filter shows.
    pub fn visible_at(&self, n: usize) -> Option<usize> {
        match self.filter {
            Filter::All => (n < self.items.len()).then_some(n),
            _ => (0..self.items.len())
                .filter(|&i| self.filter.admits(self.items[i].status))
                .nth(n),
        }
    }

    pub fn current(&self) -> Option<&QueueItem> {
        self.visible_at(self.selected).map(|i| &self.items[i])
    }

    fn item_mut(&mut self, ticket: &str) -> Option<&mut QueueItem> {
        self.items.iter_mut().find(|i| i.ticket.ticket_id == ticket)
    }

    /// The same customer's other tickets, for the ticket pane.
    pub fn same_customer(&self, item: &QueueItem) -> Vec<&QueueItem> {
        self.items
            .iter()
            .filter(|other| {
                other.ticket.customer_id == item.ticket.customer_id
                    && other.ticket.ticket_id != item.ticket.ticket_id
            })
            .collect()
    }

    /// A host event changes the state; a question may open a modal.
    pub fn on_host(&mut self, event: HostEvent) {
        match event {
            HostEvent::Servers(servers) => self.servers = servers,
            HostEvent::Prompts(prompts) => self.prompts = prompts,
            HostEvent::Resources(resources) => self.resources = resources,
            HostEvent::Record(history) => {
                for (state, entries) in history {
                    self.transcripts.insert(state.ticket.clone(), entries);
                    self.apply_state(state);
                }
            }
            HostEvent::Happened {
                ticket,
                entries,
                state,
            } => {
                if let Some((done, _)) = &mut self.queue_run
                    && state.run.is_none()
                    && entries
                        .iter()
                        .any(|e| matches!(e.kind, EntryKind::RunEnded { .. }))
                {
                    *done += 1;
                }
                self.transcripts.entry(ticket).or_default().extend(entries);
                self.apply_state(*state);
            }
            HostEvent::QueueFinished(summary) => {
                self.message = Some(format!(
                    "queue worked: {} tickets, {} model calls, {} tool calls, {} for a person",
                    summary.tickets_worked,
                    summary.model_calls,
                    summary.tool_calls,
                    summary.flagged_for_person
                ));
            }
            HostEvent::Problem(problem) => self.message = Some(problem),
            HostEvent::Stopped => self.exit = true,
        }
    }

    fn apply_state(&mut self, state: TicketState) {
        if let Some(Modal::Draft(editor, ticket)) = &mut self.modal
            && *ticket == state.ticket
        {
            editor.set_findings(&state.findings);
        }
        if let Some(item) = self.item_mut(&state.ticket) {
            item.set_state(state);
        }
    }

    /// A question from the host: queued, and shown at once when nothing else is open.
    pub fn on_question(&mut self, question: Question) {
        let asked = match question {
            Question::Consent(p) => Asked::Consent(p),
            Question::Form(p) => Asked::Form(p),
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
        self.waiting.push_back(asked);
        if self.modal.is_none() && self.review.is_none() {
            self.open_next_question();
        }
    }

    fn open_next_question(&mut self) {
        let Some(asked) = self.waiting.pop_front() else {
            self.message = Some("no question is waiting".to_owned());
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
            Some(item) => format!(
                "{} from {}: {}",
                id, item.ticket.customer_id, item.ticket.subject
            ),
            None => id.to_owned(),
        }
    }

    /// Puts an open question back in the queue, as it is (the person answers it later).
    fn later(&mut self) {
        match self.modal.take() {
            Some(Modal::Consent(_, pending)) => self.waiting.push_front(Asked::Consent(pending)),
            Some(Modal::Form(_, pending)) => self.waiting.push_front(Asked::Form(pending)),
            other => self.modal = other,
        }
    }

    /// A key press: the open modal first, then the desk's own keys. Returns a command for
    /// the host when the key asks for one.
    pub fn on_key(&mut self, key: KeyEvent) -> Option<Command> {
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
            return self.on_modal_key(key);
        }
        self.message = None;
        let shift = key.modifiers.contains(KeyModifiers::SHIFT);
        match key.code {
            KeyCode::Char('q') => {
                self.exit = true;
                None
            }
            KeyCode::Down | KeyCode::Char('j') => {
                self.select(1);
                None
            }
            KeyCode::Up | KeyCode::Char('k') => {
                self.select(-1);
                None
            }
            KeyCode::Home => {
                self.selected = 0;
                self.scroll_back = 0;
                None
            }
            KeyCode::End => {
                self.scroll_back = 0;
                None
            }
            KeyCode::PageUp => {
                self.scroll_back = self.scroll_back.saturating_add(10);
                None
            }
            KeyCode::PageDown => {
                self.scroll_back = self.scroll_back.saturating_sub(10);
                None
            }
            KeyCode::Char('f') => {
                self.filter = self.filter.next();
                self.selected = 0;
                None
            }
            KeyCode::Char('w') if !shift => self.work_selected(),
            KeyCode::Char('W') | KeyCode::Char('w') => {
                let ids: Vec<String> = self
                    .items
                    .iter()
                    .filter(|i| i.status == Status::New)
                    .map(|i| i.ticket.ticket_id.clone())
                    .collect();
                if ids.is_empty() {
                    self.message =
                        Some("no new ticket is left: every ticket has been worked".to_owned());
                    return None;
                }
                self.queue_run = Some((0, ids.len()));
                Some(Command::WorkQueue {
                    tickets: ids,
                    prompt: None,
                })
            }
            KeyCode::Enter => self.open_selected(),
            KeyCode::Char('a') => {
                self.open_next_question();
                None
            }
            KeyCode::Char('e') => {
                self.edit_selected();
                None
            }
            KeyCode::Char('p') => {
                self.modal = Some(Modal::Picker(Picker {
                    kind: PickerKind::Prompts,
                    selected: 0,
                }));
                None
            }
            KeyCode::Char('r') => {
                self.modal = Some(Modal::Picker(Picker {
                    kind: PickerKind::Resources,
                    selected: 0,
                }));
                // The list as the servers have it now; the picker shows it when it comes.
                Some(Command::ListResources)
            }
            KeyCode::Char('?') => {
                self.modal = Some(Modal::Help);
                None
            }
            KeyCode::Char('v') => {
                self.modal = Some(Modal::Picker(Picker {
                    kind: PickerKind::Reviews,
                    selected: 0,
                }));
                None
            }
            KeyCode::Char('n') => {
                let item = self.current()?;
                let id = item.ticket.ticket_id.clone();
                self.modal = Some(Modal::Note(NoteInput::new(self.ticket_line(&id)), id));
                None
            }
            _ => None,
        }
    }

    fn select(&mut self, delta: i64) {
        let count = self.visible_count() as i64;
        if count == 0 {
            return;
        }
        self.selected = (self.selected as i64 + delta).clamp(0, count - 1) as usize;
        self.scroll_back = 0;
    }

    fn work_selected(&mut self) -> Option<Command> {
        let item = self.current()?;
        let id = item.ticket.ticket_id.clone();
        match item.status {
            Status::Sent => {
                self.message = Some(format!("{id} was sent already"));
                None
            }
            Status::Working | Status::NeedsConsent | Status::NeedsLead => {
                self.message = Some(format!("{id} is being worked"));
                None
            }
            Status::New | Status::Drafted | Status::NeedsPerson | Status::HandedOver => {
                Some(Command::WorkTicket(id))
            }
        }
    }

    /// Enter: the ticket's waiting question, its reply, or work it when it is new.
    fn open_selected(&mut self) -> Option<Command> {
        let id = self.current()?.ticket.ticket_id.clone();
        if let Some(index) = self
            .waiting
            .iter()
            .position(|a| a.ticket() == Some(id.as_str()))
        {
            if let Some(asked) = self.waiting.remove(index) {
                self.waiting.push_front(asked);
            }
            self.open_next_question();
            return None;
        }
        match self.current()?.status {
            Status::New => self.work_selected(),
            Status::Working | Status::NeedsConsent | Status::NeedsLead | Status::Sent => None,
            Status::Drafted | Status::NeedsPerson | Status::HandedOver => {
                self.edit_selected();
                None
            }
        }
    }

    /// `e`: the editor on the ticket's reply, empty when there is no draft: a person can
    /// answer any ticket that is not sent.
    fn edit_selected(&mut self) {
        let Some(item) = self.current() else { return };
        if let Some(sent) = &item.state.sent {
            self.message = Some(format!(
                "{} was sent by {} at {}; a sent reply cannot be changed",
                item.ticket.ticket_id,
                sent.by,
                rfc3339(sent.at)
            ));
            return;
        }
        let ticket = self.ticket_line(&item.ticket.ticket_id);
        let id = item.ticket.ticket_id.clone();
        let draft = item.state.draft.clone().unwrap_or_default();
        let editor = DraftEditor::new(ticket, &draft, item.state.findings.clone());
        self.modal = Some(Modal::Draft(editor, id));
    }

    fn on_modal_key(&mut self, key: KeyEvent) -> Option<Command> {
        // Ctrl-B leaves a question for later; it stays in the queue with its ticket.
        if key.code == KeyCode::Char('b') && key.modifiers.contains(KeyModifiers::CONTROL) {
            self.later();
            return None;
        }
        let modal = self.modal.take()?;
        match modal {
            Modal::Consent(mut view, pending) => match view.handle_key(key) {
                ModalOutcome::Pending => self.modal = Some(Modal::Consent(view, pending)),
                ModalOutcome::Answered(approved) => {
                    let ticket = pending.ask.ticket.clone();
                    pending.answer(ConsentAnswer {
                        approved,
                        by: self.staff.clone(),
                    });
                    self.after_answer(&ticket);
                }
            },
            Modal::Form(mut view, pending) => match view.handle_key(key) {
                ModalOutcome::Pending => self.modal = Some(Modal::Form(view, pending)),
                ModalOutcome::Answered(answer) => {
                    let ticket = pending.ask.ticket.clone();
                    pending.answer(answer);
                    if let Some(ticket) = ticket {
                        self.after_answer(&ticket);
                    }
                }
            },
            Modal::Draft(mut editor, ticket) => match editor.handle_key(key) {
                ModalOutcome::Pending => self.modal = Some(Modal::Draft(editor, ticket)),
                ModalOutcome::Answered(DraftAction::Send {
                    text,
                    override_reason,
                }) => {
                    return Some(Command::SendReply {
                        ticket,
                        text,
                        override_reason,
                    });
                }
                ModalOutcome::Answered(DraftAction::HandToPerson { note }) => {
                    return Some(Command::HandToPerson {
                        ticket,
                        to: HAND_OVER_TO.to_owned(),
                        note,
                    });
                }
                ModalOutcome::Answered(DraftAction::Check { text }) => {
                    self.modal = Some(Modal::Draft(editor, ticket.clone()));
                    return Some(Command::EditDraft { ticket, text });
                }
                ModalOutcome::Answered(DraftAction::Close { text }) => {
                    let changed = self.items.iter().any(|i| {
                        i.ticket.ticket_id == ticket
                            && i.state.draft.as_deref().unwrap_or_default() != text
                    });
                    if changed {
                        return Some(Command::EditDraft { ticket, text });
                    }
                }
            },
            Modal::Note(mut input, ticket) => match input.handle_key(key) {
                ModalOutcome::Pending => self.modal = Some(Modal::Note(input, ticket)),
                ModalOutcome::Answered(Some(text)) => {
                    return Some(Command::AddNote { ticket, text });
                }
                ModalOutcome::Answered(None) => {}
            },
            Modal::PromptArgs(mut view, prompt) => match view.handle_key(key) {
                ModalOutcome::Pending => self.modal = Some(Modal::PromptArgs(view, prompt)),
                ModalOutcome::Answered(FormAnswer::Accept(values)) => {
                    let ticket = self.current()?.ticket.ticket_id.clone();
                    let arguments = values
                        .into_iter()
                        .map(|(name, value)| {
                            let text = match value {
                                FieldValue::Text(t) | FieldValue::Choice(t) => t,
                                other => format!("{other:?}"),
                            };
                            (name, text)
                        })
                        .collect();
                    return Some(Command::RunPrompt {
                        ticket,
                        prompt: PersonPrompt {
                            name: prompt,
                            arguments,
                        },
                    });
                }
                ModalOutcome::Answered(_) => {}
            },
            Modal::Picker(picker) => return self.on_picker_key(picker, key),
            Modal::Help => {
                if !matches!(
                    key.code,
                    KeyCode::Esc | KeyCode::Char('?') | KeyCode::Char('q') | KeyCode::Enter
                ) {
                    self.modal = Some(Modal::Help);
                }
            }
        }
        None
    }

    fn after_answer(&mut self, ticket: &str) {
        let still_asked = self.waiting.iter().any(|a| a.ticket() == Some(ticket));
        if let Some(item) = self.item_mut(ticket)
            && !still_asked
        {
            item.asking = None;
            item.refresh();
        }
        if !self.waiting.is_empty() {
            self.open_next_question();
        }
    }

    fn on_picker_key(&mut self, mut picker: Picker, key: KeyEvent) -> Option<Command> {
        let count = match picker.kind {
            PickerKind::Prompts => self.prompts.len(),
            PickerKind::Resources => self.resources.len(),
            PickerKind::Reviews => self.review_choices().len(),
        };
        match key.code {
            KeyCode::Esc | KeyCode::Char('q') => return None,
            KeyCode::Down | KeyCode::Char('j') => {
                picker.selected = (picker.selected + 1).min(count.saturating_sub(1))
            }
            KeyCode::Up | KeyCode::Char('k') => picker.selected = picker.selected.saturating_sub(1),
            KeyCode::Enter if count > 0 && matches!(picker.kind, PickerKind::Reviews) => {
                self.open_review(picker.selected);
                return None;
            }
            KeyCode::Enter if count > 0 => {
                let ticket = self.current()?.ticket.ticket_id.clone();
                return match picker.kind {
                    PickerKind::Prompts => {
                        let prompt = self.prompts[picker.selected].clone();
                        self.modal = Some(Modal::PromptArgs(
                            FormModal::new(prompt_form(&prompt, &ticket, self.current())),
                            prompt.name,
                        ));
                        None
                    }
                    PickerKind::Resources => {
                        let resource = &self.resources[picker.selected];
                        Some(Command::AttachResource {
                            ticket,
                            server: resource.server.clone(),
                            uri: resource.uri.clone(),
                        })
                    }
                    PickerKind::Reviews => None,
                };
            }
            _ => {}
        }
        self.modal = Some(Modal::Picker(picker));
        None
    }

    /// Text pasted into the terminal (bracketed paste): it goes to the editor or form field
    /// that is open, never to the queue's keys.
    pub fn on_paste(&mut self, text: &str) {
        match &mut self.modal {
            Some(Modal::Draft(editor, _)) => editor.paste(text),
            Some(Modal::Note(input, _)) => input.paste(text),
            Some(Modal::Form(view, _)) | Some(Modal::PromptArgs(view, _)) => view.paste(text),
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

/// The desk's own form for a prompt's arguments, prefilled from the current ticket.
fn prompt_form(prompt: &PromptInfo, ticket: &str, item: Option<&QueueItem>) -> FormAsk {
    let (server, _) = prompt.name.split_once('.').unwrap_or((&prompt.name, ""));
    let fields = prompt
        .arguments
        .iter()
        .map(|(name, description, required)| {
            let default = match name.as_str() {
                "order_id" => item.and_then(|i| i.ticket.order_id.clone()),
                "customer_id" => item.map(|i| i.ticket.customer_id.clone()),
                "ticket_id" => Some(ticket.to_owned()),
                _ => None,
            };
            Field {
                name: name.clone(),
                title: None,
                description: Some(description.clone()),
                required: *required,
                kind: FieldKind::Text {
                    min_length: None,
                    max_length: Some(200),
                    format: None,
                    default,
                },
            }
        })
        .collect();
    FormAsk {
        ticket: Some(ticket.to_owned()),
        server: server.to_owned(),
        origin: format!("prompt {} (you chose it)", prompt.name),
        message: prompt.description.clone(),
        kind: FormKind::Fields(fields),
    }
}
