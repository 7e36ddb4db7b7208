//! The lane over real pipes: `sh` children that read the desk's lines into a file and answer
//! as a script says, with the transport's reader driven as rmcp's service loop drives it.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ClientCapabilities, ClientConfig, Implementation,
    ProtocolVersion, RequestId, RequestMetaObject, ServerCapabilities, ServerPeerInfo,
    ServerResult,
};
use rmcp::service::ServiceError;
use rmcp::transport::Transport;
use serde_json::{Map, Value, json};
use tokio::sync::mpsc;

use crate::wire::child_stdio::ChildStdio;
use crate::wire::lane::{CallLane, Context, FIRST_ID, call_response, request_line};

/// A shop's answer to the lane's first call.
const ANSWER: &str = r#"{"jsonrpc":"2.0","id":4294967296,"result":{"content":[{"type":"text","text":"shipped"}],"isError":false}}"#;
/// A notification the server sends while the call is under way: rmcp's, not the caller's.
const NOTICE: &str =
    r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}"#;

/// A server as `sh` running `script(seen)`, `seen` being a file for what it reads: the
/// temporary directory it is in, `seen`, the lane to the server, and what its transport
/// passes on to rmcp.
fn started(script: impl FnOnce(&Path) -> String) -> Started {
    started_polling(crate::wire::busy_poll::DEFAULT_WINDOW, script)
}

/// A started server: its directory, its `seen` file, the lane, what rmcp is passed.
type Started = (
    tempfile::TempDir,
    PathBuf,
    CallLane,
    mpsc::UnboundedReceiver<Value>,
);

/// [`started`], the server's stdout polled for `window` while a call waits.
fn started_polling(window: Duration, script: impl FnOnce(&Path) -> String) -> Started {
    let dir = tempfile::tempdir().expect("temp dir");
    let seen = dir.path().join("seen");
    let transport = sh(&script(&seen), window);
    let lane = transport.lane();
    (dir, seen, lane, drive(transport))
}

/// A script whose stdin goes to `seen`, then `then` runs (`read line` takes the first
/// request).
fn teed(seen: &Path, then: &str) -> String {
    format!("tee {} | {{ {then}; }}", seen.display())
}

fn sh(script: &str, busy_poll: Duration) -> ChildStdio {
    let child = tokio::process::Command::new("sh")
        .arg("-c")
        .arg(script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("sh");
    ChildStdio::new(child, busy_poll).expect("piped")
}

/// Reads the transport as rmcp's service loop would, passing on what rmcp would get.
fn drive(mut transport: ChildStdio) -> mpsc::UnboundedReceiver<Value> {
    let (to_rmcp, for_rmcp) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Some(message) = transport.receive().await {
            let _ = to_rmcp.send(serde_json::to_value(message).expect("JSON"));
        }
    });
    for_rmcp
}

fn client() -> ClientConfig {
    ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("support-desk", "9.9.9"),
    )
}

fn modern(lane: &CallLane) {
    let server = ServerPeerInfo::new(ProtocolVersion::V_2026_07_28, ServerCapabilities::default());
    lane.set_context(&server, &client());
}

fn params() -> CallToolRequestParams {
    let mut arguments = Map::new();
    arguments.insert("order_id".into(), json!("O-1744"));
    CallToolRequestParams::new("get_order_status").with_arguments(arguments)
}

/// `future`'s outcome; a guard against a test that would otherwise hang, not a timing.
async fn ended<T>(future: impl Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(30), future)
        .await
        .expect("it ended")
}

/// The lines the server read, once there are `n`.
async fn lines(seen: &Path, n: usize) -> Vec<Value> {
    ended(read_lines(seen, n)).await
}

async fn read_lines(seen: &Path, n: usize) -> Vec<Value> {
    loop {
        let text = std::fs::read_to_string(seen).unwrap_or_default();
        let lines: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).expect("a JSON line"))
            .collect();
        if lines.len() >= n {
            return lines;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test]
async fn a_call_carries_the_client_context_and_its_answer_goes_to_the_caller_not_to_rmcp() {
    let (_dir, seen, lane, mut for_rmcp) = started(|seen| {
        teed(
            seen,
            &format!("read line; echo '{NOTICE}'; echo '{ANSWER}'; cat > /dev/null"),
        )
    });
    modern(&lane);

    let answer = ended(lane.call_tool(&mut params()))
        .await
        .expect("answered");
    let CallToolResponse::Complete(result) = answer else {
        panic!("a complete result: {answer:?}");
    };
    assert_eq!(result.content[0].as_text().expect("text").text, "shipped");
    // rmcp got the notification, and nothing else.
    let notice = ended(for_rmcp.recv()).await.expect("the notification");
    assert_eq!(notice["method"], "notifications/message");
    assert!(for_rmcp.try_recv().is_err());

    let request = &lines(&seen, 1).await[0];
    assert_eq!(request["method"], "tools/call");
    assert_eq!(request["id"], json!(FIRST_ID));
    assert_eq!(request["params"]["name"], "get_order_status");
    assert_eq!(
        request["params"]["arguments"],
        json!({"order_id": "O-1744"})
    );
    let meta = &request["params"]["_meta"];
    assert_eq!(
        meta["io.modelcontextprotocol/protocolVersion"],
        "2026-07-28"
    );
    assert_eq!(
        meta["io.modelcontextprotocol/clientInfo"],
        json!({"name": "support-desk", "version": "9.9.9"})
    );
    assert_eq!(
        meta["io.modelcontextprotocol/clientCapabilities"],
        json!({})
    );
}

#[tokio::test]
async fn on_a_revision_with_initialize_a_call_carries_no_client_context() {
    let (_dir, seen, lane, _for_rmcp) = started(|seen| {
        teed(
            seen,
            &format!("read line; echo '{ANSWER}'; cat > /dev/null"),
        )
    });
    let older = ServerPeerInfo::new(ProtocolVersion::V_2025_11_25, ServerCapabilities::default());
    lane.set_context(&older, &client());
    let mut asked = params();
    let mut meta = RequestMetaObject::default();
    meta.0
        .0
        .insert("dev.support-desk/request-id".into(), json!("T-1"));
    asked.meta = Some(meta);

    ended(lane.call_tool(&mut asked)).await.expect("answered");
    let request = &lines(&seen, 1).await[0];
    assert_eq!(
        request["params"]["_meta"],
        json!({"dev.support-desk/request-id": "T-1"})
    );
}

#[tokio::test]
async fn the_servers_error_for_a_call_is_the_callers_and_an_unknown_id_is_rmcps() {
    let stranger = r#"{"jsonrpc":"2.0","id":3,"result":{"tools":[]}}"#;
    let refused =
        r#"{"jsonrpc":"2.0","id":4294967296,"error":{"code":-32602,"message":"no such order"}}"#;
    let (_dir, _seen, lane, mut for_rmcp) = started(|seen| {
        teed(
            seen,
            &format!("read line; echo '{stranger}'; echo '{refused}'; cat > /dev/null"),
        )
    });
    modern(&lane);

    match ended(lane.call_tool(&mut params())).await {
        Err(ServiceError::McpError(e)) => {
            assert_eq!(e.code.0, -32602);
            assert_eq!(e.message, "no such order");
        }
        other => panic!("the server's error: {other:?}"),
    }
    let stranger = ended(for_rmcp.recv()).await.expect("rmcp's answer");
    assert_eq!(stranger["id"], 3);
}

#[tokio::test]
async fn a_call_given_up_tells_the_server_and_its_late_answer_goes_nowhere() {
    // Answers only after the second line (the cancel) has arrived.
    let (_dir, seen, lane, mut for_rmcp) = started(|seen| {
        teed(
            seen,
            &format!("read line; read line; echo '{ANSWER}'; cat > /dev/null"),
        )
    });
    modern(&lane);

    let gave_up =
        tokio::time::timeout(Duration::from_millis(50), lane.call_tool(&mut params())).await;
    assert!(gave_up.is_err(), "no answer came before the cancel");
    let read = lines(&seen, 2).await;
    assert_eq!(read[1]["method"], "notifications/cancelled");
    assert_eq!(read[1]["params"]["requestId"], read[0]["id"]);
    assert!(!lane.is_waiting());
    // The late answer is no call's; it goes to rmcp, which drops an answer it did not ask for.
    let late = ended(for_rmcp.recv()).await.expect("the late answer");
    assert_eq!(late["id"], json!(FIRST_ID));
}

/// A window no test outlasts: whether the pipe is polled then says whether a call waits.
const WATCHED: Duration = Duration::from_secs(3600);

#[tokio::test]
async fn the_servers_stdout_is_polled_while_a_call_waits_and_not_once_it_is_answered() {
    // Answers once the test has created `go` beside `seen`.
    let (dir, seen, lane, _for_rmcp) = started_polling(WATCHED, |seen| {
        let go = seen.with_file_name("go");
        teed(
            seen,
            &format!(
                "read line; until [ -e {} ]; do sleep 0.01; done; echo '{ANSWER}'; cat > /dev/null",
                go.display()
            ),
        )
    });
    modern(&lane);
    assert!(!lane.is_polled(), "no call yet");

    let calling = lane.clone();
    let call = tokio::spawn(async move { calling.call_tool(&mut params()).await });
    lines(&seen, 1).await;
    assert!(lane.is_polled(), "a call waits for its answer");

    std::fs::write(dir.path().join("go"), "").expect("go");
    let answer = ended(call).await.expect("the call's task");
    assert!(
        matches!(answer, Ok(CallToolResponse::Complete(_))),
        "{answer:?}"
    );
    assert!(!lane.is_polled(), "answered: nothing waits");
}

#[tokio::test]
async fn a_call_given_up_leaves_the_servers_stdout_unpolled() {
    let (_dir, seen, lane, _for_rmcp) =
        started_polling(WATCHED, |seen| teed(seen, "cat > /dev/null"));
    modern(&lane);

    let gave_up =
        tokio::time::timeout(Duration::from_millis(50), lane.call_tool(&mut params())).await;
    assert!(gave_up.is_err(), "the server never answers");
    lines(&seen, 2).await;
    assert!(!lane.is_polled(), "the call was given up: nothing waits");
}

#[tokio::test]
async fn a_server_that_exits_ends_the_waiting_call_and_the_next_as_a_lost_connection() {
    // `head` exits after the first line, and with it the shell and its stdout.
    let (_dir, _seen, lane, mut for_rmcp) =
        started(|seen| format!("head -n 1 > {}", seen.display()));
    modern(&lane);

    let lost = ended(lane.call_tool(&mut params())).await;
    assert!(
        matches!(lost, Err(ServiceError::TransportClosed)),
        "{lost:?}"
    );
    assert!(
        ended(for_rmcp.recv()).await.is_none(),
        "the transport ended"
    );
    let next = ended(lane.call_tool(&mut params())).await;
    assert!(
        matches!(next, Err(ServiceError::TransportClosed)),
        "{next:?}"
    );
}

#[test]
fn answers_read_as_rmcps_call_tool_once_reads_them() {
    let empty = call_response(ServerResult::empty(())).expect("an empty result");
    assert!(matches!(empty, CallToolResponse::Complete(ref r) if r.content.is_empty()));
    let custom: ServerResult =
        serde_json::from_value(json!({"_meta": {"k": 1}})).expect("a custom result");
    let with_meta = call_response(custom).expect("a result of only _meta");
    assert!(matches!(with_meta, CallToolResponse::Complete(ref r) if r.meta.is_some()));
    let listing: ServerResult = serde_json::from_value(json!({"tools": []})).expect("a listing");
    assert!(matches!(
        call_response(listing),
        Err(ServiceError::UnexpectedResponse)
    ));
}

#[test]
fn a_request_line_is_one_message_with_the_client_context_over_the_callers_keys() {
    let context = Context::of(&RequestMetaObject::with_client_context(
        ProtocolVersion::V_2026_07_28,
        Implementation::new("support-desk", "9.9.9"),
        ClientCapabilities::default(),
    ))
    .expect("encoded");
    let mut asked = params();
    let mut own = RequestMetaObject::default();
    own.0.0.insert(
        "io.modelcontextprotocol/protocolVersion".into(),
        json!("1999-01-01"),
    );
    own.0
        .0
        .insert("dev.support-desk/request-id".into(), json!("T-1"));
    asked.meta = Some(own.clone());

    let line = request_line(&RequestId::Number(FIRST_ID), &mut asked, &context).expect("a line");
    assert_eq!(
        asked.meta,
        Some(own),
        "the caller's params are kept for the next round"
    );
    assert_eq!(line.iter().filter(|b| **b == b'\n').count(), 1);
    assert_eq!(line.last(), Some(&b'\n'));
    let request: Value = serde_json::from_slice(&line).expect("one JSON message");
    assert_eq!(
        request,
        json!({
            "jsonrpc": "2.0",
            "id": FIRST_ID,
            "method": "tools/call",
            "params": {
                "name": "get_order_status",
                "arguments": {"order_id": "O-1744"},
                "_meta": {
                    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                    "io.modelcontextprotocol/clientInfo": {"name": "support-desk", "version": "9.9.9"},
                    "io.modelcontextprotocol/clientCapabilities": {},
                    "dev.support-desk/request-id": "T-1",
                },
            },
        })
    );

    let bare = request_line(
        &RequestId::Number(FIRST_ID + 1),
        &mut CallToolRequestParams::new("ping"),
        &Context::default(),
    )
    .expect("a line");
    let bare: Value = serde_json::from_slice(&bare).expect("one JSON message");
    assert_eq!(bare["params"], json!({"name": "ping"}));
}

#[tokio::test]
async fn an_answer_over_the_size_limit_reaches_the_caller_as_too_large() {
    let over = crate::wire::oversize::MAX_MESSAGE_BYTES + 1024;
    let (_dir, _seen, lane, _for_rmcp) = started(|seen| {
        teed(
            seen,
            &format!(
                r#"read line; printf '{{"jsonrpc":"2.0","id":{FIRST_ID},"result":{{"content":[{{"type":"text","text":"'; head -c {over} /dev/zero | tr '\0' a; printf '"}}]}}}}\n'; cat > /dev/null"#
            ),
        )
    });
    modern(&lane);

    match ended(lane.call_tool(&mut params())).await {
        Err(ServiceError::McpError(e)) => {
            assert_eq!(e.code.0, crate::wire::oversize::TOO_LARGE_CODE);
            assert!(e.message.starts_with("too large"), "{}", e.message);
        }
        other => panic!("too large: {other:?}"),
    }
}
