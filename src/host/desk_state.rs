//! The desk's own record of each ticket's state, and the outbox of sent replies.
//!
//! Every call commits before it returns, so closing or killing the desk loses nothing and
//! reopening shows the queue as it was. A send appends one JSON line to the outbox (for a
//! mail integration to consume), fsynced *before* the ticket is recorded as sent: a crash in
//! between can leave a line for a ticket the desk still shows unsent, never the reverse. A
//! consumer should therefore deliver at most one reply per `ticket`, whatever the `at`.
//! Nothing is sent anywhere else.

use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rusqlite::{Connection, OptionalExtension, Transaction, TransactionBehavior, params};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

const SCHEMA_VERSION: i32 = 1;

/// `findings` is a JSON array of reasons; `sent` is a JSON [`SentReply`] once sent.
const SCHEMA: &str = "
CREATE TABLE tickets (
    ticket      TEXT PRIMARY KEY,
    status      TEXT NOT NULL,
    draft       TEXT,
    findings    TEXT NOT NULL DEFAULT '[]',
    model_calls INTEGER NOT NULL DEFAULT 0,
    sent        TEXT,
    handed_to   TEXT,
    note        TEXT,
    updated_at  INTEGER NOT NULL
);
";

const COLUMNS: &str =
    "ticket, status, draft, findings, model_calls, sent, handed_to, note, updated_at";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TicketStatus {
    Waiting,
    Working,
    DraftReady,
    /// A check finding is open.
    Flagged,
    HandedToPerson,
    Sent,
    /// A replay found no answer.
    Diverged,
}

impl TicketStatus {
    fn as_str(self) -> &'static str {
        match self {
            TicketStatus::Waiting => "waiting",
            TicketStatus::Working => "working",
            TicketStatus::DraftReady => "draft_ready",
            TicketStatus::Flagged => "flagged",
            TicketStatus::HandedToPerson => "handed_to_person",
            TicketStatus::Sent => "sent",
            TicketStatus::Diverged => "diverged",
        }
    }

    fn of_draft(findings: &[String]) -> Self {
        if findings.is_empty() {
            TicketStatus::DraftReady
        } else {
            TicketStatus::Flagged
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TicketState {
    pub ticket: String,
    pub status: TicketStatus,
    pub draft: Option<String>,
    /// Each open finding's reason, as shown to people.
    pub findings: Vec<String>,
    pub model_calls: u32,
    pub sent: Option<SentReply>,
    /// Who marked the ticket for a person; their note is in `note`.
    pub handed_to: Option<String>,
    /// The hand-off note, or why a replay diverged.
    pub note: Option<String>,
    /// Unix seconds.
    pub updated_at: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SentReply {
    pub text: String,
    pub by: String,
    /// Why it was sent with check findings open; `None` when none were.
    pub override_reason: Option<String>,
    /// Unix seconds.
    pub at: i64,
}

/// One line of the outbox: `{"ticket", "text", "by", "override_reason", "at"}`.
#[derive(Serialize)]
struct OutboxLine<'a> {
    ticket: &'a str,
    #[serde(flatten)]
    reply: &'a SentReply,
}

#[derive(Debug, thiserror::Error)]
pub enum StateError {
    #[error("the desk's state database failed ({0}); try again, and report it if it keeps failing")]
    Database(#[from] rusqlite::Error),
    #[error(
        "could not write the outbox {} ({source}); check the disk and its permissions, then send again",
        path.display()
    )]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("the desk's state file has schema {found}, newer than this desk's; update the desk")]
    NewerSchema { found: i32 },
    #[error("{ticket} has no draft to send: work the ticket or write a reply first")]
    NoDraft { ticket: String },
    #[error("{ticket} was already sent; its reply cannot be changed or sent again")]
    AlreadySent { ticket: String },
    #[error(
        "{ticket} has open check findings ({}): fix the draft, or send with an override reason",
        findings.join("; ")
    )]
    OpenFindings {
        ticket: String,
        findings: Vec<String>,
    },
}

pub struct DeskState {
    conn: Mutex<Connection>,
    outbox: PathBuf,
}

impl DeskState {
    /// Opens or creates `db` (":memory:" allowed) and the outbox at `outbox` (a JSONL file,
    /// created on first send).
    pub fn open(db: &Path, outbox: &Path) -> Result<Self, StateError> {
        let mut conn = if db.as_os_str() == ":memory:" {
            Connection::open_in_memory()?
        } else {
            Connection::open(db)?
        };
        // Two desks may be open on one file; the second waits rather than failing.
        conn.busy_timeout(Duration::from_secs(5))?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let found: i32 = tx.query_row("PRAGMA user_version", [], |r| r.get(0))?;
        match found {
            0 => {
                tx.execute_batch(SCHEMA)?;
                tx.pragma_update(None, "user_version", SCHEMA_VERSION)?;
            }
            SCHEMA_VERSION => {}
            found => return Err(StateError::NewerSchema { found }),
        }
        tx.commit()?;
        Ok(Self {
            conn: Mutex::new(conn),
            outbox: outbox.to_owned(),
        })
    }

    pub fn get(&self, ticket: &str) -> Result<Option<TicketState>, StateError> {
        load(&self.conn(), ticket)
    }

    /// Every ticket the desk has a record of, ordered by ticket id.
    pub fn all(&self) -> Result<Vec<TicketState>, StateError> {
        let conn = self.conn();
        let mut statement =
            conn.prepare(&format!("SELECT {COLUMNS} FROM tickets ORDER BY ticket"))?;
        let rows = statement.query_map([], read_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The model starts (or restarts) on `ticket`. An earlier draft, its findings and any
    /// hand-off note are kept until the new run replaces them; a sent ticket stays sent.
    pub fn started(&self, ticket: &str) -> Result<(), StateError> {
        self.change(ticket, |state| state.status = TicketStatus::Working)
    }

    /// The model's draft and the checks' findings: `Flagged` while any finding is open.
    pub fn drafted(
        &self,
        ticket: &str,
        draft: &str,
        findings: &[String],
        model_calls: u32,
    ) -> Result<(), StateError> {
        self.change(ticket, |state| {
            state.status = TicketStatus::of_draft(findings);
            state.draft = Some(draft.to_owned());
            state.findings = findings.to_vec();
            state.model_calls = model_calls;
        })
    }

    /// Staff rewrite the draft. `findings` are the edited text's own when the host could
    /// check it again; without them the draft's findings stay open.
    pub fn edit_draft(
        &self,
        ticket: &str,
        draft: &str,
        findings: Option<&[String]>,
    ) -> Result<(), StateError> {
        self.change(ticket, |state| {
            if let Some(findings) = findings {
                state.findings = findings.to_vec();
            }
            if state.status != TicketStatus::HandedToPerson {
                state.status = TicketStatus::of_draft(&state.findings);
            }
            state.draft = Some(draft.to_owned());
        })
    }

    pub fn diverged(&self, ticket: &str, why: &str) -> Result<(), StateError> {
        self.change(ticket, |state| {
            state.status = TicketStatus::Diverged;
            state.note = Some(why.to_owned());
        })
    }

    pub fn hand_to_person(&self, ticket: &str, by: &str, note: &str) -> Result<(), StateError> {
        self.change(ticket, |state| {
            state.status = TicketStatus::HandedToPerson;
            state.handed_to = Some(by.to_owned());
            state.note = Some(note.to_owned());
        })
    }

    /// Sends the current draft: refused while findings are open unless `override_reason` is
    /// non-blank, and refused when there is no draft or it was already sent. The outbox line
    /// is flushed and fsynced before the ticket is recorded as sent.
    pub fn send(
        &self,
        ticket: &str,
        by: &str,
        override_reason: Option<&str>,
    ) -> Result<SentReply, StateError> {
        let override_reason = override_reason
            .map(str::trim)
            .filter(|reason| !reason.is_empty());
        self.write(|tx| {
            let mut state = load_unsent(tx, ticket)?;
            let text = match &state.draft {
                Some(draft) if !draft.trim().is_empty() => draft.clone(),
                _ => {
                    return Err(StateError::NoDraft {
                        ticket: ticket.to_owned(),
                    });
                }
            };
            let override_reason = match (state.findings.is_empty(), override_reason) {
                (true, _) => None,
                (false, Some(reason)) => Some(reason.to_owned()),
                (false, None) => {
                    return Err(StateError::OpenFindings {
                        ticket: ticket.to_owned(),
                        findings: state.findings,
                    });
                }
            };
            let reply = SentReply {
                text,
                by: by.to_owned(),
                override_reason,
                at: now(),
            };
            self.append_to_outbox(&OutboxLine {
                ticket,
                reply: &reply,
            })?;
            state.status = TicketStatus::Sent;
            state.sent = Some(reply.clone());
            state.updated_at = reply.at;
            save(tx, &state)?;
            Ok(reply)
        })
    }

    /// Applies `edit` to the ticket's state and saves it, unless the ticket was already sent.
    fn change(&self, ticket: &str, edit: impl FnOnce(&mut TicketState)) -> Result<(), StateError> {
        self.write(|tx| {
            let mut state = load_unsent(tx, ticket)?;
            edit(&mut state);
            state.updated_at = now();
            save(tx, &state)
        })
    }

    /// Runs `work` in an immediate (write-locking) transaction and commits it if it succeeds.
    fn write<T>(
        &self,
        work: impl FnOnce(&Transaction<'_>) -> Result<T, StateError>,
    ) -> Result<T, StateError> {
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let value = work(&tx)?;
        tx.commit()?;
        Ok(value)
    }

    // A panic while the lock was held cannot leave a half-made change: SQLite rolls it back.
    fn conn(&self) -> MutexGuard<'_, Connection> {
        self.conn
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn append_to_outbox(&self, line: &OutboxLine<'_>) -> Result<(), StateError> {
        let io = |source| StateError::Io {
            path: self.outbox.clone(),
            source,
        };
        let mut json = serde_json::to_vec(line).map_err(|e| io(e.into()))?;
        json.push(b'\n');
        // One append of the whole line: killing the desk cannot leave half of it.
        let mut file = OpenOptions::new()
            .append(true)
            .create(true)
            .open(&self.outbox)
            .map_err(io)?;
        file.write_all(&json).map_err(io)?;
        file.flush().map_err(io)?;
        file.sync_all().map_err(io)
    }
}

impl TicketState {
    fn waiting(ticket: &str) -> Self {
        Self {
            ticket: ticket.to_owned(),
            status: TicketStatus::Waiting,
            draft: None,
            findings: Vec::new(),
            model_calls: 0,
            sent: None,
            handed_to: None,
            note: None,
            updated_at: now(),
        }
    }
}

fn read_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<TicketState> {
    let status = serde_json::Value::String(r.get(1)?);
    Ok(TicketState {
        ticket: r.get(0)?,
        status: serde_json::from_value(status).map_err(|e| unreadable(1, e))?,
        draft: r.get(2)?,
        findings: from_json_column(r, 3)?,
        model_calls: r.get(4)?,
        sent: from_json_column(r, 5)?,
        handed_to: r.get(6)?,
        note: r.get(7)?,
        updated_at: r.get(8)?,
    })
}

/// A column of JSON text; NULL reads as JSON `null`.
fn from_json_column<T: DeserializeOwned>(
    r: &rusqlite::Row<'_>,
    column: usize,
) -> rusqlite::Result<T> {
    let text: Option<String> = r.get(column)?;
    serde_json::from_str(text.as_deref().unwrap_or("null")).map_err(|e| unreadable(column, e))
}

fn unreadable(column: usize, e: serde_json::Error) -> rusqlite::Error {
    rusqlite::Error::FromSqlConversionFailure(column, rusqlite::types::Type::Text, Box::new(e))
}

fn load(conn: &Connection, ticket: &str) -> Result<Option<TicketState>, StateError> {
    let sql = format!("SELECT {COLUMNS} FROM tickets WHERE ticket = ?1");
    Ok(conn.query_row(&sql, [ticket], read_row).optional()?)
}

/// The ticket's state, or a new `Waiting` one if the desk has none; refused once it was sent.
fn load_unsent(conn: &Connection, ticket: &str) -> Result<TicketState, StateError> {
    match load(conn, ticket)? {
        Some(state) if state.sent.is_some() => Err(StateError::AlreadySent {
            ticket: ticket.to_owned(),
        }),
        Some(state) => Ok(state),
        None => Ok(TicketState::waiting(ticket)),
    }
}

fn save(conn: &Connection, state: &TicketState) -> Result<(), StateError> {
    conn.execute(
        &format!(
            "INSERT OR REPLACE INTO tickets ({COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)"
        ),
        params![
            state.ticket,
            state.status.as_str(),
            state.draft,
            to_json_text(&state.findings)?,
            state.model_calls,
            state.sent.as_ref().map(to_json_text).transpose()?,
            state.handed_to,
            state.note,
            state.updated_at,
        ],
    )?;
    Ok(())
}

fn to_json_text<T: Serialize>(value: &T) -> rusqlite::Result<String> {
    serde_json::to_string(value).map_err(|e| rusqlite::Error::ToSqlConversionFailure(Box::new(e)))
}

fn now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    const FINDING: &str = "mentions a refund the shop never quoted";

    struct Desk {
        state: DeskState,
        dir: tempfile::TempDir,
    }

    impl Desk {
        fn new() -> Self {
            Self::open(tempfile::tempdir().expect("a temporary directory"))
        }

        fn open(dir: tempfile::TempDir) -> Self {
            let (db, outbox) = (dir.path().join("desk.db"), dir.path().join("outbox.jsonl"));
            let state = DeskState::open(&db, &outbox).expect("the state file opens");
            Self { state, dir }
        }

        fn get(&self, ticket: &str) -> TicketState {
            self.state
                .get(ticket)
                .expect("readable")
                .expect("a known ticket")
        }

        fn flagged(&self, ticket: &str) {
            let draft = "Your refund is on its way.";
            self.state
                .drafted(ticket, draft, &[FINDING.into()], 3)
                .expect("drafted");
        }

        fn outbox(&self) -> Vec<serde_json::Value> {
            let text = std::fs::read_to_string(self.dir.path().join("outbox.jsonl"));
            let text = text.expect("an outbox");
            text.lines()
                .map(|line| serde_json::from_str(line).expect("JSON"))
                .collect()
        }
    }

    #[test]
    fn state_survives_reopening_the_file() {
        let desk = Desk::new();
        desk.state.started("T-0001").expect("started");
        desk.flagged("T-0002");
        desk.state
            .hand_to_person("T-0002", "sam", "customer is upset")
            .expect("handed");
        let before = desk.state.all().expect("all");
        let Desk { state, dir } = desk;
        drop(state);
        let reopened = Desk::open(dir);
        assert_eq!(reopened.state.all().expect("all"), before);
        let expected = TicketState {
            ticket: "T-0002".into(),
            status: TicketStatus::HandedToPerson,
            draft: Some("Your refund is on its way.".into()),
            findings: vec![FINDING.into()],
            model_calls: 3,
            sent: None,
            handed_to: Some("sam".into()),
            note: Some("customer is upset".into()),
            updated_at: before[1].updated_at,
        };
        assert_eq!(reopened.get("T-0002"), expected);
    }

    #[test]
    fn send_is_refused_with_open_findings_and_allowed_with_an_override_reason() {
        let desk = Desk::new();
        desk.flagged("T-0009");
        for blank in [None, Some("  ")] {
            let refused = desk
                .state
                .send("T-0009", "sam", blank)
                .expect_err("refused");
            let message = "T-0009 has open check findings (mentions a refund the shop never \
                quoted): fix the draft, or send with an override reason";
            assert_eq!(refused.to_string(), message);
        }
        let sent = desk.state.send("T-0009", "sam", Some(" quoted by phone "));
        let sent = sent.expect("sent with an override");
        let expected = SentReply {
            text: "Your refund is on its way.".into(),
            by: "sam".into(),
            override_reason: Some("quoted by phone".into()),
            at: sent.at,
        };
        assert_eq!(sent, expected);
        let state = desk.get("T-0009");
        assert_eq!(
            (state.status, state.sent),
            (TicketStatus::Sent, Some(expected))
        );
    }

    #[test]
    fn a_reply_is_sent_once_and_never_without_a_draft() {
        let desk = Desk::new();
        let no_draft = desk.state.send("T-0003", "sam", None);
        assert!(matches!(no_draft, Err(StateError::NoDraft { .. })));
        desk.state
            .drafted("T-0003", "Hello", &[], 1)
            .expect("drafted");
        desk.state.send("T-0003", "sam", None).expect("first send");
        let again = desk.state.send("T-0003", "sam", Some("really"));
        assert!(matches!(again, Err(StateError::AlreadySent { .. })));
        assert_eq!(desk.outbox().len(), 1);
    }

    #[test]
    fn the_outbox_gets_exactly_one_json_line_per_send() {
        let desk = Desk::new();
        desk.state
            .drafted("T-0004", "First reply", &[], 2)
            .expect("drafted");
        desk.flagged("T-0005");
        let first = desk.state.send("T-0004", "sam", None).expect("sent");
        let second = desk
            .state
            .send("T-0005", "ana", Some("checked"))
            .expect("sent");
        let expected = [("T-0004", first), ("T-0005", second)].map(|(ticket, reply)| {
            serde_json::json!({
                "ticket": ticket, "text": reply.text, "by": reply.by,
                "override_reason": reply.override_reason, "at": reply.at,
            })
        });
        assert_eq!(desk.outbox(), expected);
    }

    #[test]
    fn a_sent_ticket_cannot_be_restarted_or_changed() {
        let desk = Desk::new();
        desk.state
            .drafted("T-0007", "Hello", &[], 1)
            .expect("drafted");
        desk.state.send("T-0007", "sam", None).expect("sent");
        let sent = desk.get("T-0007");
        let restarted = desk.state.started("T-0007");
        assert!(matches!(restarted, Err(StateError::AlreadySent { .. })));
        let edited = desk.state.edit_draft("T-0007", "Hi", None);
        assert!(matches!(edited, Err(StateError::AlreadySent { .. })));
        assert_eq!(desk.get("T-0007"), sent);
    }

    #[test]
    fn all_lists_tickets_ordered_by_id() {
        let state = DeskState::open(Path::new(":memory:"), Path::new("unused.jsonl"));
        let state = state.expect("an in-memory state opens");
        for ticket in ["T-0030", "T-0002", "T-0011"] {
            state.started(ticket).expect("started");
        }
        let all = state.all().expect("all");
        let ids: Vec<&str> = all.iter().map(|t| t.ticket.as_str()).collect();
        assert_eq!(ids, ["T-0002", "T-0011", "T-0030"]);
    }

    #[test]
    fn editing_a_draft_keeps_its_findings() {
        let desk = Desk::new();
        desk.flagged("T-0008");
        let before = desk.get("T-0008");
        desk.state
            .edit_draft("T-0008", "Quoted by phone.", None)
            .expect("edited");
        let after = desk.get("T-0008");
        let draft = Some("Quoted by phone.".into());
        let updated_at = after.updated_at;
        assert_eq!(
            after,
            TicketState {
                draft,
                updated_at,
                ..before
            }
        );
    }

    #[test]
    fn a_newer_schema_is_refused() {
        let desk = Desk::new();
        let conn = desk.state.conn();
        conn.pragma_update(None, "user_version", 2).expect("bumped");
        drop(conn);
        let (db, outbox) = (desk.dir.path().join("desk.db"), Path::new("unused.jsonl"));
        let refused = DeskState::open(&db, outbox).err();
        assert!(matches!(
            refused,
            Some(StateError::NewerSchema { found: 2 })
        ));
    }
}
