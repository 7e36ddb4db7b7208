//! How the model server read a run's prompts, as it said itself in each model call: how many
//! tokens, how many its prompt cache held, how long reading the rest took, and the model's
//! time a ticket. Only a live run's calls carry it; a replay's say nothing.

use serde::{Deserialize, Serialize};

use crate::model::chat::PromptUse;

/// The model calls whose server said how it read their prompts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Prompts {
    pub calls: usize,
    /// All their prompts' tokens, and of them those the server's prompt cache held.
    pub tokens: u64,
    pub cached: u64,
    /// Milliseconds the server spent reading what its cache did not hold (when it said).
    pub reading_ms: u64,
    /// Milliseconds of model time (every model call, request to whole reply), and the tickets
    /// they were spent on.
    pub model_ms: u64,
    pub tickets: usize,
}

/// A tally of prompts, one model call at a time.
#[derive(Default)]
pub(super) struct PromptTally {
    prompts: Prompts,
    told: bool,
    seconds: f64,
    reading_seconds: f64,
}

impl PromptTally {
    pub(super) fn add(&mut self, seconds: f64, prompt: Option<&PromptUse>) {
        self.seconds += seconds;
        let Some(prompt) = prompt else {
            return;
        };
        self.told = true;
        self.prompts.calls += 1;
        self.prompts.tokens += prompt.tokens;
        self.prompts.cached += prompt.cached.min(prompt.tokens);
        self.reading_seconds += prompt.reading_seconds.unwrap_or(0.0);
    }

    /// The figures over `tickets` tickets; none when no call said how its prompt was read.
    pub(super) fn finish(self, tickets: usize) -> Option<Prompts> {
        let ms = |s: f64| (s * 1000.0).round() as u64;
        self.told.then(|| Prompts {
            reading_ms: ms(self.reading_seconds),
            model_ms: ms(self.seconds),
            tickets,
            ..self.prompts
        })
    }
}

impl Prompts {
    /// The share of prompt tokens the server's cache held, in per mille (rounded).
    pub fn cached_per_mille(&self) -> u64 {
        (self.cached * 1000 + self.tokens / 2)
            .checked_div(self.tokens)
            .unwrap_or(0)
    }

    pub(super) fn to_text(&self) -> String {
        let per_mille = self.cached_per_mille();
        let seconds = |ms: u64| format!("{:.1} s", ms as f64 / 1000.0);
        let a_ticket = self.model_ms.checked_div(self.tickets as u64).unwrap_or(0);
        format!(
            "prompts: {} calls read {} tokens, {}.{} % of them from the server's cache; reading the rest took {}; model time {} ({} a ticket)",
            self.calls,
            self.tokens,
            per_mille / 10,
            per_mille % 10,
            seconds(self.reading_ms),
            seconds(self.model_ms),
            seconds(a_ticket)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn used(tokens: u64, cached: u64, reading: f64) -> PromptUse {
        PromptUse {
            tokens,
            cached,
            reading_seconds: Some(reading),
        }
    }

    #[test]
    fn the_share_is_of_every_token_read_and_model_time_is_every_calls() {
        let mut tally = PromptTally::default();
        tally.add(10.0, Some(&used(3000, 2900, 1.5)));
        tally.add(5.0, Some(&used(1000, 0, 4.0)));
        // A call whose server said nothing still took model time.
        tally.add(1.0, None);
        let prompts = tally.finish(2).expect("two calls said");
        assert_eq!(
            (prompts.calls, prompts.tokens, prompts.cached),
            (2, 4000, 2900)
        );
        assert_eq!(prompts.cached_per_mille(), 725);
        assert_eq!((prompts.reading_ms, prompts.model_ms), (5500, 16000));
        assert_eq!(
            prompts.to_text(),
            "prompts: 2 calls read 4000 tokens, 72.5 % of them from the server's cache; reading the rest took 5.5 s; model time 16.0 s (8.0 s a ticket)"
        );
    }

    #[test]
    fn a_run_whose_server_said_nothing_has_no_prompt_figures() {
        let mut tally = PromptTally::default();
        tally.add(2.0, None);
        assert_eq!(tally.finish(1), None);
        assert_eq!(Prompts::default().cached_per_mille(), 0);
    }

    #[test]
    fn a_cache_that_says_it_held_more_than_the_prompt_counts_as_the_prompt() {
        let mut tally = PromptTally::default();
        tally.add(1.0, Some(&used(100, 250, 0.0)));
        assert_eq!(tally.finish(1).map(|p| p.cached_per_mille()), Some(1000));
    }
}
