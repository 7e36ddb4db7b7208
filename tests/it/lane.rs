//! Tool calls on a stdio server go beside rmcp's service loop (`host::lane`): what the real
//! shop reads from such a call is what rmcp's own `call_tool_once` sends on the same
//! connection, and it answers both the same.

use std::time::Duration;

use rmcp::model::{CallToolRequestParams, CallToolResponse, RequestMetaObject};
use serde_json::{Map, Value, json};
use support_desk::config::ServerConfig;
use support_desk::host::api::Outcome;
use support_desk::host::servers::calls::{self, CallPlan, REQUEST_ID_META};
use support_desk::host::servers::connect::ServerConn;
use tokio::sync::mpsc;

use crate::support::BIN;

/// The shop as a child process, with every line it reads also written to `seen`.
fn watched_shop(dir: &std::path::Path) -> ServerConfig {
    let script = format!(
        "tee {} | exec {BIN} serve shop --stdio --db {} --seed 4217",
        dir.join("seen").display(),
        dir.join("shop.sqlite3").display()
    );
    ServerConfig {
        command: Some("sh".into()),
        args: vec!["-c".into(), script],
        enabled: true,
        ..ServerConfig::default()
    }
}

/// The `tools/call` requests the shop has read so far.
fn calls_read(dir: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(dir.join("seen"))
        .expect("what the shop read")
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).expect("a JSON line"))
        .filter(|message| message["method"] == "tools/call")
        .collect()
}

/// Ticket T-0009's `get_order_status` call with `arguments`, as the desk plans it.
fn status_plan(arguments: Map<String, Value>, request_id: &str) -> CallPlan {
    CallPlan {
        ticket: "T-0009".into(),
        tool: "get_order_status".into(),
        arguments,
        request_id: request_id.into(),
        retry_if_lost: true,
        timeout: Duration::from_secs(30),
        max_time: Duration::from_secs(60),
        max_rounds: 3,
        max_result_bytes: 65536,
        lead_forms: false,
        progress: None,
        task_pace: Default::default(),
    }
}

#[tokio::test]
async fn a_call_on_stdio_reads_to_the_shop_as_rmcps_own_call_and_is_answered_the_same() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (questions, _nobody) = mpsc::channel(1);
    let conn = ServerConn::connect("shop", &watched_shop(dir.path()), questions, None)
        .await
        .expect("the shop connects");
    let mut arguments = Map::new();
    arguments.insert("order_id".into(), json!("O-1744"));

    let desk = calls::call(&conn, status_plan(arguments.clone(), "T-0009-1")).await;
    assert_eq!(desk.outcome, Outcome::Result, "{}", desk.text);

    let mut params = CallToolRequestParams::new("get_order_status").with_arguments(arguments);
    let mut meta = RequestMetaObject::default();
    meta.0
        .0
        .insert(REQUEST_ID_META.into(), Value::String("T-0009-1".into()));
    params.meta = Some(meta);
    let live = conn.live().await.expect("still connected");
    let rmcps = match live.service.call_tool_once(params).await {
        Ok(CallToolResponse::Complete(result)) => calls::result_text(&result),
        other => panic!("rmcp's call: {other:?}"),
    };
    assert_eq!(desk.text, rmcps);

    let read = calls_read(dir.path());
    assert_eq!(read.len(), 2, "{read:?}");
    let (lane, rmcp) = (&read[0], &read[1]);
    let lane_id = lane["id"].as_i64().expect("a numeric ID");
    let rmcp_id = rmcp["id"].as_i64().expect("a numeric ID");
    assert!(lane_id > i64::from(u32::MAX) && rmcp_id <= i64::from(u32::MAX));
    assert!(lane_id < 1 << 53, "a double holds it exactly");
    // Each carries a progress token of its own: rmcp's a number, the desk's a string.
    let without_token = |message: &Value| {
        let mut params = message["params"].clone();
        let token = params["_meta"]
            .as_object_mut()
            .expect("_meta")
            .remove("progressToken");
        (params, token)
    };
    let (lane_params, lane_token) = without_token(lane);
    let (rmcp_params, rmcp_token) = without_token(rmcp);
    assert!(
        lane_token.as_ref().is_some_and(Value::is_string)
            && rmcp_token.as_ref().is_some_and(Value::is_number),
        "{lane_token:?} {rmcp_token:?}"
    );
    assert_eq!(lane_params, rmcp_params);
    assert_eq!(
        lane["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"],
        "2026-07-28"
    );
}

/// The shop over stdio with `busy_poll_us` on both ends: the desk's `[servers.shop]` window,
/// which the desk hands to the server it starts (no `--busy-poll-us` is given).
fn shop_polling(dir: &std::path::Path, window_us: u64) -> ServerConfig {
    ServerConfig {
        command: Some(BIN.into()),
        args: [
            "serve",
            "shop",
            "--stdio",
            "--db",
            &dir.join(format!("shop-{window_us}.sqlite3"))
                .display()
                .to_string(),
            "--seed",
            "4217",
        ]
        .map(String::from)
        .to_vec(),
        busy_poll_us: Some(window_us),
        enabled: true,
        ..ServerConfig::default()
    }
}

/// What the shop answered to `orders`, asked one after another on the desk's own runtime,
/// whose thread polls a server's stdout while a call waits.
fn answers_on_the_desks_runtime(config: ServerConfig, orders: &[&str]) -> Vec<(Outcome, String)> {
    let runtime = support_desk::startup::desk_runtime().expect("the desk's runtime");
    let orders: Vec<String> = orders.iter().map(|&o| o.to_owned()).collect();
    runtime.block_on(async move {
        let (questions, _nobody) = mpsc::channel(1);
        let conn = ServerConn::connect("shop", &config, questions, None)
            .await
            .expect("the shop connects");
        let mut answers = Vec::new();
        for (n, order) in orders.into_iter().enumerate() {
            let mut arguments = Map::new();
            arguments.insert("order_id".into(), json!(order));
            let run = calls::call(&conn, status_plan(arguments, &format!("T-0009-{n}"))).await;
            answers.push((run.outcome, run.text));
        }
        conn.forget().await;
        answers
    })
}

#[test]
fn calls_answer_the_same_whether_both_ends_poll_their_pipes_or_sleep() {
    let dir = tempfile::tempdir().expect("temp dir");
    // Known orders and an unknown one, each several times: answers back to back, as a fast
    // peer's are, and a tool error among them.
    let orders = ["O-1744", "O-7144", "O-1744", "O-2318", "O-1744", "O-7144"].repeat(5);
    let polling = answers_on_the_desks_runtime(shop_polling(dir.path(), 100), &orders);
    let sleeping = answers_on_the_desks_runtime(shop_polling(dir.path(), 0), &orders);
    assert_eq!(polling.len(), orders.len());
    assert!(
        polling
            .iter()
            .any(|(outcome, _)| *outcome == Outcome::ToolError),
        "O-7144 is no order of the shop's: {polling:?}"
    );
    assert!(
        polling
            .iter()
            .any(|(outcome, _)| *outcome == Outcome::Result),
        "{polling:?}"
    );
    assert_eq!(polling, sleeping);
}

/// One switch for both ends of a pipe: a server's `busy_poll_us` reaches the stdio server the
/// desk starts, and `serve` takes it as its window when no `--busy-poll-us` is given.
#[test]
fn the_desk_hands_a_servers_polling_window_to_the_server_it_starts() {
    let dir = tempfile::tempdir().expect("temp dir");
    let config = shop_polling(dir.path(), 0);
    let db = dir.path().join("shop-0.sqlite3").display().to_string();
    let runtime = support_desk::startup::desk_runtime().expect("the desk's runtime");
    let environ = runtime.block_on(async move {
        let (questions, _nobody) = mpsc::channel(1);
        let conn = ServerConn::connect("shop", &config, questions, None)
            .await
            .expect("the shop connects");
        let environ = started_with(&db);
        conn.forget().await;
        environ
    });
    let window = format!("{}=0", support_desk::wire::busy_poll::WINDOW_ENV);
    assert!(
        environ.contains(&window),
        "the shop's environment: {environ:?}"
    );
    let help = std::process::Command::new(BIN)
        .args(["serve", "shop", "--help"])
        .env(support_desk::wire::busy_poll::WINDOW_ENV, "0")
        .output()
        .expect("serve --help runs");
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(
        help.contains("[env: SUPPORT_DESK_BUSY_POLL_US=0]"),
        "serve shop --help:\n{help}"
    );
}

/// The environment of the one process whose command line names `arg`.
fn started_with(arg: &str) -> Vec<String> {
    let found: Vec<Vec<String>> = std::fs::read_dir("/proc")
        .expect("/proc")
        .flatten()
        .filter_map(|entry| {
            let cmdline = std::fs::read(entry.path().join("cmdline")).ok()?;
            let named = cmdline
                .split(|b| *b == 0)
                .any(|part| part == arg.as_bytes());
            let environ = std::fs::read(entry.path().join("environ")).ok()?;
            let vars = environ
                .split(|b| *b == 0)
                .map(|v| String::from_utf8_lossy(v).into_owned());
            named.then(|| vars.collect())
        })
        .collect();
    assert_eq!(found.len(), 1, "one process started with {arg}");
    found.into_iter().next().unwrap_or_default()
}
