//! A client for OpenAI-compatible chat completions (llama-server, Ollama, vLLM, OpenAI).
//!
//! The recipe says how tool calls travel. `NativeTools` sends `tools` and reads `tool_calls`,
//! falling back to a call written in the text. `LlamaCppPrefill` does the same but, while a
//! call is due (no tool has answered with a result yet), starts the model's turn with
//! `<tool_call>` and stops at `</tool_call>`, so a small model cannot wander off; after a
//! result the model chooses between another call (a refund after its quote) and its reply. `TextCalls` sends no tools (the host's system prompt lists
//! them) and reads calls from the text. Names go out as wire names and come back canonical;
//! a name matching no tool is passed through unchanged, for the host to report as unknown.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Map, Value, json};

use super::chat::{ChatRequest, Message, Reply, ToolCall, ToolSpec};
use super::textcalls::{parse_text_call, write_text_call};

const PREFILL: &str = "<tool_call>\n";
const STOP_AT: &str = "</tool_call>";
const ERROR_MESSAGE_CHARS: usize = 300;
const START_A_SERVER: &str = "is it running? (scripts/local-model.sh starts one)";
const OBJECT_HINT: &str = "send them as one JSON object like {\"key\": \"value\"}";

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Recipe {
    NativeTools,
    LlamaCppPrefill,
    TextCalls,
}

impl Recipe {
    pub fn as_str(self) -> &'static str {
        match self {
            Recipe::NativeTools => "native_tools",
            Recipe::LlamaCppPrefill => "llama_cpp_prefill",
            Recipe::TextCalls => "text_calls",
        }
    }
}

/// Sampling settings; each is sent only when set.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, Default)]
pub struct Sampling {
    pub temperature: Option<f32>,
    pub seed: Option<u64>,
    pub max_tokens: Option<u32>,
}

/// Why a model could not be asked. Each message says what to try next.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    #[error("could not reach the model server at {url} ({detail}); {START_A_SERVER}")]
    Unreachable { url: String, detail: String },
    /// The TLS handshake refused the server (its certificate, or no TLS at all).
    #[error("the model server at {url}: {advice}")]
    Certificate { url: String, advice: String },
    /// The client could not be set up (an unreadable `ca_file`).
    #[error("the model client could not be set up: {0}")]
    Setup(#[from] crate::tls::TlsSetupError),
    #[error(
        "the model server at {url} did not answer within {} s; {START_A_SERVER} \
         A slow model may need a longer timeout.",
        timeout.as_secs_f64()
    )]
    Timeout { url: String, timeout: Duration },
    #[error(
        "the model server at {url} answered HTTP {status}: {message}; check the model name, \
         the API key and the server's log"
    )]
    Status {
        url: String,
        status: u16,
        message: String,
    },
    #[error(
        "the model server at {url} sent something that is not a chat completion ({detail}); \
         is the base URL the server's /v1 endpoint?"
    )]
    Unreadable { url: String, detail: String },
}

/// How long the server may take to answer at all before a run gives up on it.
const REACH_TIMEOUT: Duration = Duration::from_secs(10);

pub struct OpenAiChat {
    base_url: String,
    model: String,
    api_key: Option<String>,
    recipe: Recipe,
    sampling: Sampling,
    timeout: Duration,
    ca_file: Option<PathBuf>,
    http: reqwest::Client,
}

// By hand, so the API key never reaches a log.
impl std::fmt::Debug for OpenAiChat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.describe())
    }
}

impl OpenAiChat {
    /// `base_url` like `http://127.0.0.1:8080/v1` or `https://…/v1`; requests go to
    /// `{base}/chat/completions`. An `https://` server's certificate must chain to the
    /// system's roots or to a CA in `ca_file`.
    pub fn new(
        base_url: &str,
        model: &str,
        api_key: Option<String>,
        recipe: Recipe,
        sampling: Sampling,
        timeout: Duration,
        ca_file: Option<&Path>,
    ) -> Result<Self, ModelError> {
        let base_url = base_url.trim_end_matches('/').to_owned();
        let http = crate::tls::http_client(ca_file)?;
        Ok(Self {
            base_url,
            model: model.to_owned(),
            api_key,
            recipe,
            sampling,
            timeout,
            ca_file: ca_file.map(Path::to_owned),
            http,
        })
    }

    /// What this model is, without the key: `openai:http://…/v1 model m (recipe native_tools)`.
    pub fn describe(&self) -> String {
        let (base, model, recipe) = (&self.base_url, &self.model, self.recipe.as_str());
        format!("openai:{base} model {model} (recipe {recipe})")
    }

    /// Whether the server answers at all (any HTTP status will do: `GET {base}/models`), so
    /// a run can fail at once, naming the URL, instead of failing every ticket.
    pub async fn reachable(&self) -> Result<(), ModelError> {
        let mut request = self
            .http
            .get(format!("{}/models", self.base_url))
            .timeout(REACH_TIMEOUT);
        if let Some(key) = &self.api_key {
            request = request.bearer_auth(key);
        }
        match request.send().await {
            Ok(_) => Ok(()),
            Err(error) => Err(self.failed(error)),
        }
    }

    pub async fn reply(&self, request: &ChatRequest) -> Result<Reply, ModelError> {
        let prefill = self.recipe == Recipe::LlamaCppPrefill
            && !request.tools.is_empty()
            && tool_call_is_due(&request.messages);
        let completion = self.post(&self.request_body(request, prefill)).await?;
        read_reply(&completion, &request.tools, prefill).ok_or_else(|| ModelError::Unreadable {
            url: self.base_url.clone(),
            detail: "the answer has no choices[0].message".into(),
        })
    }

    fn request_body(&self, request: &ChatRequest, prefill: bool) -> Value {
        let mut messages: Vec<Value> = request
            .messages
            .iter()
            .map(|message| self.render(message, &request.tools))
            .collect();
        if prefill {
            messages.push(json!({"role": "assistant", "content": PREFILL}));
        }
        let tools = Value::Array(request.tools.iter().map(tool_param).collect());
        let tool_fields = match self.recipe {
            Recipe::TextCalls => vec![],
            Recipe::NativeTools | Recipe::LlamaCppPrefill if request.tools.is_empty() => vec![],
            Recipe::NativeTools => vec![("tools", tools), ("tool_choice", json!("auto"))],
            Recipe::LlamaCppPrefill if prefill => vec![
                ("tools", tools),
                ("tool_choice", json!("required")),
                ("parallel_tool_calls", json!(false)),
                ("stop", json!([STOP_AT])),
            ],
            Recipe::LlamaCppPrefill => vec![("tools", tools), ("tool_choice", json!("auto"))],
        };
        // Through its decimal text, so 0.2f32 goes out as 0.2 and not 0.20000000298….
        let decimal = |t: f32| t.to_string().parse().unwrap_or(f64::from(t));
        let sampling = [
            (
                "temperature",
                self.sampling.temperature.map(decimal).map(Value::from),
            ),
            ("seed", self.sampling.seed.map(Value::from)),
            ("max_tokens", self.sampling.max_tokens.map(Value::from)),
        ];
        let fields = [
            ("model", json!(self.model)),
            ("messages", Value::Array(messages)),
        ]
        .into_iter()
        .chain(tool_fields)
        .chain(
            sampling
                .into_iter()
                .filter_map(|(key, value)| Some((key, value?))),
        );
        Value::Object(fields.map(|(key, value)| (key.to_owned(), value)).collect())
    }

    fn render(&self, message: &Message, tools: &[ToolSpec]) -> Value {
        let text_calls = self.recipe == Recipe::TextCalls;
        match message {
            Message::System { content } => json!({"role": "system", "content": content}),
            Message::User { content } => json!({"role": "user", "content": content}),
            Message::Assistant {
                content,
                tool_call: None,
            } => {
                json!({"role": "assistant", "content": content})
            }
            Message::Assistant {
                content,
                tool_call: Some(call),
            } if text_calls => {
                let written = write_text_call(&call.name, &call.arguments);
                let content = match content.trim() {
                    "" => written,
                    words => format!("{words}\n{written}"),
                };
                json!({"role": "assistant", "content": content})
            }
            Message::Assistant {
                content,
                tool_call: Some(call),
            } => json!({
                "role": "assistant",
                "content": if content.is_empty() { Value::Null } else { json!(content) },
                "tool_calls": [{
                    "id": call.id,
                    "type": "function",
                    "function": {
                        "name": wire_name(&call.name, tools),
                        "arguments": Value::Object(call.arguments.clone()).to_string(),
                    },
                }],
            }),
            Message::Tool { content, .. } if text_calls => {
                json!({"role": "user", "content": content})
            }
            Message::Tool {
                call_id, content, ..
            } => {
                json!({"role": "tool", "tool_call_id": call_id, "content": content})
            }
        }
    }

    async fn post(&self, body: &Value) -> Result<Value, ModelError> {
        let url = &self.base_url;
        let request = self
            .http
            .post(format!("{url}/chat/completions"))
            .timeout(self.timeout);
        let request = match &self.api_key {
            Some(key) => request.bearer_auth(key),
            None => request,
        };
        let response = request
            .json(body)
            .send()
            .await
            .map_err(|error| self.failed(error))?;
        let status = response.status();
        let text = response.text().await.map_err(|error| self.failed(error))?;
        if !status.is_success() {
            let (url, status, message) = (url.clone(), status.as_u16(), error_message(&text));
            return Err(ModelError::Status {
                url,
                status,
                message,
            });
        }
        serde_json::from_str(&text).map_err(|error| ModelError::Unreadable {
            url: url.clone(),
            detail: format!("{error}; it began {:?}", truncate(&text, 120)),
        })
    }

    fn failed(&self, error: reqwest::Error) -> ModelError {
        let (url, timeout, detail) = (self.base_url.clone(), self.timeout, root_cause(&error));
        if let Some(problem) = crate::tls::CertProblem::find(&error) {
            let advice = problem.advice("[model]", self.ca_file.as_deref());
            return ModelError::Certificate { url, advice };
        }
        if error.is_timeout() {
            ModelError::Timeout { url, timeout }
        } else if error.is_connect() || error.is_request() {
            ModelError::Unreachable { url, detail }
        } else {
            ModelError::Unreadable { url, detail }
        }
    }
}

/// A call is due only before any tool has answered: the first turn. After a result or an
/// error the model chooses, so it can answer in words instead of repeating a failed call.
fn tool_call_is_due(messages: &[Message]) -> bool {
    !messages
        .iter()
        .any(|message| matches!(message, Message::Tool { .. }))
}

fn tool_param(tool: &ToolSpec) -> Value {
    let (name, description) = (&tool.wire_name, &tool.description);
    let function =
        json!({"name": name, "description": description, "parameters": tool.input_schema});
    json!({"type": "function", "function": function})
}

fn wire_name<'a>(name: &'a str, tools: &'a [ToolSpec]) -> &'a str {
    let tool = tools.iter().find(|tool| tool.name == name);
    tool.map_or(name, |tool| &tool.wire_name)
}

/// Canonical name for a wire or canonical name; anything else unchanged, never guessed.
fn canonical_name(name: &str, tools: &[ToolSpec]) -> String {
    let tool = tools.iter().find(|tool| tool.wire_name == name);
    tool.map_or(name, |tool| &tool.name).to_owned()
}

/// The reply in `choices[0].message`; `None` when the completion has none.
fn read_reply(completion: &Value, tools: &[ToolSpec], prefilled: bool) -> Option<Reply> {
    let message = completion.pointer("/choices/0/message")?;
    let content = str_at(message, "/content").unwrap_or_default();
    if let Some(call) = message.pointer("/tool_calls/0") {
        let id = str_at(call, "/id").filter(|id| !id.is_empty());
        let id = id.map_or_else(fresh_call_id, str::to_owned);
        let name = str_at(call, "/function/name").unwrap_or_default();
        let arguments = call.pointer("/function/arguments").unwrap_or(&Value::Null);
        let raw = || {
            arguments
                .as_str()
                .map_or_else(|| arguments.to_string(), str::to_owned)
        };
        if name.is_empty() {
            let problem = "the tool call has no function name; name one of the tools offered";
            return Some(Reply::Malformed {
                raw: raw(),
                problem: problem.into(),
            });
        }
        let name = canonical_name(name, tools);
        return Some(match native_arguments(&name, arguments) {
            Ok(arguments) => Reply::Call {
                call: ToolCall {
                    id,
                    name,
                    arguments,
                },
                content: content.into(),
                dropped: message
                    .pointer("/tool_calls")
                    .and_then(Value::as_array)
                    .map_or(0, |calls| calls.len().saturating_sub(1)),
            },
            Err(problem) => Reply::Malformed {
                raw: raw(),
                problem,
            },
        });
    }
    // The server keeps the prefill to itself: the content is what came after it.
    let text = if prefilled && !content.trim_start().starts_with(PREFILL.trim()) {
        format!("{PREFILL}{content}")
    } else {
        content.to_owned()
    };
    Some(match parse_text_call(&text) {
        None => Reply::Words { content: text },
        Some(Ok(call)) => {
            let (id, name) = (fresh_call_id(), canonical_name(&call.name, tools));
            let call_made = ToolCall {
                id,
                name,
                arguments: call.arguments,
            };
            Reply::Call {
                call: call_made,
                content: call.words,
                dropped: call.dropped,
            }
        }
        Some(Err(problem)) => Reply::Malformed { raw: text, problem },
    })
}

fn str_at<'a>(value: &'a Value, pointer: &str) -> Option<&'a str> {
    value.pointer(pointer).and_then(Value::as_str)
}

/// Arguments arrive as a JSON string (some servers send an object, or "" for none).
fn native_arguments(name: &str, arguments: &Value) -> Result<Map<String, Value>, String> {
    let parsed = match arguments {
        Value::Null => Value::Object(Map::new()),
        Value::String(text) if text.trim().is_empty() => Value::Object(Map::new()),
        Value::String(text) => serde_json::from_str(text).map_err(|error| {
            format!("the arguments of {name} are not valid JSON ({error}); {OBJECT_HINT}")
        })?,
        other => other.clone(),
    };
    match parsed {
        Value::Object(arguments) => Ok(arguments),
        _ => Err(format!(
            "the arguments of {name} are not a JSON object; {OBJECT_HINT}"
        )),
    }
}

fn fresh_call_id() -> String {
    format!("call_{:08x}", rand::random::<u32>())
}

/// The server's words from an error body: `{"error": {"message"}}`, `{"error": "…"}`,
/// `{"message"}`, or else the body itself; cut to a readable length.
fn error_message(body: &str) -> String {
    let parsed = serde_json::from_str::<Value>(body).ok();
    let message = parsed.as_ref().and_then(|value| {
        let error = value.get("error");
        let nested = error.and_then(|error| error.get("message"));
        nested
            .or(error)
            .or_else(|| value.get("message"))
            .and_then(Value::as_str)
    });
    match message.unwrap_or(body).trim() {
        "" => "(empty body)".to_owned(),
        message => truncate(message, ERROR_MESSAGE_CHARS),
    }
}

fn truncate(text: &str, max_chars: usize) -> String {
    match text.char_indices().nth(max_chars) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_owned(),
    }
}

/// reqwest's own message names only the URL; the cause at the bottom says what happened.
fn root_cause(error: &reqwest::Error) -> String {
    let mut cause: &dyn std::error::Error = error;
    while let Some(source) = cause.source() {
        cause = source;
    }
    cause.to_string()
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use axum::extract::State;
    use axum::http::{HeaderMap, StatusCode};
    use axum::{Json, Router, routing::post};

    use super::*;

    /// Each request the mock saw: its Authorization header and its body.
    type Seen = Arc<Mutex<Vec<(Option<String>, Value)>>>;
    type Script = (Seen, u16, Value, Duration);

    const BLOCK: &str =
        "<tool_response tool=\"shop.get_order_status\" outcome=\"result\">\n{}\n</tool_response>";
    const TEN_SECONDS: Duration = Duration::from_secs(10);

    /// A chat-completions server on 127.0.0.1 that records requests and answers as scripted.
    async fn mock(status: u16, answer: Value, delay: Duration) -> (String, Seen) {
        let seen = Seen::default();
        let handler = |State((seen, status, answer, delay)): State<Script>,
                       headers: HeaderMap,
                       Json(body): Json<Value>| async move {
            let auth = headers.get("authorization").and_then(|v| v.to_str().ok());
            let request = (auth.map(str::to_owned), body);
            seen.lock().expect("the mock never panics").push(request);
            tokio::time::sleep(delay).await;
            let status = StatusCode::from_u16(status).expect("scripted statuses are valid");
            (status, Json(answer))
        };
        let app = Router::new()
            .route("/v1/chat/completions", post(handler))
            .with_state((seen.clone(), status, answer, delay));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await;
        let listener = listener.expect("a free port on 127.0.0.1");
        let url = format!("http://{}/v1/", listener.local_addr().expect("bound"));
        tokio::spawn(async move { axum::serve(listener, app).await });
        (url, seen)
    }

    fn answer(message: Value) -> Value {
        json!({"choices": [{"index": 0, "message": message, "finish_reason": "stop"}]})
    }

    fn client(url: &str, recipe: Recipe) -> OpenAiChat {
        OpenAiChat::new(
            url,
            "qwen",
            None,
            recipe,
            Sampling::default(),
            TEN_SECONDS,
            None,
        )
        .expect("a plain http client")
    }

    /// The host's conversation, written as its JSON.
    fn request(messages: Value) -> ChatRequest {
        serde_json::from_value(json!({"messages": messages, "tools": [{
            "name": "shop.get_order_status", "wire_name": "shop__get_order_status",
            "description": "Where an order is", "input_schema": {"type": "object"},
        }]}))
        .expect("a valid request")
    }

    fn first_turn() -> Value {
        json!([{"role": "system", "content": "Be kind."}, {"role": "user", "content": "O-1?"}])
    }

    /// The first turn, a call of shop.get_order_status, and the host's answer to it.
    fn after(outcome: &str) -> Value {
        let mut messages = first_turn();
        let call = json!({"id": "call_1", "name": "shop.get_order_status", "arguments": {"order_id": "O-1"}});
        let answer = BLOCK.replace("\"result\"", &format!("\"{outcome}\""));
        let turns = messages.as_array_mut().expect("a list");
        turns.push(json!({"role": "assistant", "content": "Checking.", "tool_call": call}));
        turns.push(json!({"role": "tool", "call_id": "call_1", "name": "shop.get_order_status", "content": answer}));
        messages
    }

    async fn ask(model: &OpenAiChat, messages: Value) -> Result<Reply, ModelError> {
        model.reply(&request(messages)).await
    }

    fn first_seen(seen: &Seen) -> (Option<String>, Value) {
        seen.lock().expect("the mock never panics")[0].clone()
    }

    /// One reply from a mock answering `message`, and the request body the mock got.
    async fn exchange(recipe: Recipe, messages: Value, message: Value) -> (Reply, Value) {
        let (url, seen) = mock(200, answer(message), Duration::ZERO).await;
        let reply = ask(&client(&url, recipe), messages).await.expect("a reply");
        (reply, first_seen(&seen).1)
    }

    /// A reply as the host's JSON; an `id` of "fresh" stands for one the client made up.
    fn reply(expected: Value) -> Reply {
        serde_json::from_value(expected).expect("a valid reply")
    }

    fn blank_fresh_id(mut reply: Reply) -> Reply {
        if let Reply::Call { call, .. } = &mut reply {
            assert!(call.id.starts_with("call_"), "a made-up id: {}", call.id);
            call.id = "fresh".into();
        }
        reply
    }

    fn order_call(id: &str, words: &str) -> Reply {
        let call =
            json!({"id": id, "name": "shop.get_order_status", "arguments": {"order_id": "O-1"}});
        reply(json!({"kind": "call", "call": call, "content": words}))
    }

    #[tokio::test]
    async fn a_native_call_comes_back_under_its_canonical_name() {
        let function =
            json!({"name": "shop__get_order_status", "arguments": "{\"order_id\":\"O-1\"}"});
        let message = json!({"content": null, "tool_calls": [{"id": "call_9", "type": "function", "function": function}]});
        let (url, seen) = mock(200, answer(message), Duration::ZERO).await;
        let mut model = client(&url, Recipe::NativeTools);
        (model.sampling.temperature, model.sampling.seed) = (Some(0.2), Some(7));
        model.sampling.max_tokens = Some(256);
        let got = ask(&model, after("tool error")).await.expect("a reply");
        assert_eq!(got, order_call("call_9", ""));
        let (_, body) = first_seen(&seen);
        let function =
            json!({"name": "shop__get_order_status", "arguments": "{\"order_id\":\"O-1\"}"});
        assert_eq!(
            body,
            json!({
                "model": "qwen",
                "messages": [
                    {"role": "system", "content": "Be kind."},
                    {"role": "user", "content": "O-1?"},
                    {"role": "assistant", "content": "Checking.", "tool_calls": [{"id": "call_1", "type": "function", "function": function}]},
                    {"role": "tool", "tool_call_id": "call_1", "content": BLOCK.replace("\"result\"", "\"tool error\"")},
                ],
                "tools": [{"type": "function", "function": {"name": "shop__get_order_status", "description": "Where an order is", "parameters": {"type": "object"}}}],
                "tool_choice": "auto",
                "temperature": 0.2,
                "seed": 7,
                "max_tokens": 256,
            })
        );
    }

    #[tokio::test]
    async fn plain_content_comes_back_as_words() {
        let message = json!({"role": "assistant", "content": "It shipped today."});
        let (got, _) = exchange(Recipe::NativeTools, first_turn(), message).await;
        assert_eq!(
            got,
            reply(json!({"kind": "words", "content": "It shipped today."}))
        );
    }

    #[tokio::test]
    async fn a_fenced_call_in_the_content_is_read_with_native_tools() {
        let content = "Let me look.\n```json\n{\"name\": \"shop__get_order_status\", \"arguments\": {\"order_id\": \"O-1\"}}\n```";
        let (got, _) = exchange(
            Recipe::NativeTools,
            first_turn(),
            json!({"content": content}),
        )
        .await;
        assert_eq!(blank_fresh_id(got), order_call("fresh", "Let me look."));
    }

    #[tokio::test]
    async fn arguments_that_are_not_an_object_come_back_malformed() {
        let hint = "send them as one JSON object like {\"key\": \"value\"}";
        for (raw, problem) in [
            (
                "{\"order_id\": ",
                "are not valid JSON (EOF while parsing a value at line 1 column 13)",
            ),
            ("[\"O-1\"]", "are not a JSON object"),
        ] {
            let function = json!({"name": "shop__get_order_status", "arguments": raw});
            let message = json!({"tool_calls": [{"id": "c", "function": function}]});
            let (got, _) = exchange(Recipe::NativeTools, first_turn(), message).await;
            let problem = format!("the arguments of shop.get_order_status {problem}; {hint}");
            assert_eq!(
                got,
                reply(json!({"kind": "malformed", "raw": raw, "problem": problem}))
            );
        }
    }

    #[tokio::test]
    async fn llama_cpp_prefill_forces_a_call_on_the_first_turn_only() {
        let content =
            "{\"name\": \"shop__get_order_status\", \"arguments\": {\"order_id\": \"O-1\"}}";
        {
            let messages = first_turn();
            let turns = messages.as_array().map_or(0, Vec::len);
            let (got, mut body) = exchange(
                Recipe::LlamaCppPrefill,
                messages,
                json!({"content": content}),
            )
            .await;
            assert_eq!(blank_fresh_id(got), order_call("fresh", ""));
            let sent = body["messages"].as_array_mut().expect("messages");
            assert_eq!(sent.len(), turns + 1);
            assert_eq!(
                sent.pop(),
                Some(json!({"role": "assistant", "content": "<tool_call>\n"}))
            );
            assert_eq!(
                (
                    &body["tool_choice"],
                    &body["parallel_tool_calls"],
                    &body["stop"]
                ),
                (&json!("required"), &json!(false), &json!(["</tool_call>"]))
            );
            assert_eq!(
                body["tools"][0]["function"]["name"],
                "shop__get_order_status"
            );
        }
    }

    #[tokio::test]
    async fn llama_cpp_prefill_lets_the_model_choose_once_a_tool_answered() {
        // After an error too: the model may answer in words instead of repeating the call.
        for outcome in ["result", "tool error", "failed"] {
            let message = json!({"content": "It shipped."});
            let (got, body) = exchange(Recipe::LlamaCppPrefill, after(outcome), message).await;
            assert_eq!(
                got,
                reply(json!({"kind": "words", "content": "It shipped."}))
            );
            assert_eq!(body["messages"].as_array().map(Vec::len), Some(4));
            assert_eq!(body["tool_choice"], "auto");
            assert_eq!(
                (body.get("stop"), body.get("parallel_tool_calls")),
                (None, None)
            );
        }
    }

    #[tokio::test]
    async fn text_calls_send_tool_answers_as_user_messages_and_no_tools() {
        let content = "<tool_call>\n{\"name\": \"shop.get_order_status\", \"arguments\": {\"order_id\": \"O-1\"}}";
        let (got, body) = exchange(
            Recipe::TextCalls,
            after("result"),
            json!({"content": content}),
        )
        .await;
        assert_eq!(blank_fresh_id(got), order_call("fresh", ""));
        let written = "Checking.\n<tool_call>\n{\"name\": \"shop.get_order_status\", \"arguments\": {\"order_id\":\"O-1\"}}\n</tool_call>";
        assert_eq!(
            body,
            json!({"model": "qwen", "messages": [
                {"role": "system", "content": "Be kind."},
                {"role": "user", "content": "O-1?"},
                {"role": "assistant", "content": written},
                {"role": "user", "content": BLOCK},
            ]})
        );
    }

    #[tokio::test]
    async fn an_unknown_wire_name_is_passed_through() {
        let function = json!({"name": "shop__cancel_everything", "arguments": "{}"});
        let message = json!({"tool_calls": [{"id": "c1", "function": function}]});
        let (got, _) = exchange(Recipe::NativeTools, first_turn(), message).await;
        let call = json!({"id": "c1", "name": "shop__cancel_everything", "arguments": {}});
        assert_eq!(
            got,
            reply(json!({"kind": "call", "call": call, "content": ""}))
        );
    }

    #[tokio::test]
    async fn the_api_key_goes_as_a_bearer_token_and_is_never_described() {
        let (url, seen) = mock(200, answer(json!({"content": "Hi"})), Duration::ZERO).await;
        let mut model = client(&url, Recipe::NativeTools);
        model.api_key = Some("sk-secret".to_owned());
        ask(&model, first_turn()).await.expect("a reply");
        assert_eq!(first_seen(&seen).0.as_deref(), Some("Bearer sk-secret"));
        let base = url.trim_end_matches('/');
        let described = format!("openai:{base} model qwen (recipe native_tools)");
        assert_eq!(
            (model.describe(), format!("{model:?}")),
            (described.clone(), described)
        );
    }

    #[tokio::test]
    async fn an_http_error_names_the_servers_message() {
        let body = json!({"error": {"message": "model 'qwen' not found", "code": 404}});
        let (url, _) = mock(500, body, Duration::ZERO).await;
        let error = ask(&client(&url, Recipe::NativeTools), first_turn()).await;
        let base = url.trim_end_matches('/');
        let expected = format!(
            "the model server at {base} answered HTTP 500: model 'qwen' not found; \
             check the model name, the API key and the server's log"
        );
        assert_eq!(error.expect_err("an HTTP error").to_string(), expected);
    }

    #[tokio::test]
    async fn a_refused_connection_is_a_model_error() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await;
        let port = listener
            .expect("a free port")
            .local_addr()
            .expect("bound")
            .port();
        let model = client(&format!("http://127.0.0.1:{port}/v1"), Recipe::NativeTools);
        let error = ask(&model, first_turn())
            .await
            .expect_err("nothing listens");
        assert!(matches!(error, ModelError::Unreachable { .. }), "{error:?}");
        let message = error.to_string();
        assert!(message.ends_with("is it running? (scripts/local-model.sh starts one)"));
    }

    #[tokio::test]
    async fn a_server_slower_than_the_timeout_is_a_timeout() {
        let slow = Duration::from_secs(5);
        let (url, _) = mock(200, answer(json!({"content": "late"})), slow).await;
        let mut model = client(&url, Recipe::NativeTools);
        model.timeout = Duration::from_millis(200);
        let error = ask(&model, first_turn()).await.expect_err("too slow");
        let message = error.to_string();
        assert!(
            message.contains("did not answer within 0.2 s; is it running?"),
            "{message}"
        );
    }

    #[tokio::test]
    async fn an_answer_without_choices_is_unreadable() {
        let (url, _) = mock(200, json!({"object": "list"}), Duration::ZERO).await;
        let error = ask(&client(&url, Recipe::NativeTools), first_turn()).await;
        let error = error.expect_err("no choices");
        assert!(matches!(error, ModelError::Unreadable { .. }), "{error:?}");
    }
}
