use std::sync::Arc;
use std::time::Duration;

use proptest::prelude::*;
use rmcp::model::{ClientRequest, JsonRpcMessage, RequestId, RequestMetaObject};
use rmcp::service::RxJsonRpcMessage;
use rmcp::{RoleServer, ServiceExt};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use crate::partner::{Parcels, PartnerServer};
use crate::wire::server_stdio::{CallsFirst, call_request};

const PROTOCOL: &str = "2026-07-28";

/// A call as the desk writes one.
const DESK_CALL: &str = r#"{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"get_order_status","arguments":{"order_id":"O-1744"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"support-desk","version":"0.1.0"},"io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{},"url":{}}},"dev.support-desk/request-id":"run-3"}}}"#;

/// What rmcp's own deserializer makes of `line`, if anything.
fn rmcps(line: &str) -> Option<RxJsonRpcMessage<RoleServer>> {
    serde_json::from_str(line).ok()
}

/// A call's id, its parameters as Debug shows them, and the `_meta` in its extensions.
fn call_parts(
    message: &RxJsonRpcMessage<RoleServer>,
) -> Option<(RequestId, String, Option<RequestMetaObject>)> {
    let JsonRpcMessage::Request(request) = message else {
        return None;
    };
    let ClientRequest::CallToolRequest(call) = &request.request else {
        return None;
    };
    Some((
        request.id.clone(),
        format!("{:?}", call.params),
        call.extensions.get::<RequestMetaObject>().cloned(),
    ))
}

/// `line` is read by the fast path, into the message rmcp's deserializer makes of it.
fn read_as_rmcp_reads_it(line: &str) {
    let ours = call_request(line.as_bytes()).unwrap_or_else(|| panic!("not taken: {line}"));
    let theirs = rmcps(line).unwrap_or_else(|| panic!("rmcp refuses: {line}"));
    assert_eq!(
        call_parts(&ours),
        call_parts(&theirs),
        "{line}: parameters or _meta differ"
    );
    assert!(call_parts(&ours).is_some(), "{line}: not a call");
    assert_eq!(
        serde_json::to_value(&ours).expect("ours as JSON"),
        serde_json::to_value(&theirs).expect("rmcp's as JSON"),
        "{line}"
    );
}

#[test]
fn a_call_as_the_desk_writes_it_is_read_as_rmcp_reads_it_with_meta_in_the_extensions() {
    read_as_rmcp_reads_it(DESK_CALL);
    let call = call_request(DESK_CALL.as_bytes()).expect("taken");
    let (_, params, meta) = call_parts(&call).expect("a call");
    assert!(params.contains("meta: None"), "{params}");
    let meta = meta.expect("_meta in the extensions");
    assert_eq!(meta.0.0["dev.support-desk/request-id"], "run-3");
}

#[test]
fn calls_of_other_shapes_are_read_as_rmcp_reads_them() {
    for line in [
        r#"{"jsonrpc":"2.0","id":"a-1","method":"tools/call","params":{"name":"x"}}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"x","_meta":null}}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"x","arguments":null}}"#,
        r#"{"params":{"arguments":{"n":-4,"f":1.5,"big":18446744073709551615,"list":[true,null,{"a":"\u00e9\n"}]},"name":"x"},"method":"tools/call","id":0,"jsonrpc":"2.0"}"#,
        r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"x","requestState":"opaque","future":{"field":1}}}"#,
        r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"x","_meta":{"progressToken":7}}}"#,
        " {\"jsonrpc\" : \"2.0\",\n\"id\":6, \"method\":\"tools/call\",\"params\":{\"name\":\"x\"}} ",
    ] {
        read_as_rmcp_reads_it(line);
    }
}

#[test]
fn every_other_line_is_left_to_rmcp() {
    for line in [
        // Another method, a notification, a response, an error.
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#,
        r#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
        r#"{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"no"}}"#,
        // A field a request does not have: rmcp decides what it is.
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"},"result":{}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"},"extra":1}"#,
        // Not a call rmcp would take either.
        r#"{"jsonrpc":"1.0","id":1,"method":"tools/call","params":{"name":"x"}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":7}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call"}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}"#,
        "\u{feff}{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"x\"}}",
        "",
    ] {
        assert!(call_request(line.as_bytes()).is_none(), "taken: {line}");
    }
}

/// Any JSON value, strings included with escapes and controls.
fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        (-1e12f64..1e12).prop_map(Value::from),
        any::<String>().prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
            prop::collection::btree_map("[a-z_/.]{0,8}", inner, 0..4)
                .prop_map(|map| Value::Object(map.into_iter().collect())),
        ]
    })
}

proptest! {
    /// Whatever a `tools/call` line holds, the fast path either leaves it to rmcp or reads
    /// it exactly as rmcp does; and it takes every one that has only a request's fields.
    #[test]
    fn any_call_line_is_read_as_rmcp_reads_it_or_left_to_rmcp(
        id in prop_oneof![any::<i64>().prop_map(Value::from), any::<String>().prop_map(Value::from), any_json()],
        name in prop_oneof![any::<String>().prop_map(Value::from), any_json()],
        arguments in proptest::option::of(any_json()),
        meta in proptest::option::of(any_json()),
        extra_param in proptest::option::of(("[a-zA-Z_]{1,10}", any_json())),
        extra_field in proptest::option::of(("[a-z]{1,6}", any_json())),
        method in prop_oneof![Just("tools/call"), Just("tools/list"), Just("tools/cal")],
    ) {
        let mut params = json!({"name": name});
        if let Some(arguments) = arguments {
            params["arguments"] = arguments;
        }
        if let Some(meta) = meta {
            params["_meta"] = meta;
        }
        if let Some((key, value)) = extra_param {
            params[key] = value;
        }
        let mut message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let only_request_fields = extra_field.is_none();
        if let Some((key, value)) = extra_field {
            message[key] = value;
        }
        let line = message.to_string();
        let theirs = rmcps(&line);
        match call_request(line.as_bytes()) {
            Some(_) => read_as_rmcp_reads_it(&line),
            None => prop_assert!(
                !only_request_fields || theirs.as_ref().and_then(call_parts).is_none(),
                "a call rmcp reads was left to it: {line}"
            ),
        }
    }
}

/// A partner server on [`CallsFirst`] over one end of a pipe; the other end, as lines.
async fn partner() -> (
    tokio::io::WriteHalf<tokio::io::DuplexStream>,
    tokio::io::Lines<BufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>>,
) {
    let (server_io, client_io) = tokio::io::duplex(64 * 1024);
    tokio::spawn(async move {
        let (read, write) = tokio::io::split(server_io);
        let server = PartnerServer::new(Arc::new(Parcels::bundled()));
        if let Ok(running) = server.serve(CallsFirst::new(read, write)).await {
            let _ = running.waiting().await;
        }
    });
    let (read, write) = tokio::io::split(client_io);
    (write, BufReader::new(read).lines())
}

async fn send(write: &mut tokio::io::WriteHalf<tokio::io::DuplexStream>, bytes: &[u8]) {
    write.write_all(bytes).await.expect("the server reads");
}

fn call_line(id: u64, number: &str) -> String {
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": PROTOCOL,
        "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    let mut line = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": "track_parcel", "arguments": {"tracking_number": number}, "_meta": meta}})
    .to_string();
    line.push('\n');
    line
}

async fn answer(
    lines: &mut tokio::io::Lines<BufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>>,
) -> Value {
    let line = tokio::time::timeout(Duration::from_secs(10), lines.next_line())
        .await
        .expect("an answer within 10 s")
        .expect("readable")
        .expect("a line");
    serde_json::from_str(&line).expect("JSON")
}

#[tokio::test]
async fn a_server_answers_calls_and_leaves_every_other_line_to_rmcp() {
    let (mut write, mut lines) = partner().await;

    send(&mut write, call_line(1, "KP651600229").as_bytes()).await;
    let first = answer(&mut lines).await;
    assert_eq!(first["id"], 1, "{first}");
    let text = first["result"]["content"][0]["text"]
        .as_str()
        .expect("a text");
    assert!(text.contains("\"status\":\"delivered\""), "{first}");

    // Not JSON: rmcp ignores it. JSON that is no message: it answers "Invalid Request".
    send(&mut write, b"{not json\n").await;
    send(&mut write, b"{\"jsonrpc\":\"2.0\",\"id\":2}\n").await;
    let invalid = answer(&mut lines).await;
    assert_eq!(invalid["error"]["code"], -32600, "{invalid}");

    // Another method goes through rmcp as before.
    let mut list = call_line(3, "-");
    list = list.replace("\"tools/call\"", "\"tools/list\"");
    send(&mut write, list.as_bytes()).await;
    let tools = answer(&mut lines).await;
    assert_eq!(tools["id"], 3, "{tools}");
    assert_eq!(
        tools["result"]["tools"][0]["name"], "track_parcel",
        "{tools}"
    );

    // A call written in pieces, then two in one write.
    let call = call_line(4, "KP000000000");
    let (head, tail) = call.split_at(call.len() / 2);
    send(&mut write, head.as_bytes()).await;
    tokio::time::sleep(Duration::from_millis(20)).await;
    send(&mut write, tail.as_bytes()).await;
    let unknown = answer(&mut lines).await;
    assert_eq!(unknown["id"], 4, "{unknown}");
    assert_eq!(unknown["result"]["isError"], true, "{unknown}");
    let both = call_line(5, "KP651600229") + &call_line(6, "KP651600229");
    send(&mut write, both.as_bytes()).await;
    let ids = [
        answer(&mut lines).await["id"].clone(),
        answer(&mut lines).await["id"].clone(),
    ];
    assert!(
        ids.contains(&json!(5)) && ids.contains(&json!(6)),
        "{ids:?}"
    );
}

#[tokio::test]
async fn a_receive_dropped_while_rmcp_writes_its_answer_resumes_there() {
    use rmcp::transport::Transport;

    // Eight bytes of pipe each way: rmcp's "Invalid Request" does not fit until it is read.
    let (server_io, client_io) = tokio::io::duplex(8);
    let (read, write) = tokio::io::split(server_io);
    let mut transport = CallsFirst::new(read, write);
    let (client_read, mut client_write) = tokio::io::split(client_io);
    let writer = tokio::spawn(async move {
        let lines = "{\"jsonrpc\":\"2.0\",\"id\":2}\n".to_owned() + &call_line(3, "KP651600229");
        send(&mut client_write, lines.as_bytes()).await;
        client_write
    });

    let stuck = tokio::time::timeout(Duration::from_millis(100), transport.receive()).await;
    assert!(
        stuck.is_err(),
        "rmcp's answer should wait for the client to read"
    );

    let mut answers = BufReader::new(client_read).lines();
    let invalid = tokio::spawn(async move { answer(&mut answers).await });
    let call = tokio::time::timeout(Duration::from_secs(10), transport.receive())
        .await
        .expect("the call within 10 s")
        .expect("a message");
    let (id, params, _) = call_parts(&call).expect("the call after the invalid line");
    assert_eq!(id, RequestId::Number(3));
    assert!(params.contains("track_parcel"), "{params}");
    assert_eq!(invalid.await.expect("read")["error"]["code"], -32600);
    drop(writer.await.expect("written"));
}
