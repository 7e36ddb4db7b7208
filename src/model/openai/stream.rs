//! A streamed chat completion (`stream: true`: server-sent events of `chat.completion.chunk`)
//! put back together as the one completion a server that does not stream would have sent,
//! so a streamed reply and a whole one are read by the same code and come to the same reply.
//! On the way, what the model has written so far is there for a person to watch.

use serde_json::{Map, Value, json};

/// What a streamed reply holds so far: its words, and the tool it is calling once the call's
/// name has come (as the model named it on the wire).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Partial {
    pub content: String,
    pub calling: Option<String>,
}

/// The chunks of one streamed completion as they come, by their `data:` lines.
#[derive(Debug, Default)]
pub(super) struct Assembly {
    /// Bytes of an event not yet ended by a blank line (a chunk may end mid-character).
    pending: Vec<u8>,
    seen: Partial,
    calls: Vec<CallParts>,
    /// The stream said `[DONE]`.
    done: bool,
    /// The server put an error into the stream instead of a chunk.
    error: Option<String>,
    /// What the server said of the whole request, in whichever chunk it came (`usage`, and
    /// llama-server's `timings`): kept as sent.
    accounts: Map<String, Value>,
}

/// One tool call as its deltas build it, by its index.
#[derive(Debug, Default)]
struct CallParts {
    id: String,
    name: String,
    arguments: String,
}

impl Assembly {
    /// Takes the stream's next bytes; whether what a person sees changed.
    pub(super) fn feed(&mut self, bytes: &[u8]) -> bool {
        self.pending.extend_from_slice(bytes);
        let before = self.seen.clone();
        while let Some((end, skip)) = event_end(&self.pending) {
            let event: Vec<u8> = self.pending.drain(..end + skip).take(end).collect();
            self.event(&String::from_utf8_lossy(&event));
        }
        self.seen != before
    }

    pub(super) fn partial(&self) -> &Partial {
        &self.seen
    }

    /// The error the server sent in the stream, if it sent one.
    pub(super) fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }

    /// The completion the chunks make, as a server that does not stream would have sent it.
    pub(super) fn completion(mut self) -> Value {
        // A last event not followed by a blank line still counts.
        if !self.pending.is_empty() {
            let rest = std::mem::take(&mut self.pending);
            self.event(&String::from_utf8_lossy(&rest));
        }
        let mut message = Map::new();
        message.insert("role".into(), json!("assistant"));
        message.insert("content".into(), json!(self.seen.content));
        let calls: Vec<&CallParts> = self
            .calls
            .iter()
            .filter(|call| !(call.name.is_empty() && call.arguments.is_empty()))
            .collect();
        if !calls.is_empty() {
            let calls = calls.into_iter().map(|call| {
                json!({
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.arguments},
                })
            });
            message.insert("tool_calls".into(), Value::Array(calls.collect()));
        }
        let mut completion = self.accounts;
        completion.insert(
            "choices".into(),
            json!([{"index": 0, "message": Value::Object(message)}]),
        );
        Value::Object(completion)
    }

    pub(super) fn is_done(&self) -> bool {
        self.done
    }

    /// One event: its `data:` lines joined, as the SSE format says; comments and other
    /// fields are not the completion's.
    fn event(&mut self, event: &str) {
        let data: Vec<&str> = event
            .lines()
            .filter_map(|line| line.strip_prefix("data:"))
            .map(|data| data.strip_prefix(' ').unwrap_or(data))
            .collect();
        if data.is_empty() {
            return;
        }
        let data = data.join("\n");
        if data.trim() == "[DONE]" {
            self.done = true;
            return;
        }
        match serde_json::from_str::<Value>(&data) {
            Ok(chunk) => self.chunk(&chunk),
            Err(e) => {
                tracing::warn!(error = %e, "a streamed chunk is not JSON; it is left out");
            }
        }
    }

    fn chunk(&mut self, chunk: &Value) {
        if let Some(error) = chunk.get("error") {
            let message = error.get("message").unwrap_or(error);
            self.error = Some(
                message
                    .as_str()
                    .map_or_else(|| message.to_string(), str::to_owned),
            );
            return;
        }
        for key in ["usage", "timings"] {
            if let Some(account) = chunk.get(key).filter(|v| v.is_object()) {
                self.accounts.insert(key.into(), account.clone());
            }
        }
        let Some(delta) = chunk.pointer("/choices/0/delta") else {
            return;
        };
        if let Some(text) = delta.get("content").and_then(Value::as_str) {
            self.seen.content.push_str(text);
        }
        for (at, call) in delta
            .get("tool_calls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            let index = call
                .get("index")
                .and_then(Value::as_u64)
                .map_or(at, |i| i as usize);
            // A server may skip indexes: what comes is kept in order, gaps are left out of
            // the completion; an index past any real reply's is not the model's.
            if index > 64 {
                continue;
            }
            while self.calls.len() <= index {
                self.calls.push(CallParts::default());
            }
            let parts = &mut self.calls[index];
            if let Some(id) = call.get("id").and_then(Value::as_str) {
                parts.id.push_str(id);
            }
            if let Some(name) = call.pointer("/function/name").and_then(Value::as_str) {
                parts.name.push_str(name);
            }
            match call.pointer("/function/arguments") {
                Some(Value::String(more)) => parts.arguments.push_str(more),
                Some(Value::Object(whole)) => {
                    parts.arguments = Value::Object(whole.clone()).to_string();
                }
                _ => {}
            }
        }
        if self.seen.calling.is_none()
            && let Some(first) = self.calls.iter().find(|c| !c.name.is_empty())
        {
            self.seen.calling = Some(first.name.clone());
        }
    }
}

/// Where the first event in `bytes` ends, and the length of the blank line that ends it.
fn event_end(bytes: &[u8]) -> Option<(usize, usize)> {
    let lf = find(bytes, b"\n\n").map(|at| (at, 2));
    let crlf = find(bytes, b"\r\n\r\n").map(|at| (at, 4));
    match (lf, crlf) {
        (Some(a), Some(b)) => Some(if a.0 <= b.0 { a } else { b }),
        (a, b) => a.or(b),
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack
        .windows(needle.len())
        .position(|window| window == needle)
}
