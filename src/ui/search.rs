//! Finding a ticket in the queue by id, customer or words (`/`, as in k9s and lazygit).
//!
//! The search holds what was typed and whether it is still being typed; which tickets match
//! is worked out from the queue each time, so a search never goes stale. It moves no
//! selection itself: `App::update` does, from what this finds.

use super::queue::QueueItem;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Search {
    pub query: String,
    /// Still typing: keys go into the query until Enter or Esc.
    pub typing: bool,
}

impl Search {
    pub fn new() -> Self {
        Self {
            query: String::new(),
            typing: true,
        }
    }

    /// Whether every word of the query is in the ticket's id, customer, subject or text
    /// (case apart). An empty query finds nothing.
    pub fn finds(&self, item: &QueueItem) -> bool {
        let words: Vec<String> = self
            .query
            .split_whitespace()
            .map(str::to_lowercase)
            .collect();
        if words.is_empty() {
            return false;
        }
        let t = &item.ticket;
        let haystack =
            format!("{} {} {} {}", t.ticket_id, t.who(), t.subject, t.body).to_lowercase();
        words.iter().all(|word| haystack.contains(word.as_str()))
    }

    /// Among `positions` (each shown row and whether the search finds it), the first found
    /// row after `from` going forward (or before it going back), wrapping round.
    pub fn step(found: &[bool], from: usize, forward: bool) -> Option<usize> {
        let count = found.len();
        (1..=count)
            .map(|k| {
                if forward {
                    (from + k) % count
                } else {
                    (from + count * 2 - k) % count
                }
            })
            .find(|&n| found[n])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stepping_wraps_round_the_queue_both_ways() {
        let found = [false, true, false, true];
        assert_eq!(Search::step(&found, 1, true), Some(3));
        assert_eq!(Search::step(&found, 3, true), Some(1));
        assert_eq!(Search::step(&found, 1, false), Some(3));
        assert_eq!(Search::step(&[false, false], 0, true), None);
    }
}
