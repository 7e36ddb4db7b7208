//! Due times on the desk: with `[sla]`, each open ticket's due moment, the queue sorted by it
//! (late first, then the soonest), and how many are late or due soon for the footer.

use super::App;
use crate::host::api::{Due, Sla, due_at};

impl App {
    /// A desk that times tickets against `sla`, with `clock` for now (unix ms).
    pub fn with_sla(mut self, sla: Sla, clock: fn() -> i64) -> Self {
        self.sla = Some(sla);
        self.clock = clock;
        let ids: Vec<String> = self
            .items
            .iter()
            .map(|i| i.ticket.ticket_id.clone())
            .collect();
        self.due_changed(&ids);
        self
    }

    /// Now, by the desk's clock.
    pub fn now(&self) -> i64 {
        (self.clock)()
    }

    /// `tickets` may be due at another moment now: their due times again, and the queue in
    /// due order with the selection kept on the ticket it was on.
    pub(super) fn due_changed(&mut self, tickets: &[String]) {
        let Some(sla) = &self.sla else {
            return;
        };
        for item in self
            .items
            .iter_mut()
            .filter(|item| tickets.contains(&item.ticket.ticket_id))
        {
            item.due_at = due_at(sla, &item.ticket, &item.state);
        }
        let selected = self.current().map(|item| item.ticket.ticket_id.clone());
        // Stable: tickets with nothing due keep their order, after every due one.
        self.items
            .sort_by_key(|item| item.due_at.unwrap_or(i64::MAX));
        if let Some(selected) = selected
            && let Some(at) = self
                .visible()
                .iter()
                .position(|&i| self.items[i].ticket.ticket_id == selected)
        {
            self.selected = at;
        }
    }

    /// How many tickets are late, and how many are due within the warning window.
    pub fn due_counts(&self) -> Option<(usize, usize)> {
        let warn = self.sla.as_ref()?.warn_within;
        let now = self.now();
        let (mut late, mut soon) = (0, 0);
        for at in self.items.iter().filter_map(|item| item.due_at) {
            match Due::of(at, now, warn) {
                Due::Late(_) => late += 1,
                Due::Soon(_) => soon += 1,
                Due::At(_) => {}
            }
        }
        Some((late, soon))
    }

    /// The warning window, for the footer's words.
    pub fn warn_within(&self) -> Option<std::time::Duration> {
        self.sla.as_ref().map(|sla| sla.warn_within)
    }
}
