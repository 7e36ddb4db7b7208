use std::collections::HashSet;

use rmcp::RoleClient;
use rmcp::model::{JsonRpcMessage, NumberOrString, RequestId, ServerResult};
use rmcp::service::RxJsonRpcMessage;

use super::decode;
use crate::wire::lane::CallLane;

/// An answer of the shop's `get_order_status`, as the shop writes it.
const ANSWER: &str = r#"{"jsonrpc":"2.0","id":7,"result":{"resultType":"complete","content":[{"type":"text","text":"{\"order_id\":\"O-1744\",\"status\":\"shipped\"}"}],"structuredContent":{"order_id":"O-1744","status":"shipped"},"isError":false}}"#;

fn pending(ids: &[i64]) -> HashSet<RequestId> {
    ids.iter().map(|n| NumberOrString::Number(*n)).collect()
}

/// A lane with no call waiting.
fn no_lane() -> CallLane {
    CallLane::new(std::sync::Arc::new(tokio::sync::Mutex::new(None)), None)
}

/// What rmcp's own deserializer makes of `line`.
fn rmcps(line: &str) -> RxJsonRpcMessage<RoleClient> {
    serde_json::from_str(line).expect("rmcp reads it")
}

fn same(ours: &RxJsonRpcMessage<RoleClient>, line: &str) {
    assert_eq!(
        serde_json::to_value(ours).expect("ours as JSON"),
        serde_json::to_value(rmcps(line)).expect("rmcp's as JSON"),
        "{line}"
    );
}

#[test]
fn an_answer_to_a_pending_call_is_read_as_rmcp_reads_it_and_is_no_longer_pending() {
    let mut calls = pending(&[7, 8]);
    let ours = decode(&mut calls, &no_lane(), ANSWER.as_bytes()).expect("a message");
    same(&ours, ANSWER);
    assert!(matches!(
        ours,
        JsonRpcMessage::Response(ref r) if matches!(r.result, ServerResult::CallToolResult(_))
    ));
    assert_eq!(calls, pending(&[8]));
}

#[test]
fn everything_that_is_not_a_complete_answer_to_a_pending_call_goes_through_rmcp() {
    let lines = [
        // A round that needs input: not a CallToolResult.
        r#"{"jsonrpc":"2.0","id":8,"result":{"resultType":"input_required","inputRequests":{"confirm":{"method":"elicitation/create","params":{"mode":"form","message":"Go ahead?","requestedSchema":{"type":"object","properties":{"ok":{"type":"boolean"}}}}}},"requestState":"s1"}}"#,
        // The server's error for the call.
        r#"{"jsonrpc":"2.0","id":9,"error":{"code":-32602,"message":"unknown tool"}}"#,
        // A notification while a call is under way.
        r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":1}}"#,
        // The answer to a request that is not a call.
        r#"{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}"#,
    ];
    let mut calls = pending(&[8, 9]);
    for line in lines {
        let ours = decode(&mut calls, &no_lane(), line.as_bytes()).expect("a message");
        same(&ours, line);
    }
    let JsonRpcMessage::Response(input) = rmcps(lines[0]) else {
        panic!("an input round is a response");
    };
    assert!(!matches!(input.result, ServerResult::CallToolResult(_)));
    assert!(
        calls.is_empty(),
        "answered calls are not pending: {calls:?}"
    );
}

#[test]
fn an_answer_for_no_pending_call_and_a_broken_line_are_handled_as_rmcp_handles_them() {
    let mut calls = pending(&[1]);
    // Not pending: read by rmcp's deserializer, the same message.
    let ours = decode(&mut calls, &no_lane(), ANSWER.as_bytes()).expect("a message");
    same(&ours, ANSWER);
    assert_eq!(calls, pending(&[1]));
    // Not JSON: no message, nothing answered.
    assert!(decode(&mut calls, &no_lane(), b"{\"jsonrpc\":").is_none());
    assert_eq!(calls, pending(&[1]));
}

#[tokio::test]
async fn an_answer_over_the_size_limit_becomes_a_too_large_error_for_its_request() {
    use rmcp::transport::Transport;
    // A child that answers request 3 with seventeen megabytes of text, then exits.
    let script = r#"printf '{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"'; head -c 17000000 /dev/zero | tr '\0' x; printf '"}]}}\n'"#;
    let child = tokio::process::Command::new("sh")
        .args(["-c", script])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("sh starts");
    let mut transport =
        super::ChildStdio::new(child, crate::wire::busy_poll::DEFAULT_WINDOW).expect("piped");
    let Some(JsonRpcMessage::Error(error)) = transport.receive().await else {
        panic!("the answer is replaced by an error");
    };
    assert_eq!(error.id, Some(NumberOrString::Number(3)));
    assert_eq!(error.error.code.0, crate::wire::oversize::TOO_LARGE_CODE);
    assert!(
        error
            .error
            .message
            .starts_with("too large: the answer was 16.2 MiB"),
        "{}",
        error.error.message
    );
    assert!(transport.receive().await.is_none(), "then the stream ends");
}
