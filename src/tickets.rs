//! The desk's queue: what a ticket is to the desk, and where a queue comes from (the bundled
//! shop's 48 tickets, or a `tickets.json` of the same shape). A ticket holds only what a help
//! desk knows of a message; the data set's answer key is [`crate::evaluation`]'s, never the
//! desk's. The servers never see this type; a ticket reaches a model only as the host quotes
//! it.

use serde::{Deserialize, Serialize};

/// A customer's message as it arrived, with what the shop knows about it. Other fields in a
/// `tickets.json` (a data set's labels) are not the desk's and are left unread.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Ticket {
    pub ticket_id: String,
    pub customer_id: String,
    /// The customer's name as the shop knows it, for the reply's greeting.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub customer_name: Option<String>,
    pub received_at: String,
    pub subject: String,
    pub body: String,
}

/// The bundled shop's tickets (`assets/shop/tickets.json`), compiled into the binary, each
/// with its customer's name from the shop's customer list.
pub fn bundled() -> Vec<Ticket> {
    #[derive(Deserialize)]
    struct Customer {
        customer_id: String,
        name: String,
    }
    let customers: Vec<Customer> = serde_json::from_str(include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/assets/shop/customers.json"
    )))
    .expect("the bundled customers parse: tests/it/shop_data.rs checks them");
    let mut tickets: Vec<Ticket> = serde_json::from_str(include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/assets/shop/tickets.json"
    )))
    .expect("the bundled tickets parse: tests/it/shop_data.rs checks them");
    for ticket in &mut tickets {
        ticket.customer_name = customers
            .iter()
            .find(|c| c.customer_id == ticket.customer_id)
            .map(|c| c.name.clone());
    }
    tickets
}

/// The queue a config names: `bundled`, or the path of a `tickets.json`.
pub fn load(source: &str) -> Result<Vec<Ticket>, TicketsError> {
    match source {
        "bundled" => Ok(bundled()),
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
        "{path} is not a tickets.json ({source}); each ticket needs ticket_id, customer_id, received_at, subject, body"
    )]
    Parse {
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
