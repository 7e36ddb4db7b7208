//! Questions waiting for a person: consent questions and servers' forms, oldest first, with
//! the ones a person put back (Ctrl-B) kept back until someone asks for them. This decides
//! which question opens next; it draws nothing and answers nothing.

use std::collections::VecDeque;

use crate::host::api::{ConsentAnswer, ConsentAsk, FormAnswer, FormAsk, Pending};

/// A question waiting for a person.
pub enum Asked {
    Consent(Pending<ConsentAsk, ConsentAnswer>),
    Form(Pending<FormAsk, FormAnswer>),
}

impl Asked {
    pub fn ticket(&self) -> Option<&str> {
        match self {
            Asked::Consent(p) => Some(&p.ask.ticket),
            Asked::Form(p) => p.ask.ticket.as_deref(),
        }
    }

    pub fn summary(&self) -> String {
        match self {
            Asked::Consent(p) => format!("{}: may {} run?", p.ask.ticket, p.ask.tool),
            Asked::Form(p) => format!("{} asks: {}", p.ask.server, p.ask.message),
        }
    }
}

struct Waiting {
    asked: Asked,
    /// A person put it back: it opens only when asked for (`a`, or Enter on its ticket).
    put_back: bool,
}

/// The questions no modal shows now.
#[derive(Default)]
pub struct Questions {
    queue: VecDeque<Waiting>,
}

impl Questions {
    pub fn len(&self) -> usize {
        self.queue.len()
    }

    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    /// How many of the waiting questions a person put back.
    pub fn put_back_count(&self) -> usize {
        self.queue.iter().filter(|w| w.put_back).count()
    }

    /// A new question, after every other.
    pub fn push(&mut self, asked: Asked) {
        self.queue.push_back(Waiting {
            asked,
            put_back: false,
        });
    }

    /// A question a person left for later: first in line when they ask, never opened by
    /// itself.
    pub fn put_back(&mut self, asked: Asked) {
        self.queue.push_front(Waiting {
            asked,
            put_back: true,
        });
    }

    /// The question that may open by itself: the oldest nobody put back.
    pub fn take_unasked(&mut self) -> Option<Asked> {
        let index = self.queue.iter().position(|w| !w.put_back)?;
        self.queue.remove(index).map(|w| w.asked)
    }

    /// The question a person asks for: the oldest nobody put back, else the last put back.
    pub fn take_next(&mut self) -> Option<Asked> {
        self.take_unasked()
            .or_else(|| self.queue.pop_front().map(|w| w.asked))
    }

    /// The first question about `ticket`, put back or not.
    pub fn take_for(&mut self, ticket: &str) -> Option<Asked> {
        let index = self
            .queue
            .iter()
            .position(|w| w.asked.ticket() == Some(ticket))?;
        self.queue.remove(index).map(|w| w.asked)
    }

    pub fn asks_about(&self, ticket: &str) -> bool {
        self.queue.iter().any(|w| w.asked.ticket() == Some(ticket))
    }

    /// Drops the questions about `ticket`: its run is over, so nobody waits for their
    /// answers (a dropped question reads as "cancel").
    pub fn drop_for(&mut self, ticket: &str) {
        self.queue.retain(|w| w.asked.ticket() != Some(ticket));
    }

    pub fn iter(&self) -> impl Iterator<Item = &Asked> {
        self.queue.iter().map(|w| &w.asked)
    }
}
