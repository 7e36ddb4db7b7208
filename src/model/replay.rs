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
            Some(recorded) => {
                tracing::info!(%ticket, turn, messages = %hash, %recorded, "the replay left the recording");
                format!(
                    "the recording has no answer for {ticket} turn {turn}: a recording knows only what the model answered to the messages it saw when it was made, and here it would see other ones (a tool result, the prompt or the tool list changed since); work the ticket yourself, or record the run again"
                )
            }
            None => format!(
                "the recording has no model call for {ticket} turn {turn}: it was never recorded, or the run diverged earlier"
            ),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::chat::Message;

    fn request(text: &str) -> ChatRequest {
        let messages = vec![Message::User {
            content: text.to_owned(),
        }];
        ChatRequest {
            messages,
            tools: vec![],
            calls_closed: false,
        }
    }

    #[test]
    fn a_diverged_turn_is_said_in_words_even_when_the_recorded_hash_is_damaged() {
        let seen = request("Ticket T-0001 …");
        let calls = [RecordedCall {
            ticket: "T-0001".into(),
            turn: 1,
            // A damaged recording: not hex, and a character cut at no byte boundary of 12.
            messages_hash: "aééééééé".into(),
            reply: Reply::Words {
                content: "recorded".into(),
            },
        }];
        let model = ReplayModel::new("replay:test".into(), calls);
        let said = model
            .reply("T-0001", 1, &request("Ticket T-0001, changed"))
            .expect_err("not recorded");
        assert!(
            said.starts_with("the recording has no answer for T-0001 turn 1: a recording knows only what the model answered"),
            "{said}"
        );
        assert!(!said.contains("ééé"), "no hashes for people: {said}");
        let recorded = ReplayModel::new(
            "replay:test".into(),
            [RecordedCall {
                ticket: "T-0001".into(),
                turn: 1,
                messages_hash: seen.hash(),
                reply: Reply::Words {
                    content: "recorded".into(),
                },
            }],
        );
        assert_eq!(
            recorded.reply("T-0001", 1, &seen),
            Ok(Reply::Words {
                content: "recorded".into()
            })
        );
    }
}
