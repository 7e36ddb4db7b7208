//! The desk's own record: one append-only log of everything that happens at the desk (model
//! turns, calls, outcomes, consent and form answers, drafts, people's edits, sends,
//! hand-overs, attachments, notes), each event with who and when.
//!
//! A ticket's state is derived from its events ([`state`]), its transcript too
//! ([`transcript`]); the queue, the live ticket pane, review mode, `queue --json` and the JSONL
//! export all read the same events. The events themselves, and the words they are made of
//! (a call's [`Outcome`], a draft's [`Finding`]), are [`event`]'s. One person's desk keeps the
//! record in an SQLite file in the data directory ([`store`]); a team keeps it in PostgreSQL
//! ([`postgres`]), and [`engine`] is the one face of both.

pub mod engine;
pub mod event;
mod journal;
mod migrate;
pub mod owners;
pub mod postgres;
pub mod state;
pub mod store;
pub mod transcript;

use std::io::Write;
use std::path::Path;

use serde::Serialize;

pub use engine::{EngineError, Record};
pub use event::{Event, Finding, Manifest, Outcome, PersonPrompt};
pub use owners::tag_name;
pub use state::{Conversation, Lifecycle, OpenTask, TicketState};
pub use store::{Appended, DeskRecord, RecordError, Stored};

use crate::tickets::Ticket;

/// The record's file in a data directory.
pub const RECORD_FILE: &str = "desk.sqlite3";
/// Sent replies, one JSON line each, for a mail integration to pick up.
pub const OUTBOX_FILE: &str = "outbox.jsonl";

/// Writes the whole record, one person's or the team's, as a JSONL recording (the record's
/// interchange format): every event in order, each with its `seq`, `at` (unix milliseconds)
/// and `by`. `summary`, `review` and `replay:` read it as they read any recording. The record
/// is read a page at a time ([`Record::PAGE`] events), so a long one is written without all
/// of it in memory. Returns how many events.
pub async fn export(record: &Record, out: &Path) -> Result<usize, ExportError> {
    let io = |source| ExportError::Write {
        path: out.to_owned(),
        source,
    };
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(out)
        .map_err(io)?;
    let mut writer = std::io::BufWriter::new(file);
    let mut written = 0;
    let mut failed: Option<std::io::Error> = None;
    record
        .walk_after(0, |stored| {
            if failed.is_some() {
                return;
            }
            let mut line = serde_json::to_value(&stored.event).unwrap_or_default();
            if let Some(object) = line.as_object_mut() {
                object.insert("seq".into(), stored.seq.into());
                object.insert("at".into(), stored.at.into());
                object.insert("by".into(), stored.by.into());
            }
            let wrote = serde_json::to_writer(&mut writer, &line)
                .map_err(std::io::Error::from)
                .and_then(|()| writer.write_all(b"\n"));
            match wrote {
                Ok(()) => written += 1,
                Err(e) => failed = Some(e),
            }
        })
        .await?;
    if let Some(e) = failed {
        return Err(io(e));
    }
    let file = writer.into_inner().map_err(|e| io(e.into_error()))?;
    file.sync_all().map_err(io)?;
    Ok(written)
}

#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error(transparent)]
    Record(#[from] EngineError),
    #[error("cannot write {} ({source}); name a new file (export never overwrites one)", path.display())]
    Write {
        path: std::path::PathBuf,
        source: std::io::Error,
    },
}

/// One ticket as `queue --json` prints it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct QueueRow {
    pub id: String,
    pub state: Lifecycle,
    pub by: Option<String>,
    /// RFC 3339, UTC.
    pub at: Option<String>,
    pub reason: Option<String>,
    /// The first line of the reply that was sent.
    pub sent: Option<String>,
    /// On a team's record: the desk holding the ticket now.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
    /// Where the conversation with the customer stands: open, pending, solved or closed.
    pub conversation: Conversation,
    /// A reply by mail: `queued`, `delivered` or `failed`, with the server's latest words.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delivery: Option<String>,
    /// A ticket that came by mail: the sender, and every Message-ID of its conversation
    /// (received and sent), oldest first.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub messages: Vec<String>,
    /// Why the desk marked the ticket when mail opened it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mark: Option<String>,
    /// With `[sla]`: when the next answer is due (RFC 3339), and `due`, `due_soon` or `late`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub due_at: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub due: Option<&'static str>,
    /// Whose ticket it is to answer, when it is someone's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub assignee: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
}

/// How long a solved conversation stays quiet before it is closed, and now (unix ms).
#[derive(Debug, Clone, Copy)]
pub struct Closing {
    pub after_days: u32,
    pub now: i64,
}

/// Every ticket of the queue with its state as the record has it (`new` when it has none).
/// When no desk is working on the record (`in_use` false), a run still marked under way was
/// cut off, and is shown as the next desk to open will settle it: needing a person.
pub fn queue(
    tickets: &[Ticket],
    states: &[TicketState],
    in_use: bool,
    allow: &[String],
    closing: Closing,
) -> Vec<QueueRow> {
    tickets
        .iter()
        .map(|ticket| {
            let id = &ticket.ticket_id;
            let state = states
                .iter()
                .find(|s| &s.ticket == id)
                .cloned()
                .unwrap_or_else(|| TicketState::new(id));
            let (lifecycle, reason) = match (&state.run, in_use) {
                (Some(_), false) => (
                    Lifecycle::NeedsPerson,
                    Some(state.interrupted_reason(allow)),
                ),
                _ => (state.state, state.reason.clone()),
            };
            let conversation = state.conversation_at(closing.now, closing.after_days);
            QueueRow {
                id: id.clone(),
                state: lifecycle,
                by: state.by,
                at: state.at.map(rfc3339),
                reason,
                conversation,
                delivery: state.delivery.as_ref().map(|d| match &d.words {
                    Some(words) => format!("{} ({words})", d.state),
                    None => d.state.clone(),
                }),
                sent: state
                    .sent
                    .map(|s| s.text.lines().next().unwrap_or_default().to_owned()),
                owner: None,
                from: (!ticket.thread.is_empty())
                    .then(|| ticket.from.as_ref().map(|f| f.address.clone()))
                    .flatten(),
                messages: ticket
                    .thread
                    .iter()
                    .map(|entry| entry.message.message_id.clone())
                    .collect(),
                mark: ticket.mark.clone(),
                due_at: None,
                due: None,
                assignee: state.assignee,
                tags: state.tags,
            }
        })
        .collect()
}

/// The rows with who holds each ticket now: (ticket, person, until in unix ms); a claim that
/// ran out by `now` holds nothing.
pub fn with_owners(rows: &mut [QueueRow], owners: &[(String, String, i64)], now: i64) {
    for row in rows {
        row.owner = owners
            .iter()
            .find(|(ticket, _, until)| *ticket == row.id && *until > now)
            .map(|(_, owner, _)| owner.clone());
    }
}

/// `queue` as a table for people.
pub fn queue_text(rows: &[QueueRow]) -> String {
    let mut text = String::new();
    for row in rows {
        let mut line = format!("{:<8} {:<13}", row.id, row.state.as_str());
        if !row.messages.is_empty() {
            line.push_str(&format!(" {:<8}", row.conversation.as_str()));
        }
        if let (Some(by), Some(at)) = (&row.by, &row.at) {
            line.push_str(&format!(" {by} {at}"));
        }
        if let Some(reason) = &row.reason {
            line.push_str(&format!(" · {reason}"));
        }
        if let (Some(due), Some(at)) = (row.due, &row.due_at) {
            line.push_str(&format!(" · {} {at}", due.replace('_', " ")));
        }
        if let Some(delivery) = &row.delivery {
            line.push_str(&format!(" · mail: {delivery}"));
        }
        if let Some(sent) = &row.sent {
            line.push_str(&format!(" · sent: {sent}"));
        }
        if let Some(owner) = &row.owner {
            line.push_str(&format!(" · held by {owner}"));
        }
        if let Some(assignee) = &row.assignee {
            line.push_str(&format!(" · {assignee}'s"));
        }
        for tag in &row.tags {
            line.push_str(&format!(" #{tag}"));
        }
        text.push_str(line.trim_end());
        text.push('\n');
    }
    text
}

/// Unix milliseconds as `2026-12-01T08:09:23Z`.
pub fn rfc3339(ms: i64) -> String {
    let t = crate::clock::Civil::from_unix(ms.div_euclid(1000));
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z",
        t.year, t.month, t.day, t.hour, t.minute, t.second
    )
}

#[cfg(test)]
mod tests;
