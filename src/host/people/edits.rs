//! What people do with a ticket besides answering the host's questions: their edits of the
//! reply (checked against the call log as the record holds it), sends, hand-overs and notes.
//! Each is an event in the desk's record; whether it is allowed is the record's rule.

use crate::host::checks::{self, CallFact};
use crate::host::core::Host;
use crate::host::run::continuation;
use crate::record::{EngineError, Event, Finding};

impl Host {
    /// What the latest run of `ticket` really did, as the record holds it: each call with
    /// its outcome (a lead's answer included), for checking a draft against; the same log the
    /// run and its continuation keep; and the calls people made themselves before it.
    pub(in crate::host) async fn call_log(
        &self,
        ticket: &str,
    ) -> Result<Vec<CallFact>, EngineError> {
        let events = self.record.ticket_events(ticket).await?;
        let run_start = events
            .iter()
            .rposition(|s| matches!(s.event, Event::TicketStarted { .. }))
            .unwrap_or(0);
        let mut log = continuation::person_calls(&events[..run_start]);
        log.extend(continuation::call_log(&events[run_start..]));
        Ok(log)
    }

    /// Checks a reply a person wrote (or edited) against the ticket's call log as the record
    /// holds it, as the model's draft was checked: after a restart too.
    pub async fn check_text(&self, ticket: &str, text: &str) -> Result<checks::Checked, String> {
        let facts = self.call_log(ticket).await.map_err(|e| e.to_string())?;
        let ticket_text = self
            .ticket(ticket)
            .map(|t| crate::host::run::system_prompt::ticket_text(&t))
            .ok_or_else(|| format!("there is no ticket {ticket}"))?;
        let tools: Vec<String> = self
            .tools
            .read()
            .await
            .0
            .canonical()
            .map(ToString::to_string)
            .collect();
        Ok(checks::check_reply(
            text,
            &facts,
            &ticket_text,
            &tools,
            self.config.desk.signature(),
        ))
    }

    /// A person's edit of a ticket's reply, checked and recorded (holding the ticket's claim
    /// on a team's record).
    pub async fn edit_draft(&self, ticket: &str, text: &str) -> Result<(), String> {
        self.holding(ticket, self.record_edit(ticket, text)).await
    }

    async fn record_edit(&self, ticket: &str, text: &str) -> Result<(), String> {
        let checked = self.check_text(ticket, text).await?;
        self.report(Event::DraftEdited {
            ticket: ticket.to_owned(),
            by: self.record.person().to_owned(),
            text: checked.text,
            findings: checked.findings,
        })
        .await
        .map_err(|e| e.to_string())
    }

    /// Sends a ticket's reply: the text is checked against the call log first (and the check
    /// recorded when it changed anything), then refused while findings are open unless
    /// `override_reason` says why. The reply goes to the outbox.
    pub async fn send_reply(
        &self,
        ticket: &str,
        text: &str,
        override_reason: Option<&str>,
    ) -> Result<(), String> {
        self.holding(ticket, self.record_send(ticket, text, override_reason))
            .await
    }

    async fn record_send(
        &self,
        ticket: &str,
        text: &str,
        override_reason: Option<&str>,
    ) -> Result<(), String> {
        let checked = self.check_text(ticket, text).await?;
        let state = self.record.state(ticket).await.map_err(|e| e.to_string())?;
        let reasons: Vec<String> = checked.findings.iter().map(Finding::reason).collect();
        let unchanged = state.as_ref().is_some_and(|s| {
            s.draft.as_deref() == Some(checked.text.as_str()) && s.findings == reasons
        });
        if !unchanged {
            self.record_edit(ticket, text).await?;
        }
        let event = Event::Sent {
            ticket: ticket.to_owned(),
            by: self.record.person().to_owned(),
            text: checked.text,
            override_reason: override_reason
                .map(str::trim)
                .filter(|r| !r.is_empty())
                .map(str::to_owned),
            message_id: self.reply_message_id(ticket),
            answers: self.answers(ticket),
        };
        let appended = self
            .record
            .append(&event)
            .await
            .map_err(|e| e.to_string())?;
        self.announce(appended.clone());
        // A reply by mail joins the ticket's conversation, for the next run to read.
        self.fold_mail(&appended.stored);
        Ok(())
    }

    pub async fn hand_over(&self, ticket: &str, to: &str, note: &str) -> Result<(), String> {
        let handed = async {
            self.report(Event::HandedOver {
                ticket: ticket.to_owned(),
                by: self.record.person().to_owned(),
                to: to.to_owned(),
                note: note.to_owned(),
            })
            .await
            .map_err(|e| e.to_string())
        };
        self.holding(ticket, handed).await
    }

    /// An internal note on a ticket: kept in the record, never sent, never shown to the model.
    pub async fn add_note(&self, ticket: &str, text: &str) -> Result<(), String> {
        self.report(Event::Noted {
            ticket: ticket.to_owned(),
            by: self.record.person().to_owned(),
            text: text.to_owned(),
        })
        .await
        .map_err(|e| e.to_string())
    }
}
