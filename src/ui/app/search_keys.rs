//! Keys while a search is typed, and stepping through what it finds: the selection moves
//! to a found ticket; the search itself only says which tickets match.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::App;
use crate::ui::search::Search;

impl App {
    /// A key while a search is typed: it goes into the query; Enter finds, Esc cancels.
    pub(super) fn on_search_key(&mut self, key: KeyEvent) {
        let Some(search) = &mut self.search else {
            return;
        };
        let plain = !key
            .modifiers
            .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT);
        match key.code {
            KeyCode::Esc => self.search = None,
            KeyCode::Enter => {
                search.typing = false;
                self.find_from_top();
            }
            KeyCode::Backspace => {
                search.query.pop();
            }
            KeyCode::Char(c) if plain => search.query.push(c),
            _ => {}
        }
    }

    /// Which of the shown tickets the search finds, in the queue's order.
    pub fn found(&self) -> Vec<bool> {
        let Some(search) = &self.search else {
            return vec![];
        };
        self.visible()
            .into_iter()
            .map(|i| search.finds(&self.items[i]))
            .collect()
    }

    fn find_from_top(&mut self) {
        let found = self.found();
        match found.iter().position(|&f| f) {
            Some(n) => self.select_row(n),
            None => {
                let query = self.search.take().map(|s| s.query).unwrap_or_default();
                self.message = Some(format!("no ticket matches \"{}\"", query.trim()));
            }
        }
    }

    pub(super) fn find(&mut self, forward: bool) {
        let found = self.found();
        if let Some(n) = Search::step(&found, self.selected, forward) {
            self.select_row(n);
        }
    }

    fn select_row(&mut self, n: usize) {
        self.selected = n;
        self.scroll_back = 0;
    }

    /// Selects `ticket` when the filter shows it.
    pub(super) fn select_ticket(&mut self, ticket: &str) {
        let row = self
            .visible()
            .iter()
            .position(|&i| self.items[i].ticket.ticket_id == ticket);
        if let Some(row) = row {
            self.select_row(row);
        }
    }
}
