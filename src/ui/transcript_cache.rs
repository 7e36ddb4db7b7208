//! The transcripts the desk holds: those of the tickets looked at lately, read from the
//! record when a ticket comes on screen, not the whole day's history at start.
//!
//! A transcript is asked of the host ([`crate::host::api::Command::Transcript`]) and comes
//! back as each event's `seq` with its entries. What happens to a ticket while its
//! transcript is on the way waits beside it, and an event the answer already holds is not
//! added twice: the record's `seq` says which is which and in what order they go, whatever
//! order they arrive in. A ticket the desk does not hold is not followed at all; the record
//! has its history when it comes on screen.

use std::collections::{BTreeMap, VecDeque};

use crate::host::api::Entry;

/// How many tickets' transcripts the desk holds at once; the one on screen is always held.
pub const KEEP: usize = 32;

/// A ticket's events as the desk holds them: each event's `seq` in the record, with the
/// entries it makes. Ordered by `seq`, as the record orders them.
pub type Events = BTreeMap<i64, Vec<Entry>>;

#[derive(Default)]
pub struct TranscriptCache {
    held: BTreeMap<String, Held>,
    /// Held tickets, the one looked at longest ago first.
    looked: VecDeque<String>,
}

enum Held {
    /// Asked of the host; what happened meanwhile waits for the answer.
    Asked(Events),
    Loaded(Events),
}

impl TranscriptCache {
    /// A ticket's entries, oldest first; `None` while they are not read yet.
    pub fn entries(&self, ticket: &str) -> Option<impl DoubleEndedIterator<Item = &Entry>> {
        match self.held.get(ticket)? {
            Held::Asked(_) => None,
            Held::Loaded(events) => Some(events.values().flatten()),
        }
    }

    /// `ticket` is on screen: `true` when its transcript must be asked of the host (it is
    /// then marked as asked, so it is asked once). Holding more than [`KEEP`] lets go of the
    /// one looked at longest ago.
    pub fn want(&mut self, ticket: &str) -> bool {
        if let Some(at) = self.looked.iter().position(|t| t == ticket) {
            if at + 1 != self.looked.len()
                && let Some(again) = self.looked.remove(at)
            {
                self.looked.push_back(again);
            }
            return false;
        }
        self.held
            .insert(ticket.to_owned(), Held::Asked(Events::new()));
        self.looked.push_back(ticket.to_owned());
        while self.looked.len() > KEEP {
            if let Some(oldest) = self.looked.pop_front() {
                self.held.remove(&oldest);
            }
        }
        true
    }

    /// The host's answer for `ticket`: its whole history as the record held it, with what
    /// happened meanwhile that the answer did not hold yet. A second answer (the ticket let
    /// go of and asked again before the first came) only adds what the held one lacks; an
    /// answer for a ticket no longer held is dropped.
    pub fn loaded(&mut self, ticket: &str, history: impl IntoIterator<Item = (i64, Vec<Entry>)>) {
        let Some(held) = self.held.get_mut(ticket) else {
            return;
        };
        let (Held::Asked(events) | Held::Loaded(events)) = held;
        let mut events = std::mem::take(events);
        for (seq, entries) in history {
            events.entry(seq).or_insert(entries);
        }
        *held = Held::Loaded(events);
    }

    /// Something happened to `ticket` (the record's event `seq`): added to its transcript
    /// when the desk holds it (or kept for the answer while it is asked), and otherwise left
    /// to the record, which the transcript is read from when the ticket comes on screen.
    pub fn happened(&mut self, ticket: &str, seq: i64, entries: Vec<Entry>) {
        if let Some(Held::Asked(events) | Held::Loaded(events)) = self.held.get_mut(ticket) {
            events.entry(seq).or_insert(entries);
        }
    }

    /// How many tickets' transcripts are held (asked or read).
    #[cfg(test)]
    fn len(&self) -> usize {
        self.held.len()
    }

    #[cfg(test)]
    fn is_empty(&self) -> bool {
        self.held.is_empty()
    }
}

#[cfg(test)]
mod tests;
