//! The support mailbox at the desk: the record's mail tickets put in the queue at start,
//! new mail read as it arrives (IMAP IDLE, or a Maildir watched), replies handed to the
//! mail server with retries, and a person's word that a conversation is solved.
//!
//! Everything that happens is an event in the record first, then told to the driver.

use std::sync::Arc;
use std::time::Duration;

use crate::host::core::Host;
use crate::host::events::HostEvent;
use crate::mailroom::Mailroom;
use crate::mailroom::delivery;
use crate::mailroom::follow::Heard;
use crate::mailroom::intake::{self, Arrived};
use crate::record::{Event, Lifecycle};

/// How often the mailbox's lease is renewed (it runs out after 30 s), and how often a desk
/// without it asks again.
const LEASE_EVERY: Duration = Duration::from_secs(10);

impl Host {
    /// Puts the record's mail tickets in the queue and tells the driver; then, with a
    /// mailroom, reads the mailbox as mail arrives (on a team, while this desk holds the
    /// mailbox's lease) and delivers the replies that wait for the mail server.
    pub async fn open_mailroom(self: &Arc<Self>) {
        if !self.load_mail_tickets().await {
            return;
        }
        let Some(mailroom) = self.mailroom.clone() else {
            return;
        };
        let host = Arc::clone(self);
        tokio::spawn(async move { host.read_under_lease(mailroom).await });
    }

    /// Reads the mailbox whenever this desk holds its lease; another desk's lease is waited
    /// out, and a lease lost (a database away too long) stops the reading until it is held
    /// again.
    async fn read_under_lease(self: &Arc<Self>, mailroom: Arc<Mailroom>) {
        let name = mailroom.inbound.name();
        let mut waiting_on = None;
        loop {
            match self.record.hold_mailbox(&name).await {
                Ok((true, _)) => {
                    waiting_on = None;
                    if mailroom.outbound.is_some() {
                        self.deliver_waiting().await;
                    }
                    let record = Arc::clone(&self.record);
                    tokio::select! {
                        () = mailroom.follow(&record, |heard| self.heard_mail(heard)) => {}
                        () = self.keep_mailbox(&name) => {}
                    }
                }
                Ok((false, holder)) => {
                    if waiting_on.as_ref() != Some(&holder) {
                        tracing::info!(%holder, mailbox = %name, "another desk reads the mailbox");
                        waiting_on = Some(holder);
                    }
                }
                Err(e) => {
                    let _ = self.events.send(HostEvent::Problem(format!(
                        "the support mailbox's lease could not be taken ({e}); the desk tries again"
                    )));
                }
            }
            tokio::time::sleep(LEASE_EVERY).await;
        }
    }

    /// Renews the mailbox's lease for as long as it can; returns once it is lost.
    async fn keep_mailbox(&self, name: &str) {
        loop {
            tokio::time::sleep(LEASE_EVERY).await;
            match self.record.hold_mailbox(name).await {
                Ok((true, _)) => {}
                Ok((false, holder)) => {
                    tracing::warn!(%holder, "the mailbox's lease went to another desk");
                    return;
                }
                Err(e) => {
                    tracing::warn!(error = %e, "the mailbox's lease could not be renewed");
                    return;
                }
            }
        }
    }

    fn heard_mail(&self, heard: Heard) {
        match heard {
            Heard::Arrived(arrived) => self.arrived(arrived),
            Heard::Failed { problem, retry } => {
                let _ = self.events.send(HostEvent::Problem(format!(
                    "the support mailbox: {problem}; the desk tries again in {} s",
                    retry.as_secs()
                )));
            }
        }
    }

    /// Puts the record's mail tickets in the queue and tells the driver; false when the
    /// record could not be read (the driver is told).
    pub async fn load_mail_tickets(&self) -> bool {
        if let Err(e) = intake::load(&self.record, &self.mail_tickets).await {
            let _ = self.events.send(HostEvent::Problem(format!(
                "the mail tickets could not be read from the record ({e}); restart the desk"
            )));
            return false;
        }
        let tickets: Vec<_> = self.mail().tickets().cloned().collect();
        for ticket in &tickets {
            self.put_ticket(ticket.clone());
        }
        if !tickets.is_empty() {
            let _ = self.events.send(HostEvent::Tickets(tickets));
        }
        true
    }

    /// An event another desk of the team appended: a ticket mail opened or added to (or a
    /// reply that joined its conversation) comes into this desk's queue.
    pub(crate) fn fold_mail(&self, stored: &crate::record::Stored) {
        let changed = self.mail().add(stored).cloned();
        if let Some(ticket) = changed {
            self.put_ticket(ticket.clone());
            let _ = self.events.send(HostEvent::Tickets(vec![ticket]));
        }
    }

    fn mail(&self) -> std::sync::MutexGuard<'_, crate::mailroom::MailTickets> {
        self.mail_tickets.lock().unwrap_or_else(|p| p.into_inner())
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
        let mail_ticket = self.mail().ticket(ticket)?.clone();
        let (event, went) =
            delivery::attempt(outbound, &mail_ticket, &queued.message_id, attempt).await;
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
        // The server's answer is recorded first: a desk that stops now never sends again.
        if let Err(e) = self.report(event).await {
            let _ = self.events.send(HostEvent::Problem(e.to_string()));
        }
        if let Some(went) = went {
            self.file_in_sent(ticket, &went).await;
        }
        retry
    }

    /// A copy of a delivered reply in the IMAP folder `[mail.imap] sent_folder` names; a copy
    /// that cannot be filed is said, and the reply stays delivered.
    async fn file_in_sent(&self, ticket: &str, went: &crate::mail::smtp::Outgoing) {
        let Some((account, folder)) = self.mailroom.as_ref().and_then(|m| m.sent_folder.as_ref())
        else {
            return;
        };
        let filed = async {
            let raw = crate::mail::smtp::format(went)?;
            let mut imap = crate::mail::imap::Imap::connect(account).await?;
            let appended = imap.append(folder, &raw).await;
            imap.logout().await;
            appended
        };
        if let Err(e) = filed.await {
            let _ = self.events.send(HostEvent::Problem(format!(
                "the reply to {ticket} was delivered, but its copy could not be filed in {folder}: {e}"
            )));
        }
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
        let outbound = self.mailroom.as_ref()?.outbound.as_ref()?;
        self.mail().ticket(ticket)?;
        let domain = outbound
            .from
            .address
            .rsplit('@')
            .next()
            .unwrap_or("desk.invalid");
        Some(crate::mail::smtp::make_message_id(domain))
    }

    /// The customer's message a reply to `ticket` answers: the latest one a person wrote.
    pub(crate) fn answers(&self, ticket: &str) -> Option<String> {
        let mail = self.mail();
        let ticket = mail.ticket(ticket)?;
        crate::mailroom::intake::latest(ticket).map(|m| m.message_id.clone())
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
