//! What the host tells the desk: servers, tools, prompts, a ticket's history and each thing
//! that happens to it, the model writing, a call's progress; each changes the state, and the
//! end of a run closes the questions it asked.

use super::{App, CallProgress, Modal, QueueItem, Writing, approval_opening};
use crate::host::api::{EntryKind, HostEvent, Lifecycle, TicketState};

impl App {
    /// A host event changes the state; a question may open a modal.
    pub fn on_host(&mut self, event: HostEvent) {
        match event {
            HostEvent::Servers(servers) => self.servers = servers,
            HostEvent::Prompts(prompts) => self.prompts = prompts,
            HostEvent::Resources(resources) => self.resources = resources,
            HostEvent::Tools {
                ticket,
                tools,
                next,
            } => {
                self.tools = tools;
                self.tools_ticket = Some(ticket.clone());
                // Next steps belong to the ticket they were read for: none if the person moved on.
                let here = self
                    .current()
                    .is_some_and(|item| item.ticket.ticket_id == ticket);
                self.next_steps = if here { next } else { vec![] };
                if self.opening_next_step.take().as_deref() == Some(ticket.as_str())
                    && here
                    && self.modal.is_none()
                {
                    self.open_next_step(&ticket);
                }
            }
            HostEvent::ResourceText { server, uri, text } => match self.modal {
                None => {
                    self.message = None;
                    self.modal = Some(Modal::Resource {
                        server,
                        uri,
                        text,
                        scroll: 0,
                    });
                }
                Some(_) => {
                    self.message = Some(format!(
                        "{uri} came while something else was open: read it again from r"
                    ))
                }
            },
            HostEvent::Approvals(approvals) => {
                // Answered or withdrawn before its form came: the form is not on its way.
                if let Some(id) = self.opening_approval
                    && !approvals.iter().any(|a| a.id == id)
                {
                    self.form_arrived();
                }
                self.hear_of_approvals(&approvals);
                self.approvals = approvals;
            }
            HostEvent::Trust(trust) => self.trust = trust,
            HostEvent::LeadReport(report) => self.report = Some(report),
            HostEvent::Writing {
                ticket,
                turn,
                content,
                calling,
            } => {
                self.writing.insert(
                    ticket,
                    Writing {
                        turn,
                        content,
                        calling,
                    },
                );
            }
            HostEvent::Progress {
                ticket,
                turn,
                tool,
                progress,
                total,
                message,
            } => {
                self.progress.insert(
                    ticket,
                    CallProgress {
                        turn,
                        tool,
                        progress,
                        total,
                        message,
                        task: None,
                    },
                );
            }
            HostEvent::TaskStatus {
                ticket,
                turn,
                tool,
                status,
                seconds,
                message,
                ..
            } => {
                self.progress.insert(
                    ticket,
                    CallProgress {
                        turn,
                        tool,
                        progress: seconds as f64,
                        total: None,
                        message,
                        task: Some(status),
                    },
                );
            }
            HostEvent::Record(states) => {
                let ids: Vec<String> = states.iter().map(|s| s.ticket.clone()).collect();
                for state in states {
                    self.apply_state(state);
                }
                self.due_changed(&ids);
            }
            HostEvent::Tickets(tickets) => {
                let ids: Vec<String> = tickets.iter().map(|t| t.ticket_id.clone()).collect();
                for ticket in tickets {
                    match self.item_mut(&ticket.ticket_id) {
                        Some(item) => item.ticket = ticket,
                        None => self.items.push(QueueItem::new(ticket)),
                    }
                }
                self.due_changed(&ids);
            }
            HostEvent::Transcript { ticket, events } => self.transcripts.loaded(&ticket, events),
            HostEvent::Happened {
                ticket,
                seq,
                entries,
                state,
            } => {
                if let Some((done, _)) = &mut self.queue_run
                    && state.run.is_none()
                    && entries.iter().any(|e| {
                        matches!(
                            e.kind,
                            EntryKind::RunEnded { .. } | EntryKind::AskedLead { .. }
                        )
                    })
                {
                    *done += 1;
                }
                // The record now holds what was being written (or the run ended without it).
                self.writing.remove(&ticket);
                // The call's outcome takes the place of its progress (or the run ended).
                if state.run.is_none()
                    || entries.iter().any(|e| {
                        matches!(
                            e.kind,
                            EntryKind::Outcome { .. } | EntryKind::RunEnded { .. }
                        )
                    })
                {
                    self.progress.remove(&ticket);
                }
                self.transcripts.happened(&ticket, seq, entries);
                self.apply_state(*state);
                self.due_changed(std::slice::from_ref(&ticket));
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
            HostEvent::ToolsChanged {
                server,
                held,
                added,
                gone,
            } => self.message = Some(tools_changed(&server, &held, &added, &gone)),
            HostEvent::SignInOpen { server, url } => {
                self.message = Some(format!("waiting for the browser to sign in to {server}"));
                if self.modal.is_none() {
                    self.modal = Some(Modal::SignIn { server, url });
                }
            }
            HostEvent::Stopped => self.exit = true,
        }
    }

    fn apply_state(&mut self, state: TicketState) {
        if let Some(Modal::Draft(editor, ticket)) = &mut self.modal
            && *ticket == state.ticket
        {
            editor.set_findings(&state.findings);
        }
        if state.state != Lifecycle::Working {
            // The run is over: the host waits for none of its questions any more, the one
            // on screen included (a lead's approval form is no run's, and stays).
            self.waiting.drop_for(&state.ticket);
            let asked_in_the_run = match &self.modal {
                Some(Modal::Consent(_, pending)) => Some(&pending.ask.ticket),
                Some(Modal::Form(_, pending)) if pending.ask.asked_by.is_none() => {
                    pending.ask.ticket.as_ref()
                }
                _ => None,
            };
            if asked_in_the_run == Some(&state.ticket) {
                self.modal = None;
                if let Some(item) = self.item_mut(&state.ticket) {
                    item.asking = None;
                }
                self.message = Some(format!(
                    "{}'s question is gone: its run ended without the answer",
                    state.ticket
                ));
                self.open_question(None);
            }
        }
        if let Some(item) = self.item_mut(&state.ticket) {
            item.set_state(state);
        }
    }

    /// The form a lead asked for came (or will not): the message that said it was on its
    /// way goes, unless something has been said since.
    pub(super) fn form_arrived(&mut self) {
        if let Some(id) = self.opening_approval.take()
            && self.message.as_deref() == Some(approval_opening(id).as_str())
        {
            self.message = None;
        }
    }
}

/// What the status bar says when a server's tools changed under the desk: the names are the
/// server's, shown cleaned.
fn tools_changed(server: &str, held: &[String], added: &[String], gone: &[String]) -> String {
    let names = |names: &[String]| {
        names
            .iter()
            .map(|name| crate::ui::sanitize::one_line(name))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut said = Vec::new();
    if !held.is_empty() {
        said.push(format!(
            "held until a person approves the change: {}",
            names(held)
        ));
    }
    if !added.is_empty() {
        said.push(format!("offered now: {}", names(added)));
    }
    if !gone.is_empty() {
        said.push(format!("gone: {}", names(gone)));
    }
    format!(
        "{}'s tools changed; {}",
        crate::ui::sanitize::one_line(server),
        said.join("; ")
    )
}
