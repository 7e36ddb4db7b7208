//! Mail tickets as the record holds them, and where a new message belongs.
//!
//! A message joins a ticket when it answers a Message-ID the record holds (received or
//! sent) and comes from that ticket's sender; a message that names another ticket's thread
//! but comes from someone else opens a ticket of its own, marked so. One Message-ID is one
//! message: the same message read twice is a duplicate.

use std::collections::{BTreeMap, HashMap};

use crate::mail::message::{Address, Message};
use crate::record::{Event, Stored, rfc3339};
use crate::tickets::{ThreadEntry, Ticket};

/// The mail tickets of a record, folded from its events in order.
#[derive(Debug, Default)]
pub struct MailTickets {
    /// The support address: the From of every reply the desk sends.
    address: String,
    tickets: BTreeMap<String, Ticket>,
    /// Every Message-ID the record holds, received or sent, and its ticket.
    ids: HashMap<String, String>,
    /// Each mailbox's UIDVALIDITY and the highest UID read from it.
    cursors: HashMap<String, (u32, u32)>,
    /// The highest number of an `M-` ticket.
    last_number: u32,
    /// The newest event folded in: a catch-up reads on from after it.
    seen: i64,
}

/// Where a new message goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Placement {
    /// The record already holds this Message-ID (on this ticket).
    Duplicate(String),
    /// It answers this ticket's thread, from its sender.
    Joins(String),
    /// A ticket of its own, with why it was marked when it claims another's thread.
    Opens {
        ticket: String,
        mark: Option<String>,
    },
}

impl MailTickets {
    pub fn new(address: &str) -> Self {
        Self {
            address: address.trim().to_lowercase(),
            ..Self::default()
        }
    }

    /// Folds one event of the record; returns the ticket it changed, if it changed one. An
    /// event folded again (heard live and read on a catch-up) changes nothing: a message is
    /// known by its Message-ID.
    pub fn add(&mut self, stored: &Stored) -> Option<&Ticket> {
        self.seen = self.seen.max(stored.seq);
        match &stored.event {
            Event::MessageReceived {
                ticket,
                message,
                mailbox,
                uid,
                customer,
                mark,
            } => {
                if self.ids.contains_key(&message.message_id) {
                    return None;
                }
                self.received(ticket, message, stored.at, customer.as_ref(), mark);
                if let Some((validity, uid)) = uid {
                    self.read_to(mailbox, *validity, *uid);
                }
                self.tickets.get(ticket)
            }
            Event::MailboxRead {
                mailbox,
                validity,
                uid,
            } => {
                self.read_to(mailbox, *validity, *uid);
                None
            }
            Event::Sent {
                ticket,
                text,
                message_id: Some(message_id),
                ..
            } => {
                if self.ids.contains_key(message_id) {
                    return None;
                }
                self.sent(ticket, message_id, text, stored.at);
                self.tickets.get(ticket)
            }
            _ => None,
        }
    }

    fn received(
        &mut self,
        id: &str,
        message: &Message,
        at: i64,
        customer: Option<&(String, String)>,
        mark: &Option<String>,
    ) {
        self.ids.insert(message.message_id.clone(), id.to_owned());
        if let Some(number) = id.strip_prefix("M-").and_then(|n| n.parse::<u32>().ok()) {
            self.last_number = self.last_number.max(number);
        }
        let entry = ThreadEntry {
            message: message.clone(),
            ours: false,
            at: rfc3339(at),
        };
        let ticket = self.tickets.entry(id.to_owned()).or_insert_with(|| Ticket {
            ticket_id: id.to_owned(),
            customer_id: customer.map(|(id, _)| id.clone()).unwrap_or_default(),
            customer_name: customer.map(|(_, name)| name.clone()),
            from: Some(message.from.clone()),
            received_at: rfc3339(at),
            subject: message.subject.clone(),
            body: message.text.clone(),
            thread: Vec::new(),
            mark: mark.clone(),
        });
        ticket.thread.push(entry);
    }

    fn sent(&mut self, id: &str, message_id: &str, text: &str, at: i64) {
        let Some(ticket) = self.tickets.get_mut(id) else {
            return;
        };
        self.ids.insert(message_id.to_owned(), id.to_owned());
        let reply = Message {
            message_id: message_id.to_owned(),
            from: Address {
                address: self.address.clone(),
                name: None,
            },
            date: Some(rfc3339(at)),
            subject: reply_subject(&ticket.subject),
            text: text.to_owned(),
            quoted: None,
            attachments: Vec::new(),
            in_reply_to: ticket.thread.last().map(|e| e.message.message_id.clone()),
            references: Vec::new(),
            automatic: None,
            size: text.len(),
            problems: Vec::new(),
        };
        ticket.thread.push(ThreadEntry {
            message: reply,
            ours: true,
            at: rfc3339(at),
        });
    }

    fn read_to(&mut self, mailbox: &str, validity: u32, uid: u32) {
        let cursor = self
            .cursors
            .entry(mailbox.to_owned())
            .or_insert((validity, 0));
        if cursor.0 != validity {
            *cursor = (validity, 0);
        }
        cursor.1 = cursor.1.max(uid);
    }

    /// Where `message` goes.
    pub fn place(&self, message: &Message) -> Placement {
        if let Some(ticket) = self.ids.get(&message.message_id) {
            return Placement::Duplicate(ticket.clone());
        }
        let claimed = message
            .answers()
            .find_map(|id| self.ids.get(id).map(|t| t.to_owned()));
        let next = format!("M-{:05}", self.last_number + 1);
        let Some(claimed) = claimed else {
            return Placement::Opens {
                ticket: next,
                mark: None,
            };
        };
        let sender = self.tickets.get(&claimed).and_then(|t| t.from.as_ref());
        match sender {
            Some(sender) if sender.address.eq_ignore_ascii_case(&message.from.address) => {
                Placement::Joins(claimed)
            }
            _ => Placement::Opens {
                ticket: next,
                mark: Some(format!(
                    "this message answers {claimed}'s conversation but comes from {}, not from {claimed}'s sender: it was kept apart",
                    if message.from.address.is_empty() {
                        "no address"
                    } else {
                        &message.from.address
                    }
                )),
            },
        }
    }

    /// The newest event of the record folded in.
    pub fn seen(&self) -> i64 {
        self.seen
    }

    /// The UIDVALIDITY and highest UID read from `mailbox`.
    pub fn cursor(&self, mailbox: &str) -> Option<(u32, u32)> {
        self.cursors.get(mailbox).copied()
    }

    pub fn ticket(&self, id: &str) -> Option<&Ticket> {
        self.tickets.get(id)
    }

    /// Every mail ticket, in ticket order.
    pub fn tickets(&self) -> impl Iterator<Item = &Ticket> {
        self.tickets.values()
    }

    pub fn address(&self) -> &str {
        &self.address
    }
}

/// `Re: subject`, unless it already starts so.
pub fn reply_subject(subject: &str) -> String {
    let trimmed = subject.trim();
    if trimmed
        .get(..3)
        .is_some_and(|re| re.eq_ignore_ascii_case("re:"))
    {
        trimmed.to_owned()
    } else {
        format!("Re: {trimmed}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(id: &str, from: &str, in_reply_to: Option<&str>) -> Message {
        Message {
            message_id: id.to_owned(),
            from: Address {
                address: from.to_owned(),
                name: None,
            },
            date: None,
            subject: "Where is my parcel?".to_owned(),
            text: format!("text of {id}"),
            quoted: None,
            attachments: Vec::new(),
            in_reply_to: in_reply_to.map(str::to_owned),
            references: Vec::new(),
            automatic: None,
            size: 10,
            problems: Vec::new(),
        }
    }

    fn received(seq: i64, ticket: &str, message: Message, uid: Option<(u32, u32)>) -> Stored {
        Stored {
            seq,
            at: 1_780_000_000_000 + seq,
            by: "desk".to_owned(),
            event: Event::MessageReceived {
                ticket: ticket.to_owned(),
                message: Box::new(message),
                mailbox: "imap://support@host:143/INBOX".to_owned(),
                uid,
                customer: None,
                mark: None,
            },
        }
    }

    #[test]
    fn an_answer_from_the_sender_joins_their_ticket_and_a_stranger_claiming_it_opens_another() {
        let mut tickets = MailTickets::new("Support@Shop.example");
        let first = message("a@x", "ana@example.com", None);
        assert_eq!(
            tickets.place(&first),
            Placement::Opens {
                ticket: "M-00001".into(),
                mark: None
            }
        );
        tickets.add(&received(1, "M-00001", first.clone(), Some((7, 1))));
        assert_eq!(
            tickets.place(&first),
            Placement::Duplicate("M-00001".into())
        );
        let answer = message("b@x", "ANA@example.com", Some("a@x"));
        assert_eq!(tickets.place(&answer), Placement::Joins("M-00001".into()));
        let forged = message("c@x", "mallory@example.net", Some("a@x"));
        let Placement::Opens { ticket, mark } = tickets.place(&forged) else {
            panic!("a stranger's claim must not join");
        };
        assert_eq!(ticket, "M-00002");
        assert!(mark.is_some_and(|m| m.contains("M-00001") && m.contains("mallory@example.net")));
        assert_eq!(
            tickets.cursor("imap://support@host:143/INBOX"),
            Some((7, 1))
        );
    }

    #[test]
    fn a_reply_the_desk_sent_joins_the_thread_and_an_answer_to_it_finds_the_ticket() {
        let mut tickets = MailTickets::new("support@shop.example");
        tickets.add(&received(
            1,
            "M-00001",
            message("a@x", "ana@example.com", None),
            None,
        ));
        tickets.add(&Stored {
            seq: 2,
            at: 1_780_000_000_100,
            by: "ana".to_owned(),
            event: Event::Sent {
                ticket: "M-00001".to_owned(),
                by: "ana".to_owned(),
                text: "It left on Monday.".to_owned(),
                override_reason: None,
                message_id: Some("r1@shop.example".to_owned()),
                answers: Some("a@x".to_owned()),
            },
        });
        let ticket = tickets.ticket("M-00001").expect("ticket");
        assert_eq!(ticket.thread.len(), 2);
        assert!(ticket.thread[1].ours);
        assert_eq!(ticket.thread[1].message.subject, "Re: Where is my parcel?");
        assert_eq!(
            ticket.thread[1].message.from.address,
            "support@shop.example"
        );
        let answer = message("b@x", "ana@example.com", Some("r1@shop.example"));
        assert_eq!(tickets.place(&answer), Placement::Joins("M-00001".into()));
    }

    #[test]
    fn a_changed_uidvalidity_starts_the_folder_again() {
        let mut tickets = MailTickets::new("support@shop.example");
        tickets.read_to("box", 1, 40);
        tickets.read_to("box", 2, 3);
        assert_eq!(tickets.cursor("box"), Some((2, 3)));
    }

    #[test]
    fn a_subject_is_answered_once_whatever_its_first_characters() {
        assert_eq!(reply_subject("RE: x"), "RE: x");
        assert_eq!(reply_subject(" hello "), "Re: hello");
        assert_eq!(reply_subject("ü"), "Re: ü");
        assert_eq!(reply_subject("€€"), "Re: €€");
    }
}
