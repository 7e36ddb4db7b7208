//! A desk file of the older kind (schema 1: one row per ticket, its latest state) turned into
//! the event log: each row becomes the events that lead to the same state, so nothing a person
//! did is lost and the states replay as the log says. It runs once, inside the transaction
//! that opens the file.

use rusqlite::Transaction;

use super::store::{RecordError, SCHEMA, write_event};
use crate::record::{Event, Finding};

/// A desk file of schema 1 kept one row per ticket (status, draft, findings as sentences,
/// the sent reply, the hand-off). Each row becomes the events that lead to the same state,
/// attributed to the person who acted where the row says so, and the old table goes.
/// One row of the older file.
struct Row {
    ticket: String,
    status: String,
    draft: Option<String>,
    findings: String,
    sent: Option<String>,
    handed_to: Option<String>,
    note: Option<String>,
    updated_at: i64,
}

pub(super) fn from_ticket_rows(
    tx: &Transaction<'_>,
    person: &str,
    allow: &[String],
) -> Result<(), RecordError> {
    let rows: Vec<Row> = {
        let mut statement = tx.prepare(
            "SELECT ticket, status, draft, findings, sent, handed_to, note, updated_at FROM tickets ORDER BY ticket",
        )?;
        statement
            .query_map([], |r| {
                Ok(Row {
                    ticket: r.get(0)?,
                    status: r.get(1)?,
                    draft: r.get(2)?,
                    findings: r.get(3)?,
                    sent: r.get(4)?,
                    handed_to: r.get(5)?,
                    note: r.get(6)?,
                    updated_at: r.get(7)?,
                })
            })?
            .collect::<Result<_, _>>()?
    };
    tx.execute_batch("ALTER TABLE tickets RENAME TO tickets_schema_1;")?;
    tx.execute_batch(SCHEMA)?;
    for row in rows {
        let at = row.updated_at * 1000;
        let events = events_of(&row);
        // The rows are this file's own history: they are written whatever the rules would
        // refuse now (a sent row with open findings was sent with an override).
        for event in events {
            write_event(tx, &event, person, at, allow)?;
        }
    }
    Ok(())
}

/// The events that lead to the state one row of the older file kept.
fn events_of(row: &Row) -> Vec<Event> {
    let ticket = row.ticket.clone();
    let mut events = Vec::new();
    if let Some(draft) = &row.draft {
        let findings: Vec<String> = serde_json::from_str(&row.findings).unwrap_or_default();
        events.push(Event::DraftEdited {
            ticket: ticket.clone(),
            by: "an earlier desk".to_owned(),
            text: draft.clone(),
            findings: findings
                .into_iter()
                .map(|reason| Finding::Carried { reason })
                .collect(),
        });
    }
    match row.status.as_str() {
        "sent" => {
            let sent: serde_json::Value = row
                .sent
                .as_deref()
                .and_then(|s| serde_json::from_str(s).ok())
                .unwrap_or_default();
            events.push(Event::Sent {
                ticket: ticket.clone(),
                by: sent["by"].as_str().unwrap_or("an earlier desk").to_owned(),
                text: sent["text"]
                    .as_str()
                    .map(str::to_owned)
                    .or_else(|| row.draft.clone())
                    .unwrap_or_default(),
                override_reason: sent["override_reason"].as_str().map(str::to_owned),
                message_id: None,
                answers: None,
            });
        }
        "handed_to_person" => events.push(Event::HandedOver {
            ticket: ticket.clone(),
            by: row.handed_to.clone().unwrap_or_else(|| "an earlier desk".to_owned()),
            to: "a person".to_owned(),
            note: row.note.clone().unwrap_or_default(),
        }),
        "working" => events.push(Event::NeedsPerson {
            ticket: ticket.clone(),
            reason: "the earlier desk stopped while this ticket was being worked; what its run did is unknown".to_owned(),
        }),
        "diverged" => events.push(Event::NeedsPerson {
            ticket: ticket.clone(),
            reason: format!(
                "the run ended without a draft: {}",
                row.note.as_deref().unwrap_or("the replay found no answer")
            ),
        }),
        _ => {}
    }
    events
}
