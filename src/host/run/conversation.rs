//! One ticket's conversation as the model sees it, what the host keeps beside it (the call
//! log the draft is checked against), and how one call ended for the loop.

use crate::host::api::Outcome;
use crate::host::checks::CallFact;
use crate::host::run::system_prompt;
use crate::model::chat::{Message, Reply, ToolCall, ToolSpec, tool_response_block};

/// One ticket's conversation as the model sees it, and what the host keeps beside it.
#[derive(Default)]
pub(in crate::host) struct Conversation {
    pub(in crate::host) messages: Vec<Message>,
    /// The tools of this ticket, for routing and the system prompt.
    pub(in crate::host) specs: Vec<ToolSpec>,
    /// The tools every request of this ticket carries, the last turn's too.
    pub(in crate::host) offered: Vec<ToolSpec>,
    /// The last turn has come: the model may call none of them.
    pub(in crate::host) calls_closed: bool,
    pub(in crate::host) tool_list_chars: usize,
    pub(in crate::host) context_chars: usize,
    /// The customer's subject and body, for the draft's checks.
    pub(in crate::host) ticket_text: String,
    /// The customer's text with the customer ID the desk knows: where an argument may come
    /// from besides a tool result.
    pub(in crate::host) customer_text: String,
    /// Every call of this run with its outcome: the draft is checked against it.
    pub(in crate::host) facts: Vec<CallFact>,
    /// The approval the run stopped for, when a lead's form went to the leads.
    pub(in crate::host) parked: Option<i64>,
    /// Why the run stopped for a person: a call the desk stopped waiting on.
    pub(in crate::host) to_person: Option<String>,
}

/// What a model's reply is to the run, once it has its place in the conversation.
pub(in crate::host) enum Taken {
    /// Words: the draft. Nothing is added; the run ends with it.
    Draft(String),
    /// A call, added as the model asked for it; its outcome follows when it is known.
    Call { call: ToolCall, dropped: usize },
    /// Nothing the run can use (an empty or unreadable answer): added, with what was wrong.
    Unusable,
}

impl Conversation {
    /// Gives a model's reply its place in the conversation: the same when a run happens and
    /// when a stopped run is put back together from the record, so the model reads the same
    /// messages either way.
    pub(in crate::host) fn take_reply(&mut self, reply: Reply) -> Taken {
        match reply {
            // An empty answer is no draft: the model is told, within the same turn budget.
            Reply::Words { content } if content.trim().is_empty() => {
                self.push_unusable(content, "your answer was empty");
                Taken::Unusable
            }
            Reply::Words { content } => Taken::Draft(content),
            Reply::Malformed { raw, problem } => {
                self.push_unusable(raw, &problem);
                Taken::Unusable
            }
            Reply::Call {
                call,
                content,
                dropped,
            } => {
                self.push_call(&call, content);
                Taken::Call { call, dropped }
            }
        }
    }

    /// The model's call, as it asked for it.
    pub(in crate::host) fn push_call(&mut self, call: &ToolCall, content: String) {
        self.messages.push(Message::Assistant {
            content,
            tool_call: Some(call.clone()),
        });
    }

    /// A call's outcome, kept for the draft's checks and back to the model, told that only
    /// this call was run when the reply held `dropped` more.
    pub(in crate::host) fn push_outcome(
        &mut self,
        call: &ToolCall,
        turn: u32,
        (tool, outcome): (&str, Outcome),
        text: String,
        dropped: usize,
    ) {
        let mut told = text.clone();
        if dropped > 0 {
            told.push_str(&format!(
                "\n(Your reply held {dropped} more tool call(s) after this one; only this first one was run. Make one call per reply.)"
            ));
        }
        self.messages.push(Message::Tool {
            call_id: call.id.clone(),
            name: call.name.clone(),
            content: tool_response_block(tool, outcome.label(), &told),
        });
        self.facts.push(CallFact {
            tool: tool.to_owned(),
            turn,
            outcome,
            arguments: call.arguments.clone(),
            result: text,
        });
    }

    /// An answer that could not be used, and what the model is told about it.
    pub(in crate::host) fn push_unusable(&mut self, raw: String, problem: &str) {
        self.messages.push(Message::Assistant {
            content: raw,
            tool_call: None,
        });
        self.messages.push(Message::User {
            content: tool_response_block(
                "",
                Outcome::Failed.label(),
                &format!("Your last answer could not be used: {problem}. Write one tool call as <tool_call>{{\"name\": <tool name>, \"arguments\": {{…}}}}</tool_call>, or the reply to the customer in plain words."),
            ),
        });
    }
}

/// How a call ended, for the loop: the outcome, the text for the model, the tool's canonical
/// name, and the approval it stopped for, if a lead's form went to the leads.
pub(in crate::host) struct Called {
    pub(in crate::host) outcome: Outcome,
    pub(in crate::host) text: String,
    pub(in crate::host) tool: String,
    pub(in crate::host) parked: Option<i64>,
    /// The desk stopped waiting on the call, which goes on at its server: the ticket goes
    /// to a person, and the model is not asked to go on.
    pub(in crate::host) to_person: bool,
}

impl Called {
    pub(in crate::host) fn new(outcome: Outcome, text: String, tool: String) -> Self {
        Self {
            outcome,
            text,
            tool,
            parked: None,
            to_person: false,
        }
    }
}

impl Conversation {
    /// The last model call of the ticket: the model is told to write its reply, after
    /// everything it read before (a call now could not be run, as nothing would read its
    /// result). The tools stay in the request, so that it begins as the ones before it did
    /// and a model server's prompt cache serves all of that again.
    pub(in crate::host) fn last_turn(&mut self) {
        self.calls_closed = true;
        self.messages.push(Message::User {
            content: system_prompt::LAST_TURN.to_owned(),
        });
    }

    /// The words for the model when `call` is exactly a call that already failed in this
    /// ticket (same tool, same arguments): it is not run again.
    pub(in crate::host) fn repeats_a_failure(
        &self,
        canonical: &str,
        call: &ToolCall,
    ) -> Option<String> {
        let earlier = self.facts.iter().find(|fact| {
            fact.outcome != Outcome::Result
                && fact.tool == canonical
                && fact.arguments == call.arguments
        })?;
        Some(format!(
            "not run again: this exact call already came back \"{}\" on turn {} ({}). Change the arguments, use another tool, or write the reply to the customer with what you know.",
            earlier.outcome.label(),
            earlier.turn,
            crate::text::cut(first_line(&earlier.result), 200)
        ))
    }
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or_default()
}
