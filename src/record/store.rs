//! The desk's record in its SQLite file: an append-only table of events and, beside it, each
//! ticket's state as those events left it.
//!
//! An event and the state it produces are written in one transaction (WAL, `synchronous =
//! NORMAL`, which survives a killed process), before anyone is shown the event: a kill at any
//! point loses at most the event being written. A send also appends one line to the outbox,
//! fsynced *before* the transaction commits, so a crash in between can leave an outbox line
//! for a ticket the record shows unsent, never the reverse; a consumer delivers at most one
//! reply per ticket. The store never decides anything about a ticket but what
//! [`TicketState::refuses`] says.

use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rusqlite::{Connection, OptionalExtension, Transaction, TransactionBehavior, params};
use serde::Serialize;

use super::state::{Refusal, Stamp, TicketState};
use crate::recording::Event;

/// Version 1 kept only each ticket's latest state; version 2 is the event log.
const SCHEMA_VERSION: i32 = 2;

pub(super) const SCHEMA: &str = "
CREATE TABLE events (
    seq    INTEGER PRIMARY KEY AUTOINCREMENT,
    ticket TEXT,
    at     INTEGER NOT NULL,
    by     TEXT NOT NULL,
    kind   TEXT NOT NULL,
    body   TEXT NOT NULL
);
CREATE INDEX events_by_ticket ON events (ticket, seq);
CREATE TRIGGER events_are_never_changed BEFORE UPDATE ON events
    BEGIN SELECT RAISE(ABORT, 'the desk record is append-only'); END;
CREATE TRIGGER events_are_never_removed BEFORE DELETE ON events
    BEGIN SELECT RAISE(ABORT, 'the desk record is append-only'); END;
CREATE TABLE ticket_states (
    ticket TEXT PRIMARY KEY,
    seq    INTEGER NOT NULL,
    state  TEXT NOT NULL
);
";

/// One event as the record holds it.
#[derive(Debug, Clone, PartialEq)]
pub struct Stored {
    pub seq: i64,
    /// Unix milliseconds.
    pub at: i64,
    pub by: String,
    pub event: Event,
}

/// An event just appended, and the state its ticket is in now (`None` for the manifest).
#[derive(Debug, Clone, PartialEq)]
pub struct Appended {
    pub stored: Stored,
    pub state: Option<TicketState>,
}

#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    #[error("the desk's record failed ({0}); try again, and report it if it keeps failing")]
    Database(#[from] rusqlite::Error),
    #[error(
        "could not write the outbox {} ({source}); check the disk and its permissions, then send again",
        path.display()
    )]
    Outbox {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "{} holds a desk record of schema {found}, newer than this desk's ({SCHEMA_VERSION}); use a newer support-desk, or another --data-dir",
        path.display()
    )]
    NewerSchema { path: PathBuf, found: i32 },
    #[error(
        "{} is not a desk record this desk can read (schema {found}); move it aside and start again, its sent replies are in the outbox",
        path.display()
    )]
    Unknown { path: PathBuf, found: i32 },
    #[error(
        "event {seq} of the desk's record cannot be read ({source}); the file was changed by something else"
    )]
    Unreadable { seq: i64, source: serde_json::Error },
    #[error(
        "another desk is open on {}; close it first, or give this desk its own --data-dir",
        path.display()
    )]
    Busy { path: PathBuf },
    #[error("cannot use the lock file {} ({source}); check the data directory's permissions", path.display())]
    Lock {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(transparent)]
    Refused(#[from] Refusal),
}

pub struct DeskRecord {
    conn: Mutex<Connection>,
    outbox: Option<PathBuf>,
    /// Who this desk's events are by.
    person: String,
    /// The host's tools that change nothing: what a side effect of a run is.
    allow: Vec<String>,
    /// Unix milliseconds now; a fixed clock makes a test's screens the same every run.
    clock: fn() -> i64,
    /// Held while this desk works on the record (see [`DeskRecord::open_for_work`]).
    _lock: Option<std::fs::File>,
}

impl DeskRecord {
    /// Opens (or creates) the record at `path`, migrating a file of the older schema in place.
    /// `outbox` gets one JSON line per reply sent.
    pub fn open(
        path: &Path,
        outbox: Option<&Path>,
        person: &str,
        allow: &[String],
    ) -> Result<Self, RecordError> {
        let conn = Connection::open(path)?;
        Self::setup(conn, path, outbox, person, allow)
    }

    /// Opens the record for a desk that works on it: only one at a time may, so that a run
    /// under way is never taken for one a dead desk left behind. The lock (`desk.lock` beside
    /// the file) is the operating system's and goes when the process goes, killed or not.
    pub fn open_for_work(
        path: &Path,
        outbox: Option<&Path>,
        person: &str,
        allow: &[String],
    ) -> Result<Self, RecordError> {
        let lock_path = lock_file(path);
        let lock = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(|source| RecordError::Lock {
                path: lock_path.clone(),
                source,
            })?;
        match lock.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                return Err(RecordError::Busy {
                    path: path.parent().unwrap_or(path).to_owned(),
                });
            }
            Err(std::fs::TryLockError::Error(source)) => {
                return Err(RecordError::Lock {
                    path: lock_path,
                    source,
                });
            }
        }
        let mut record = Self::open(path, outbox, person, allow)?;
        record._lock = Some(lock);
        Ok(record)
    }

    /// Whether a desk is working on the record at `path` right now.
    pub fn in_use(path: &Path) -> bool {
        let Ok(lock) = std::fs::OpenOptions::new()
            .write(true)
            .open(lock_file(path))
        else {
            return false;
        };
        match lock.try_lock() {
            Ok(()) => false,
            Err(std::fs::TryLockError::WouldBlock) => true,
            Err(std::fs::TryLockError::Error(_)) => false,
        }
    }

    /// A record that lives as long as this process (tests, one-off runs).
    pub fn in_memory(person: &str, allow: &[String]) -> Result<Self, RecordError> {
        Self::setup(
            Connection::open_in_memory()?,
            Path::new(":memory:"),
            None,
            person,
            allow,
        )
    }

    fn setup(
        mut conn: Connection,
        path: &Path,
        outbox: Option<&Path>,
        person: &str,
        allow: &[String],
    ) -> Result<Self, RecordError> {
        // Two desks may be open on one file; the second waits rather than failing.
        conn.busy_timeout(Duration::from_secs(5))?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let found: i32 = tx.query_row("PRAGMA user_version", [], |r| r.get(0))?;
        match found {
            0 => tx.execute_batch(SCHEMA)?,
            1 => super::migrate::from_ticket_rows(&tx, person, allow)?,
            SCHEMA_VERSION => {}
            found if found > SCHEMA_VERSION => {
                return Err(RecordError::NewerSchema {
                    path: path.to_owned(),
                    found,
                });
            }
            found => {
                return Err(RecordError::Unknown {
                    path: path.to_owned(),
                    found,
                });
            }
        }
        tx.pragma_update(None, "user_version", SCHEMA_VERSION)?;
        tx.commit()?;
        Ok(Self {
            conn: Mutex::new(conn),
            outbox: outbox.map(Path::to_owned),
            person: person.to_owned(),
            allow: allow.to_vec(),
            clock: now_ms,
            _lock: None,
        })
    }

    /// The same record, telling time by `clock` (unix milliseconds).
    pub fn with_clock(mut self, clock: fn() -> i64) -> Self {
        self.clock = clock;
        self
    }

    pub fn person(&self) -> &str {
        &self.person
    }

    /// Appends `event` as this desk's person and updates its ticket's state, in one
    /// transaction; refused (and nothing written) when the ticket's state forbids it.
    pub fn append(&self, event: &Event) -> Result<Appended, RecordError> {
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let appended = self.append_in(&tx, event, (self.clock)())?;
        tx.commit()?;
        Ok(appended)
    }

    fn append_in(
        &self,
        tx: &Transaction<'_>,
        event: &Event,
        at: i64,
    ) -> Result<Appended, RecordError> {
        let by = self.person.as_str();
        let prior = prior_state(tx, event)?;
        if let Some(refusal) = prior.as_ref().and_then(|s| s.refuses(event)) {
            return Err(refusal.into());
        }
        let (seq, state) = write_event_after(tx, event, Stamp { by, at }, &self.allow, prior)?;
        if let Event::Sent {
            ticket,
            by,
            text,
            override_reason,
        } = event
        {
            self.append_to_outbox(&OutboxLine {
                ticket,
                text,
                by,
                override_reason: override_reason.as_deref(),
                at,
            })?;
        }
        Ok(Appended {
            stored: Stored {
                seq,
                at,
                by: by.to_owned(),
                event: event.clone(),
            },
            state,
        })
    }

    /// Every ticket's state, ordered by ticket ID (tickets with no event are not listed).
    pub fn states(&self) -> Result<Vec<TicketState>, RecordError> {
        let conn = self.conn();
        let mut statement =
            conn.prepare_cached("SELECT seq, state FROM ticket_states ORDER BY ticket")?;
        let rows =
            statement.query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)))?;
        rows.map(|row| {
            let (seq, text) = row?;
            serde_json::from_str(&text).map_err(|source| RecordError::Unreadable { seq, source })
        })
        .collect()
    }

    pub fn state(&self, ticket: &str) -> Result<Option<TicketState>, RecordError> {
        load_state(&self.conn(), ticket)
    }

    /// Every event after `seq` (0: all), in the order they were appended.
    pub fn events_after(&self, seq: i64) -> Result<Vec<Stored>, RecordError> {
        self.select(
            "SELECT seq, at, by, body FROM events WHERE seq > ?1 ORDER BY seq",
            params![seq],
        )
    }

    /// One ticket's events, in order.
    pub fn ticket_events(&self, ticket: &str) -> Result<Vec<Stored>, RecordError> {
        self.select(
            "SELECT seq, at, by, body FROM events WHERE ticket = ?1 ORDER BY seq",
            params![ticket],
        )
    }

    /// The sequence number of the newest event (0 when the record is empty).
    pub fn last_seq(&self) -> Result<i64, RecordError> {
        let conn = self.conn();
        Ok(conn.query_row("SELECT COALESCE(MAX(seq), 0) FROM events", [], |r| r.get(0))?)
    }

    /// Settles every run that was under way when a desk on this record stopped without
    /// finishing it: each such ticket needs a person, with what the run may have done. Call
    /// it once, when a desk opens the record, before any work starts.
    pub fn settle_interrupted(&self) -> Result<Vec<Appended>, RecordError> {
        let interrupted: Vec<TicketState> = self
            .states()?
            .into_iter()
            .filter(|s| s.run.is_some())
            .collect();
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let at = (self.clock)();
        let mut settled = Vec::new();
        for state in interrupted {
            let event = Event::NeedsPerson {
                ticket: state.ticket.clone(),
                reason: state.interrupted_reason(&self.allow),
            };
            settled.push(self.append_in(&tx, &event, at)?);
        }
        tx.commit()?;
        Ok(settled)
    }

    fn select(&self, sql: &str, params: impl rusqlite::Params) -> Result<Vec<Stored>, RecordError> {
        let conn = self.conn();
        let mut statement = conn.prepare_cached(sql)?;
        let rows = statement.query_map(params, |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, i64>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, String>(3)?,
            ))
        })?;
        rows.map(|row| {
            let (seq, at, by, body) = row?;
            let event = serde_json::from_str(&body)
                .map_err(|source| RecordError::Unreadable { seq, source })?;
            Ok(Stored { seq, at, by, event })
        })
        .collect()
    }

    // A panic while the lock was held cannot leave a half-made change: SQLite rolls it back.
    fn conn(&self) -> MutexGuard<'_, Connection> {
        self.conn
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn append_to_outbox(&self, line: &OutboxLine<'_>) -> Result<(), RecordError> {
        let Some(path) = &self.outbox else {
            return Ok(());
        };
        let io = |source| RecordError::Outbox {
            path: path.clone(),
            source,
        };
        let mut json = serde_json::to_vec(line).map_err(|e| io(e.into()))?;
        json.push(b'\n');
        // One append of the whole line: killing the desk cannot leave half of it.
        let mut file = OpenOptions::new()
            .append(true)
            .create(true)
            .open(path)
            .map_err(io)?;
        file.write_all(&json).map_err(io)?;
        file.flush().map_err(io)?;
        file.sync_all().map_err(io)
    }
}

fn lock_file(record: &Path) -> PathBuf {
    record.with_extension("lock")
}

/// Replays `events` from nothing: the states they lead to, by ticket ID. The record's own
/// `ticket_states` must always equal this.
pub fn replay(events: &[Stored], allow: &[String]) -> Vec<TicketState> {
    let mut states: std::collections::BTreeMap<String, TicketState> = Default::default();
    for stored in events {
        let Some(ticket) = stored.event.ticket() else {
            continue;
        };
        let state = states
            .entry(ticket.to_owned())
            .or_insert_with(|| TicketState::new(ticket));
        let stamp = Stamp {
            by: &stored.by,
            at: stored.at,
        };
        state.apply(&stored.event, &stamp, allow);
    }
    states.into_values().collect()
}

/// One line of the outbox: `{"ticket", "text", "by", "override_reason", "at"}`.
#[derive(Serialize)]
struct OutboxLine<'a> {
    ticket: &'a str,
    text: &'a str,
    by: &'a str,
    override_reason: Option<&'a str>,
    /// Unix milliseconds.
    at: i64,
}

/// Appends `event` and moves its ticket's state on, without asking whether it may.
pub(super) fn write_event(
    tx: &Transaction<'_>,
    event: &Event,
    by: &str,
    at: i64,
    allow: &[String],
) -> Result<(i64, Option<TicketState>), RecordError> {
    let prior = prior_state(tx, event)?;
    write_event_after(tx, event, Stamp { by, at }, allow, prior)
}

/// The state `event`'s ticket is in before it (`None` for a new ticket or the manifest).
fn prior_state(tx: &Transaction<'_>, event: &Event) -> Result<Option<TicketState>, RecordError> {
    event
        .ticket()
        .map_or(Ok(None), |ticket| load_state(tx, ticket))
}

/// [`write_event`] on the state its ticket was in (`prior`, read in this transaction).
fn write_event_after(
    tx: &Transaction<'_>,
    event: &Event,
    stamp: Stamp<'_>,
    allow: &[String],
    prior: Option<TicketState>,
) -> Result<(i64, Option<TicketState>), RecordError> {
    let Stamp { by, at } = stamp;
    let body = serde_json::to_string(event).map_err(to_sql_error)?;
    tx.prepare_cached(
        "INSERT INTO events (ticket, at, by, kind, body) VALUES (?1, ?2, ?3, ?4, ?5)",
    )?
    .execute(params![event.ticket(), at, by, event.kind(), body])?;
    let seq = tx.last_insert_rowid();
    let Some(ticket) = event.ticket() else {
        return Ok((seq, None));
    };
    let mut state = prior.unwrap_or_else(|| TicketState::new(ticket));
    state.apply(event, &Stamp { by, at }, allow);
    save_state(tx, seq, &state)?;
    Ok((seq, Some(state)))
}

fn load_state(conn: &Connection, ticket: &str) -> Result<Option<TicketState>, RecordError> {
    let row: Option<(i64, String)> = conn
        .prepare_cached("SELECT seq, state FROM ticket_states WHERE ticket = ?1")?
        .query_row([ticket], |r| Ok((r.get(0)?, r.get(1)?)))
        .optional()?;
    row.map(|(seq, text)| {
        serde_json::from_str(&text).map_err(|source| RecordError::Unreadable { seq, source })
    })
    .transpose()
}

fn save_state(conn: &Connection, seq: i64, state: &TicketState) -> Result<(), RecordError> {
    let text = serde_json::to_string(state).map_err(to_sql_error)?;
    conn.prepare_cached(
        "INSERT INTO ticket_states (ticket, seq, state) VALUES (?1, ?2, ?3)
         ON CONFLICT (ticket) DO UPDATE SET seq = excluded.seq, state = excluded.state",
    )?
    .execute(params![state.ticket, seq, text])?;
    Ok(())
}

fn to_sql_error(e: serde_json::Error) -> rusqlite::Error {
    rusqlite::Error::ToSqlConversionFailure(Box::new(e))
}

pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}
