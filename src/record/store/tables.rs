//! The record's own thread: it holds the SQLite connection, applies the events appends hand
//! it in batches, and runs this desk's reads behind them.

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, mpsc};

use rusqlite::{Connection, TransactionBehavior, params};

use super::appender::{Appender, JOURNAL_CLEAR_AT};
use super::{RecordError, lock};

/// An event on its way to the tables.
pub(super) struct Pending {
    pub(super) seq: i64,
    pub(super) at: i64,
    pub(super) by: String,
    pub(super) ticket: Option<String>,
    pub(super) kind: &'static str,
    pub(super) event_json: String,
    pub(super) state_json: Option<String>,
}

enum Job {
    Apply(Pending),
    /// Runs once every event sent before it is in the tables.
    Read(Box<dyn FnOnce(&Connection) + Send>),
}

/// The SQLite connection on a thread of its own: events are applied there in batches (one
/// transaction for all that arrived while the last one committed), so a checkpoint's fsyncs
/// never hold the desk's thread; reads queue behind the events sent before them.
pub(super) struct Db {
    jobs: Option<mpsc::Sender<Job>>,
    thread: Option<std::thread::JoinHandle<()>>,
    shared: Arc<DbState>,
}

#[derive(Default)]
struct DbState {
    /// Why the tables stopped following the journal, once they have.
    failure: Mutex<Option<String>>,
    /// The newest event the tables hold.
    applied: AtomicI64,
}

/// At most this many events go into one transaction.
const BATCH: usize = 1024;

impl Db {
    pub(super) fn start(conn: Connection, appender: Option<Arc<Mutex<Appender>>>) -> Self {
        let (jobs, queue) = mpsc::channel();
        let shared = Arc::new(DbState::default());
        let thread_state = shared.clone();
        let thread = std::thread::Builder::new()
            .name("desk-record".into())
            .spawn(move || Self::run(conn, queue, &thread_state, appender.as_deref()));
        match thread {
            Ok(thread) => Self {
                jobs: Some(jobs),
                thread: Some(thread),
                shared,
            },
            Err(error) => {
                shared.fail(format!("cannot start the record's thread ({error})"));
                Self {
                    jobs: None,
                    thread: None,
                    shared,
                }
            }
        }
    }

    fn run(
        mut conn: Connection,
        queue: mpsc::Receiver<Job>,
        shared: &DbState,
        appender: Option<&Mutex<Appender>>,
    ) {
        let mut batch = Vec::new();
        while let Ok(job) = queue.recv() {
            let mut next = Some(job);
            while let Some(job) = next {
                match job {
                    Job::Apply(pending) => {
                        batch.push(pending);
                        if batch.len() >= BATCH {
                            Self::flush(&mut conn, &mut batch, shared, appender);
                        }
                    }
                    Job::Read(read) => {
                        Self::flush(&mut conn, &mut batch, shared, appender);
                        read(&conn);
                    }
                }
                next = queue.try_recv().ok();
            }
            Self::flush(&mut conn, &mut batch, shared, appender);
        }
    }

    fn flush(
        conn: &mut Connection,
        batch: &mut Vec<Pending>,
        shared: &DbState,
        appender: Option<&Mutex<Appender>>,
    ) {
        if batch.is_empty() {
            return;
        }
        if shared.failed().is_err() {
            // The events stay in the journal, for the next desk to open the record.
            batch.clear();
            return;
        }
        match apply(conn, batch) {
            Ok(last) => {
                shared.applied.store(last, Ordering::Release);
                // Never waits for the lock: an append holding it may be waiting for a read
                // on this thread. The journal is emptied on a later batch instead.
                if let Some(mut appender) = appender.and_then(try_lock_now) {
                    appender.empty_journal(last, JOURNAL_CLEAR_AT);
                }
            }
            Err(error) => {
                tracing::error!(%error, "the record's tables stopped following its journal");
                shared.fail(error.to_string());
            }
        }
        batch.clear();
    }

    /// Hands an event to the record's thread.
    pub(super) fn apply(&self, pending: Pending) -> Result<(), RecordError> {
        self.send(Job::Apply(pending))
    }

    /// Runs `read` on the connection once every event appended before it is in the tables.
    pub(super) fn read<T: Send + 'static>(
        &self,
        read: impl FnOnce(&Connection) -> Result<T, RecordError> + Send + 'static,
    ) -> Result<T, RecordError> {
        let (answer, answered) = mpsc::sync_channel(1);
        self.send(Job::Read(Box::new(move |conn| {
            // The reader waits on the other end; if it is gone, nobody wants the answer.
            let _ = answer.send(read(conn));
        })))?;
        let result = answered.recv().map_err(|_| self.stopped())?;
        self.healthy()?;
        result
    }

    fn send(&self, job: Job) -> Result<(), RecordError> {
        let jobs = self.jobs.as_ref().ok_or_else(|| self.stopped())?;
        jobs.send(job).map_err(|_| self.stopped())
    }

    pub(super) fn healthy(&self) -> Result<(), RecordError> {
        self.shared.failed().map_err(RecordError::Behind)
    }

    fn stopped(&self) -> RecordError {
        match self.shared.failed() {
            Err(why) => RecordError::Behind(why),
            Ok(()) => RecordError::Behind("the record's thread stopped".into()),
        }
    }

    /// Stops the thread once it has applied everything sent to it; the newest event the tables
    /// hold, unless they stopped following the journal.
    pub(super) fn stop(&mut self) -> Option<i64> {
        self.jobs = None;
        if let Some(thread) = self.thread.take()
            && thread.join().is_err()
        {
            self.shared.fail("the record's thread panicked".into());
        }
        self.shared
            .failed()
            .ok()
            .map(|()| self.shared.applied.load(Ordering::Acquire))
    }
}

impl DbState {
    fn fail(&self, why: String) {
        lock(&self.failure).get_or_insert(why);
    }

    fn failed(&self) -> Result<(), String> {
        match lock(&self.failure).as_ref() {
            Some(why) => Err(why.clone()),
            None => Ok(()),
        }
    }
}

/// One transaction for the whole batch; the newest sequence number in it.
fn apply(conn: &mut Connection, batch: &[Pending]) -> Result<i64, RecordError> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    for pending in batch {
        pending.write(&tx)?;
    }
    tx.commit()?;
    Ok(batch.last().map_or(0, |p| p.seq))
}

impl Pending {
    /// Writes the event and, for a ticket's, the state it left the ticket in.
    pub(super) fn write(&self, conn: &Connection) -> Result<(), RecordError> {
        conn.prepare_cached(
            "INSERT INTO events (seq, ticket, at, by, kind, body) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        )?
        .execute(params![
            self.seq,
            self.ticket,
            self.at,
            self.by,
            self.kind,
            self.event_json
        ])?;
        if let (Some(ticket), Some(state)) = (&self.ticket, &self.state_json) {
            conn.prepare_cached(
                "INSERT INTO ticket_states (ticket, seq, state) VALUES (?1, ?2, ?3)
                 ON CONFLICT (ticket) DO UPDATE SET seq = excluded.seq, state = excluded.state",
            )?
            .execute(params![ticket, self.seq, state])?;
        }
        Ok(())
    }
}

/// The lock, if nobody holds it now.
fn try_lock_now<T>(mutex: &Mutex<T>) -> Option<MutexGuard<'_, T>> {
    match mutex.try_lock() {
        Ok(guard) => Some(guard),
        Err(std::sync::TryLockError::Poisoned(poisoned)) => Some(poisoned.into_inner()),
        Err(std::sync::TryLockError::WouldBlock) => None,
    }
}
