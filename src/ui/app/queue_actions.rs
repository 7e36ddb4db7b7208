//! What a person does to the selected ticket from the queue: move the selection, work it or
//! the new tickets, stop its run, open or edit its reply, add a note, take it over, withdraw
//! the approval it waits on. Each says what it did, or why it could not.

use super::{App, Modal, Status};
use crate::host::api::{Command, Lifecycle, rfc3339};
use crate::ui::modals::draft::DraftEditor;
use crate::ui::modals::note::NoteInput;
use crate::ui::sanitize::clean;

impl App {
    pub(super) fn add_note(&mut self) {
        let Some(item) = self.current() else { return };
        let id = item.ticket.ticket_id.clone();
        self.modal = Some(Modal::Note(NoteInput::new(self.ticket_line(&id)), id));
    }

    pub(super) fn solve(&mut self) {
        let Some(item) = self.current() else { return };
        let id = item.ticket.ticket_id.clone();
        let input = NoteInput::new(self.ticket_line(&id))
            .titled(" Solve this conversation: a note for the team? (Ctrl-S solves) ")
            .optional("optional; the customer's next message opens it again");
        self.modal = Some(Modal::Solve(input, id));
    }

    pub(super) fn take_over(&mut self) {
        let Some(item) = self.current() else { return };
        let id = item.ticket.ticket_id.clone();
        let input = NoteInput::new(self.ticket_line(&id))
            .titled(" Take this ticket over: why? (recorded, shown to the desk that had it) ");
        self.modal = Some(Modal::TakeOver(input, id));
    }

    pub(super) fn withdraw(&mut self) {
        let Some(item) = self.current() else { return };
        let id = item.ticket.ticket_id.clone();
        if item.state.state != Lifecycle::WaitingForLead {
            self.message = Some(format!(
                "{id} waits for no lead: there is nothing to withdraw"
            ));
            return;
        }
        let input = NoteInput::new(self.ticket_line(&id))
            .titled(" Withdraw the approval: why? (recorded on the ticket) ");
        self.modal = Some(Modal::Withdraw(input, id));
    }

    pub(super) fn select(&mut self, delta: i64) {
        let count = self.visible_count() as i64;
        if count == 0 {
            return;
        }
        self.selected = (self.selected as i64 + delta).clamp(0, count - 1) as usize;
        self.scroll_back = 0;
    }

    pub(super) fn work_selected(&mut self) -> Option<Command> {
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
            Status::WaitingForLead => {
                self.message = Some(format!(
                    "{id} waits for a lead's answer; it goes on by itself when one answers"
                ));
                None
            }
            Status::New | Status::Drafted | Status::NeedsPerson | Status::HandedOver => {
                Some(Command::WorkTicket(id))
            }
        }
    }

    pub(super) fn work_new(&mut self) -> Option<Command> {
        let ids: Vec<String> = self
            .items
            .iter()
            .filter(|i| i.status == Status::New)
            .map(|i| i.ticket.ticket_id.clone())
            .collect();
        if ids.is_empty() {
            self.message = Some("no new ticket is left: every ticket has been worked".to_owned());
            return None;
        }
        self.queue_run = Some((0, ids.len()));
        Some(Command::WorkQueue {
            tickets: ids,
            prompt: None,
        })
    }

    /// `s`: stops the selected ticket's run, when this desk's model is working it.
    pub(super) fn stop_selected(&mut self) -> Option<Command> {
        let item = self.current()?;
        let id = item.ticket.ticket_id.clone();
        let working = matches!(
            item.status,
            Status::Working | Status::NeedsConsent | Status::NeedsLead
        );
        if !working {
            self.message = Some(format!(
                "{id} is not being worked, so there is nothing to stop"
            ));
            return None;
        }
        self.message = Some(format!("stopping {id}…"));
        Some(Command::Stop(id))
    }

    /// Enter: the ticket's waiting question, or its reply (empty on a new ticket).
    pub(super) fn open_selected(&mut self) -> Option<Command> {
        let id = self.current()?.ticket.ticket_id.clone();
        if let Some(asked) = self.waiting.take_for(&id) {
            self.open_question(Some(asked));
            return None;
        }
        // Enter opens; it never starts a run (that is `w`, said as such).
        match self.current()?.status {
            Status::Working
            | Status::NeedsConsent
            | Status::NeedsLead
            | Status::WaitingForLead
            | Status::Sent => None,
            Status::New | Status::Drafted | Status::NeedsPerson | Status::HandedOver => {
                self.edit_selected();
                None
            }
        }
    }

    /// `e`: the editor on the ticket's reply, empty when there is no draft: a person can
    /// answer any ticket that is not sent. The customer's words stay in view above it.
    pub(super) fn edit_selected(&mut self) {
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
        let editor = DraftEditor::new(ticket, &draft, item.state.findings.clone())
            .with_customer_words(&clean(&item.ticket.body));
        self.modal = Some(Modal::Draft(editor, id));
    }
}
