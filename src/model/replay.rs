//! A model that answers from a recording: by the exact messages it saw, nothing else.
//! When nothing matches, it says where the run left the recording.

use std::collections::HashMap;
use std::path::Path;

use super::chat::{ChatRequest, Reply};
use crate::recording::reader::ReadError;
use crate::recording::{Event, Recording};

pub struct ReplayModel {
    source: String,
    answers: HashMap<String, Reply>,
    recorded_turns: HashMap<(String, u32), String>,
}

impl ReplayModel {
    pub fn open(path: &Path) -> Result<Self, ReadError> {
        Ok(Self::from_recording(
            path.display().to_string(),
            &Recording::read(path)?,
        ))
    }

    pub fn from_recording(source: String, recording: &Recording) -> Self {
        let mut answers = HashMap::new();
        let mut recorded_turns = HashMap::new();
        for event in &recording.events {
            if let Event::ModelCall {
                ticket,
                turn,
                messages_hash,
                reply,
                ..
            } = event
            {
                answers
                    .entry(messages_hash.clone())
                    .or_insert_with(|| reply.clone());
                recorded_turns.insert((ticket.clone(), *turn), messages_hash.clone());
            }
        }
        Self {
            source,
            answers,
            recorded_turns,
        }
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
