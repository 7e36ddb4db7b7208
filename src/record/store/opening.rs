//! What opening a record on a file involves: the lock that lets one desk at a time work on
//! it, and applying what a killed desk left in the journal.

use std::path::{Path, PathBuf};

use rusqlite::{Connection, TransactionBehavior};

use super::super::journal::{self, Journal};
use super::tables::Pending;
use super::{RecordError, newest_seq, to_sql_error};

/// The lock on the record at `path`, or `None` when a desk holds it.
pub(super) fn try_lock(path: &Path) -> Result<Option<std::fs::File>, RecordError> {
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
        Ok(()) => Ok(Some(lock)),
        Err(std::fs::TryLockError::WouldBlock) => Ok(None),
        Err(std::fs::TryLockError::Error(source)) => Err(RecordError::Lock {
            path: lock_path,
            source,
        }),
    }
}

pub(super) fn open_journal(path: &Path) -> Result<(Journal, Vec<journal::Line>), RecordError> {
    Journal::open(path).map_err(|source| RecordError::Journal {
        path: path.to_owned(),
        source,
    })
}

/// Applies the journal's lines that the tables do not hold yet (a killed desk's last events),
/// then empties it. Run with the record's lock held.
pub(super) fn recover(
    conn: &mut Connection,
    journal: &mut Journal,
    lines: Vec<journal::Line>,
) -> Result<(), RecordError> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let last = newest_seq(&tx)?;
    let mut applied = 0;
    for line in lines.into_iter().filter(|line| line.seq > last) {
        Pending {
            seq: line.seq,
            at: line.at,
            ticket: line.event.ticket().map(str::to_owned),
            kind: line.event.kind(),
            event_json: serde_json::to_string(&line.event).map_err(to_sql_error)?,
            state_json: line
                .state
                .as_ref()
                .map(serde_json::to_string)
                .transpose()
                .map_err(to_sql_error)?,
            by: line.by,
        }
        .write(&tx)?;
        applied += 1;
    }
    tx.commit()?;
    if applied > 0 {
        tracing::info!(applied, journal = %journal.path().display(), "applied the events a desk left in the record's journal");
    }
    if journal.len() > 0 {
        journal.clear().map_err(|source| RecordError::Journal {
            path: journal.path().to_owned(),
            source,
        })?;
    }
    Ok(())
}

/// `desk.lock` beside the record at `record`.
pub(super) fn lock_file(record: &Path) -> PathBuf {
    record.with_extension("lock")
}
