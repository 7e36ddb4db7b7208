//! A mock OpenAI-compatible chat-completions server on 127.0.0.1: it answers with whatever
//! its "brain" decides for each request, after an optional latency, and keeps every request
//! it got and when. One made to stream answers a `stream: true` request with the brain's
//! completion cut into server-sent chunks, a few characters each, one every `pace`. The
//! benchmarks include this file too (`benches/host.rs`).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Json;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

pub type Brain = Arc<dyn Fn(&Value) -> Value + Send + Sync>;

pub struct MockModel {
    pub url: String,
    log: Arc<Mutex<RequestLog>>,
    shutdown: CancellationToken,
}

impl Drop for MockModel {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

/// Every request, and when requests came and answers left.
#[derive(Default)]
struct RequestLog {
    requests: Vec<Value>,
    /// Time from each request's arrival to its answer, summed: the model time as it really
    /// was (a 100 ms sleep takes a little longer than 100 ms).
    answering: Duration,
    first_request: Option<Instant>,
    last_reply: Option<Instant>,
}

/// What the mock model saw, in time since a start the caller chose.
#[allow(dead_code, reason = "the benchmarks' concurrency report reads it")]
pub struct ModelSeen {
    pub requests: usize,
    pub answering: Duration,
    pub first_request: Duration,
    pub last_reply: Duration,
}

#[derive(Clone)]
struct Shared {
    brain: Brain,
    latency: Duration,
    /// Streams a `stream: true` request's answer, a chunk every so often.
    pace: Option<Duration>,
    /// Holds each streamed answer's last chunk until told to let it go.
    hold: Option<Arc<tokio::sync::Notify>>,
    log: Arc<Mutex<RequestLog>>,
}

impl MockModel {
    pub async fn start(brain: Brain) -> Self {
        Self::with_latency(Duration::ZERO, brain).await
    }

    /// A model that takes `latency` to answer each request.
    pub async fn with_latency(latency: Duration, brain: Brain) -> Self {
        Self::serve(latency, None, None, brain).await
    }

    /// A model that streams what `brain` answers when asked to, a chunk every `pace`; asked
    /// for a whole reply, it sends the whole reply.
    #[allow(dead_code, reason = "the benchmarks use the other constructors")]
    pub async fn streaming(pace: Duration, brain: Brain) -> Self {
        Self::serve(Duration::ZERO, Some(pace), None, brain).await
    }

    /// A streaming model that holds each answer's last chunk until `hold` is notified: what
    /// came before it is all the desk can have seen.
    #[allow(dead_code, reason = "the benchmarks use the other constructors")]
    pub async fn streaming_held(
        pace: Duration,
        hold: Arc<tokio::sync::Notify>,
        brain: Brain,
    ) -> Self {
        Self::serve(Duration::ZERO, Some(pace), Some(hold), brain).await
    }

    async fn serve(
        latency: Duration,
        pace: Option<Duration>,
        hold: Option<Arc<tokio::sync::Notify>>,
        brain: Brain,
    ) -> Self {
        let log = Arc::new(Mutex::new(RequestLog::default()));
        let shared = Shared {
            brain,
            latency,
            pace,
            hold,
            log: Arc::clone(&log),
        };
        let app = axum::Router::new()
            .route("/v1/chat/completions", post(complete))
            .with_state(shared);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind loopback");
        let url = format!("http://{}/v1", listener.local_addr().expect("address"));
        let shutdown = CancellationToken::new();
        let stop = shutdown.clone();
        tokio::spawn(async move {
            let _ = axum::serve(listener, app)
                .with_graceful_shutdown(stop.cancelled_owned())
                .await;
        });
        Self { url, log, shutdown }
    }

    pub fn requests(&self) -> Vec<Value> {
        self.log.lock().expect("request log lock").requests.clone()
    }

    /// How many requests came and when, measured from `started`.
    #[allow(dead_code, reason = "the benchmarks' concurrency report reads it")]
    pub fn seen(&self, started: Instant) -> ModelSeen {
        let log = self.log.lock().expect("request log lock");
        let since =
            |at: Option<Instant>| at.map_or(Duration::ZERO, |at| at.duration_since(started));
        ModelSeen {
            requests: log.requests.len(),
            answering: log.answering,
            first_request: since(log.first_request),
            last_reply: since(log.last_reply),
        }
    }
}

async fn complete(State(shared): State<Shared>, Json(request): Json<Value>) -> Response {
    let arrived = Instant::now();
    {
        let mut log = shared.log.lock().expect("request log lock");
        log.requests.push(request.clone());
        log.first_request.get_or_insert(arrived);
    }
    if !shared.latency.is_zero() {
        tokio::time::sleep(shared.latency).await;
    }
    let mut reply = (shared.brain)(&request);
    // A brain that wants the model to hang on this request says for how long.
    if let Some(secs) = reply["hang_for_secs"].as_u64() {
        tokio::time::sleep(Duration::from_secs(secs)).await;
        reply = words("(answered after hanging)");
    }
    if let Some(pace) = shared.pace
        && request["stream"] == json!(true)
    {
        return streamed(&reply, pace, shared.hold, shared.log, arrived);
    }
    let answered = Instant::now();
    let mut log = shared.log.lock().expect("request log lock");
    log.answering += answered.duration_since(arrived);
    log.last_reply = Some(answered);
    Json(reply).into_response()
}

/// `completion` as server-sent `chat.completion.chunk`s: its words and its call's arguments
/// four characters a chunk, the call's id and name in the call's first chunk, then `[DONE]`;
/// one chunk every `pace`. The log notes the answer when its last chunk has left.
fn streamed(
    completion: &Value,
    pace: Duration,
    hold: Option<Arc<tokio::sync::Notify>>,
    log: Arc<Mutex<RequestLog>>,
    arrived: Instant,
) -> Response {
    let message = &completion["choices"][0]["message"];
    let pieces = |text: &str| -> Vec<String> {
        let chars: Vec<char> = text.chars().collect();
        chars.chunks(4).map(|c| c.iter().collect()).collect()
    };
    let chunk = |delta: Value| json!({"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta}]});
    let mut chunks = vec![chunk(json!({"role": "assistant"}))];
    for piece in pieces(message["content"].as_str().unwrap_or_default()) {
        chunks.push(chunk(json!({"content": piece})));
    }
    if let Some(call) = message.pointer("/tool_calls/0") {
        chunks.push(chunk(json!({"tool_calls": [{
            "index": 0, "id": call["id"], "type": "function",
            "function": {"name": call["function"]["name"], "arguments": ""},
        }]})));
        for piece in pieces(call["function"]["arguments"].as_str().unwrap_or_default()) {
            chunks.push(chunk(
                json!({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]}),
            ));
        }
    }
    let finish = completion["choices"][0]["finish_reason"].clone();
    chunks.push(json!({"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]}));
    let mut events: VecDeque<String> = chunks
        .into_iter()
        .map(|c| format!("data: {c}\n\n"))
        .collect();
    events.push_back("data: [DONE]\n\n".to_owned());
    let body = futures_util::stream::unfold(events, move |mut events| {
        let (log, hold) = (Arc::clone(&log), hold.clone());
        async move {
            let event = events.pop_front()?;
            // The finish chunk and [DONE] are what is left: the answer ends with them.
            if events.len() == 1
                && let Some(hold) = hold
            {
                hold.notified().await;
            }
            tokio::time::sleep(pace).await;
            if events.is_empty() {
                let answered = Instant::now();
                let mut log = log.lock().expect("request log lock");
                log.answering += answered.duration_since(arrived);
                log.last_reply = Some(answered);
            }
            Some((Ok::<_, std::convert::Infallible>(event), events))
        }
    });
    (
        [(axum::http::header::CONTENT_TYPE, "text/event-stream")],
        axum::body::Body::from_stream(body),
    )
        .into_response()
}

/// A completion holding one native tool call.
pub fn call(wire_name: &str, arguments: Value) -> Value {
    call_raw(wire_name, &arguments.to_string())
}

/// A completion whose tool call carries `arguments` exactly as given (maybe not JSON).
pub fn call_raw(wire_name: &str, arguments: &str) -> Value {
    json!({
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "choices": [{
            "index": 0,
            "finish_reason": "tool_calls",
            "message": {
                "role": "assistant",
                "content": null,
                "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": wire_name, "arguments": arguments}}]
            }
        }]
    })
}

/// A completion in words.
pub fn words(text: &str) -> Value {
    json!({
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}]
    })
}

/// Answers with `replies` in order, then with a plain closing reply.
pub fn scripted(replies: Vec<Value>) -> Brain {
    let queue = Mutex::new(VecDeque::from(replies));
    Arc::new(move |_request: &Value| {
        queue
            .lock()
            .expect("script lock")
            .pop_front()
            .unwrap_or_else(|| words("Thank you for your patience; we have looked into it."))
    })
}

/// A model that works any ticket: it lists the customer's orders, then replies.
pub fn queue_worker() -> Brain {
    Arc::new(|request: &Value| {
        let messages = request["messages"].as_array().cloned().unwrap_or_default();
        if tool_has_answered(&messages) {
            return words(
                "Thank you for writing. I have looked up your orders and a colleague will follow up.",
            );
        }
        let ticket = first_user_message(&messages);
        let customer = ticket
            .split_whitespace()
            .find(|w| w.starts_with("C-"))
            .map(|w| w.trim_end_matches([',', '.', ')']))
            .unwrap_or("C-0000");
        call("shop__find_orders", json!({"customer_id": customer}))
    })
}

/// Whether a tool has answered yet: a `tool` message, or a user message under text_calls.
pub fn tool_has_answered(messages: &[Value]) -> bool {
    messages.iter().any(|m| {
        m["role"] == "tool"
            || m["content"]
                .as_str()
                .is_some_and(|c| c.starts_with("<tool_response"))
    })
}

/// The first user message of a conversation: the ticket.
pub fn first_user_message(messages: &[Value]) -> &str {
    messages
        .iter()
        .find(|m| m["role"] == "user")
        .and_then(|m| m["content"].as_str())
        .unwrap_or("")
}

/// The system prompt of a request.
pub fn system_prompt(request: &Value) -> String {
    request["messages"][0]["content"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// The tool messages of a request, as sent to the model.
pub fn tool_messages(request: &Value) -> Vec<String> {
    request["messages"]
        .as_array()
        .map(|m| {
            m.iter()
                .filter(|m| {
                    m["role"] == "tool"
                        || (m["role"] == "user"
                            && m["content"]
                                .as_str()
                                .is_some_and(|c| c.starts_with("<tool_response")))
                })
                .filter_map(|m| m["content"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// The quote ID in a `quote_refund` tool message (the block's second line is the tool's JSON
/// answer), or null.
pub fn quote_id_in(tool_message: &str) -> Value {
    tool_message
        .lines()
        .nth(1)
        .and_then(|l| serde_json::from_str::<Value>(l).ok())
        .map(|quote| quote["quote_id"].clone())
        .unwrap_or_default()
}

/// Quotes a refund of one order line, issues it with the quote_id the shop returned, then
/// answers with `reply`.
pub fn quote_then_issue(order_id: String, sku: String, reply: &'static str) -> Brain {
    Arc::new(move |request: &Value| {
        let tools = tool_messages(request);
        match tools.len() {
            0 => call(
                "shop__quote_refund",
                json!({"order_id": order_id, "sku": sku, "reason": "broken"}),
            ),
            1 => call(
                "shop__issue_refund",
                json!({"quote_id": quote_id_in(&tools[0])}),
            ),
            _ => words(reply),
        }
    })
}
