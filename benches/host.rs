//! The host's own costs, against the bundled servers, as BENCHMARKS.md reports them.
//!
//! ```sh
//! cargo bench --bench host                  # all three groups, a few minutes on 2 cores
//! cargo bench --bench host -- tool_call     # the benchmarks whose name holds a word:
//! cargo bench --bench host -- stdio         #   a group, a function or a transport
//! ```
//!
//! - `tool_call`: one `shop.get_order_status` call, in-process and over stdio, at three depths:
//!   rmcp's own `call_tool_once` (the bare call), the desk's `host::calls::call` (timeout,
//!   request ID, result text and cap), and a whole ticket with one call minus a ticket with none
//!   (route, consent check, call, recording, one more replayed model turn). Criterion times
//!   each; then one loop times every call alone, the paths taking turns, for the median and
//!   p99 and the ratios between paths.
//! - `replay`: the committed 48-ticket recording replayed through `commands::run::run` against
//!   the bundled servers, the shop as the built binary over stdio.
//! - `draft_check`: the draft check over one run-on reply of hedged, negated and quoted
//!   claims at 10, 100 and 1,000 repeats, as bytes per second: a check whose time grows
//!   with the reply holds its rate as the reply grows, one that grows with its square does not.
//! - `concurrency`: the 48 tickets against a mock OpenAI-compatible model that answers every
//!   request after a fixed 100 ms, at concurrency 1, 4 and 8, against the ideal.
//! - `queue_10k` (only by that name, `cargo bench --bench host -- queue_10k`): 10,000 tickets
//!   through the desk's binary at concurrency 32, the mock answering after 500 ms; the wall
//!   time against the ideal and the desk's memory along the queue (`host/queue.rs`).
//!
//! The stdio shop is the `support-desk` binary Cargo builds for this bench (same profile),
//! copied aside when the bench starts, so a rebuild during the run cannot swap it.

// A benchmark's report is its output.
#![allow(clippy::print_stdout)]

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, SamplingMode, Throughput};
use rmcp::model::{CallToolRequestParams, CallToolResponse};
use serde_json::{Map, Value, json};
use support_desk::commands::run::{self as headless, RunOptions, Script};
use support_desk::config::{DeskConfig, ServerConfig};
use support_desk::host::api::Outcome;
use support_desk::host::core::{Host, Storage};
use support_desk::host::servers::calls::{self, CallPlan};
use support_desk::host::servers::connect::{CONNECT_TIMEOUT, Live, Reach, ServerConn};
use support_desk::model::Model;
use support_desk::recording::{Recorder, Recording};

use support_desk::tickets::Ticket;
use tokio::runtime::Runtime;
use tokio::sync::mpsc;

use mock_model::{
    Brain, MockModel, ModelSeen, call, first_user_message, queue_worker, tool_has_answered, words,
};

support_desk::global_allocator!();

const BUILT_BIN: &str = env!("CARGO_BIN_EXE_support-desk");
const RECORDING: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/recordings/ticket-runs");
/// How long the mock model takes to answer each request in the concurrency group.
const MODEL_LATENCY: Duration = Duration::from_millis(100);
const CONCURRENCY: [usize; 3] = [1, 4, 8];

const REPLAY_GOAL: Duration = Duration::from_secs(2);
const CONCURRENCY_GOAL: f64 = 1.2;

fn main() {
    let selection = Selection::from_args();
    // The desk's own runtime (one thread), so the in-process figures are the desk's.
    let runtime = support_desk::startup::desk_runtime().expect("a tokio runtime");
    let mut criterion = Criterion::default().configure_from_args();
    let mut report = Report {
        // Criterion's --test and --list runs write no estimates: older ones may be on disk.
        read_criterion: !selection.quick,
        ..Report::default()
    };
    let timed = Timed::counts(selection.quick);
    tool_call(&mut criterion, &runtime, &selection, &timed, &mut report);
    if selection.wants("replay/ticket_runs_48") {
        replay(&mut criterion, &runtime, &timed, &mut report);
    }
    if selection.wants("draft_check") {
        draft_check(&mut criterion);
    }
    if selection.wants("concurrency") && !selection.quick {
        concurrency(&runtime, &mut report);
    }
    // Five minutes or more: only when asked for by name.
    if selection.filter.as_deref() == Some("queue_10k") {
        queue::queue_10k(&runtime, &mut report);
    }
    criterion.final_summary();
    report.print();
    // Statics are never dropped: remove the copied binary here.
    if let Some((dir, _)) = SHOP_BINARY.get() {
        let _ = std::fs::remove_dir_all(dir.path());
    }
}

// ---------------------------------------------------------------------------------------
// tool_call

#[derive(Clone, Copy)]
enum Transport {
    InProcess,
    Stdio,
}

impl Transport {
    const ALL: [Transport; 2] = [Transport::InProcess, Transport::Stdio];

    fn name(self) -> &'static str {
        match self {
            Transport::InProcess => "in_process",
            Transport::Stdio => "stdio",
        }
    }

    fn shop(self) -> ServerConfig {
        match self {
            Transport::InProcess => ServerConfig {
                in_process: Some("shop".into()),
                attach_resources: true,
                enabled: true,
                ..ServerConfig::default()
            },
            Transport::Stdio => shop_stdio(),
        }
    }
}

/// The binary this bench was built with, copied aside on first use; `main` removes the copy.
static SHOP_BINARY: OnceLock<(tempfile::TempDir, String)> = OnceLock::new();

fn shop_binary() -> &'static str {
    &SHOP_BINARY
        .get_or_init(|| {
            let dir = tempfile::tempdir().expect("a directory for the binary");
            let copy = dir.path().join("support-desk");
            std::fs::copy(BUILT_BIN, &copy).expect("a copy of the built binary");
            let copy = copy.display().to_string();
            (dir, copy)
        })
        .1
}

/// The shop as the built binary on a fresh in-memory database, as the default config has it.
fn shop_stdio() -> ServerConfig {
    ServerConfig {
        command: Some(shop_binary().to_owned()),
        args: [
            "serve", "shop", "--stdio", "--db", ":memory:", "--seed", "4217",
        ]
        .map(String::from)
        .to_vec(),
        attach_resources: true,
        enabled: true,
        ..ServerConfig::default()
    }
}

fn order_arguments() -> Map<String, Value> {
    let mut arguments = Map::new();
    arguments.insert("order_id".into(), Value::String("O-1744".into()));
    arguments
}

/// rmcp's own client call, with nothing of the desk around it: the bare call.
async fn rmcp_call(live: &Live) {
    let params = CallToolRequestParams::new("get_order_status").with_arguments(order_arguments());
    match live.service.call_tool_once(params).await {
        Ok(CallToolResponse::Complete(result)) if result.is_error != Some(true) => {}
        other => panic!("get_order_status did not answer with a result: {other:?}"),
    }
}

/// The desk's call path: `host::calls::call`, as the host makes it for an allowed read.
async fn desk_call(conn: &ServerConn) {
    let plan = CallPlan {
        ticket: "bench".into(),
        tool: "get_order_status".into(),
        arguments: order_arguments(),
        request_id: "bench-1".into(),
        retry_if_lost: true,
        timeout: Duration::from_secs(10),
        max_time: Duration::from_secs(300),
        max_rounds: 10,
        max_result_bytes: 65536,
        lead_forms: false,
        progress: None,
        task_pace: Default::default(),
    };
    let run = calls::call(conn, plan).await;
    assert_eq!(run.outcome, Outcome::Result, "{}", run.text);
}

/// A host whose replayed model makes exactly one allowed call on one ticket and none on
/// another. The replay is recorded here first, against a mock model on 127.0.0.1, so it
/// matches this host's prompt and tools exactly.
struct TicketBench {
    host: Arc<Host>,
    with_call: Ticket,
    without_call: Ticket,
}

const WITH_CALL: &str = "T-0009";
const WITHOUT_CALL: &str = "T-0010";

async fn ticket_bench(transport: Transport, scratch: &Path) -> TicketBench {
    let mock = MockModel::start(one_call_brain()).await;
    let recorded = scratch.join(format!("one-call-{}", transport.name()));
    let mut config = DeskConfig::bundled();
    config.servers.insert("shop".into(), transport.shop());
    config.model.source = format!("openai:{}", mock.url);
    let model = support_desk::startup::build_model(&config).expect("the mock model's config");
    let recorder = Recorder::create(&recorded).expect("a recording in the scratch directory");
    let host = start_host(config.clone(), model, Some(recorder)).await;
    let with_call = ticket(&host, WITH_CALL);
    let without_call = ticket(&host, WITHOUT_CALL);
    let run = host.work_ticket(&with_call, None).await;
    assert_eq!((run.model_calls, &run.error), (2, &None), "{run:?}");
    let run = host.work_ticket(&without_call, None).await;
    assert_eq!((run.model_calls, &run.error), (1, &None), "{run:?}");
    host.shutdown().await;

    let replay = Recording::open_model(&recorded).expect("the recording just made");
    config.model.source = format!("replay:{}", recorded.display());
    let recorder = Recorder::create(&scratch.join(format!("bench-{}", transport.name())))
        .expect("a recording in the scratch directory");
    let host = start_host(config, Model::Replay(replay), Some(recorder)).await;
    let bench = TicketBench {
        host,
        with_call,
        without_call,
    };
    assert_eq!(bench.work(true).await, 2);
    assert_eq!(bench.work(false).await, 1);
    bench
}

impl TicketBench {
    /// Works one ticket; returns its model calls, having checked it did not diverge.
    async fn work(&self, with_call: bool) -> u32 {
        let ticket = if with_call {
            &self.with_call
        } else {
            &self.without_call
        };
        let run = self.host.work_ticket(ticket, None).await;
        assert_eq!(run.error, None, "the replay diverged");
        run.model_calls
    }
}

/// A host as the desk starts one: no data directory (pins in memory, no desk state), a
/// person who approves, a lead who declines.
async fn start_host(config: DeskConfig, model: Model, recorder: Option<Recorder>) -> Arc<Host> {
    let (questions_tx, questions_rx) = mpsc::channel(8);
    let (events_tx, mut events_rx) = mpsc::unbounded_channel();
    tokio::spawn(async move { while events_rx.recv().await.is_some() {} });
    tokio::spawn(headless::answer_by_script(
        questions_rx,
        Script {
            approve_consent: true,
            accept_forms: false,
        },
        headless::RUN_PERSON.to_owned(),
    ));
    let parts = support_desk::startup::host_parts(
        config,
        model,
        support_desk::tickets::bundled(),
        Storage::default(),
        recorder,
    );
    Host::start(parts, questions_tx, events_tx).await
}

fn ticket(host: &Host, id: &str) -> Ticket {
    host.tickets()
        .iter()
        .find(|t| t.ticket_id == id)
        .cloned()
        .expect("a bundled ticket")
}

fn tool_call(
    criterion: &mut Criterion,
    runtime: &Runtime,
    selection: &Selection,
    timed: &Timed,
    report: &mut Report,
) {
    let scratch = tempfile::tempdir().expect("a scratch directory");
    let mut group = criterion.benchmark_group("tool_call");
    group
        .sample_size(30)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    for transport in Transport::ALL {
        let name = transport.name();
        let wants = |function: &str| selection.wants(&format!("tool_call/{function}/{name}"));
        let calls: Vec<&str> = ["rmcp", "desk_call"]
            .into_iter()
            .filter(|f| wants(f))
            .collect();
        if !calls.is_empty() {
            let (questions, _unanswered) = mpsc::channel(1);
            // The in-process shop is one of the servers this binary carries, as the CLI has it.
            let reach = Reach {
                connect_timeout: CONNECT_TIMEOUT,
                builtins: support_desk::startup::bundled_servers(),
                ..Reach::default()
            };
            let conn = runtime
                .block_on(ServerConn::connect_with(
                    "shop",
                    &transport.shop(),
                    questions,
                    reach,
                ))
                .expect("the shop connects");
            let live = runtime.block_on(conn.live()).expect("a live connection");
            let call = async |function: &str| match function {
                "rmcp" => rmcp_call(&live).await,
                _ => desk_call(&conn).await,
            };
            for &function in &calls {
                group.bench_function(BenchmarkId::new(function, name), |b| {
                    b.iter_custom(|iters| total(runtime, iters, async || call(function).await))
                });
            }
            let timed_calls = interleaved(runtime, timed.calls, calls.len(), async |i| {
                call(calls[i]).await
            });
            for (function, spans) in calls.iter().zip(&timed_calls) {
                report.spans("tool_call", function, name, spans);
            }
            runtime.block_on(conn.forget());
        }
        let tickets: Vec<&str> = ["ticket_one_call", "ticket_no_call"]
            .into_iter()
            .filter(|f| wants(f))
            .collect();
        if !tickets.is_empty() {
            let bench = runtime.block_on(ticket_bench(transport, scratch.path()));
            let work = async |function: &str| {
                bench.work(function == "ticket_one_call").await;
            };
            for &function in &tickets {
                group.bench_function(BenchmarkId::new(function, name), |b| {
                    b.iter_custom(|iters| total(runtime, iters, async || work(function).await))
                });
            }
            let timed_tickets = interleaved(runtime, timed.tickets, tickets.len(), async |i| {
                work(tickets[i]).await
            });
            for (function, spans) in tickets.iter().zip(&timed_tickets) {
                report.spans("tool_call", function, name, spans);
            }
            runtime.block_on(bench.host.shutdown());
        }
    }
    group.finish();
    for transport in Transport::ALL {
        report.tool_call_ratios(transport.name());
    }
}

// ---------------------------------------------------------------------------------------
// replay

fn replay(criterion: &mut Criterion, runtime: &Runtime, timed: &Timed, report: &mut Report) {
    let scratch = tempfile::tempdir().expect("a scratch directory");
    let runs = AtomicUsize::new(0);
    let replay_once = || {
        let n = runs.fetch_add(1, Ordering::Relaxed);
        let dir = scratch.path().join(format!("run-{n}"));
        let mut config = DeskConfig::bundled();
        config.model.source = format!("replay:{RECORDING}");
        config.servers.insert("shop".into(), shop_stdio());
        let options = RunOptions {
            tickets: vec![],
            lead_given: false,
            prompt: None,
            script: Script {
                approve_consent: true,
                accept_forms: false,
            },
            record: Some(dir.join("replay")),
            store: None,
            data_dir: Some(dir.join("data")),
            notes: Default::default(),
            allow_missing: false,
        };
        let started = Instant::now();
        let summary = runtime
            .block_on(headless::run(config, options))
            .expect("the replay runs");
        let took = started.elapsed();
        assert_eq!(
            (summary.tickets_worked, summary.errors),
            (48, 0),
            "the replay must work all 48 tickets without diverging"
        );
        took
    };
    let mut group = criterion.benchmark_group("replay");
    group
        .sample_size(10)
        .sampling_mode(SamplingMode::Flat)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(10));
    group.bench_function("ticket_runs_48", |b| {
        b.iter_custom(|iters| (0..iters).map(|_| replay_once()).sum())
    });
    group.finish();
    let replays: Vec<Duration> = (0..timed.replays).map(|_| replay_once()).collect();
    report.spans("replay", "ticket_runs_48", "", &replays);
    report.replay_goal();
}

// ---------------------------------------------------------------------------------------
// draft_check

fn draft_check(criterion: &mut Criterion) {
    use support_desk::host::checks::{CallFact, check_reply};
    let unit = "We have not issued refunds, and the refund of €24.90 has been issued if needed; \
        quote_id: Q-1a2b3c4d5e, see [ { < KP123456789 on May 17 and İ can't help ";
    let calls = [CallFact {
        tool: "shop.quote_refund".into(),
        turn: 1,
        outcome: Outcome::Result,
        arguments: Map::new(),
        result: r#"{"quote_id": "Q-1a2b3c4d5e", "amount": "24.90"}"#.into(),
    }];
    let tools = [
        "shop.quote_refund".to_owned(),
        "shop.issue_refund".to_owned(),
    ];
    let mut group = criterion.benchmark_group("draft_check");
    group
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5));
    for repeats in [10, 100, 1000] {
        let text = unit.repeat(repeats);
        group.throughput(Throughput::Bytes(text.len() as u64));
        group.bench_with_input(BenchmarkId::new("run_on", repeats), &text, |b, text| {
            b.iter(|| check_reply(text, &calls, "my order", &tools, "The team"))
        });
    }
    group.finish();
}

// ---------------------------------------------------------------------------------------
// concurrency

fn concurrency(runtime: &Runtime, report: &mut Report) {
    for concurrency in CONCURRENCY {
        let scratch = tempfile::tempdir().expect("a scratch directory");
        let (wall, model) = runtime.block_on(async {
            let mock = MockModel::with_latency(MODEL_LATENCY, queue_worker()).await;
            let mut config = DeskConfig::bundled();
            config.model.source = format!("openai:{}", mock.url);
            config.limits.concurrency = concurrency;
            config.servers.insert("shop".into(), shop_stdio());
            let options = RunOptions {
                tickets: vec![],
                lead_given: false,
                prompt: None,
                script: Script {
                    approve_consent: true,
                    accept_forms: false,
                },
                record: None,
                store: None,
                data_dir: Some(scratch.path().join("data")),
                notes: Default::default(),
                allow_missing: false,
            };
            let started = Instant::now();
            let summary = headless::run(config, options).await.expect("the run");
            let wall = started.elapsed();
            assert_eq!((summary.tickets_worked, summary.errors), (48, 0));
            (wall, mock.seen(started))
        });
        report.concurrency(concurrency, wall, model);
    }
}

// ---------------------------------------------------------------------------------------
// timing

/// Runs `f` `iters` times and returns the time they took together (criterion's iter_custom).
fn total(runtime: &Runtime, iters: u64, f: impl AsyncFn()) -> Duration {
    runtime.block_on(async {
        let started = Instant::now();
        for _ in 0..iters {
            f().await;
        }
        started.elapsed()
    })
}

/// Times `n` runs of each of `paths` one by one, taking turns (0, 1, 0, 1, …) so that a
/// busy moment on the machine falls on all of them alike, after as many untimed rounds as
/// a tenth of `n`. Returns each path's spans.
fn interleaved(
    runtime: &Runtime,
    n: usize,
    paths: usize,
    f: impl AsyncFn(usize),
) -> Vec<Vec<Duration>> {
    runtime.block_on(async {
        for _ in 0..n / 10 {
            for path in 0..paths {
                f(path).await;
            }
        }
        let mut spans = vec![Vec::with_capacity(n); paths];
        for _ in 0..n {
            for (path, spans) in spans.iter_mut().enumerate() {
                let started = Instant::now();
                f(path).await;
                spans.push(started.elapsed());
            }
        }
        spans
    })
}

fn nearest_rank(sorted: &[Duration], fraction: f64) -> Duration {
    let rank = (fraction * sorted.len() as f64).ceil() as usize;
    sorted[rank.saturating_sub(1)]
}

/// How many runs the timed loops make.
struct Timed {
    /// Calls timed one by one for the median and p99 of each call path.
    calls: usize,
    /// Tickets timed one by one for each ticket path.
    tickets: usize,
    /// Whole replays of the queue.
    replays: usize,
}

impl Timed {
    fn counts(quick: bool) -> Self {
        if quick {
            Self {
                calls: 10,
                tickets: 10,
                replays: 1,
            }
        } else {
            Self {
                calls: 2000,
                tickets: 1000,
                replays: 10,
            }
        }
    }
}

struct Figure {
    median: Duration,
    p99: Duration,
    n: usize,
    /// Criterion's median of its sample means, from its estimates.json, when found.
    criterion_median: Option<Duration>,
}

#[derive(Default)]
struct Report {
    read_criterion: bool,
    timed: Vec<(String, Figure)>,
    ratios: Vec<String>,
    figures: Vec<String>,
}

impl Report {
    fn spans(&mut self, group: &str, function: &str, parameter: &str, spans: &[Duration]) {
        let mut sorted = spans.to_vec();
        sorted.sort();
        let id = [group, function, parameter]
            .iter()
            .filter(|s| !s.is_empty())
            .copied()
            .collect::<Vec<_>>()
            .join("/");
        let timed = Figure {
            median: nearest_rank(&sorted, 0.50),
            p99: nearest_rank(&sorted, 0.99),
            n: sorted.len(),
            criterion_median: self.read_criterion.then(|| criterion_median(&id)).flatten(),
        };
        self.figures.push(format!(
            "{id:<38} median {:>10}   p99 {:>10}   (n = {}; criterion's median {})",
            show(timed.median),
            show(timed.p99),
            timed.n,
            timed.criterion_median.map_or("not read".into(), show),
        ));
        self.timed.push((id, timed));
    }

    fn median(&self, id: &str) -> Option<Duration> {
        self.timed
            .iter()
            .find(|(i, _)| i == id)
            .map(|(_, figure)| figure.median)
    }

    /// The ratios of one transport, when all four of its call paths were timed.
    fn tool_call_ratios(&mut self, transport: &str) {
        let median = |function: &str| self.median(&format!("tool_call/{function}/{transport}"));
        let (Some(rmcp), Some(desk), Some(one), Some(none)) = (
            median("rmcp"),
            median("desk_call"),
            median("ticket_one_call"),
            median("ticket_no_call"),
        ) else {
            return;
        };
        let marginal = one.saturating_sub(none);
        self.ratios.push(format!(
            "{transport}: desk call / rmcp call = {:.2}x ({} vs {}); a ticket's cost per tool call (one-call ticket minus no-call ticket) = {} = {:.2}x the rmcp call",
            ratio(desk, rmcp),
            show(desk),
            show(rmcp),
            show(marginal),
            ratio(marginal, rmcp),
        ));
    }

    fn replay_goal(&mut self) {
        let Some(median) = self.median("replay/ticket_runs_48") else {
            return;
        };
        self.ratios.push(format!(
            "replay of 48 tickets: median {} = {:.2}x the 2 s goal ({})",
            show(median),
            ratio(median, REPLAY_GOAL),
            if median < REPLAY_GOAL {
                "met"
            } else {
                "MISSED"
            }
        ));
    }

    fn concurrency(&mut self, concurrency: usize, wall: Duration, model: ModelSeen) {
        // Every ticket makes the same number of model requests, so the ideal packs them
        // perfectly: per-ticket model time x 48 / concurrency.
        let requests = model.requests;
        let ideal = MODEL_LATENCY * requests as u32 / concurrency as u32;
        let wall_over_ideal = ratio(wall, ideal);
        let queue = model.last_reply.saturating_sub(model.first_request);
        // What the host itself adds per ticket, with the model's real answering time taken
        // out (exact at concurrency 1; at higher concurrency the tickets overlap).
        let answering_per_slot = model.answering / concurrency as u32;
        let host_per_ticket = wall.saturating_sub(answering_per_slot) * concurrency as u32 / 48;
        self.figures.push(format!(
            "concurrency {concurrency}: wall {} ideal {} ({requests} model requests x {} / {concurrency})",
            show(wall),
            show(ideal),
            show(MODEL_LATENCY),
        ));
        self.figures.push(format!(
            "    start to first model request {}, first request to last reply {} ({:.3}x ideal), last reply to end {}",
            show(model.first_request),
            show(queue),
            ratio(queue, ideal),
            show(wall.saturating_sub(model.last_reply)),
        ));
        self.figures.push(format!(
            "    the mock really answered in {} per request on average; wall minus that model time, per ticket per slot: {}",
            show(model.answering / requests.max(1) as u32),
            show(host_per_ticket),
        ));
        self.ratios.push(format!(
            "concurrency {concurrency}: wall / ideal = {wall_over_ideal:.3}x ({})",
            if wall_over_ideal <= CONCURRENCY_GOAL {
                "within 1.2x"
            } else {
                "MISSED 1.2x"
            }
        ));
    }

    fn print(&self) {
        println!("\n== host bench report ==");
        println!("ratios:");
        for line in &self.ratios {
            println!("  {line}");
        }
        println!("figures (each span timed alone; median and p99 nearest-rank):");
        for line in &self.figures {
            println!("  {line}");
        }
    }
}

fn ratio(a: Duration, b: Duration) -> f64 {
    a.as_secs_f64() / b.as_secs_f64()
}

fn show(d: Duration) -> String {
    let seconds = d.as_secs_f64();
    if seconds < 1e-3 {
        format!("{:.1} us", seconds * 1e6)
    } else if seconds < 1.0 {
        format!("{:.2} ms", seconds * 1e3)
    } else {
        format!("{seconds:.3} s")
    }
}

/// Criterion's median for a benchmark, read back from `target/criterion/<id>/new/estimates.json`.
fn criterion_median(id: &str) -> Option<Duration> {
    let home = std::env::var_os("CRITERION_HOME")
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("CARGO_TARGET_DIR").map(|dir| PathBuf::from(dir).join("criterion"))
        })
        .or_else(|| {
            // target/<profile>/deps/host-<hash>
            let exe = std::env::current_exe().ok()?;
            Some(exe.parent()?.parent()?.parent()?.join("criterion"))
        })?;
    let text = std::fs::read_to_string(home.join(id).join("new/estimates.json")).ok()?;
    let estimates: Value = serde_json::from_str(&text).ok()?;
    let nanos = estimates["median"]["point_estimate"].as_f64()?;
    Some(Duration::from_nanos(nanos as u64))
}

/// Which benchmarks to run: criterion's filter (the first word that is not an option) is
/// read as a word of the name, `group/function/transport`, for the timed loops as well.
struct Selection {
    filter: Option<String>,
    /// `cargo test --benches` runs each benchmark once, `--list` none: the timed loops
    /// then make a few runs only, and the concurrency group is skipped.
    quick: bool,
}

impl Selection {
    fn from_args() -> Self {
        const TAKES_VALUE: [&str; 16] = [
            "--save-baseline",
            "--baseline",
            "--baseline-lenient",
            "--load-baseline",
            "--sample-size",
            "--warm-up-time",
            "--measurement-time",
            "--nresamples",
            "--noise-threshold",
            "--confidence-level",
            "--significance-level",
            "--profile-time",
            "--color",
            "--output-format",
            "--plotting-backend",
            "--format",
        ];
        let args: Vec<String> = std::env::args().skip(1).collect();
        let mut filter = None;
        let mut skip_next = false;
        for arg in &args {
            if skip_next {
                skip_next = false;
            } else if TAKES_VALUE.contains(&arg.as_str()) {
                skip_next = true;
            } else if !arg.starts_with('-') && filter.is_none() {
                filter = Some(arg.clone());
            }
        }
        Self {
            filter,
            quick: args.iter().any(|a| a == "--test" || a == "--list"),
        }
    }

    fn wants(&self, id: &str) -> bool {
        self.filter.as_deref().is_none_or(|f| id.contains(f))
    }
}

// ---------------------------------------------------------------------------------------
// The tests' mock OpenAI-compatible model on 127.0.0.1, with a fixed latency per request.

#[path = "host/queue.rs"]
mod queue;

#[path = "../tests/it/mock_model.rs"]
#[allow(dead_code)] // the benches use a part of what the tests need
mod mock_model;

/// One allowed call on WITH_CALL, then words; words at once on any other ticket.
fn one_call_brain() -> Brain {
    Arc::new(|request: &Value| {
        let messages = request["messages"].as_array().cloned().unwrap_or_default();
        let ticket = first_user_message(&messages);
        if !tool_has_answered(&messages) && ticket.starts_with(&format!("Ticket {WITH_CALL} ")) {
            call("shop__get_order_status", json!({"order_id": "O-1744"}))
        } else {
            words("Thank you for writing. Your order O-1744 is on its way.")
        }
    })
}
