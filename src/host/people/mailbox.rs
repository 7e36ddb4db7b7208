//! The support mailbox at the desk: the record's mail tickets put in the queue at start,
//! new mail read as it arrives (IMAP IDLE, or a Maildir watched), replies handed to the
//! mail server with retries, and a person's word that a conversation is solved.
//!
//! Everything that happens is an event in the record first, then told to the driver.

use std::sync::Arc;
use std::time::Duration;

use crate::host::core::Host;
use crate::host::events::HostEvent;
use crate::mailroom::delivery;
use crate::mailroom::follow::Heard;
use crate::mailroom::intake::{self, Arrived};
use crate::record::{Event, Lifecycle};

impl Host {
    /// Puts the record's mail tickets in the queue and tells the driver; then reads the
    /// mailbox as mail arrives and delivers the replies that wait for the mail server.
    pub async fn open_mailroom(self: &Arc<Self>) {
        if !self.load_mail_tickets().await {
            return;
        }
        let Some(mailroom) = self.mailroom.clone() else {
            return;
        };
        let host = Arc::clone(self);
        tokio::spawn(async move {
            let record = Arc::clone(&host.record);
            mailroom
                .follow(&record, |heard| match heard {
                    Heard::Arrived(arrived) => host.arrived(arrived),
                    Heard::Failed { problem, retry } => {
                        let _ = host.events.send(HostEvent::Problem(format!(
                            "the support mailbox: {problem}; the desk tries again in {} s",
                            retry.as_secs()
                        )));
                    }
                })
                .await;
        });
        if self.mailroom.as_ref().is_some_and(|m| m.outbound.is_some()) {
            self.deliver_waiting().await;
        }
    }

    /// Puts the record's mail tickets in the queue and tells the driver; false when there is
    /// no mailroom or the record could not be read (the driver is told).
    pub async fn load_mail_tickets(&self) -> bool {
        let Some(mailroom) = self.mailroom.clone() else {
            return false;
        };
        if let Err(e) = intake::load(&self.record, &mailroom.tickets).await {
            let _ = self.events.send(HostEvent::Problem(format!(
                "the mail tickets could not be read from the record ({e}); restart the desk"
            )));
            return false;
        }
        let tickets: Vec<_> = mailroom.lock().tickets().cloned().collect();
        for ticket in &tickets {
            self.put_ticket(ticket.clone());
        }
        if !tickets.is_empty() {
            let _ = self.events.send(HostEvent::Tickets(tickets));
        }
        true
    }

    /// Tells the driver of each ticket mail opened or added to, then of the event.
    fn arrived(&self, arrived: Vec<Arrived>) {
        for one in arrived {
            let Arrived::Ticket { ticket, appended } = one else {
                continue;
            };
            tracing::info!(ticket = %ticket.ticket_id, "mail arrived");
            self.put_ticket(*ticket.clone());
            let _ = self.events.send(HostEvent::Tickets(vec![*ticket]));
            self.announce(*appended);
        }
    }

    /// Hands every reply the record shows queued to the mail server (after a restart, the
    /// ones a killed desk had not finished).
    async fn deliver_waiting(self: &Arc<Self>) {
        let states = match self.record.states().await {
            Ok(states) => states,
            Err(e) => {
                let _ = self.events.send(HostEvent::Problem(format!(
                    "the replies waiting for the mail server could not be read ({e}); restart the desk"
                )));
                return;
            }
        };
        for state in states {
            if let Some(delivery) = &state.delivery
                && delivery.state == "queued"
            {
                self.deliver(state.ticket.clone(), delivery.attempts + 1);
            }
        }
    }

    /// Attempt `attempt` at handing `ticket`'s queued reply to the mail server, on a task of
    /// its own; a failure the server says may pass is tried again later.
    pub(crate) fn deliver(self: &Arc<Self>, ticket: String, attempt: u32) {
        let host = Arc::clone(self);
        tokio::spawn(async move {
            let Some(again) = host.deliver_once(&ticket, attempt).await else {
                return;
            };
            tokio::time::sleep(again).await;
            host.deliver(ticket, attempt + 1);
        });
    }

    /// One attempt at delivering `ticket`'s queued reply; `Some(wait)` when another should
    /// follow after `wait`.
    pub async fn deliver_once(&self, ticket: &str, attempt: u32) -> Option<Duration> {
        let outbound = self.mailroom.as_ref()?.outbound.as_ref()?;
        let state = self.record.state(ticket).await.ok()??;
        let queued = state.delivery.filter(|d| d.state == "queued")?;
        let text = state.sent.map(|s| s.text).or(state.draft)?;
        let mail_ticket = self.ticket(ticket)?;
        let event =
            delivery::attempt(outbound, &mail_ticket, &queued.message_id, &text, attempt).await;
        let retry = match &event {
            Event::Delivery {
                delivered: false,
                permanent: false,
                words,
                ..
            } => {
                let wait = delivery::backoff(attempt);
                let _ = self.events.send(HostEvent::Problem(format!(
                    "the reply to {ticket} did not reach the mail server ({words}); the desk tries again in {} s",
                    wait.as_secs()
                )));
                Some(wait)
            }
            Event::Delivery {
                delivered: false,
                words,
                ..
            } => {
                let _ = self.events.send(HostEvent::Problem(format!(
                    "the mail server refused the reply to {ticket} for good ({words}); answer the customer another way"
                )));
                None
            }
            _ => None,
        };
        if let Err(e) = self.report(event).await {
            let _ = self.events.send(HostEvent::Problem(e.to_string()));
        }
        retry
    }

    /// After a send: a reply that waits for the mail server is handed to it now.
    pub async fn deliver_if_queued(self: &Arc<Self>, ticket: &str) {
        let Ok(Some(state)) = self.record.state(ticket).await else {
            return;
        };
        if state.delivery.as_ref().is_some_and(|d| d.state == "queued") {
            self.deliver(ticket.to_owned(), 1);
        }
    }

    /// A reply to a ticket that came by mail goes back by mail when `[mail.smtp]` is set:
    /// its Message-ID, made now, before anything is sent.
    pub(crate) fn reply_message_id(&self, ticket: &str) -> Option<String> {
        let mailroom = self.mailroom.as_ref()?;
        let outbound = mailroom.outbound.as_ref()?;
        mailroom.lock().ticket(ticket)?;
        let domain = outbound
            .from
            .address
            .rsplit('@')
            .next()
            .unwrap_or("desk.invalid");
        Some(crate::mail::smtp::make_message_id(domain))
    }

    /// A person's word that `ticket`'s conversation is done, with an optional note.
    pub async fn solve(&self, ticket: &str, note: Option<&str>) -> Result<(), String> {
        let state = self.record.state(ticket).await.map_err(|e| e.to_string())?;
        if self.ticket(ticket).is_none() {
            return Err(format!("there is no ticket {ticket}"));
        }
        if state
            .as_ref()
            .is_some_and(|s| s.state == Lifecycle::Working)
        {
            return Err(format!(
                "{ticket} is being worked; stop the run (s) before solving it"
            ));
        }
        self.report(Event::Solved {
            ticket: ticket.to_owned(),
            by: self.record.person().to_owned(),
            note: note
                .map(str::trim)
                .filter(|n| !n.is_empty())
                .map(str::to_owned),
        })
        .await
        .map_err(|e| e.to_string())
    }
}
