//! The desk's queue: what a ticket is to the desk, and where a queue comes from (the bundled
//! shop's 48 tickets, or a `tickets.json` of the same shape). A ticket holds only what a help
//! desk knows of a message; the data set's answer key is [`crate::evaluation`]'s, never the
//! desk's. The servers never see this type; a ticket reaches a model only as the host quotes
//! it.

use serde::{Deserialize, Serialize};

use crate::mail::message::{Address, Message};

/// A customer's message as it arrived, with what the shop knows about it. Other fields in a
/// `tickets.json` (a data set's labels) are not the desk's and are left unread.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Ticket {
    pub ticket_id: String,
    /// The shop's customer who wrote, when the desk knows the sender; empty when it does not.
    #[serde(default)]
    pub customer_id: String,
    /// The customer's name as the shop knows it, for the reply's greeting.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub customer_name: Option<String>,
    /// Who wrote, as their mail said (a bundled ticket: the customer's address at the shop).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<Address>,
    pub received_at: String,
    pub subject: String,
    /// The first message's text.
    pub body: String,
    /// A mail ticket's conversation, oldest first: every message received and every reply
    /// sent, the first message included. Empty for a ticket from a `tickets.json`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub thread: Vec<ThreadEntry>,
    /// Why the desk marked the ticket when it opened it (a message that claimed another
    /// ticket's thread but came from someone else).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mark: Option<String>,
}

/// One message of a ticket's conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThreadEntry {
    pub message: Message,
    /// A reply the desk sent, rather than a message it received.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ours: bool,
    /// When it arrived or was sent (RFC 3339).
    pub at: String,
}

impl Ticket {
    /// Whether the ticket has a conversation beyond its first message.
    pub fn goes_on(&self) -> bool {
        self.thread.len() > 1
    }

    /// Who wrote, for a person: the customer's ID, else the sender's address.
    pub fn who(&self) -> String {
        match (&self.customer_id, &self.from) {
            (id, _) if !id.is_empty() => id.clone(),
            (_, Some(from)) => from.address.clone(),
            _ => "unknown sender".to_owned(),
        }
    }
}

/// The bundled shop's tickets (`assets/shop/tickets.json`), compiled into the binary, each
/// with its customer's name from the shop's customer list.
pub fn bundled() -> Vec<Ticket> {
    let customers = Customers::bundled();
    let mut tickets: Vec<Ticket> = serde_json::from_str(include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/assets/shop/tickets.json"
    )))
    .expect("the bundled tickets parse: tests/it/shop_data.rs checks them");
    for ticket in &mut tickets {
        if let Some(customer) = customers.by_id(&ticket.customer_id) {
            ticket.customer_name = Some(customer.name.clone());
            ticket.from = Some(Address {
                address: customer.email.clone(),
                name: Some(customer.name.clone()),
            });
        }
    }
    tickets
}

/// The shop's customers as the desk knows them: who a sender's address belongs to.
#[derive(Debug, Clone, Default)]
pub struct Customers(Vec<Customer>);

/// One customer: the shop's ID, name and mail address.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Customer {
    pub customer_id: String,
    pub name: String,
    pub email: String,
}

impl Customers {
    /// The bundled shop's customers (`assets/shop/customers.json`).
    pub fn bundled() -> Self {
        Self::parse(include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/assets/shop/customers.json"
        )))
        .expect("the bundled customers parse: tests/it/shop_data.rs checks them")
    }

    /// `bundled`, or the path of a customers JSON file of the same shape.
    pub fn load(source: &str) -> Result<Self, TicketsError> {
        if source == "bundled" {
            return Ok(Self::bundled());
        }
        let text = std::fs::read_to_string(source).map_err(|e| TicketsError::Read {
            path: source.to_owned(),
            source: e,
        })?;
        Self::parse(&text).map_err(|e| TicketsError::Customers {
            path: source.to_owned(),
            source: e,
        })
    }

    fn parse(text: &str) -> Result<Self, serde_json::Error> {
        serde_json::from_str(text).map(Self)
    }

    pub fn by_id(&self, id: &str) -> Option<&Customer> {
        self.0.iter().find(|c| c.customer_id == id)
    }

    /// The customer whose address `address` is (compared without case).
    pub fn by_address(&self, address: &str) -> Option<&Customer> {
        self.0
            .iter()
            .find(|c| c.email.eq_ignore_ascii_case(address.trim()))
    }
}

/// The queue a config names: `bundled`, `none` (the mailbox's tickets alone), or the path of
/// a `tickets.json`.
pub fn load(source: &str) -> Result<Vec<Ticket>, TicketsError> {
    match source {
        "bundled" => Ok(bundled()),
        "none" => Ok(Vec::new()),
        path => {
            let text = std::fs::read_to_string(path).map_err(|source| TicketsError::Read {
                path: path.to_owned(),
                source,
            })?;
            serde_json::from_str(&text).map_err(|source| TicketsError::Parse {
                path: path.to_owned(),
                source,
            })
        }
    }
}

/// The ticket `id` of `tickets`.
pub fn find<'a>(tickets: &'a [Ticket], id: &str) -> Option<&'a Ticket> {
    tickets.iter().find(|t| t.ticket_id == id)
}

#[derive(Debug, thiserror::Error)]
pub enum TicketsError {
    #[error("cannot read the tickets {path} ({source}); check [tickets] source in the config")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error(
        "{path} is not a tickets.json ({source}); each ticket needs ticket_id, received_at, subject, body"
    )]
    Parse {
        path: String,
        source: serde_json::Error,
    },
    #[error(
        "{path} is not a customers file ({source}); each customer needs customer_id, name, email"
    )]
    Customers {
        path: String,
        source: serde_json::Error,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tickets_json_of_a_real_desk_loads_and_a_data_sets_labels_are_left_unread() {
        let dir = tempfile::tempdir().expect("dir");
        let plain = dir.path().join("plain.json");
        std::fs::write(
            &plain,
            r#"[{"ticket_id": "T-1", "customer_id": "C-0001", "received_at": "2026-12-01T09:00",
                 "subject": "Hello", "body": "Where is order 1234?"}]"#,
        )
        .expect("write");
        let tickets = load(plain.to_str().expect("utf-8")).expect("loads");
        assert_eq!(tickets[0].body, "Where is order 1234?");
        let labelled = dir.path().join("labelled.json");
        std::fs::write(
            &labelled,
            r#"[{"ticket_id": "T-1", "customer_id": "C-0001", "received_at": "2026-12-01T09:00",
                 "subject": "Hello", "body": "Hi", "order_id": "O-9999", "expected_tool": "x",
                 "injected": true, "wrong_ids": []}]"#,
        )
        .expect("write");
        let tickets = load(labelled.to_str().expect("utf-8")).expect("loads");
        let shown = serde_json::to_string(&tickets[0]).expect("json");
        assert!(
            !shown.contains("O-9999") && !shown.contains("injected"),
            "{shown}"
        );
    }
}
