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

use super::chat::{Answer, ChatRequest, Message, PromptUse, Reply, ToolCall, ToolSpec};
use super::textcalls::{parse_text_call, write_text_call};

mod stream;
pub use stream::Partial;

const PREFILL: &str = "<tool_call>\n";
const STOP_AT: &str = "</tool_call>";
const ERROR_MESSAGE_CHARS: usize = 300;
const START_A_SERVER: &str = "is it running? (scripts/local-model.sh starts one)";
/// What the HTTP client says when the server closed the connection before any answer.
const CLOSED_BEFORE_ANSWER: &str = "connection closed before message completed";
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
    /// Ask for the reply as it is generated (`stream: true`); a server that answers with the
    /// whole reply instead is read the same.
    stream: bool,
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
            stream: true,
            http,
        })
    }

    /// Whether to ask for the reply as it is generated (the default) or whole.
    pub fn streaming(mut self, stream: bool) -> Self {
        self.stream = stream;
        self
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

    /// The model's reply to `request`. While it streams, `watch` is told what it holds so far
    /// (a call's tool by the host's name); the reply is the same as if it came whole.
    pub async fn reply(
        &self,
        request: &ChatRequest,
        watch: &mut (dyn FnMut(&Partial) + Send),
    ) -> Result<Reply, ModelError> {
        Ok(self.answer(request, watch).await?.reply)
    }

    /// The model's reply to `request`, with what the server said of reading its prompt.
    pub async fn answer(
        &self,
        request: &ChatRequest,
        watch: &mut (dyn FnMut(&Partial) + Send),
    ) -> Result<Answer, ModelError> {
        let prefill = self.recipe == Recipe::LlamaCppPrefill
            && !request.tools.is_empty()
            && !request.calls_closed
            && tool_call_is_due(&request.messages);
        let mut named = |partial: &Partial| {
            let calling = partial
                .calling
                .as_deref()
                .map(|name| canonical_name(name, &request.tools));
            watch(&Partial {
                content: partial.content.clone(),
                calling,
            });
        };
        let completion = self
            .post(&self.request_body(request, prefill), &mut named)
            .await?;
        let reply = read_reply(&completion, &request.tools, prefill).ok_or_else(|| {
            ModelError::Unreadable {
                url: self.base_url.clone(),
                detail: "the answer has no choices[0].message".into(),
            }
        })?;
        let prompt = prompt_use(&completion);
        Ok(Answer { reply, prompt })
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
            // The tools stay, so the request begins as the ones before it; none may be called.
            Recipe::NativeTools | Recipe::LlamaCppPrefill if request.calls_closed => {
                vec![("tools", tools), ("tool_choice", json!("none"))]
            }
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
        // A streamed reply ends with the server's usage, as a whole one does.
        let stream = self.stream.then(|| {
            [
                ("stream", json!(true)),
                ("stream_options", json!({"include_usage": true})),
            ]
        });
        let fields = [
            ("model", json!(self.model)),
            ("messages", Value::Array(messages)),
        ]
        .into_iter()
        .chain(stream.into_iter().flatten())
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

    async fn post(
        &self,
        body: &Value,
        watch: &mut (dyn FnMut(&Partial) + Send),
    ) -> Result<Value, ModelError> {
        let url = &self.base_url;
        let response = match self.send(body).await {
            // A kept-alive connection the server closed as the request went out: nothing was
            // answered, and asking a model again changes nothing, so it is asked once more on
            // a new connection.
            Err(error) if root_cause(&error) == CLOSED_BEFORE_ANSWER => {
                tracing::info!(%url, "the model server closed the connection before answering; asking again");
                self.send(body).await
            }
            sent => sent,
        }
        .map_err(|error| self.failed(error))?;
        let status = response.status();
        let streamed = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        if streamed && status.is_success() {
            return self.read_stream(response, watch).await;
        }
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

    async fn send(&self, body: &Value) -> Result<reqwest::Response, reqwest::Error> {
        let url = &self.base_url;
        let request = self
            .http
            .post(format!("{url}/chat/completions"))
            .timeout(self.timeout);
        let request = match &self.api_key {
            Some(key) => request.bearer_auth(key),
            None => request,
        };
        request.json(body).send().await
    }

    /// A streamed completion, chunk by chunk, telling `watch` each time what a person sees
    /// changed; the completion it makes as a whole.
    async fn read_stream(
        &self,
        mut response: reqwest::Response,
        watch: &mut (dyn FnMut(&Partial) + Send),
    ) -> Result<Value, ModelError> {
        let mut assembly = stream::Assembly::default();
        while let Some(bytes) = response.chunk().await.map_err(|e| self.failed(e))? {
            if assembly.feed(&bytes) {
                watch(assembly.partial());
            }
            if let Some(message) = assembly.error() {
                return Err(ModelError::Status {
                    url: self.base_url.clone(),
                    status: 200,
                    message: truncate(message, ERROR_MESSAGE_CHARS),
                });
            }
            if assembly.is_done() {
                break;
            }
        }
        Ok(assembly.completion())
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

/// What the server said of reading the prompt: llama-server's `timings` (the tokens it read,
/// those its cache held, and the milliseconds reading took), else the `usage` of the OpenAI
/// API (`prompt_tokens`, of them `prompt_tokens_details.cached_tokens`). `None` when it said
/// neither.
fn prompt_use(completion: &Value) -> Option<PromptUse> {
    let count = |pointer: &str| completion.pointer(pointer).and_then(Value::as_u64);
    if let Some(read) = count("/timings/prompt_n") {
        let cached = count("/timings/cache_n").unwrap_or(0);
        let reading_seconds = completion
            .pointer("/timings/prompt_ms")
            .and_then(Value::as_f64)
            .map(|ms| ms / 1000.0);
        return Some(PromptUse {
            tokens: read + cached,
            cached,
            reading_seconds,
        });
    }
    let tokens = count("/usage/prompt_tokens")?;
    let cached = count("/usage/prompt_tokens_details/cached_tokens").unwrap_or(0);
    Some(PromptUse {
        tokens,
        cached: cached.min(tokens),
        reading_seconds: None,
    })
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
mod tests;
