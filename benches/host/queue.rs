//! `cargo bench --bench host -- queue_10k`: a queue of 10,000 tickets worked by the desk's
//! binary (`support-desk run`, a process of its own, so its memory is its own) against the
//! mock model in this process, which answers every request after 500 ms, at concurrency 32.
//!
//! One-shot and never part of a plain `cargo bench`: the ideal alone is 20,000 model requests
//! x 500 ms / 32 = 312.5 s. Reports the wall time against that ideal and the desk's resident
//! memory (`VmRSS`, `VmHWM` from `/proc/<pid>/status`) as the queue goes by, and last as
//! close to the desk's exit as it can be read, after the desk has summed up the queue.

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::mock_model::{MockModel, queue_worker};
use super::{Report, Runtime, shop_binary, show};

const TICKETS: usize = 10_000;
const CONCURRENCY: usize = 32;
const LATENCY: Duration = Duration::from_millis(500);
const GOAL: f64 = 1.05;
const SAMPLE_EVERY: Duration = Duration::from_millis(250);
/// Every ticket takes the queue worker two model requests: a tool call, then the reply.
const REQUESTS: usize = 2 * TICKETS;
/// How often the desk's memory is read once the model has answered the last request: the
/// desk then sums up the queue and stops within a second, and its high-water mark is read
/// as close to its exit as can be.
const SAMPLE_AT_END: Duration = Duration::from_millis(5);

/// Writes the 10,000-ticket queue (the bundled 48, repeated under new IDs) and a config
/// that points the desk at it.
fn write_queue(dir: &Path) -> std::path::PathBuf {
    let bundled = concat!(env!("CARGO_MANIFEST_DIR"), "/assets/shop/tickets.json");
    let text = std::fs::read_to_string(bundled).expect("the bundled tickets");
    let bundled: Vec<Value> = serde_json::from_str(&text).expect("the bundled tickets' JSON");
    let queue: Vec<Value> = (0..TICKETS)
        .map(|i| {
            let mut ticket = bundled[i % bundled.len()].clone();
            ticket["ticket_id"] = format!("T-{:05}", i + 1).into();
            ticket
        })
        .collect();
    let tickets = dir.join("tickets.json");
    std::fs::write(&tickets, serde_json::to_vec(&queue).expect("JSON")).expect("tickets file");
    let config = dir.join("queue.toml");
    let toml = format!("[tickets]\nsource = {:?}\n", tickets.display().to_string());
    std::fs::write(&config, toml).expect("config file");
    config
}

/// `VmRSS` and `VmHWM` of `pid`, in KiB; `None` once it has exited.
fn memory_kib(pid: u32) -> Option<(u64, u64)> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|rest| rest.split_whitespace().next()?.parse::<u64>().ok())
    };
    Some((field("VmRSS:")?, field("VmHWM:")?))
}

struct Sample {
    at: Duration,
    requests: usize,
    rss_kib: u64,
    hwm_kib: u64,
}

pub(super) fn queue_10k(runtime: &Runtime, report: &mut Report) {
    let scratch = tempfile::tempdir().expect("a scratch directory");
    let config = write_queue(scratch.path());
    let mock = runtime.block_on(MockModel::with_latency(LATENCY, queue_worker()));
    let started = Instant::now();
    let mut desk = Command::new(shop_binary())
        .arg("run")
        .args(["--consent", "approve"])
        .arg("--json")
        .arg("--config")
        .arg(&config)
        .arg("--data-dir")
        .arg(scratch.path().join("data"))
        .arg("--model")
        .arg(format!("openai:{}", mock.url))
        .arg("--concurrency")
        .arg(CONCURRENCY.to_string())
        .stdout(Stdio::piped())
        .stderr(
            std::fs::File::create(scratch.path().join("desk.stderr"))
                .expect("a file for the desk's stderr"),
        )
        .spawn()
        .expect("starting support-desk run");
    let pid = desk.id();
    let mut samples = Vec::new();
    // The mock answers on `runtime`, a current-thread one: it must be driven while we wait.
    runtime.block_on(async {
        while desk.try_wait().expect("waiting for the desk").is_none() {
            let requests = mock.seen(started).requests;
            if let Some((rss_kib, hwm_kib)) = memory_kib(pid) {
                samples.push(Sample {
                    at: started.elapsed(),
                    requests,
                    rss_kib,
                    hwm_kib,
                });
            }
            let pause = if requests >= REQUESTS {
                SAMPLE_AT_END
            } else {
                SAMPLE_EVERY
            };
            tokio::time::sleep(pause).await;
        }
    });
    let wall = started.elapsed();
    let mut summary = String::new();
    if let Some(mut out) = desk.stdout.take() {
        out.read_to_string(&mut summary)
            .expect("the desk's summary");
    }
    let seen = mock.seen(started);
    let record = std::fs::read_dir(scratch.path().join("data"))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.metadata().ok())
        .map(|m| m.len())
        .sum::<u64>();
    let ideal = LATENCY * seen.requests as u32 / CONCURRENCY as u32;
    let wall_over_ideal = wall.as_secs_f64() / ideal.as_secs_f64();
    let summary: Value = serde_json::from_str(&summary).unwrap_or_default();
    if summary.is_null() {
        let stderr =
            std::fs::read_to_string(scratch.path().join("desk.stderr")).unwrap_or_default();
        let tail: Vec<&str> = stderr.lines().rev().take(20).collect();
        report.figures.push(format!(
            "queue_10k: the desk printed no summary ({}); the end of its stderr:\n{}",
            desk.try_wait()
                .ok()
                .flatten()
                .map_or("still running".into(), |s| s.to_string()),
            tail.into_iter().rev().collect::<Vec<_>>().join("\n")
        ));
    }
    let (worked, errors) = (&summary["tickets_worked"], &summary["errors"]);
    report.ratios.push(format!(
        "queue of {TICKETS} tickets at concurrency {CONCURRENCY}, model {}: wall / ideal = {wall_over_ideal:.3}x ({})",
        show(LATENCY),
        if wall_over_ideal <= GOAL { "within 1.05x" } else { "MISSED 1.05x" }
    ));
    report.figures.push(format!(
        "queue_10k: wall {} ideal {} ({} model requests x {} / {CONCURRENCY}); the desk's summary: tickets_worked {worked}, errors {errors}; data dir after: {:.1} MiB",
        show(wall),
        show(ideal),
        seen.requests,
        show(LATENCY),
        record as f64 / 1048576.0,
    ));
    report.figures.push(format!(
        "    start to first model request {}, last reply to end {}; the mock answered in {} per request on average",
        show(seen.first_request),
        show(wall.saturating_sub(seen.last_reply)),
        show(seen.answering / seen.requests.max(1) as u32),
    ));
    // The desk's memory at each tenth of the queue (by model requests answered so far).
    let total = seen.requests.max(1);
    for tenth in 1..=10 {
        let mark = total * tenth / 10;
        if let Some(s) = samples.iter().find(|s| s.requests >= mark) {
            report.figures.push(format!(
                "    at {:>3}% ({:>5} requests, {:>7.1} s): desk VmRSS {:>6.1} MiB, VmHWM {:>6.1} MiB",
                tenth * 10,
                s.requests,
                s.at.as_secs_f64(),
                s.rss_kib as f64 / 1024.0,
                s.hwm_kib as f64 / 1024.0,
            ));
        }
    }
    if let Some(last) = samples.last() {
        report.figures.push(format!(
            "    last sample ({:.1} s): desk VmRSS {:.1} MiB, VmHWM {:.1} MiB ({} samples)",
            last.at.as_secs_f64(),
            last.rss_kib as f64 / 1024.0,
            last.hwm_kib as f64 / 1024.0,
            samples.len(),
        ));
    }
}
