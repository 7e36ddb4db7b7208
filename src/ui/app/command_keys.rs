//! The command line and marks on the desk: `:` opens the line, Tab completes, Enter runs;
//! `space` marks tickets, and a command that acts on a ticket acts on every marked one (then
//! the marks are cleared); `o` makes the selected ticket yours.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::{App, Filter, Modal, Status};
use crate::host::api::{
    Command, Conversation, EntryKind, Outcome, ReplyValues, SavedReply, fill_reply,
};
use crate::ui::command_line::{self, CommandLine, Known, Parsed, Verb};

impl App {
    pub(super) fn open_command_line(&mut self) {
        self.command_line = Some(CommandLine::default());
    }

    /// A key while the command line is open: typed into it; Tab completes, Enter runs, Esc
    /// closes.
    pub(super) fn on_command_key(&mut self, key: KeyEvent) -> Option<Command> {
        let line = self.command_line.as_mut()?;
        let plain = !key
            .modifiers
            .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT);
        match key.code {
            KeyCode::Esc => self.command_line = None,
            KeyCode::Enter => {
                let text = std::mem::take(&mut line.text);
                self.command_line = None;
                return self.run_line(&text);
            }
            KeyCode::Tab => {
                let text = line.text.clone();
                let found = command_line::completions(&text, &self.keymap, &self.known());
                if let Some(line) = &mut self.command_line {
                    line.text = command_line::complete(&text, &found);
                    line.offered = if found.len() > 1 { found } else { vec![] };
                }
            }
            // Backspace on an empty line closes it, as in vim.
            KeyCode::Backspace => {
                if line.text.is_empty() {
                    self.command_line = None;
                } else {
                    line.text.pop();
                }
            }
            KeyCode::Char(c) if plain => {
                line.text.push(c);
                line.offered.clear();
            }
            _ => {}
        }
        None
    }

    /// Runs a command line: a verb on the marked tickets (or the selected one), or an action
    /// of the keys by its name.
    pub fn run_line(&mut self, line: &str) -> Option<Command> {
        match command_line::parse(line, &self.keymap) {
            Err(problem) => {
                self.message = Some(problem);
                None
            }
            Ok(Parsed::Action(action)) => self.update(action),
            Ok(Parsed::Verb(verb, arg)) => self.run_verb(verb, &arg),
        }
    }

    fn run_verb(&mut self, verb: Verb, arg: &str) -> Option<Command> {
        match verb.name {
            "view" => {
                match Filter::named(arg, &self.views) {
                    Some(view) => {
                        self.filter = view;
                        self.selected = 0;
                    }
                    None => {
                        self.message = Some(format!(
                            "there is no view {arg:?}; :view and Tab lists them"
                        ));
                    }
                }
                return None;
            }
            "mark_all" => {
                let shown: Vec<String> = self
                    .visible()
                    .into_iter()
                    .map(|i| self.items[i].ticket.ticket_id.clone())
                    .collect();
                self.message = Some(format!("{} marked", tickets_word(shown.len())));
                self.marked.extend(shown);
                return None;
            }
            "reply" | "macro" => return self.apply_reply(arg, verb.name == "macro"),
            "unmark" => {
                self.marked.clear();
                self.message = Some("no ticket is marked".to_owned());
                return None;
            }
            _ => {}
        }
        let targets = self.targets();
        if targets.is_empty() {
            self.message = Some("no ticket to act on: the view shows none".to_owned());
            return None;
        }
        let arg = arg.to_owned();
        let each = |make: &dyn Fn(String) -> Command| -> Vec<Command> {
            targets.iter().cloned().map(make).collect()
        };
        let commands = match verb.name {
            "assign" => each(&|ticket| Command::Assign {
                ticket,
                to: Some(arg.clone()),
            }),
            "take" => each(&|ticket| Command::Assign {
                ticket,
                to: Some(crate::host::api::ME.to_owned()),
            }),
            "unassign" => each(&|ticket| Command::Assign { ticket, to: None }),
            "tag" | "untag" => each(&|ticket| Command::Tag {
                ticket,
                tag: arg.clone(),
                removed: verb.name == "untag",
            }),
            "solve" => each(&|ticket| Command::Solve {
                ticket,
                note: Some(arg.clone()).filter(|n| !n.is_empty()),
            }),
            "cancel_task" => each(&|ticket| Command::CancelTasks { ticket }),
            "note" => each(&|ticket| Command::AddNote {
                ticket,
                text: arg.clone(),
            }),
            "work" => return self.work_targets(targets),
            _ => return None,
        };
        self.message = Some(format!(
            ":{}{} on {}",
            verb.name,
            if arg.is_empty() {
                String::new()
            } else {
                format!(" {arg}")
            },
            targets_words(&targets)
        ));
        self.marked.clear();
        Some(one_or_each(commands))
    }

    /// A saved reply into the selected ticket's editor, its variables filled from the ticket
    /// and its results; as a macro, its tags, assignee and note too, one command each, and its
    /// solve with the reply's send (the editor says so). A macro without text acts at once.
    fn apply_reply(&mut self, name: &str, with_actions: bool) -> Option<Command> {
        let Some(reply) = self.replies.iter().find(|r| r.name == name).cloned() else {
            self.message = Some(format!(
                "there is no saved reply {name:?}; :reply and Tab lists them"
            ));
            return None;
        };
        if !self.marked.is_empty() {
            self.message = Some(
                "a saved reply or macro goes to one ticket: unmark the tickets (:unmark) and pick one"
                    .to_owned(),
            );
            return None;
        }
        let with_actions = with_actions && reply.is_macro();
        let Some(text) = &reply.text else {
            if !with_actions {
                self.message = Some(format!(
                    "{name} has no text, only actions: :macro {name} does them"
                ));
                return None;
            }
            let id = self.current()?.ticket.ticket_id.clone();
            let commands = self.macro_actions(&reply, &id, true);
            self.message = Some(if commands.is_empty() {
                format!("{id} already has all that :macro {name} does")
            } else {
                format!(":macro {name} on {id}")
            });
            return (!commands.is_empty()).then(|| one_or_each(commands));
        };
        let item = self.current()?;
        let ticket = item.ticket.clone();
        let results: Vec<String> = self
            .transcripts
            .entries(&ticket.ticket_id)
            .into_iter()
            .flatten()
            .filter_map(|entry| match &entry.kind {
                EntryKind::Outcome {
                    outcome: Outcome::Result,
                    text,
                    ..
                } => Some(text.clone()),
                _ => None,
            })
            .collect();
        let results: Vec<&str> = results.iter().map(String::as_str).collect();
        let filled = fill_reply(
            text,
            &ReplyValues {
                ticket: &ticket,
                me: &self.staff,
                results: &results,
            },
        );
        self.edit_selected();
        let Some(Modal::Draft(editor, _)) = &mut self.modal else {
            // Sent already: the editor said why it did not open.
            return None;
        };
        editor.paste(&filled);
        if !with_actions {
            return None;
        }
        if reply.solves {
            editor.solve_on_send(&reply.name);
        }
        let commands = self.macro_actions(&reply, &ticket.ticket_id, false);
        (!commands.is_empty()).then(|| one_or_each(commands))
    }

    /// A macro's tags, assignee and note as commands, each one the ticket does not have
    /// yet; with `solve_now`, its solve too (a macro without text solves at once).
    fn macro_actions(&self, reply: &SavedReply, id: &str, solve_now: bool) -> Vec<Command> {
        let state = self.current().map(|i| &i.state);
        let mut commands: Vec<Command> = reply
            .tags
            .iter()
            .filter(|tag| !state.is_some_and(|s| s.tags.contains(tag)))
            .map(|tag| Command::Tag {
                ticket: id.to_owned(),
                tag: tag.clone(),
                removed: false,
            })
            .collect();
        let me = self.staff.as_str();
        let assignee = state.and_then(|s| s.assignee.as_deref());
        if let Some(to) = &reply.assign
            && assignee != Some(if to == crate::host::api::ME { me } else { to })
        {
            commands.push(Command::Assign {
                ticket: id.to_owned(),
                to: Some(to.clone()),
            });
        }
        if let Some(note) = &reply.note {
            commands.push(Command::AddNote {
                ticket: id.to_owned(),
                text: note.clone(),
            });
        }
        let solved = state.is_some_and(|s| s.conversation == Conversation::Solved);
        if solve_now && reply.solves && !solved {
            commands.push(Command::Solve {
                ticket: id.to_owned(),
                note: None,
            });
        }
        commands
    }

    /// The model works the targets: one ticket as `w` would, several as a queue run.
    fn work_targets(&mut self, targets: Vec<String>) -> Option<Command> {
        if let [one] = targets.as_slice() {
            self.select_ticket(one);
            return self.work_selected();
        }
        let workable: Vec<String> = targets
            .into_iter()
            .filter(|id| {
                self.items.iter().any(|i| {
                    i.ticket.ticket_id == *id
                        && matches!(
                            i.status,
                            Status::New
                                | Status::Drafted
                                | Status::NeedsPerson
                                | Status::HandedOver
                        )
                })
            })
            .collect();
        if workable.is_empty() {
            self.message = Some(
                "none of the marked tickets can be worked now (sent, or being worked)".to_owned(),
            );
            return None;
        }
        self.marked.clear();
        self.queue_run = Some((0, workable.len()));
        Some(Command::WorkQueue {
            tickets: workable,
            prompt: None,
        })
    }

    /// The tickets a command acts on: the marked ones, in the queue's order, else the
    /// selected one.
    pub fn targets(&self) -> Vec<String> {
        if self.marked.is_empty() {
            return self
                .current()
                .map(|item| vec![item.ticket.ticket_id.clone()])
                .unwrap_or_default();
        }
        self.items
            .iter()
            .map(|item| &item.ticket.ticket_id)
            .filter(|id| self.marked.contains(*id))
            .cloned()
            .collect()
    }

    /// `space`: marks the selected ticket (or unmarks it) and moves on to the next.
    pub(super) fn toggle_mark(&mut self) {
        let Some(id) = self.current().map(|item| item.ticket.ticket_id.clone()) else {
            return;
        };
        if !self.marked.remove(&id) {
            self.marked.insert(id);
        }
        self.message = Some(format!(
            "{} marked; : acts on them (space again unmarks)",
            tickets_word(self.marked.len())
        ));
        self.select(1);
    }

    /// `o`: the selected ticket becomes yours, or nobody's when it is yours already.
    pub(super) fn own(&mut self) -> Option<Command> {
        let item = self.current()?;
        let ticket = item.ticket.ticket_id.clone();
        let mine = item.state.assignee.as_deref() == Some(self.staff.as_str());
        Some(Command::Assign {
            ticket,
            to: (!mine).then(|| crate::host::api::ME.to_owned()),
        })
    }

    /// What the command line can complete: the people, tags and views the desk knows.
    pub fn known(&self) -> Known {
        let mut people = vec![self.staff.clone()];
        let mut tags = Vec::new();
        for item in &self.items {
            people.extend(item.state.assignee.iter().cloned());
            people.extend(item.state.by.iter().cloned());
            tags.extend(item.state.tags.iter().cloned());
        }
        people.sort();
        people.dedup();
        tags.sort();
        tags.dedup();
        let views = Filter::BUILT_IN
            .iter()
            .map(|f| f.name().to_owned())
            .chain(self.views.iter().map(|v| v.name.clone()))
            .collect();
        let replies = self
            .replies
            .iter()
            .map(|r| {
                let help = match &r.text {
                    Some(text) => text
                        .split_whitespace()
                        .take(8)
                        .collect::<Vec<_>>()
                        .join(" "),
                    None => r.actions(),
                };
                (r.name.clone(), help)
            })
            .collect();
        Known {
            people,
            tags,
            views,
            replies,
        }
    }
}

fn one_or_each(mut commands: Vec<Command>) -> Command {
    if commands.len() == 1 {
        commands.remove(0)
    } else {
        Command::Each(commands)
    }
}

fn tickets_word(n: usize) -> String {
    match n {
        1 => "1 ticket".to_owned(),
        n => format!("{n} tickets"),
    }
}

fn targets_words(targets: &[String]) -> String {
    match targets {
        [one] => one.clone(),
        many => tickets_word(many.len()),
    }
}
