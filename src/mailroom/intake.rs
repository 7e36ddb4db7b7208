//! Mail into the record: each message parsed, placed (a new ticket, an answer on its
//! ticket, or one the record already holds) and appended as one event before anyone is
//! told. A Maildir is read from `new/`; an IMAP folder from the UID after the last one
//! the record holds, for the folder's UIDVALIDITY (a changed one reads the folder again,
//! and Message-IDs keep that from making a ticket twice).

use std::path::Path;
use std::sync::Mutex;

use super::maildir::{self, MaildirError};
use super::threads::{MailTickets, Placement};
use crate::mail::MailError;
use crate::mail::imap::Imap;
use crate::mail::message::Message;
use crate::mail::parse::parse;
use crate::record::{Appended, EngineError, Event, Record};
use crate::tickets::{Customers, Ticket};

/// At most this many messages are fetched from an IMAP server at once.
const FETCH_BATCH: usize = 200;
/// At most this many Maildir files are read in one pass.
const MAILDIR_BATCH: usize = 1000;

/// What one message did.
#[derive(Debug, Clone)]
pub enum Arrived {
    /// It opened a ticket, or added to one: the ticket as it is now, and the event.
    Ticket {
        ticket: Box<Ticket>,
        appended: Box<Appended>,
    },
    /// The record already held its Message-ID.
    Duplicate { ticket: String, message_id: String },
}

impl Arrived {
    /// One line for a person: `M-00012 opened: from … "subject"`, with the sender's words as
    /// they came (whoever prints it cleans it for the terminal).
    pub fn line(&self) -> String {
        match self {
            Arrived::Ticket { ticket, .. } => {
                let Some(last) = ticket.thread.last() else {
                    return ticket.ticket_id.clone();
                };
                let verb = if ticket.thread.len() == 1 {
                    "opened"
                } else {
                    "answered"
                };
                let automatic = last
                    .message
                    .automatic
                    .map_or(String::new(), |a| format!(" ({})", a.as_str()));
                format!(
                    "{} {verb}{automatic}: from {} \"{}\"",
                    ticket.ticket_id,
                    last.message.from.display(),
                    last.message.subject,
                )
            }
            Arrived::Duplicate { ticket, message_id } => {
                format!("{ticket} already holds <{message_id}>: not taken twice")
            }
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum IntakeError {
    #[error(transparent)]
    Mail(#[from] MailError),
    #[error(transparent)]
    Maildir(#[from] MaildirError),
    #[error(
        "the desk's record refused a message ({0}); nothing was lost: the message stays in the mailbox for the next pass"
    )]
    Record(#[from] EngineError),
}

/// The mailroom's view of a record: the mail tickets folded from it and who the shop's
/// customers are.
pub struct Intake<'a> {
    pub record: &'a Record,
    pub tickets: &'a Mutex<MailTickets>,
    pub customers: &'a Customers,
}

impl Intake<'_> {
    /// Records one message read from `mailbox` (with its IMAP UIDVALIDITY and UID).
    pub async fn receive(
        &self,
        raw: &[u8],
        mailbox: &str,
        uid: Option<(u32, u32)>,
    ) -> Result<Arrived, EngineError> {
        let message = parse(raw);
        let placement = lock(self.tickets).place(&message);
        let (ticket, mark) = match placement {
            Placement::Duplicate(ticket) => {
                return Ok(Arrived::Duplicate {
                    ticket,
                    message_id: message.message_id,
                });
            }
            Placement::Joins(ticket) => (ticket, None),
            Placement::Opens { ticket, mark } => (ticket, mark),
        };
        let customer = self
            .customers
            .by_address(&message.from.address)
            .map(|c| (c.customer_id.clone(), c.name.clone()));
        let event = Event::MessageReceived {
            ticket: ticket.clone(),
            message: Box::new(message),
            mailbox: mailbox.to_owned(),
            uid,
            customer,
            mark,
        };
        let appended = self.record.append(&event).await?;
        let mut tickets = lock(self.tickets);
        let ticket = tickets
            .add(&appended.stored)
            .cloned()
            .unwrap_or_else(|| Ticket {
                ticket_id: ticket,
                ..Ticket::default()
            });
        Ok(Arrived::Ticket {
            ticket: Box::new(ticket),
            appended: Box::new(appended),
        })
    }

    /// One pass over a Maildir's `new/`: every message recorded, then moved to `cur/`.
    pub async fn pull_maildir(&self, dir: &Path) -> Result<Vec<Arrived>, IntakeError> {
        load(self.record, self.tickets).await?;
        let mailbox = dir.display().to_string();
        let mut arrived = Vec::new();
        loop {
            let names = maildir::waiting(dir, MAILDIR_BATCH)?;
            if names.is_empty() {
                return Ok(arrived);
            }
            for path in names {
                let Some(waiting) = maildir::read(&path)? else {
                    continue;
                };
                arrived.push(self.receive(&waiting.raw, &mailbox, None).await?);
                maildir::mark_read(dir, &waiting.path)?;
            }
        }
    }

    /// One pass over an IMAP folder: every message after the last one the record holds.
    pub async fn pull_imap(
        &self,
        imap: &mut Imap,
        mailbox: &str,
    ) -> Result<Vec<Arrived>, IntakeError> {
        // What another reader of a team's mailbox took before this one held it.
        load(self.record, self.tickets).await?;
        let validity = imap.uid_validity();
        let mut after = match lock(self.tickets).cursor(mailbox) {
            Some((known, uid)) if known == validity => uid,
            // A folder never read, or one whose UIDVALIDITY changed: its UIDs name other
            // messages now, so it is read again from the start.
            _ => 0,
        };
        let mut arrived = Vec::new();
        loop {
            let fetched = imap.fetch_after(after, FETCH_BATCH).await?;
            let Some(last) = fetched.last().map(|f| f.uid) else {
                return Ok(arrived);
            };
            for message in fetched {
                arrived.push(
                    self.receive(&message.raw, mailbox, Some((validity, message.uid)))
                        .await?,
                );
            }
            let read = Event::MailboxRead {
                mailbox: mailbox.to_owned(),
                validity,
                uid: last,
            };
            let appended = self.record.append(&read).await?;
            lock(self.tickets).add(&appended.stored);
            after = last;
        }
    }
}

/// Folds every mail event of `record` that `tickets` has not seen yet: all of them the first
/// time, then what other desks appended since (a team's mailbox changes readers).
pub async fn load(record: &Record, tickets: &Mutex<MailTickets>) -> Result<(), EngineError> {
    let after = lock(tickets).seen();
    record
        .walk_after(after, |stored| {
            lock(tickets).add(&stored);
        })
        .await
}

/// Whether a model may be given `ticket`: not when the message that asks for an answer
/// was written by a machine.
pub fn answerable(ticket: &Ticket) -> Result<(), String> {
    let last = ticket.thread.iter().rev().find(|entry| !entry.ours);
    match last.and_then(|entry| entry.message.automatic) {
        Some(automatic) => Err(format!(
            "{}'s latest message is {}: the desk never gives one to a model; read it, then solve the ticket or write yourself",
            ticket.ticket_id,
            automatic.as_str()
        )),
        None => Ok(()),
    }
}

/// The mail server's view of the desk's latest message on a ticket, for a reply.
pub fn latest(ticket: &Ticket) -> Option<&Message> {
    ticket
        .thread
        .iter()
        .rev()
        .find(|e| !e.ours)
        .map(|e| &e.message)
}

fn lock(tickets: &Mutex<MailTickets>) -> std::sync::MutexGuard<'_, MailTickets> {
    tickets.lock().unwrap_or_else(|p| p.into_inner())
}
