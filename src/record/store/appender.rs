//! What an append checks an event against, and moves on: the states of the tickets used
//! last, which tickets the record knows, the newest sequence number and the journal.

use std::collections::{HashMap, HashSet};

use rusqlite::Connection;

use super::super::journal::Journal;
use super::super::state::TicketState;
use super::tables::Db;
use super::{RecordError, load_state, newest_seq};

/// What an append checks and moves on, under one lock so that events keep their order in the
/// journal, on the record's thread and in the sequence numbers.
pub(super) struct Appender {
    /// The states of the tickets appended to most recently, as their latest events left them;
    /// any other ticket's is read from the tables (behind every event still on its way there).
    recent: HashMap<String, Recent>,
    /// Every ticket the record holds a state for: one not here is new, and needs no read.
    known: HashSet<Box<str>>,
    /// Counts appends, to tell which states were used least recently.
    tick: u64,
    pub(super) last_seq: i64,
    /// `None` for a record in memory.
    pub(super) journal: Option<Journal>,
}

struct Recent {
    state: TicketState,
    used: u64,
}

/// How many tickets' states an append keeps at hand: more than the desk works at once, so a
/// read is needed only when a person comes back to an older ticket. Past it, the half used
/// least recently is let go; the desk's memory does not grow with the queue.
const RECENT_STATES: usize = 1024;

/// Past this size, the journal is emptied once the tables hold every line of it.
pub(super) const JOURNAL_CLEAR_AT: u64 = 1 << 20;

impl Appender {
    /// The tickets and the newest sequence number as the tables hold them.
    pub(super) fn load(conn: &Connection, journal: Option<Journal>) -> Result<Self, RecordError> {
        let known = conn
            .prepare("SELECT ticket FROM ticket_states")?
            .query_map([], |r| r.get::<_, String>(0))?
            .map(|ticket| ticket.map(String::into_boxed_str))
            .collect::<Result<_, _>>()?;
        Ok(Self {
            recent: HashMap::new(),
            known,
            tick: 0,
            last_seq: newest_seq(conn)?,
            journal,
        })
    }

    /// Empties the journal once it is at least `at_least` bytes and the tables hold every
    /// event in it (`applied` being the newest they hold).
    pub(super) fn empty_journal(&mut self, applied: i64, at_least: u64) {
        if applied != self.last_seq {
            return;
        }
        if let Some(journal) = self.journal.as_mut()
            && journal.len() >= at_least.max(1)
            && let Err(error) = journal.clear()
        {
            tracing::warn!(journal = %journal.path().display(), %error, "could not empty the record's journal; it is emptied later, or by the next desk to open it");
        }
    }

    /// `ticket`'s state as its latest event left it (`None` for a ticket new to the record).
    pub(super) fn state(
        &mut self,
        ticket: &str,
        db: &Db,
    ) -> Result<Option<TicketState>, RecordError> {
        self.tick += 1;
        if let Some(recent) = self.recent.get_mut(ticket) {
            recent.used = self.tick;
            return Ok(Some(recent.state.clone()));
        }
        if !self.known.contains(ticket) {
            return Ok(None);
        }
        let owned = ticket.to_owned();
        db.read(move |conn| load_state(conn, &owned))
    }

    /// Keeps `state` at hand as its ticket's latest.
    pub(super) fn keep(&mut self, state: TicketState) {
        if !self.known.contains(state.ticket.as_str()) {
            self.known.insert(state.ticket.clone().into_boxed_str());
        }
        if self.recent.len() >= RECENT_STATES && !self.recent.contains_key(&state.ticket) {
            self.let_go_of_the_least_recent_half();
        }
        let used = self.tick;
        self.recent
            .insert(state.ticket.clone(), Recent { state, used });
    }

    fn let_go_of_the_least_recent_half(&mut self) {
        let mut used: Vec<u64> = self.recent.values().map(|r| r.used).collect();
        let middle = used.len() / 2;
        let (_, cutoff, _) = used.select_nth_unstable(middle);
        let cutoff = *cutoff;
        self.recent.retain(|_, recent| recent.used >= cutoff);
    }
}
