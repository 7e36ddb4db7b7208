//! N `get_order_status` calls on the shop over stdio, through the desk's own client code
//! (`ServerConn` + `host::calls::call`): the Rust half of `benches/compare/run.sh`, which runs
//! `python_calls.py` (the official Python SDK) the same way against the same binary.
//!
//! ```sh
//! COMPARE_CALLS=500 cargo bench --bench compare_calls
//! ```
//!
//! Environment: `COMPARE_CALLS` (default 500), `COMPARE_SERVER` (default: the `support-desk`
//! binary Cargo built for this bench), `COMPARE_DB` (default: a new file in a temporary
//! directory). Prints one JSON line: median and p99 in microseconds, nearest-rank. Both
//! clients list the tools, make 10 untimed calls, then time each call from send to result.

// A benchmark's report is its output.
#![allow(clippy::print_stdout)]

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use serde_json::{Map, Value, json};
use support_desk::config::ServerConfig;
use support_desk::host::api::Outcome;
use support_desk::host::calls::{self, CallPlan};
use support_desk::host::servers::ServerConn;
use tokio::sync::mpsc;

const WARMUP: usize = 10;
const TOOL: &str = "get_order_status";

fn main() -> anyhow::Result<()> {
    let calls: usize = match std::env::var("COMPARE_CALLS") {
        Ok(n) => n.parse().context("COMPARE_CALLS must be a whole number")?,
        Err(_) => 500,
    };
    if calls == 0 {
        bail!("COMPARE_CALLS must be at least 1");
    }
    let server = std::env::var("COMPARE_SERVER")
        .unwrap_or_else(|_| env!("CARGO_BIN_EXE_support-desk").to_owned());
    let scratch = tempfile::tempdir()?;
    let db = std::env::var_os("COMPARE_DB")
        .map(PathBuf::from)
        .unwrap_or_else(|| scratch.path().join("shop.sqlite3"));
    let runtime = tokio::runtime::Runtime::new()?;
    let (protocol, mut spans) = runtime.block_on(time_calls(&server, &db, calls))?;
    spans.sort();
    let micros = |d: Duration| (d.as_nanos() as f64 / 100.0).round() / 10.0;
    let mean = spans.iter().sum::<Duration>() / calls as u32;
    println!(
        "{}",
        json!({
            "client": "support-desk host::calls (rmcp 3.11.0)",
            "server": server,
            "protocol": protocol,
            "calls": calls,
            "median_us": micros(nearest_rank(&spans, 0.50)),
            "p99_us": micros(nearest_rank(&spans, 0.99)),
            "mean_us": micros(mean),
        })
    );
    Ok(())
}

async fn time_calls(
    server: &str,
    db: &std::path::Path,
    calls: usize,
) -> anyhow::Result<(String, Vec<Duration>)> {
    let config = ServerConfig {
        command: Some(server.to_owned()),
        args: vec![
            "serve".into(),
            "shop".into(),
            "--stdio".into(),
            "--db".into(),
            db.display().to_string(),
        ],
        ..ServerConfig::default()
    };
    // Nobody answers questions: get_order_status asks none.
    let (questions, _unanswered) = mpsc::channel(1);
    // connect() lists the tools, as the Python client does before its first call.
    let conn = ServerConn::connect("shop", &config, questions, None).await?;
    let protocol = conn
        .current()
        .await
        .map(|live| live.revision.clone())
        .unwrap_or_default();
    let mut arguments = Map::new();
    arguments.insert("order_id".into(), Value::String("O-1744".into()));
    let plan = |n: usize| CallPlan {
        ticket: "compare".into(),
        tool: TOOL.into(),
        arguments: arguments.clone(),
        request_id: format!("compare-{n}"),
        retry_if_lost: true,
        timeout: Duration::from_secs(10),
        max_rounds: 10,
        max_result_bytes: 65536,
    };
    for n in 0..WARMUP {
        calls::call(&conn, plan(n)).await;
    }
    let mut spans = Vec::with_capacity(calls);
    for n in 0..calls {
        let plan = plan(WARMUP + n);
        let started = Instant::now();
        let run = calls::call(&conn, plan).await;
        spans.push(started.elapsed());
        if run.outcome != Outcome::Result {
            bail!("{TOOL} failed: {}", run.text);
        }
    }
    conn.forget().await;
    Ok((protocol, spans))
}

fn nearest_rank(sorted: &[Duration], fraction: f64) -> Duration {
    let rank = (fraction * sorted.len() as f64).ceil() as usize;
    sorted[rank.saturating_sub(1)]
}
