//! The desk's record in its SQLite file: an append-only table of events and, beside it, each
//! ticket's state as those events left it.
//!
//! An append checks the event against its ticket's state (the recent tickets' kept in memory
//! by the desk that works on the record, any other read from the tables), writes it with the
//! state it leads to as one line of the journal (`journal.rs`) and returns: from then on a kill cannot lose it (the same promise as
//! an SQLite commit under `synchronous = NORMAL`), and it is shown to people only after that.
//! The record's own thread brings the SQLite tables up to date, one transaction for the events
//! that arrived while the last one committed, so the desk's thread never waits on SQLite's
//! checkpoints; this desk's reads queue behind the events appended before them. Whoever opens
//! the record next with no desk on it applies what a killed desk left in the journal.
//!
//! A send also appends one line to the outbox, fsynced *before* the event is written, so a
//! crash in between can leave an outbox line for a ticket the record shows unsent, never the
//! reverse; a consumer delivers at most one reply per ticket. The store never decides anything
//! about a ticket but what [`TicketState::refuses`] says.

use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use rusqlite::{Connection, OptionalExtension, Transaction, TransactionBehavior, params};
use serde::Serialize;

use super::journal;
use super::state::{Refusal, Stamp, TicketState};
use crate::record::Event;

mod appender;
mod opening;
mod tables;

use appender::Appender;
use opening::{lock_file, open_journal, recover, try_lock};
use tables::{Db, Pending};

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
    #[error(
        "{} was opened for reading; only the desk working on it may add to it",
        path.display()
    )]
    ReadOnly { path: PathBuf },
    #[error(
        "could not write the record's journal {} ({source}); nothing was recorded: check the disk and its permissions, then try again",
        path.display()
    )]
    Journal {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "the desk's record stopped bringing its tables up to date ({0}); every event it took is kept in its journal and applied when a desk opens it again: quit and restart the desk"
    )]
    Behind(String),
    #[error(transparent)]
    Refused(#[from] Refusal),
}

pub struct DeskRecord {
    /// The SQLite file's connection, on the record's own thread.
    db: Db,
    /// What appends need: `None` for a record opened for reading.
    appender: Option<Arc<Mutex<Appender>>>,
    /// The SQLite file (`:memory:` for a record in memory), for what errors say.
    path: PathBuf,
    outbox: Option<PathBuf>,
    /// Who this desk's events are by, and the same as a JSON string (for journal lines).
    person: String,
    person_json: String,
    /// The host's tools that change nothing: what a side effect of a run is.
    allow: Vec<String>,
    /// Unix milliseconds now; a fixed clock makes a test's screens the same every run.
    clock: fn() -> i64,
    /// Held while this desk works on the record (see [`DeskRecord::open_for_work`]); declared
    /// last, so that it goes only once the record's thread is done.
    _lock: Option<std::fs::File>,
}

impl DeskRecord {
    /// Opens the record at `path` for reading (`queue`, `export`, review), migrating a file of
    /// the older schema in place. When no desk is working on it, the events a killed desk left
    /// in the journal are applied first, so the reader sees everything that was acknowledged.
    /// Appending to it is refused: only [`DeskRecord::open_for_work`] may.
    pub fn open(
        path: &Path,
        outbox: Option<&Path>,
        person: &str,
        allow: &[String],
    ) -> Result<Self, RecordError> {
        let mut conn = Self::setup(Connection::open(path)?, path, person, allow)?;
        let journal_path = journal::path_for(path);
        // An empty journal (every desk leaves one when it closes) has nothing to apply, and
        // is no reason to take the lock from a desk about to start.
        let pending = std::fs::metadata(&journal_path).is_ok_and(|m| m.len() > 0);
        if pending && let Some(lock) = try_lock(path)? {
            let (mut journal, lines) = open_journal(&journal_path)?;
            recover(&mut conn, &mut journal, lines)?;
            drop(lock);
        }
        Ok(Self::start(conn, path, None, outbox, person, allow))
    }

    /// Opens (or creates) the record for a desk that works on it: only one at a time may, so
    /// that a run under way is never taken for one a dead desk left behind. The lock
    /// (`desk.lock` beside the file) is the operating system's and goes when the process goes,
    /// killed or not. Events a killed desk left in the journal are applied first.
    pub fn open_for_work(
        path: &Path,
        outbox: Option<&Path>,
        person: &str,
        allow: &[String],
    ) -> Result<Self, RecordError> {
        let Some(lock) = try_lock(path)? else {
            return Err(RecordError::Busy {
                path: path.parent().unwrap_or(path).to_owned(),
            });
        };
        let mut conn = Self::setup(Connection::open(path)?, path, person, allow)?;
        let (mut journal, lines) = open_journal(&journal::path_for(path))?;
        recover(&mut conn, &mut journal, lines)?;
        let appender = Appender::load(&conn, Some(journal))?;
        let mut record = Self::start(conn, path, Some(appender), outbox, person, allow);
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
        let path = Path::new(":memory:");
        let conn = Self::setup(Connection::open_in_memory()?, path, person, allow)?;
        let appender = Appender::load(&conn, None)?;
        Ok(Self::start(conn, path, Some(appender), None, person, allow))
    }

    fn setup(
        mut conn: Connection,
        path: &Path,
        person: &str,
        allow: &[String],
    ) -> Result<Connection, RecordError> {
        // A reader may open the file while a desk writes to it; it waits rather than failing.
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
        Ok(conn)
    }

    fn start(
        conn: Connection,
        path: &Path,
        appender: Option<Appender>,
        outbox: Option<&Path>,
        person: &str,
        allow: &[String],
    ) -> Self {
        let appender = appender.map(|a| Arc::new(Mutex::new(a)));
        Self {
            db: Db::start(conn, appender.clone()),
            appender,
            path: path.to_owned(),
            outbox: outbox.map(Path::to_owned),
            person: person.to_owned(),
            person_json: serde_json::Value::from(person).to_string(),
            allow: allow.to_vec(),
            clock: crate::clock::unix_ms,
            _lock: None,
        }
    }

    /// The same record, telling time by `clock` (unix milliseconds).
    pub fn with_clock(mut self, clock: fn() -> i64) -> Self {
        self.clock = clock;
        self
    }

    pub fn person(&self) -> &str {
        &self.person
    }

    /// Appends `event` as this desk's person and moves its ticket's state on; refused (and
    /// nothing written) when the ticket's state forbids it. When this returns, the event is
    /// in the journal: a kill from here on cannot lose it. The SQLite tables follow on the
    /// record's own thread, in order, before any read this desk makes after it.
    pub fn append(&self, event: &Event) -> Result<Appended, RecordError> {
        let appender = self
            .appender
            .as_ref()
            .ok_or_else(|| RecordError::ReadOnly {
                path: self.path.clone(),
            })?;
        self.db.healthy()?;
        let at = (self.clock)();
        let by = self.person.as_str();
        let mut appender = lock(appender);
        let ticket = event.ticket();
        let prior = match ticket {
            Some(ticket) => appender.state(ticket, &self.db)?,
            None => None,
        };
        if let Some(refusal) = prior.as_ref().and_then(|s| s.refuses(event)) {
            return Err(refusal.into());
        }
        let state = ticket.map(|ticket| {
            let mut state = prior.unwrap_or_else(|| TicketState::new(ticket));
            state.apply(event, &Stamp { by, at }, &self.allow);
            state
        });
        let event_json = serde_json::to_string(event).map_err(to_sql_error)?;
        let state_json = state
            .as_ref()
            .map(serde_json::to_string)
            .transpose()
            .map_err(to_sql_error)?;
        let seq = appender.last_seq + 1;
        // A reply that goes by mail (it has a Message-ID) is the mail server's to deliver.
        if let Event::Sent {
            ticket,
            by,
            text,
            override_reason,
            message_id: None,
            ..
        } = event
        {
            // Synced before the event is written: a kill in between leaves an outbox line for
            // a ticket the record shows unsent, never the reverse.
            self.append_to_outbox(&OutboxLine {
                ticket,
                text,
                by,
                override_reason: override_reason.as_deref(),
                at,
            })?;
        }
        if let Some(journal) = appender.journal.as_mut() {
            let line = journal::line(
                seq,
                at,
                &self.person_json,
                &event_json,
                state_json.as_deref(),
            );
            journal
                .append(&line)
                .map_err(|source| RecordError::Journal {
                    path: journal.path().to_owned(),
                    source,
                })?;
        }
        appender.last_seq = seq;
        if let Some(state) = &state {
            appender.keep(state.clone());
        }
        // Sent under the lock, so that the record's thread applies events in their order.
        self.db.apply(Pending {
            seq,
            at,
            by: by.to_owned(),
            ticket: ticket.map(str::to_owned),
            kind: event.kind(),
            event_json,
            state_json,
        })?;
        drop(appender);
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
        self.db.read(|conn| {
            let mut statement =
                conn.prepare_cached("SELECT seq, state FROM ticket_states ORDER BY ticket")?;
            let rows =
                statement.query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)))?;
            rows.map(|row| {
                let (seq, text) = row?;
                serde_json::from_str(&text)
                    .map_err(|source| RecordError::Unreadable { seq, source })
            })
            .collect()
        })
    }

    pub fn state(&self, ticket: &str) -> Result<Option<TicketState>, RecordError> {
        let ticket = ticket.to_owned();
        self.db.read(move |conn| load_state(conn, &ticket))
    }

    /// Every event after `seq` (0: all), in the order they were appended.
    pub fn events_after(&self, seq: i64) -> Result<Vec<Stored>, RecordError> {
        self.events_page(seq, usize::MAX)
    }

    /// The first `limit` events after `seq`, in the order they were appended: a long record
    /// read a page at a time, the next page after the last `seq` of this one.
    pub fn events_page(&self, seq: i64, limit: usize) -> Result<Vec<Stored>, RecordError> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        self.db.read(move |conn| {
            select(
                conn,
                "SELECT seq, at, by, body FROM events WHERE seq > ?1 ORDER BY seq LIMIT ?2",
                params![seq, limit],
            )
        })
    }

    /// One ticket's events, in order.
    pub fn ticket_events(&self, ticket: &str) -> Result<Vec<Stored>, RecordError> {
        let ticket = ticket.to_owned();
        self.db.read(move |conn| {
            select(
                conn,
                "SELECT seq, at, by, body FROM events WHERE ticket = ?1 ORDER BY seq",
                params![ticket],
            )
        })
    }

    /// The sequence number of the newest event (0 when the record is empty).
    pub fn last_seq(&self) -> Result<i64, RecordError> {
        self.db.read(newest_seq)
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
        interrupted
            .into_iter()
            .map(|state| {
                self.append(&Event::NeedsPerson {
                    reason: state.interrupted_reason(&self.allow),
                    ticket: state.ticket,
                })
            })
            .collect()
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

impl Drop for DeskRecord {
    /// The record's thread applies what is left before it stops; then the journal, which the
    /// tables now hold in full, is emptied.
    fn drop(&mut self) {
        if let (Some(applied), Some(appender)) = (self.db.stop(), &self.appender) {
            lock(appender).empty_journal(applied, 0);
        }
    }
}

fn select(
    conn: &Connection,
    sql: &str,
    params: impl rusqlite::Params,
) -> Result<Vec<Stored>, RecordError> {
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

// A panic while the lock was held cannot leave a half-made change: the journal line and the
// cache move on only after everything before them has worked.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
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

/// Appends `event` and moves its ticket's state on, without asking whether it may (an older
/// desk file's rows, migrated inside the transaction that opens it).
pub(super) fn write_event(
    tx: &Transaction<'_>,
    event: &Event,
    by: &str,
    at: i64,
    allow: &[String],
) -> Result<(), RecordError> {
    let state = match event.ticket() {
        Some(ticket) => {
            let mut state = load_state(tx, ticket)?.unwrap_or_else(|| TicketState::new(ticket));
            state.apply(event, &Stamp { by, at }, allow);
            Some(serde_json::to_string(&state).map_err(to_sql_error)?)
        }
        None => None,
    };
    Pending {
        seq: newest_seq(tx)? + 1,
        at,
        by: by.to_owned(),
        ticket: event.ticket().map(str::to_owned),
        kind: event.kind(),
        event_json: serde_json::to_string(event).map_err(to_sql_error)?,
        state_json: state,
    }
    .write(tx)
}

/// The sequence number of the newest event the tables hold (0 when there is none).
fn newest_seq(conn: &Connection) -> Result<i64, RecordError> {
    Ok(conn.query_row("SELECT COALESCE(MAX(seq), 0) FROM events", [], |r| r.get(0))?)
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

fn to_sql_error(e: serde_json::Error) -> rusqlite::Error {
    rusqlite::Error::ToSqlConversionFailure(Box::new(e))
}
