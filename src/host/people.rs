//! What people do with a ticket besides answering the host's questions: their edits of the
//! reply (checked against the call log as the record holds it), sends, hand-overs and notes.
//! Each is an event in the desk's record; whether it is allowed is the record's rule.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::core::Host;
use crate::host::checks::{self, CallFact, Finding};
use crate::record::RecordError;
use crate::recording::Event;

impl Host {
    /// What the latest run of `ticket` really did, as the record holds it: each call with
    /// its outcome, for checking a draft against.
    pub(super) fn call_log(&self, ticket: &str) -> Result<Vec<CallFact>, RecordError> {
        let events = self.record.ticket_events(ticket)?;
        let run_start = events
            .iter()
            .rposition(|s| matches!(s.event, Event::TicketStarted { .. }))
            .unwrap_or(0);
        let mut facts: Vec<CallFact> = Vec::new();
        let mut asked: BTreeMap<u32, Map<String, Value>> = BTreeMap::new();
        for stored in &events[run_start..] {
            match &stored.event {
                Event::ToolCall {
                    turn, arguments, ..
                } => {
                    asked.insert(*turn, arguments.clone());
                }
                Event::Outcome {
                    turn,
                    tool,
                    outcome,
                    text,
                    ..
                } => facts.push(CallFact {
                    tool: tool.clone(),
                    outcome: *outcome,
                    arguments: asked.remove(turn).unwrap_or_default(),
                    result: text.clone(),
                }),
                _ => {}
            }
        }
        Ok(facts)
    }

    /// Checks a reply a person wrote (or edited) against the ticket's call log as the record
    /// holds it, as the model's draft was checked: after a restart too.
    pub fn check_text(&self, ticket: &str, text: &str) -> Result<checks::Checked, String> {
        let facts = self.call_log(ticket).map_err(|e| e.to_string())?;
        let ticket_text = self
            .tickets
            .iter()
            .find(|t| t.ticket_id == ticket)
            .map(|t| format!("{}\n{}", t.subject, t.body))
            .ok_or_else(|| format!("there is no ticket {ticket}"))?;
        Ok(checks::check_reply(text, &facts, &ticket_text))
    }

    /// A person's edit of a ticket's reply, checked and recorded.
    pub fn edit_draft(&self, ticket: &str, text: &str) -> Result<(), String> {
        let checked = self.check_text(ticket, text)?;
        self.report(Event::DraftEdited {
            ticket: ticket.to_owned(),
            by: self.record.person().to_owned(),
            text: checked.text,
            findings: checked.findings,
        })
        .map_err(|e| e.to_string())
    }

    /// Sends a ticket's reply: the text is checked against the call log first (and the check
    /// recorded when it changed anything), then refused while findings are open unless
    /// `override_reason` says why. The reply goes to the outbox.
    pub fn send_reply(
        &self,
        ticket: &str,
        text: &str,
        override_reason: Option<&str>,
    ) -> Result<(), String> {
        let checked = self.check_text(ticket, text)?;
        let state = self.record.state(ticket).map_err(|e| e.to_string())?;
        let reasons: Vec<String> = checked.findings.iter().map(Finding::reason).collect();
        let unchanged = state.as_ref().is_some_and(|s| {
            s.draft.as_deref() == Some(checked.text.as_str()) && s.findings == reasons
        });
        if !unchanged {
            self.edit_draft(ticket, text)?;
        }
        self.report(Event::Sent {
            ticket: ticket.to_owned(),
            by: self.record.person().to_owned(),
            text: checked.text,
            override_reason: override_reason
                .map(str::trim)
                .filter(|r| !r.is_empty())
                .map(str::to_owned),
        })
        .map_err(|e| e.to_string())
    }

    pub fn hand_over(&self, ticket: &str, to: &str, note: &str) -> Result<(), String> {
        self.report(Event::HandedOver {
            ticket: ticket.to_owned(),
            by: self.record.person().to_owned(),
            to: to.to_owned(),
            note: note.to_owned(),
        })
        .map_err(|e| e.to_string())
    }

    /// An internal note on a ticket: kept in the record, never sent, never shown to the model.
    pub fn add_note(&self, ticket: &str, text: &str) -> Result<(), String> {
        self.report(Event::Noted {
            ticket: ticket.to_owned(),
            by: self.record.person().to_owned(),
            text: text.to_owned(),
        })
        .map_err(|e| e.to_string())
    }
}
