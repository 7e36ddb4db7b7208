//! A model that answers from recorded model calls (a recording reads them for it:
//! `crate::recording::Recording::replay_model`), by the exact messages it saw, nothing else.
//! When nothing matches, it says where the run left the recording.

use std::collections::HashMap;

use super::chat::{ChatRequest, Reply};

/// One model call as a recording holds it: the messages' hash and the reply to them.
#[derive(Debug, Clone)]
pub struct RecordedCall {
    pub ticket: String,
    pub turn: u32,
    pub messages_hash: String,
    pub reply: Reply,
}

pub struct ReplayModel {
    source: String,
    answers: HashMap<String, Reply>,
    recorded_turns: HashMap<(String, u32), String>,
}

impl ReplayModel {
    /// A model that answers the recorded calls, named by `source` (where they came from).
    pub fn new(source: String, calls: impl IntoIterator<Item = RecordedCall>) -> Self {
        let mut answers = HashMap::new();
        let mut recorded_turns = HashMap::new();
        for call in calls {
            answers
                .entry(call.messages_hash.clone())
                .or_insert(call.reply);
            recorded_turns.insert((call.ticket, call.turn), call.messages_hash);
        }
        Self {
            source,
            answers,
            recorded_turns,
        }
    }

    /// A model with nothing recorded, for a host that asks no model (answering an approval).
    pub fn empty(source: String) -> Self {
        Self::new(source, [])
    }

    pub fn describe(&self) -> String {
        format!(
            "replay:{} ({} recorded model calls)",
            self.source,
            self.answers.len()
        )
    }

    pub fn reply(&self, ticket: &str, turn: u32, request: &ChatRequest) -> Result<Reply, String> {
        let hash = request.hash();
        if let Some(reply) = self.answers.get(&hash) {
            return Ok(reply.clone());
        }
        Err(match self.recorded_turns.get(&(ticket.to_owned(), turn)) {
            Some(recorded) => format!(
                "the run left the recording at {ticket} turn {turn}: a tool result, the prompt or the tool list changed, so the model would now see other messages than the recording holds; work the ticket yourself, or record the run again (messages {}…, recorded {}…)",
                &hash[..12],
                &recorded[..12.min(recorded.len())]
            ),
            None => format!(
                "the recording has no model call for {ticket} turn {turn}: it was never recorded, or the run diverged earlier"
            ),
        })
    }
}
