//! The conversation with a model, in the host's own terms. Tool names here are always the
//! host's canonical `prefix.tool`; a model adapter that must send other names (OpenAI's
//! `tools` forbid `.`) maps them on the way out and back.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "lowercase")]
pub enum Message {
    System {
        content: String,
    },
    User {
        content: String,
    },
    /// The model's turn: words, or one tool call with any words that came with it.
    Assistant {
        content: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tool_call: Option<ToolCall>,
    },
    /// The host's answer to a tool call: a `<tool_response>` block.
    Tool {
        call_id: String,
        name: String,
        content: String,
    },
}

/// One tool call as the model made it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    pub id: String,
    /// As the model wrote it, mapped back to `prefix.tool` when the adapter knows the name.
    pub name: String,
    pub arguments: Map<String, Value>,
}

/// A tool as offered to the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    /// `prefix.tool`.
    pub name: String,
    /// The name sent where `.` is not allowed: `prefix__tool`.
    pub wire_name: String,
    pub description: String,
    pub input_schema: Value,
}

/// What the model answered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Reply {
    /// A tool call, with any words around it. `dropped` counts further calls in the same
    /// reply, which the host does not run.
    Call {
        call: ToolCall,
        content: String,
        #[serde(default, skip_serializing_if = "is_zero")]
        dropped: usize,
    },
    /// Words: the draft reply to the customer.
    Words { content: String },
    /// Output that tried to call a tool and could not be read; the host tells the model.
    Malformed { raw: String, problem: String },
}

impl Reply {
    /// The same reply with its call, if any, named `id`.
    pub fn with_call_id(mut self, id: String) -> Self {
        if let Reply::Call { call, .. } = &mut self {
            call.id = id;
        }
        self
    }
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// One request to a model: the whole conversation so far and the tools on offer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatRequest {
    pub messages: Vec<Message>,
    pub tools: Vec<ToolSpec>,
    /// No call may be made now (a ticket's last turn). The tools stay in the request all the
    /// same, so that it begins as the requests before it did and a server's prompt cache
    /// serves that beginning; the conversation's last message says no calls are left.
    #[serde(default, skip_serializing_if = "is_false")]
    pub calls_closed: bool,
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// How much of a request's prompt the model server read, as it reported it: all the prompt's
/// tokens, those its prompt cache already held, and the seconds it spent reading the rest.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PromptUse {
    pub tokens: u64,
    pub cached: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reading_seconds: Option<f64>,
}

/// A model's reply, with what the server said of reading its prompt when it said anything.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    pub reply: Reply,
    pub prompt: Option<PromptUse>,
}

impl ChatRequest {
    /// A stable hash of exactly what the model saw: a replay answers only a request whose
    /// hash it recorded.
    pub fn hash(&self) -> String {
        let bytes = serde_json::to_vec(self).expect("chat requests serialize");
        hex::encode(Sha256::digest(bytes))
    }
}

/// The block the host sends back after every tool call, naming the tool and the outcome:
/// `<tool_response tool="shop.get_order_status" outcome="result">…</tool_response>`.
pub fn tool_response_block(tool: &str, outcome: &str, body: &str) -> String {
    format!("<tool_response tool=\"{tool}\" outcome=\"{outcome}\">\n{body}\n</tool_response>")
}

/// The outcome named in a `<tool_response>` block, if `content` is one.
pub fn outcome_of_block(content: &str) -> Option<&str> {
    let rest = content.strip_prefix("<tool_response ")?;
    let start = rest.find("outcome=\"")? + "outcome=\"".len();
    let len = rest[start..].find('"')?;
    Some(&rest[start..start + len])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_block_names_its_tool_and_outcome() {
        let block = tool_response_block("shop.get_order_status", "tool error", "no order");
        assert_eq!(
            block,
            "<tool_response tool=\"shop.get_order_status\" outcome=\"tool error\">\nno order\n</tool_response>"
        );
        assert_eq!(outcome_of_block(&block), Some("tool error"));
        assert_eq!(outcome_of_block("plain words"), None);
    }
}
