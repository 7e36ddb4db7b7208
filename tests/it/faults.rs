//! Servers that misbehave on purpose: the host reports each one clearly and the rest of the
//! desk keeps working.

use serde_json::json;
use support_desk::config::ServerConfig;
use support_desk::host::api::Outcome;

use crate::host::{Setup, harness};
use crate::mock_model::{call, scripted, words};

fn stdio(command: &str, args: &[&str]) -> ServerConfig {
    ServerConfig {
        command: Some(command.to_owned()),
        args: args.iter().map(|a| (*a).to_owned()).collect(),
        enabled: true,
        ..ServerConfig::default()
    }
}

async fn with_broken_server(server: ServerConfig) -> crate::host::Harness {
    let mut setup = Setup::new(scripted(vec![
        call("shop__get_order_status", json!({"order_id": "O-1744"})),
        words("Delivered."),
    ]));
    setup.tweak = Box::new(move |config, _| {
        config.limits.connect_timeout_secs = 3;
        config.servers.insert("broken".into(), server);
    });
    harness(setup).await
}

async fn assert_left_out_and_desk_works(server: ServerConfig, expected: &str) {
    let h = with_broken_server(server).await;
    let broken = h
        .host
        .servers()
        .iter()
        .find(|s| s.prefix == "broken")
        .cloned()
        .expect("reported");
    let error = broken.error.expect("the broken server is reported");
    assert!(
        error.contains("server 'broken'") && error.contains(expected),
        "{error}"
    );
    h.work("T-0009").await;
    assert_eq!(
        h.outcomes(),
        [("shop.get_order_status".to_owned(), Outcome::Result)],
        "the rest of the desk works"
    );
}

#[tokio::test]
async fn a_server_that_cannot_start_is_reported_and_left_out() {
    assert_left_out_and_desk_works(
        stdio("/nonexistent/mcp-server", &[]),
        "could not be started",
    )
    .await;
}

#[tokio::test]
async fn a_server_that_exits_at_once_is_reported_and_left_out() {
    assert_left_out_and_desk_works(
        stdio("sh", &["-c", "exit 3"]),
        "did not complete the handshake",
    )
    .await;
}

#[tokio::test]
async fn a_server_that_speaks_malformed_json_rpc_is_reported_and_left_out() {
    let garbage =
        "echo 'this is not JSON-RPC'; echo '{\"jsonrpc\": \"2.0\", \"id\": '; exec sleep 600";
    assert_left_out_and_desk_works(stdio("sh", &["-c", garbage]), "handshake").await;
}

#[tokio::test]
async fn a_server_that_never_answers_is_given_up_on_after_the_connect_timeout() {
    let started = std::time::Instant::now();
    assert_left_out_and_desk_works(
        stdio("sh", &["-c", "exec sleep 600"]),
        "no usable answer within 3 s",
    )
    .await;
    assert!(started.elapsed().as_secs() < 60);
}

#[tokio::test]
async fn a_server_that_sends_bytes_that_are_not_utf8_is_reported_and_left_out() {
    assert_left_out_and_desk_works(
        stdio("sh", &["-c", "printf '\\377\\376\\375\\n'; exec sleep 600"]),
        "handshake",
    )
    .await;
}
