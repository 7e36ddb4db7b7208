//! A recorded run as a reviewer reads it: per run of a ticket, the transcript entries the
//! live desk draws (`record::transcript`), grouped into steps a reviewer walks one model call
//! at a time, and the run's figures on top.
//!
//! Nothing here reads an event for display or judges anything anew: the entries are
//! [`entries_of`]'s, the figures [`Summary::from_events`]'s. The data set's scoring labels (which
//! tool a ticket was tagged for, whether it carries injected text) never reach a
//! [`ReviewTicket`]; only the figures use them.

use std::collections::HashMap;
use std::path::Path;

use super::reader::{ReadError, Recording};
use crate::record::Outcome;
use crate::record::event::{Event, Manifest};
use crate::record::transcript::{Entry, EntryKind, entries_of};
use crate::recording::summary::Summary;
use crate::tickets::Ticket;

/// A whole recorded run, ready to step through.
#[derive(Debug, Clone, PartialEq)]
pub struct Review {
    /// Where the recording was read from, as given.
    pub source: String,
    /// What answered: `name via source (recipe …), temperature …, seed …`.
    pub model: String,
    pub summary: Summary,
    /// Each run of a ticket, in ticket ID order (a ticket worked twice, say once more with a
    /// person's prompt, comes twice, in the order of its runs).
    pub tickets: Vec<ReviewTicket>,
    /// The recording's last line was cut off mid-write; everything before it is here.
    pub truncated: bool,
}

/// One run of a ticket: from its `ticket_started` to the next, people's actions included.
#[derive(Debug, Clone, PartialEq)]
pub struct ReviewTicket {
    pub ticket: String,
    /// Subject, customer ID and body from the shop's tickets (empty when the recording names
    /// a ticket the shop does not have).
    pub subject: String,
    pub customer: String,
    pub body: String,
    /// The run's history as the desk draws it, in the order it happened.
    pub entries: Vec<Entry>,
}

/// One step of a run: a model call with everything that followed from it, or the end.
#[derive(Debug, Clone, PartialEq)]
pub struct Step<'a> {
    /// The model call; `None` for the end (the draft and whatever people did after).
    pub turn: Option<u32>,
    pub entries: Vec<&'a Entry>,
}

impl Review {
    pub fn from_recording(source: &str, recording: &Recording, tickets: &[Ticket]) -> Self {
        Self::stamped(source, recording, &[], tickets)
    }

    /// Like [`Review::from_recording`], with `stamps[i]` saying who did `recording.events[i]`
    /// and when (unix milliseconds), as a desk's record knows; a recording knows neither.
    fn stamped(
        source: &str,
        recording: &Recording,
        stamps: &[(String, i64)],
        tickets: &[Ticket],
    ) -> Self {
        let allow = recording
            .manifests
            .first()
            .map(|m| m.host.allow.clone())
            .unwrap_or_default();
        let labels = crate::evaluation::for_tickets(tickets);
        let summary = Summary::from_events(&recording.events, &labels, &allow);
        // Where each event sits in the recording, to find its stamp from a run's references.
        let position: HashMap<*const Event, usize> = recording
            .events
            .iter()
            .enumerate()
            .map(|(index, event)| (std::ptr::from_ref(event), index))
            .collect();
        let mut runs = recording.runs();
        runs.sort_by_key(|(id, _)| *id);
        let reviewed = runs
            .into_iter()
            .map(|(id, events)| {
                let ticket = crate::tickets::find(tickets, id);
                let entries = events
                    .iter()
                    .flat_map(|&event| {
                        let stamp = position
                            .get(&std::ptr::from_ref(event))
                            .and_then(|&index| stamps.get(index));
                        entries_of(
                            event,
                            stamp.map(|(by, _)| by.as_str()),
                            stamp.map(|&(_, at)| at),
                        )
                    })
                    .collect();
                ReviewTicket::new(id, ticket, entries)
            })
            .collect();
        Self {
            source: source.to_owned(),
            model: describe_models(&recording.manifests),
            summary,
            tickets: reviewed,
            truncated: recording.truncated,
        }
    }

    /// Reads a recording (a `.jsonl` file or a directory of them) against the shop's bundled
    /// tickets.
    pub fn open(path: &Path) -> Result<Self, ReadError> {
        let recording = Recording::read(path)?;
        Ok(Self::from_recording(
            &path.display().to_string(),
            &recording,
            &crate::tickets::bundled(),
        ))
    }
}

impl Review {
    /// Reads a desk's record (its SQLite file) as a recording: every ticket's whole history,
    /// people's actions included, each entry with who and when as the live desk shows it.
    pub fn open_record(path: &Path) -> Result<Self, crate::record::RecordError> {
        let record = crate::record::DeskRecord::open(path, None, "reviewer", &[])?;
        let mut recording = Recording::default();
        let mut stamps = vec![];
        for stored in record.events_after(0)? {
            match stored.event {
                Event::Manifest(manifest) => recording.manifests.push(*manifest),
                event => {
                    recording.events.push(event);
                    stamps.push((stored.by, stored.at));
                }
            }
        }
        Ok(Self::stamped(
            &path.display().to_string(),
            &recording,
            &stamps,
            &crate::tickets::bundled(),
        ))
    }
}

/// Every distinct model of the recording's batches, most often one.
fn describe_models(manifests: &[Manifest]) -> String {
    let mut models: Vec<String> = vec![];
    for manifest in manifests {
        let model = &manifest.model;
        let mut text = format!(
            "{} via {} (recipe {})",
            model.name, model.source, model.recipe
        );
        if let Some(temperature) = model.temperature {
            text.push_str(&format!(", temperature {temperature}"));
        }
        if let Some(seed) = model.seed {
            text.push_str(&format!(", seed {seed}"));
        }
        if !models.contains(&text) {
            models.push(text);
        }
    }
    if models.is_empty() {
        "unknown model (the recording has no manifest)".to_owned()
    } else {
        models.join("; ")
    }
}

impl ReviewTicket {
    fn new(id: &str, ticket: Option<&Ticket>, entries: Vec<Entry>) -> Self {
        Self {
            ticket: id.to_owned(),
            subject: ticket.map(|t| t.subject.clone()).unwrap_or_default(),
            customer: ticket.map(|t| t.customer_id.clone()).unwrap_or_default(),
            body: ticket.map(|t| t.body.clone()).unwrap_or_default(),
            entries,
        }
    }

    /// The run's steps: each model call in the order they came (the run's start and anything
    /// else before the first call go with it), then always the end.
    pub fn steps(&self) -> Vec<Step<'_>> {
        let mut steps: Vec<Step<'_>> = vec![];
        let mut before: Vec<&Entry> = vec![];
        let mut end: Vec<&Entry> = vec![];
        for entry in &self.entries {
            match entry.kind.turn() {
                Some(turn) => {
                    // The latest step of that call: a consent or outcome recorded late still
                    // joins its call.
                    let index = match steps.iter().rposition(|s| s.turn == Some(turn)) {
                        Some(index) => index,
                        None => {
                            steps.push(Step {
                                turn: Some(turn),
                                entries: std::mem::take(&mut before),
                            });
                            steps.len() - 1
                        }
                    };
                    steps[index].entries.push(entry);
                }
                None if steps.is_empty() => before.push(entry),
                None => end.push(entry),
            }
        }
        before.extend(end);
        steps.push(Step {
            turn: None,
            entries: before,
        });
        steps
    }

    /// How many times the model was called in this run.
    pub fn model_calls(&self) -> usize {
        self.entries
            .iter()
            .filter(|e| matches!(e.kind, EntryKind::ModelCall { .. }))
            .count()
    }

    /// The request a person added by running a server prompt for this run.
    pub fn request(&self) -> Option<&str> {
        self.entries.iter().find_map(|e| match &e.kind {
            EntryKind::RunStarted { request, .. } => request.as_deref(),
            _ => None,
        })
    }

    /// The checks' findings on the latest reply, the model's draft or a person's edit.
    pub fn findings(&self) -> &[String] {
        self.entries
            .iter()
            .rev()
            .find_map(|e| match &e.kind {
                EntryKind::Draft { findings, .. } | EntryKind::Edited { findings, .. } => {
                    Some(findings.as_slice())
                }
                _ => None,
            })
            .unwrap_or_default()
    }

    /// Something went wrong that a reviewer should look at: a tool error, a failed or unknown
    /// call, the turn limit, a run error, or a finding on the latest reply.
    pub fn has_error(&self) -> bool {
        let went_wrong = self.entries.iter().any(|e| match &e.kind {
            EntryKind::Outcome { outcome, .. } => matches!(
                outcome,
                Outcome::ToolError | Outcome::Failed | Outcome::UnknownTool
            ),
            EntryKind::RunEnded {
                stopped_at_turn_limit,
                error,
                ..
            } => *stopped_at_turn_limit || error.is_some(),
            _ => false,
        });
        went_wrong || !self.findings().is_empty()
    }

    /// A person was asked for consent at least once.
    pub fn has_consent(&self) -> bool {
        self.entries
            .iter()
            .any(|e| matches!(e.kind, EntryKind::Consent { .. }))
    }

    /// The run quoted or issued a refund (asked for one, whatever came of it).
    pub fn touches_refunds(&self) -> bool {
        let refund_tool =
            |tool: &str| tool.ends_with("quote_refund") || tool.ends_with("issue_refund");
        self.entries.iter().any(|e| match &e.kind {
            EntryKind::Call { tool, .. } | EntryKind::Outcome { tool, .. } => refund_tool(tool),
            _ => false,
        })
    }
}

#[cfg(test)]
mod tests;
