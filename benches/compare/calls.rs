//! N `get_order_status` calls on the shop over stdio, through the desk's own client code
//! (`ServerConn` + `host::calls::call`): the Rust half of `benches/compare/run.sh`, which runs
//! `python_calls.py` (the official Python SDK) the same way against the same binary.
//!
//! ```sh
//! COMPARE_CALLS=500 cargo bench --bench compare_calls
//! COMPARE_CLIENT=floor cargo bench --bench compare_calls
//! ```
//!
//! Environment: `COMPARE_CALLS` (default 500), `COMPARE_SERVER` (default: the `support-desk`
//! binary Cargo built for this bench), `COMPARE_DB` (default: a new file in a temporary
//! directory), `COMPARE_CLIENT`: `desk` (default), `rmcp` (rmcp's own `call_tool_once` on
//! the desk's connection, without `host::calls`) or `floor`, a client with no MCP library
//! at all (blocking pipes, the request lines Python sends, written ahead of time), which
//! shows what the server and the pipes cost any client, or `floor_async`, the floor's
//! exchanges through Tokio's pipes on the desk's runtime (what waiting on the reactor
//! costs, with no MCP library). Two knobs of the floor tell what the
//! server's cost per call depends on (BENCHMARKS.md, 'Tool call against the Python SDK and the floor'): `COMPARE_FLOOR_PAUSE_US`
//! makes it wait that long (spinning, before its timer starts) between an answer and the next
//! request, as a client with work of its own would, and `COMPARE_FLOOR_LINES=desk` makes it
//! send the desk's request lines (its client info, capabilities and request ID) instead of
//! Python's. `COMPARE_RUNTIME`: `desk` (default;
//! the desk's own, `support_desk::startup::desk_runtime()`, one thread) or `multi_thread`
//! (`Runtime::new()`, a thread per core, without the desk's poll before sleeping), for the
//! desk and rmcp clients. `COMPARE_BUSY_POLL_US`: the server's `--busy-poll-us` for every
//! client (Python's too, in `python_calls.py`) and the desk's `busy_poll_us` for its
//! connection (default: the server's and the desk's own default, 100; `0` turns both off).
//!
//! Prints one JSON line: median and p99 in microseconds, nearest-rank, and the CPU time per
//! call of this process (all threads) and of the server process, from
//! `/proc/<pid>/task/*/schedstat`, which a busy machine does not inflate the way it inflates
//! wall time. Every client lists the tools, makes 10 untimed calls, then times each call from
//! send to result.

// A benchmark's report is its output.
#![allow(clippy::print_stdout)]

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use rmcp::model::{CallToolRequestParams, CallToolResponse};
use serde_json::{Map, Value, json};
use support_desk::config::ServerConfig;
use support_desk::host::api::Outcome;
use support_desk::host::servers::calls::{self, CallPlan};
use support_desk::host::servers::connect::ServerConn;
use tokio::sync::mpsc;

support_desk::global_allocator!();

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
    if let Ok(us) = std::env::var("COMPARE_BUSY_POLL_US") {
        us.parse::<u64>()
            .context("COMPARE_BUSY_POLL_US must be a whole number of microseconds")?;
    }
    let server = std::env::var("COMPARE_SERVER")
        .unwrap_or_else(|_| env!("CARGO_BIN_EXE_support-desk").to_owned());
    let scratch = tempfile::tempdir()?;
    let db = std::env::var_os("COMPARE_DB")
        .map(PathBuf::from)
        .unwrap_or_else(|| scratch.path().join("shop.sqlite3"));
    let client_kind = std::env::var("COMPARE_CLIENT");
    let (client, timed) = match client_kind.as_deref() {
        Ok("desk" | "rmcp") | Err(_) => {
            let bare = kind_is_rmcp(client_kind.as_deref());
            let (runtime, on) = match std::env::var("COMPARE_RUNTIME").as_deref() {
                Ok("desk") | Err(_) => {
                    (support_desk::startup::desk_runtime()?, "the desk's runtime")
                }
                Ok("multi_thread") => (tokio::runtime::Runtime::new()?, "a multi-thread runtime"),
                Ok(other) => bail!("COMPARE_RUNTIME is desk or multi_thread, not {other}"),
            };
            let client = if bare {
                format!("rmcp 3.11.0 call_tool_once on the desk's connection, {on}")
            } else {
                format!("support-desk host::calls (rmcp 3.11.0), {on}")
            };
            let (on_server, on_db) = (server.clone(), db.clone());
            let timed = as_task(&runtime, async move {
                desk_calls(&on_server, &on_db, calls, bare).await
            })?;
            (client, timed)
        }
        Ok("floor") => (
            "floor: blocking pipes, no MCP library".to_owned(),
            floor_calls(&server, &db, calls)?,
        ),
        Ok("floor_async") => {
            let (on_server, on_db) = (server.clone(), db.clone());
            let timed = as_task(&support_desk::startup::desk_runtime()?, async move {
                floor_async_calls(&on_server, &on_db, calls).await
            })?;
            (
                "floor_async: Tokio's pipes on the desk's runtime, no MCP library".to_owned(),
                timed,
            )
        }
        Ok(other) => {
            bail!("COMPARE_CLIENT is desk, rmcp, floor or floor_async, not {other}")
        }
    };
    println!("{}", report(&client, &server, timed));
    Ok(())
}

/// One client's figures as the JSON line `run.sh` reads.
fn report(client: &str, server: &str, timed: Timed) -> Value {
    let Timed {
        protocol,
        server_pid,
        mut spans,
        client_cpu,
        server_cpu,
    } = timed;
    let calls = spans.len() as u32;
    spans.sort();
    let mean = spans.iter().sum::<Duration>() / calls;
    json!({
        "client": client,
        "server": server,
        "protocol": protocol,
        "calls": calls,
        "median_us": micros(nearest_rank(&spans, 0.50)),
        "p99_us": micros(nearest_rank(&spans, 0.99)),
        "mean_us": micros(mean),
        "client_cpu_us_per_call": micros(client_cpu / calls),
        "server_cpu_us_per_call": micros(server_cpu / calls),
        "client_pid": std::process::id(),
        "server_pid": server_pid,
    })
}

fn micros(d: Duration) -> f64 {
    (d.as_nanos() as f64 / 100.0).round() / 10.0
}

fn kind_is_rmcp(kind: Result<&str, &std::env::VarError>) -> bool {
    matches!(kind, Ok("rmcp"))
}

struct Timed {
    protocol: String,
    server_pid: u32,
    spans: Vec<Duration>,
    client_cpu: Duration,
    server_cpu: Duration,
}

impl Timed {
    /// A floor client's figures: its spans, and the CPU this process and `server_pid` used
    /// since `before` (the two CPU times as [`cpu_time`] read them then).
    fn floor(
        server_pid: u32,
        spans: Vec<Duration>,
        before: (Duration, Duration),
    ) -> anyhow::Result<Self> {
        let (client_after, server_after) = (cpu_time(std::process::id())?, cpu_time(server_pid)?);
        Ok(Self {
            protocol: PROTOCOL.to_owned(),
            server_pid,
            spans,
            client_cpu: client_after - before.0,
            server_cpu: server_after - before.1,
        })
    }
}

fn serve_shop_args(db: &Path) -> Vec<String> {
    let busy_poll = busy_poll_us()
        .into_iter()
        .flat_map(|us| ["--busy-poll-us".to_owned(), us.to_string()]);
    ["serve", "shop", "--stdio", "--db"]
        .map(String::from)
        .into_iter()
        .chain([db.display().to_string()])
        .chain(busy_poll)
        .collect()
}

/// `COMPARE_BUSY_POLL_US`, when set: how long both ends poll their pipe before sleeping
/// (`main` has checked that it is a number).
fn busy_poll_us() -> Option<u64> {
    std::env::var("COMPARE_BUSY_POLL_US").ok()?.parse().ok()
}

/// The desk's plan for call `n`: what `host::calls::call` is given for each.
fn order_plan(n: usize) -> CallPlan {
    let mut arguments = Map::new();
    arguments.insert("order_id".into(), Value::String("O-1744".into()));
    CallPlan {
        ticket: "compare".into(),
        tool: TOOL.into(),
        arguments,
        request_id: format!("compare-{n}"),
        retry_if_lost: true,
        timeout: Duration::from_secs(10),
        max_time: Duration::from_secs(300),
        max_rounds: 10,
        max_result_bytes: 65536,
        lead_forms: false,
        progress: None,
        task_pace: Default::default(),
    }
}

/// The desk's connection to a shop server on `db`, with the revision it speaks.
async fn desk_connect(
    server: &str,
    db: &Path,
    questions: mpsc::Sender<support_desk::host::api::Question>,
) -> anyhow::Result<(ServerConn, String)> {
    let config = ServerConfig {
        command: Some(server.to_owned()),
        args: serve_shop_args(db),
        busy_poll_us: busy_poll_us(),
        ..ServerConfig::default()
    };
    // connect() lists the tools, as the Python client does before its first call.
    let conn = ServerConn::connect("shop", &config, questions, None).await?;
    let protocol = conn
        .current()
        .await
        .map(|live| live.revision.clone())
        .unwrap_or_default();
    Ok((conn, protocol))
}

/// Runs `work` as a task spawned on `runtime`, as the desk's host loop runs (`host::task`),
/// not as the future `block_on` drives: a task that wakes that future makes the runtime poll
/// its driver once more before polling it (an `epoll_wait` per call the desk does not make).
fn as_task<T: Send + 'static>(
    runtime: &tokio::runtime::Runtime,
    work: impl std::future::Future<Output = anyhow::Result<T>> + Send + 'static,
) -> anyhow::Result<T> {
    runtime.block_on(async { tokio::spawn(work).await? })
}

/// `bare`: rmcp's own `call_tool_once` on the desk's connection instead of the desk's
/// `host::calls::call`, to tell rmcp's share of the client's cost from the desk's.
async fn desk_calls(server: &str, db: &Path, calls: usize, bare: bool) -> anyhow::Result<Timed> {
    // Nobody answers questions: get_order_status asks none.
    let (questions, _unanswered) = mpsc::channel(1);
    let (conn, protocol) = desk_connect(server, db, questions).await?;
    let arguments = order_plan(0).arguments;
    let live = conn
        .current()
        .await
        .context("the shop's connection went away after connecting")?;
    let bare_call = || async {
        let params = CallToolRequestParams::new(TOOL).with_arguments(arguments.clone());
        match live.service.call_tool_once(params).await {
            Ok(CallToolResponse::Complete(result)) if result.is_error != Some(true) => Ok(()),
            other => Err(anyhow::anyhow!(
                "{TOOL} did not answer with a result: {other:?}"
            )),
        }
    };
    for n in 0..WARMUP {
        if bare {
            bare_call().await?;
        } else {
            calls::call(&conn, order_plan(n)).await;
        }
    }
    // Made before the CPU is counted, as the floor's request lines are.
    let plans: Vec<CallPlan> = (0..calls).map(|n| order_plan(WARMUP + n)).collect();
    let child = only_child()?;
    let (client_before, server_before) = (cpu_time(std::process::id())?, cpu_time(child)?);
    let mut spans = Vec::with_capacity(calls);
    for plan in plans {
        let started = Instant::now();
        if bare {
            bare_call().await?;
            spans.push(started.elapsed());
            continue;
        }
        let run = calls::call(&conn, plan).await;
        spans.push(started.elapsed());
        if run.outcome != Outcome::Result {
            bail!("{TOOL} failed: {}", run.text);
        }
    }
    let (client_after, server_after) = (cpu_time(std::process::id())?, cpu_time(child)?);
    conn.forget().await;
    Ok(Timed {
        protocol,
        server_pid: child,
        spans,
        client_cpu: client_after - client_before,
        server_cpu: server_after - server_before,
    })
}

const PROTOCOL: &str = "2026-07-28";

/// The lines a floor client sends: the handshake's two, the warm-up calls, the timed calls.
struct FloorLines {
    discover: String,
    list: String,
    warmup: Vec<String>,
    timed: Vec<String>,
}

impl FloorLines {
    fn new(calls: usize) -> anyhow::Result<Self> {
        let meta = json!({
            "io.modelcontextprotocol/protocolVersion": PROTOCOL,
            "io.modelcontextprotocol/clientInfo": {"name": "floor", "version": "0.1.0"},
            "io.modelcontextprotocol/clientCapabilities": {},
        });
        let request = |id: usize, method: &str, params: Value| {
            let mut line =
                json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string();
            line.push('\n');
            line
        };
        let desk_lines = match std::env::var("COMPARE_FLOOR_LINES").as_deref() {
            Ok("desk") => true,
            Ok("python") | Err(_) => false,
            Ok(other) => bail!("COMPARE_FLOOR_LINES is python or desk, not {other}"),
        };
        let call = |id: usize| {
            let meta = if desk_lines {
                json!({
                    "io.modelcontextprotocol/protocolVersion": PROTOCOL,
                    "io.modelcontextprotocol/clientInfo": {"name": "support-desk", "version": "0.1.0"},
                    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}, "url": {}}},
                    "dev.support-desk/request-id": format!("compare-{id}"),
                })
            } else {
                meta.clone()
            };
            request(
                id,
                "tools/call",
                json!({"name": TOOL, "arguments": {"order_id": "O-1744"}, "_meta": meta}),
            )
        };
        Ok(Self {
            discover: request(0, "server/discover", json!({"_meta": meta})),
            list: request(1, "tools/list", json!({"_meta": meta})),
            warmup: (0..WARMUP).map(|n| call(2 + n)).collect(),
            timed: (0..calls).map(|n| call(2 + WARMUP + n)).collect(),
        })
    }
}

/// How long the floor waits between an answer and its next request (`COMPARE_FLOOR_PAUSE_US`).
fn floor_pause() -> anyhow::Result<Duration> {
    match std::env::var("COMPARE_FLOOR_PAUSE_US") {
        Ok(us) => Ok(Duration::from_micros(
            us.parse()
                .context("COMPARE_FLOOR_PAUSE_US must be a whole number")?,
        )),
        Err(_) => Ok(Duration::ZERO),
    }
}

fn spin(pause: Duration) {
    let paused = Instant::now();
    while paused.elapsed() < pause {
        std::hint::spin_loop();
    }
}

fn check_answer(answer: &str) -> anyhow::Result<()> {
    if !answer.contains("\"isError\":false") {
        bail!("{TOOL} failed: {answer}");
    }
    Ok(())
}

/// The shop server on `db`, for a floor client: piped stdin and stdout, no stderr.
fn shop_command(server: &str, db: &Path) -> Command {
    let mut command = Command::new(server);
    command
        .args(serve_shop_args(db))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    command
}

/// A floor client's server: blocking pipes, the handshake done.
struct FloorPipes {
    child: std::process::Child,
    to_server: std::process::ChildStdin,
    from_server: BufReader<std::process::ChildStdout>,
    answer: String,
}

impl FloorPipes {
    fn start(server: &str, db: &Path, lines: &FloorLines) -> anyhow::Result<Self> {
        let mut child = shop_command(server, db)
            .spawn()
            .with_context(|| format!("starting {server}"))?;
        let mut pipes = Self {
            to_server: child.stdin.take().context("the server's stdin")?,
            from_server: BufReader::new(child.stdout.take().context("the server's stdout")?),
            child,
            answer: String::new(),
        };
        pipes.exchange(&lines.discover)?;
        pipes.exchange(&lines.list)?;
        Ok(pipes)
    }

    /// Sends `line` and reads the answer to it.
    fn exchange(&mut self, line: &str) -> anyhow::Result<&str> {
        self.to_server.write_all(line.as_bytes())?;
        self.to_server.flush()?;
        // Skip notifications; the one request in flight is answered next.
        loop {
            self.answer.clear();
            if self.from_server.read_line(&mut self.answer)? == 0 {
                bail!("the server closed its stdout");
            }
            if self.answer.contains("\"id\"") {
                return Ok(&self.answer);
            }
        }
    }

    fn stop(mut self) -> anyhow::Result<()> {
        self.child.kill()?;
        self.child.wait()?;
        Ok(())
    }
}

/// The least a client can do: one thread, blocking pipes, each request line prepared before
/// its timer starts, the answer read as one line and checked by a substring.
fn floor_calls(server: &str, db: &Path, calls: usize) -> anyhow::Result<Timed> {
    let lines = FloorLines::new(calls)?;
    let mut pipes = FloorPipes::start(server, db, &lines)?;
    let pause = floor_pause()?;
    for line in &lines.warmup {
        pipes.exchange(line)?;
    }
    let server_pid = pipes.child.id();
    let (client_before, server_before) = (cpu_time(std::process::id())?, cpu_time(server_pid)?);
    let mut spans = Vec::with_capacity(calls);
    for line in &lines.timed {
        spin(pause);
        let started = Instant::now();
        let answer = pipes.exchange(line)?;
        spans.push(started.elapsed());
        check_answer(answer)?;
    }
    let timed = Timed::floor(server_pid, spans, (client_before, server_before))?;
    pipes.stop()?;
    Ok(timed)
}

/// The floor's exchanges through Tokio's pipes on the desk's runtime instead of blocking
/// ones: what waiting on the reactor costs, with no MCP library and no other work.
async fn floor_async_calls(server: &str, db: &Path, calls: usize) -> anyhow::Result<Timed> {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    let mut child = tokio::process::Command::from(shop_command(server, db))
        .spawn()
        .with_context(|| format!("starting {server}"))?;
    let mut to_server = child.stdin.take().context("the server's stdin")?;
    let mut from_server =
        tokio::io::BufReader::new(child.stdout.take().context("the server's stdout")?);
    let mut answer = String::new();
    let lines = FloorLines::new(calls)?;
    let pause = floor_pause()?;
    let server_pid = child.id().context("the server's pid")?;
    let mut cpu_before = None;
    let mut spans = Vec::with_capacity(calls);
    let untimed = [&lines.discover, &lines.list]
        .into_iter()
        .chain(&lines.warmup);
    for (n, line) in untimed.chain(&lines.timed).enumerate() {
        let timed = n >= 2 + WARMUP;
        if timed && cpu_before.is_none() {
            cpu_before = Some((cpu_time(std::process::id())?, cpu_time(server_pid)?));
        }
        if timed {
            spin(pause);
        }
        let started = Instant::now();
        to_server.write_all(line.as_bytes()).await?;
        loop {
            answer.clear();
            if from_server.read_line(&mut answer).await? == 0 {
                bail!("the server closed its stdout");
            }
            if answer.contains("\"id\"") {
                break;
            }
        }
        if timed {
            spans.push(started.elapsed());
            check_answer(&answer)?;
        }
    }
    let timed = Timed::floor(server_pid, spans, cpu_before.context("no timed calls")?)?;
    child.kill().await?;
    Ok(timed)
}

/// Time on a CPU of every thread of a process so far.
fn cpu_time(pid: u32) -> anyhow::Result<Duration> {
    let mut nanos = 0u64;
    for task in std::fs::read_dir(format!("/proc/{pid}/task"))? {
        let schedstat = std::fs::read_to_string(task?.path().join("schedstat"))?;
        let on_cpu = schedstat.split_whitespace().next().unwrap_or("0");
        nanos += on_cpu.parse::<u64>().context("schedstat's first field")?;
    }
    Ok(Duration::from_nanos(nanos))
}

/// The server: the one child process of this one.
fn only_child() -> anyhow::Result<u32> {
    match children()?[..] {
        [child] => Ok(child),
        ref children => bail!("expected one server process, found children {children:?}"),
    }
}

/// This process's child processes.
fn children() -> anyhow::Result<Vec<u32>> {
    let me = std::process::id();
    let mut children = Vec::new();
    for entry in std::fs::read_dir("/proc")? {
        let entry = entry?;
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // pid (comm) state ppid ...; comm may hold spaces and parentheses.
        let after_comm = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
        let ppid = after_comm.split_whitespace().nth(1);
        if ppid.and_then(|p| p.parse::<u32>().ok()) == Some(me) {
            children.push(pid);
        }
    }
    Ok(children)
}

fn nearest_rank(sorted: &[Duration], fraction: f64) -> Duration {
    let rank = (fraction * sorted.len() as f64).ceil() as usize;
    sorted[rank.saturating_sub(1)]
}
