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
    let call =
        json!({"id": "call_1", "name": "shop.get_order_status", "arguments": {"order_id": "O-1"}});
    let answer = BLOCK.replace("\"result\"", &format!("\"{outcome}\""));
    let turns = messages.as_array_mut().expect("a list");
    turns.push(json!({"role": "assistant", "content": "Checking.", "tool_call": call}));
    turns.push(json!({"role": "tool", "call_id": "call_1", "name": "shop.get_order_status", "content": answer}));
    messages
}

async fn ask(model: &OpenAiChat, messages: Value) -> Result<Reply, ModelError> {
    model.reply(&request(messages), &mut |_| {}).await
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
    let call = json!({"id": id, "name": "shop.get_order_status", "arguments": {"order_id": "O-1"}});
    reply(json!({"kind": "call", "call": call, "content": words}))
}

#[tokio::test]
async fn a_native_call_comes_back_under_its_canonical_name() {
    let function = json!({"name": "shop__get_order_status", "arguments": "{\"order_id\":\"O-1\"}"});
    let message = json!({"content": null, "tool_calls": [{"id": "call_9", "type": "function", "function": function}]});
    let (url, seen) = mock(200, answer(message), Duration::ZERO).await;
    let mut model = client(&url, Recipe::NativeTools);
    (model.sampling.temperature, model.sampling.seed) = (Some(0.2), Some(7));
    model.sampling.max_tokens = Some(256);
    let got = ask(&model, after("tool error")).await.expect("a reply");
    assert_eq!(got, order_call("call_9", ""));
    let (_, body) = first_seen(&seen);
    let function = json!({"name": "shop__get_order_status", "arguments": "{\"order_id\":\"O-1\"}"});
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
            "stream": true,
            "stream_options": {"include_usage": true},
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
    let content = "{\"name\": \"shop__get_order_status\", \"arguments\": {\"order_id\": \"O-1\"}}";
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
        ], "stream": true, "stream_options": {"include_usage": true}})
    );
}

#[tokio::test]
async fn a_model_told_not_to_stream_is_asked_for_the_whole_reply() {
    let (url, seen) = mock(200, answer(json!({"content": "Hello."})), Duration::ZERO).await;
    let model = client(&url, Recipe::NativeTools).streaming(false);
    let got = ask(&model, first_turn()).await.expect("a reply");
    assert_eq!(got, reply(json!({"kind": "words", "content": "Hello."})));
    assert_eq!(first_seen(&seen).1.get("stream"), None);
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

/// A chat-completions server on 127.0.0.1 that streams `chunks` as server-sent events, each
/// in its own write; the last one and `[DONE]` only once `last` is notified.
async fn streaming_mock(chunks: Vec<Value>, last: Arc<tokio::sync::Notify>) -> String {
    let handler = move |Json(_body): Json<Value>| {
        let (chunks, last) = (chunks.clone(), Arc::clone(&last));
        async move {
            let events = futures_util::stream::unfold((chunks, 0usize), move |(chunks, at)| {
                let last = Arc::clone(&last);
                async move {
                    let event = match at {
                        at if at < chunks.len() => format!("data: {}\n\n", chunks[at]),
                        at if at == chunks.len() => "data: [DONE]\n\n".to_owned(),
                        _ => return None,
                    };
                    if at + 1 == chunks.len() {
                        last.notified().await;
                    }
                    Some((Ok::<_, std::convert::Infallible>(event), (chunks, at + 1)))
                }
            });
            (
                [(axum::http::header::CONTENT_TYPE, "text/event-stream")],
                axum::body::Body::from_stream(events),
            )
        }
    };
    let app = Router::new().route("/v1/chat/completions", post(handler));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await;
    let listener = listener.expect("a free port on 127.0.0.1");
    let url = format!("http://{}/v1/", listener.local_addr().expect("bound"));
    tokio::spawn(async move { axum::serve(listener, app).await });
    url
}

fn delta(delta: Value) -> Value {
    json!({"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta}]})
}

#[tokio::test]
async fn a_streamed_call_is_watched_as_it_comes_and_read_as_a_whole_one() {
    let last = Arc::new(tokio::sync::Notify::new());
    let chunks = vec![
        delta(json!({"role": "assistant", "content": "Let me "})),
        delta(json!({"content": "look."})),
        delta(
            json!({"tool_calls": [{"index": 0, "id": "call_9", "type": "function",
            "function": {"name": "shop__get_order_status", "arguments": ""}}]}),
        ),
        delta(json!({"tool_calls": [{"index": 0, "function": {"arguments": "{\"order_"}}]})),
        delta(json!({"tool_calls": [{"index": 0, "function": {"arguments": "id\":\"O-1\"}"}}]})),
        json!({"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
    ];
    let url = streaming_mock(chunks, Arc::clone(&last)).await;
    let model = client(&url, Recipe::NativeTools);
    let (seen_tx, mut seen_rx) = tokio::sync::mpsc::unbounded_channel();
    let asking = tokio::spawn(async move {
        let mut watch = |partial: &Partial| {
            let _ = seen_tx.send(partial.clone());
        };
        model.reply(&request(first_turn()), &mut watch).await
    });
    // What comes before the finish is seen before the server ends its answer.
    let mut seen: Vec<Partial> = Vec::new();
    while seen.last().is_none_or(|p| p.calling.is_none()) {
        seen.push(seen_rx.recv().await.expect("the reply is watched"));
    }
    assert_eq!(seen[0].content, "Let me ");
    assert_eq!(seen[1].content, "Let me look.");
    assert_eq!(
        seen.last().and_then(|p| p.calling.as_deref()),
        Some("shop.get_order_status"),
        "the call under the host's name"
    );
    last.notify_one();
    let got = asking.await.expect("joined").expect("a reply");
    assert_eq!(got, order_call("call_9", "Let me look."));
}

#[tokio::test]
async fn a_streamed_error_is_the_servers_words() {
    let last = Arc::new(tokio::sync::Notify::new());
    last.notify_one();
    let chunks = vec![json!({"error": {"message": "the context is full"}})];
    let url = streaming_mock(chunks, last).await;
    let error = ask(&client(&url, Recipe::NativeTools), first_turn())
        .await
        .expect_err("an error");
    assert!(error.to_string().contains("the context is full"), "{error}");
}

#[test]
fn events_split_anywhere_come_together_as_sent() {
    let stream = concat!(
        "data: {\"choices\":[{\"delta\":{\"content\":\"Grü\"}}]}\r\n\r\n",
        ": a comment\n\n",
        "data: {\"choices\":[{\"delta\":{\"content\":\"ße — ok\"}}]}\n\n",
        "data: [DONE]\n\n",
    );
    // At every byte, between the bytes of one character too.
    for cut in 0..stream.len() {
        let mut assembly = stream::Assembly::default();
        assembly.feed(&stream.as_bytes()[..cut]);
        assembly.feed(&stream.as_bytes()[cut..]);
        assert!(assembly.is_done(), "cut at {cut}");
        assert_eq!(assembly.partial().content, "Grüße — ok", "cut at {cut}");
    }
}

/// The first turn as the last one: no call may be made.
fn closed(messages: Value) -> ChatRequest {
    ChatRequest {
        calls_closed: true,
        ..request(messages)
    }
}

#[tokio::test]
async fn a_closed_turn_keeps_the_tools_so_the_request_begins_as_before_and_allows_no_call() {
    for recipe in [Recipe::NativeTools, Recipe::LlamaCppPrefill] {
        let (url, seen) = mock(200, answer(json!({"content": "Hello."})), Duration::ZERO).await;
        let model = client(&url, recipe);
        let open = model.request_body(&request(first_turn()), false);
        let got = model.reply(&closed(first_turn()), &mut |_| {}).await;
        assert_eq!(
            got.expect("a reply"),
            reply(json!({"kind": "words", "content": "Hello."}))
        );
        let body = first_seen(&seen).1;
        assert_eq!(body["tools"], open["tools"], "{recipe:?}");
        assert_eq!(body["messages"], first_turn(), "{recipe:?}: no prefill");
        assert_eq!(body["tool_choice"], "none", "{recipe:?}");
        assert_eq!(body.get("stop"), None, "{recipe:?}");
    }
}

#[tokio::test]
async fn the_servers_account_of_reading_the_prompt_comes_with_the_reply() {
    let words = json!({"index": 0, "message": {"content": "Hello."}});
    for (account, expected) in [
        (
            json!({"timings": {"cache_n": 2900, "prompt_n": 100, "prompt_ms": 1250.0}}),
            Some(PromptUse {
                tokens: 3000,
                cached: 2900,
                reading_seconds: Some(1.25),
            }),
        ),
        (
            json!({"usage": {"prompt_tokens": 3000, "prompt_tokens_details": {"cached_tokens": 2048}}}),
            Some(PromptUse {
                tokens: 3000,
                cached: 2048,
                reading_seconds: None,
            }),
        ),
        (
            json!({"usage": {"prompt_tokens": 120, "completion_tokens": 5}}),
            Some(PromptUse {
                tokens: 120,
                cached: 0,
                reading_seconds: None,
            }),
        ),
        (json!({}), None),
    ] {
        let mut completion = account.clone();
        completion["choices"] = json!([words]);
        let (url, _) = mock(200, completion, Duration::ZERO).await;
        let model = client(&url, Recipe::NativeTools);
        let got = model.answer(&request(first_turn()), &mut |_| {}).await;
        assert_eq!(got.expect("an answer").prompt, expected, "{account}");
    }
}

#[test]
fn a_streams_usage_and_timings_are_kept_from_whichever_chunk_holds_them() {
    let stream = concat!(
        "data: {\"choices\":[{\"delta\":{\"content\":\"Hi\"}}]}\n\n",
        "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":10},\"timings\":{\"cache_n\":8,\"prompt_n\":2}}\n\n",
        "data: [DONE]\n\n",
    );
    let mut assembly = stream::Assembly::default();
    assembly.feed(stream.as_bytes());
    let completion = assembly.completion();
    assert_eq!(
        prompt_use(&completion),
        Some(PromptUse {
            tokens: 10,
            cached: 8,
            reading_seconds: None
        })
    );
    assert_eq!(completion["choices"][0]["message"]["content"], "Hi");
}

/// A server whose first connection reads the request and closes without a word, as a server
/// does with a kept-alive connection it timed out just as the request came; the next one
/// answers.
#[tokio::test]
async fn a_connection_closed_before_any_answer_is_asked_once_more() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await;
    let listener = listener.expect("a free port on 127.0.0.1");
    let url = format!("http://{}/v1", listener.local_addr().expect("bound"));
    let served = tokio::spawn(async move {
        let mut connections = 0;
        loop {
            let (mut socket, _) = listener.accept().await.expect("a connection");
            connections += 1;
            let mut request = vec![0; 64 * 1024];
            let _ = socket.read(&mut request).await;
            if connections == 1 {
                continue;
            }
            let body = answer(json!({"content": "Hello."})).to_string();
            let head = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                body.len()
            );
            socket.write_all(head.as_bytes()).await.expect("written");
            socket.write_all(body.as_bytes()).await.expect("written");
            return connections;
        }
    });
    let model = client(&url, Recipe::NativeTools).streaming(false);
    let got = ask(&model, first_turn())
        .await
        .expect("answered on the second connection");
    assert_eq!(got, reply(json!({"kind": "words", "content": "Hello."})));
    assert_eq!(served.await.expect("the server ran"), 2);
}
