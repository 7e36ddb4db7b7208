//! Keys while a modal is open: each modal answers its own question and says so; this turns
//! its answer into the command for the host and decides what opens next.

use crossterm::event::{KeyCode, KeyEvent};

use super::{App, HAND_OVER_TO, Modal, Picker, PickerKind};
use crate::host::api::{
    Command, ConsentAnswer, Field, FieldKind, FieldValue, FormAnswer, FormAsk, FormKind,
    PersonPrompt, PromptInfo,
};
use crate::host::api::{ConsentAsk, Pending};
use crate::ui::ModalOutcome;
use crate::ui::modals::consent::ConsentModal;
use crate::ui::modals::draft::{DraftAction, DraftEditor};
use crate::ui::modals::form::FormModal;
use crate::ui::panes::{help, resource, servers};

type ConsentPending = Pending<ConsentAsk, ConsentAnswer>;
type FormPending = Pending<FormAsk, FormAnswer>;

impl App {
    pub(super) fn on_modal_key(&mut self, key: KeyEvent) -> Option<Command> {
        match self.modal.take()? {
            Modal::Consent(view, pending) => self.consent_key(view, pending, key),
            Modal::Form(view, pending) => self.form_key(view, pending, key),
            Modal::Draft(editor, ticket) => return self.draft_key(editor, ticket, key),
            Modal::Note(mut input, ticket) => match input.handle_key(key) {
                ModalOutcome::Pending => self.modal = Some(Modal::Note(input, ticket)),
                ModalOutcome::Answered(Some(text)) => {
                    return Some(Command::AddNote { ticket, text });
                }
                ModalOutcome::Answered(None) => {}
            },
            Modal::TakeOver(mut input, ticket) => match input.handle_key(key) {
                ModalOutcome::Pending => self.modal = Some(Modal::TakeOver(input, ticket)),
                ModalOutcome::Answered(Some(reason)) => {
                    return Some(Command::TakeOver { ticket, reason });
                }
                ModalOutcome::Answered(None) => {}
            },
            Modal::Withdraw(mut input, ticket) => match input.handle_key(key) {
                ModalOutcome::Pending => self.modal = Some(Modal::Withdraw(input, ticket)),
                ModalOutcome::Answered(Some(reason)) => {
                    return Some(Command::WithdrawApproval { ticket, reason });
                }
                ModalOutcome::Answered(None) => {}
            },
            Modal::Solve(mut input, ticket) => match input.handle_key(key) {
                ModalOutcome::Pending => self.modal = Some(Modal::Solve(input, ticket)),
                ModalOutcome::Answered(Some(note)) => {
                    let note = (!note.is_empty()).then_some(note);
                    return Some(Command::Solve { ticket, note });
                }
                ModalOutcome::Answered(None) => {}
            },
            Modal::PromptArgs(view, prompt) => return self.prompt_args_key(view, prompt, key),
            Modal::CallArgs(mut view, tool) => match view.handle_key(key) {
                ModalOutcome::Pending => self.modal = Some(Modal::CallArgs(view, tool)),
                ModalOutcome::Answered(answer @ FormAnswer::Accept(_)) => {
                    let ticket = self.current()?.ticket.ticket_id.clone();
                    self.message = Some(format!("calling {tool} for {ticket}…"));
                    return Some(Command::CallTool {
                        ticket,
                        tool,
                        answer,
                    });
                }
                ModalOutcome::Answered(_) => {}
            },
            Modal::Picker(picker) => return self.on_picker_key(picker, key),
            Modal::Help { scroll } => self.help_key(scroll, key),
            Modal::SignIn { server, url } => {
                if !matches!(key.code, KeyCode::Esc | KeyCode::Enter | KeyCode::Char('q')) {
                    self.modal = Some(Modal::SignIn { server, url });
                }
            }
            Modal::Trust { selected } => return self.trust_key(selected, key),
            Modal::Servers { scroll } => self.servers_key(scroll, key),
            Modal::Report => match key.code {
                KeyCode::Esc | KeyCode::Enter | KeyCode::Char('q' | 'R') => {}
                KeyCode::Char('r') => {
                    self.report = None;
                    self.modal = Some(Modal::Report);
                    return Some(Command::LeadReport);
                }
                _ => self.modal = Some(Modal::Report),
            },
            Modal::Resource {
                server,
                uri,
                text,
                scroll,
            } => {
                let scroll = match key.code {
                    KeyCode::Esc | KeyCode::Char('q') => return None,
                    KeyCode::Char('a') | KeyCode::Enter => {
                        let ticket = self.current()?.ticket.ticket_id.clone();
                        return Some(Command::AttachResource {
                            ticket,
                            server,
                            uri,
                        });
                    }
                    code => scrolled(scroll, code),
                };
                let most = u16::try_from(resource::rows(&text)).unwrap_or(u16::MAX);
                self.modal = Some(Modal::Resource {
                    server,
                    uri,
                    text,
                    scroll: scroll.min(most),
                });
            }
        }
        None
    }

    fn consent_key(&mut self, mut view: ConsentModal, pending: ConsentPending, key: KeyEvent) {
        match view.handle_key(key) {
            ModalOutcome::Pending => self.modal = Some(Modal::Consent(view, pending)),
            ModalOutcome::Answered((approved, trust)) => {
                let ticket = pending.ask.ticket.clone();
                pending.answer(ConsentAnswer {
                    approved,
                    by: self.staff.clone(),
                    trust,
                    rule: None,
                });
                self.after_answer(&ticket);
            }
        }
    }

    fn form_key(&mut self, mut view: FormModal, pending: FormPending, key: KeyEvent) {
        match view.handle_key(key) {
            ModalOutcome::Pending => self.modal = Some(Modal::Form(view, pending)),
            ModalOutcome::Answered(answer) => {
                let ticket = pending.ask.ticket.clone();
                pending.answer(answer);
                if let Some(ticket) = ticket {
                    self.after_answer(&ticket);
                }
            }
        }
    }

    /// The reply as the record holds it now.
    fn draft_of(&self, ticket: &str) -> String {
        self.items
            .iter()
            .find(|i| i.ticket.ticket_id == ticket)
            .and_then(|i| i.state.draft.clone())
            .unwrap_or_default()
    }

    /// "changed by ana at 10:42…" when the record's reply is no longer the one the editor
    /// opened with, and it was someone else who changed it.
    fn changed_by_another(&self, ticket: &str, editor: &DraftEditor) -> Option<String> {
        let item = self.items.iter().find(|i| i.ticket.ticket_id == ticket)?;
        let now = item.state.draft.clone().unwrap_or_default();
        let by = item.state.by.as_deref()?;
        if now == editor.opened_with() || by == self.staff {
            return None;
        }
        let at = item
            .state
            .at
            .map(crate::host::api::rfc3339)
            .unwrap_or_default();
        Some(format!(
            "the reply was changed by {by} at {at} while you edited it; read theirs in the ticket pane, then Ctrl-S again to send yours"
        ))
    }

    fn draft_key(
        &mut self,
        mut editor: DraftEditor,
        ticket: String,
        key: KeyEvent,
    ) -> Option<Command> {
        match editor.handle_key(key) {
            ModalOutcome::Pending => {
                self.modal = Some(Modal::Draft(editor, ticket));
                None
            }
            ModalOutcome::Answered(DraftAction::Send {
                text,
                override_reason,
            }) => {
                // Someone else changed the reply while this person edited it: say so first,
                // and send on the next Ctrl-S (as a help desk's collision warning does).
                if let Some(changed) = self.changed_by_another(&ticket, &editor) {
                    self.message = Some(changed);
                    editor.rebase(self.draft_of(&ticket));
                    self.modal = Some(Modal::Draft(editor, ticket));
                    return None;
                }
                Some(Command::SendReply {
                    ticket,
                    text,
                    override_reason,
                    solve: editor.solves_on_send(),
                })
            }
            ModalOutcome::Answered(DraftAction::HandToPerson { note }) => {
                Some(Command::HandToPerson {
                    ticket,
                    to: HAND_OVER_TO.to_owned(),
                    note,
                })
            }
            ModalOutcome::Answered(DraftAction::Check { text }) => {
                self.modal = Some(Modal::Draft(editor, ticket.clone()));
                Some(Command::EditDraft { ticket, text })
            }
            ModalOutcome::Answered(DraftAction::Close { text }) => {
                let changed = self.items.iter().any(|i| {
                    i.ticket.ticket_id == ticket
                        && i.state.draft.as_deref().unwrap_or_default() != text
                });
                changed.then_some(Command::EditDraft { ticket, text })
            }
        }
    }

    fn prompt_args_key(
        &mut self,
        mut view: FormModal,
        prompt: String,
        key: KeyEvent,
    ) -> Option<Command> {
        match view.handle_key(key) {
            ModalOutcome::Pending => {
                self.modal = Some(Modal::PromptArgs(view, prompt));
                None
            }
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
                Some(Command::RunPrompt {
                    ticket,
                    prompt: PersonPrompt {
                        name: prompt,
                        arguments,
                    },
                })
            }
            ModalOutcome::Answered(_) => None,
        }
    }

    /// The help screen scrolls; Esc, `?`, `q` or Enter close it.
    /// Keys on the trust screen: choose a grant, revoke it, close.
    fn trust_key(&mut self, selected: usize, key: KeyEvent) -> Option<Command> {
        let last = self.trust.len().saturating_sub(1);
        let selected = match key.code {
            KeyCode::Esc | KeyCode::Char('q') | KeyCode::Char('T') => return None,
            KeyCode::Down | KeyCode::Char('j') => (selected + 1).min(last),
            KeyCode::Up | KeyCode::Char('k') => selected.saturating_sub(1),
            KeyCode::Char('x') | KeyCode::Delete => {
                self.modal = Some(Modal::Trust {
                    selected: selected.min(last.saturating_sub(1)),
                });
                let tool = self.trust.get(selected)?.tool.clone();
                return Some(Command::RevokeTrust { tool });
            }
            _ => selected,
        };
        self.modal = Some(Modal::Trust { selected });
        None
    }

    /// The servers screen scrolls; Esc, `i`, `q` or Enter close it.
    fn servers_key(&mut self, scroll: u16, key: KeyEvent) {
        let scroll = match key.code {
            KeyCode::Esc | KeyCode::Char('i') | KeyCode::Char('q') | KeyCode::Enter => return,
            code => scrolled(scroll, code),
        };
        let most = u16::try_from(servers::rows(&self.servers)).unwrap_or(u16::MAX);
        self.modal = Some(Modal::Servers {
            scroll: scroll.min(most),
        });
    }

    fn help_key(&mut self, scroll: u16, key: KeyEvent) {
        let scroll = match key.code {
            KeyCode::Esc | KeyCode::Char('?') | KeyCode::Char('q') | KeyCode::Enter => return,
            code => scrolled(scroll, code),
        };
        let most = u16::try_from(help::rows(self)).unwrap_or(u16::MAX);
        self.modal = Some(Modal::Help {
            scroll: scroll.min(most),
        });
    }

    /// A question answered: the ticket no longer waits on a person unless another of its
    /// questions does, and the next question nobody put back opens.
    fn after_answer(&mut self, ticket: &str) {
        let still_asked = self.waiting.asks_about(ticket);
        if let Some(item) = self.item_mut(ticket)
            && !still_asked
        {
            item.asking = None;
            item.refresh();
        }
        self.open_question(None);
    }

    pub(super) fn on_picker_key(&mut self, mut picker: Picker, key: KeyEvent) -> Option<Command> {
        let count = match picker.kind {
            PickerKind::Prompts => self.prompts.len(),
            PickerKind::Resources => self.resources.len(),
            PickerKind::Tools => self.next_steps.len() + self.tools.len(),
            PickerKind::Reviews => self.review_choices().len(),
            PickerKind::Approvals => self.approvals.len(),
        };
        match key.code {
            KeyCode::Esc | KeyCode::Char('q') => return None,
            KeyCode::Down | KeyCode::Char('j') => {
                picker.selected = (picker.selected + 1).min(count.saturating_sub(1))
            }
            KeyCode::Up | KeyCode::Char('k') => picker.selected = picker.selected.saturating_sub(1),
            KeyCode::Char('v') if count > 0 && matches!(picker.kind, PickerKind::Resources) => {
                let resource = self.resources.get(picker.selected)?;
                self.message = Some(format!("reading {}…", resource.uri));
                return Some(Command::ReadResource {
                    server: resource.server.clone(),
                    uri: resource.uri.clone(),
                });
            }
            KeyCode::Enter if count > 0 && matches!(picker.kind, PickerKind::Reviews) => {
                self.open_review(picker.selected);
                return None;
            }
            KeyCode::Enter if count > 0 && matches!(picker.kind, PickerKind::Approvals) => {
                let approval = self.approvals.get(picker.selected)?;
                let (id, ticket) = (approval.id, approval.ticket.clone());
                // Its ticket behind the form: the call log that led there, and who asked.
                self.select_ticket(&ticket);
                self.message = Some(super::approval_opening(id));
                self.opening_approval = Some(id);
                return Some(Command::AnswerApproval(id));
            }
            KeyCode::Enter if count > 0 => {
                let ticket = self.current()?.ticket.ticket_id.clone();
                return match picker.kind {
                    PickerKind::Prompts => {
                        let prompt = self.prompts[picker.selected].clone();
                        // The desk asks this, not the server: the heading says so.
                        let heading = format!("Run {} for {ticket}: its arguments", prompt.name);
                        let suggested = self.suggested_for(&ticket);
                        let form = FormModal::new(prompt_form(&prompt, &ticket, &suggested))
                            .with_heading(heading);
                        self.modal = Some(Modal::PromptArgs(form, prompt.name));
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
                    PickerKind::Tools => {
                        self.open_call(&ticket, picker.selected);
                        None
                    }
                    PickerKind::Reviews | PickerKind::Approvals => None,
                };
            }
            _ => {}
        }
        self.modal = Some(Modal::Picker(picker));
        None
    }
}

/// The desk's own form for a prompt's arguments, each the ticket suggests for it (as the host
/// read them from the ticket: `suggested`) filled in, and saying where it was found.
fn prompt_form(
    prompt: &PromptInfo,
    ticket: &str,
    suggested: &[(String, String, String)],
) -> FormAsk {
    let (server, _) = prompt.name.split_once('.').unwrap_or((&prompt.name, ""));
    let fill = |name: &str| suggested.iter().find(|(field, _, _)| field == name);
    let filled: Vec<(String, String, String)> = prompt
        .arguments
        .iter()
        .filter_map(|(name, _, _)| fill(name).cloned())
        .collect();
    let fields = prompt
        .arguments
        .iter()
        .map(|(name, description, required)| {
            let default = fill(name).map(|(_, value, _)| value.clone());
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
        message: match filled_in(&[], &filled) {
            Some(from) => format!("{from}\n\n{}", prompt.description),
            None => prompt.description.clone(),
        },
        kind: FormKind::Fields(fields),
        asked_by: None,
    }
}

/// Where a scrolled screen of text goes on `code` (up, down, a page, the top).
fn scrolled(scroll: u16, code: KeyCode) -> u16 {
    match code {
        KeyCode::Down | KeyCode::Char('j') => scroll.saturating_add(1),
        KeyCode::Up | KeyCode::Char('k') => scroll.saturating_sub(1),
        KeyCode::PageDown | KeyCode::Char(' ') => scroll.saturating_add(10),
        KeyCode::PageUp => scroll.saturating_sub(10),
        KeyCode::Home => 0,
        _ => scroll,
    }
}

impl App {
    /// What the host read from `ticket` for a person's forms, by argument (the first tool's
    /// suggestion of each name); none until the host has listed the tools for that ticket.
    pub(super) fn suggested_for(&self, ticket: &str) -> Vec<(String, String, String)> {
        if self.tools_ticket.as_deref() != Some(ticket) {
            return Vec::new();
        }
        let mut suggested: Vec<(String, String, String)> = Vec::new();
        for value in self.tools.iter().flat_map(|tool| &tool.suggested) {
            if !suggested.iter().any(|(name, _, _)| *name == value.0) {
                suggested.push(value.clone());
            }
        }
        suggested
    }

    /// Opens the first call `ticket`'s results offer next, or says there is none.
    pub(super) fn open_next_step(&mut self, ticket: &str) {
        if self.next_steps.is_empty() {
            self.message = Some(format!(
                "nothing in {ticket}'s results fills in another tool's call: c lists every tool"
            ));
        } else {
            self.message = None;
            self.open_call(ticket, 0);
        }
    }

    /// Opens the form of the tools picker's `row`: a next step's, prefilled from the results
    /// it names, or an offered tool's, prefilled from the ticket; each form says where its
    /// values came from. A withheld tool's form says that the desk shows what changed first.
    fn open_call(&mut self, ticket: &str, row: usize) {
        let (tool, kind, from) = match self.next_steps.get(row) {
            Some(step) => {
                let Some(tool) = self.tools.iter().find(|t| t.name == step.tool) else {
                    return;
                };
                (
                    tool,
                    step.form.clone(),
                    filled_in(&step.values, &tool.suggested),
                )
            }
            None => {
                let Some(tool) = self.tools.get(row - self.next_steps.len()) else {
                    return;
                };
                (tool, tool.form.clone(), filled_in(&[], &tool.suggested))
            }
        };
        // The desk asks this, not the server: the heading says so.
        let heading = format!("You call {} for {ticket}: its arguments", tool.name);
        let withheld = tool.withheld.as_ref().map(|why| {
            format!("{why}. Before it is called the desk shows you what changed, for your yes.")
        });
        let message = [withheld, from, Some(tool.description.clone())]
            .into_iter()
            .flatten()
            .filter(|part| !part.is_empty())
            .collect::<Vec<_>>()
            .join("\n\n");
        let ask = FormAsk {
            ticket: Some(ticket.to_owned()),
            server: tool.server.clone(),
            origin: format!("{} (you call it)", tool.name),
            message,
            kind,
            asked_by: None,
        };
        let form = FormModal::new(ask).with_heading(heading);
        self.modal = Some(Modal::CallArgs(form, tool.name.clone()));
    }
}

/// Where a form's values came from, in words: "filled in: quote_id Q-1 from
/// shop.quote_refund's result, order_id O-1587 from T-0003's text"; a result's value wins
/// over the ticket's for the same argument. `None` when nothing was filled in.
fn filled_in(
    from_results: &[(String, String, String)],
    from_ticket: &[(String, String, String)],
) -> Option<String> {
    let results = from_results
        .iter()
        .map(|(name, value, tool)| format!("{name} {value} from {tool}'s result"));
    let ticket = from_ticket
        .iter()
        .filter(|(name, _, _)| !from_results.iter().any(|(taken, _, _)| taken == name))
        .map(|(name, value, place)| format!("{name} {value} from {place}"));
    let values: Vec<String> = results.chain(ticket).collect();
    (!values.is_empty()).then(|| format!("filled in: {}", values.join(", ")))
}
