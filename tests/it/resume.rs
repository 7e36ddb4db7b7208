//! Crash safety: `support-desk run` killed with SIGKILL in the middle of the queue, then
//! continued with `run --resume`. Nothing finished is worked again, and a ticket stopped
//! after a refund went out goes to a person instead of refunding twice.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support_desk::record::Event;
use support_desk::recording::Recording;
use support_desk::shop::{QuoteIds, ShopWorld, SqliteStore};

use crate::mock_model::{Brain, MockModel, call, tool_messages, words};
use crate::support::BIN;

/// The ticket the run is killed in: a refund ticket in the middle of the queue, stopped
/// after its issue_refund answered and before the model wrote the reply.
const KILLED_IN: &str = "T-0013";
const MODEL_LATENCY: Duration = Duration::from_millis(50);
const CLOSING: &str = "Thank you for writing. A colleague will follow up with you.";

/// The ticket a request is about, from the ticket message ("Ticket T-0013 from …").
fn ticket_of(request: &Value) -> String {
    request["messages"]
        .as_array()
        .and_then(|m| m.iter().find(|m| m["role"] == "user"))
        .and_then(|m| m["content"].as_str())
        .and_then(|c| c.split_whitespace().nth(1))
        .unwrap_or_default()
        .to_owned()
}

/// The first `Q-` and ten hex digits in a tool result.
fn quote_id(text: &str) -> Option<String> {
    text.match_indices("Q-").find_map(|(at, _)| {
        let id = text.get(at..at + 12)?;
        id[2..]
            .bytes()
            .all(|b| b.is_ascii_hexdigit())
            .then(|| id.to_owned())
    })
}

/// A slow model that works every ticket: refund tickets get a quote and then the refund,
/// the rest a look at the customer's orders. In `KILLED_IN`, once, it holds its reply after
/// the refund until `released`, so the test can kill the run right there.
fn refunding_brain(released: Arc<AtomicBool>) -> Brain {
    let tickets: BTreeMap<String, _> = support_desk::tickets::bundled()
        .into_iter()
        .map(|t| (t.ticket_id.clone(), t))
        .collect();
    let held_once = AtomicBool::new(false);
    Arc::new(move |request: &Value| {
        std::thread::sleep(MODEL_LATENCY);
        let id = ticket_of(request);
        let Some(ticket) = tickets.get(&id) else {
            return words(CLOSING);
        };
        let label = crate::support::label(&id);
        let refund_order = label
            .order_id
            .as_deref()
            .filter(|_| label.expected_tool == "issue_refund");
        let results = tool_messages(request);
        match (refund_order, results.as_slice()) {
            (Some(order), []) => call(
                "shop__quote_refund",
                json!({"order_id": order, "reason": "arrived damaged"}),
            ),
            (None, []) => call(
                "shop__find_orders",
                json!({"customer_id": ticket.customer_id}),
            ),
            (Some(_), [quote]) => match quote_id(quote) {
                Some(quote) => call("shop__issue_refund", json!({"quote_id": quote})),
                None => words(CLOSING),
            },
            _ => {
                if id == KILLED_IN && !held_once.swap(true, Ordering::SeqCst) {
                    let until = Instant::now() + Duration::from_secs(120);
                    while !released.load(Ordering::SeqCst) && Instant::now() < until {
                        std::thread::sleep(Duration::from_millis(10));
                    }
                }
                words(CLOSING)
            }
        }
    })
}

/// Model requests per ticket, as the mock model got them.
fn requests_per_ticket(model: &MockModel) -> BTreeMap<String, usize> {
    let mut counts = BTreeMap::new();
    for request in model.requests() {
        *counts.entry(ticket_of(&request)).or_default() += 1;
    }
    counts
}

struct Desk {
    dir: tempfile::TempDir,
    source: String,
}

impl Desk {
    /// A desk whose shop keeps its database in a file, so refunds outlive the killed run.
    fn new(model: &MockModel) -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let db = dir.path().join("shop.sqlite3");
        let config = format!(
            "[servers.shop]\nargs = [\"serve\", \"shop\", \"--stdio\", \"--db\", {db:?}, \"--seed\", \"4217\"]\n",
            db = db.display().to_string()
        );
        std::fs::write(dir.path().join("desk.toml"), config).expect("write the config");
        Self {
            dir,
            source: format!("openai:{}", model.url),
        }
    }

    fn recording(&self) -> PathBuf {
        self.dir.path().join("run.jsonl")
    }

    /// `support-desk run` with this desk's flags and `extra`.
    fn command(&self, extra: &[&str]) -> tokio::process::Command {
        self.command_with_model(&self.source, extra)
    }

    fn command_with_model(&self, source: &str, extra: &[&str]) -> tokio::process::Command {
        let mut command = tokio::process::Command::new(BIN);
        command
            .args(["run", "--model", source, "--model-name", "mock", "--json"])
            .arg("--config")
            .arg(self.dir.path().join("desk.toml"))
            .arg("--data-dir")
            .arg(self.dir.path().join("data"))
            .args(extra)
            .env("RUST_LOG", "warn")
            .stdin(Stdio::null());
        // Approving is said, unless this run says otherwise.
        if !extra.contains(&"--consent") {
            command.args(["--consent", "approve"]);
        }
        command
    }

    async fn resume(&self, extra: &[&str]) -> Output {
        let recording = self.recording();
        let mut args = vec!["--resume", recording.to_str().expect("utf-8 path")];
        args.extend_from_slice(extra);
        self.command(&args).output().await.expect("run the binary")
    }

    /// Every refund in the shop's database, by quote.
    fn refunds(&self) -> Vec<String> {
        let world = ShopWorld::bundled();
        let store = SqliteStore::open(
            &self.dir.path().join("shop.sqlite3"),
            &world,
            QuoteIds::Seeded(4217),
        )
        .expect("open the shop's database");
        world
            .orders
            .iter()
            .flat_map(|order| store.order(&order.order_id).expect("order").1)
            .map(|refund| refund.quote_id)
            .collect()
    }
}

fn summary(output: &Output) -> Value {
    assert!(
        output.status.success(),
        "the command failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("one JSON object on stdout")
}

/// The lines of a recording that were written whole, parsed; a cut last line is left out.
fn whole_lines(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.split_inclusive('\n')
        .filter(|line| line.ends_with('\n'))
        .map(|line| serde_json::from_str(line).expect("every whole line is JSON"))
        .collect()
}

fn is_event(line: &Value, event: &str, ticket: &str) -> bool {
    line["event"] == event && line["ticket"] == ticket
}

/// Starts the run and kills it with SIGKILL once `KILLED_IN`'s refund has answered.
async fn run_until_killed(desk: &Desk) {
    let recording = desk.recording();
    let stderr = std::fs::File::create(desk.dir.path().join("killed.stderr")).expect("log");
    let mut child = desk
        .command(&["--record", recording.to_str().expect("utf-8 path")])
        .stdout(Stdio::null())
        .stderr(stderr)
        .spawn()
        .expect("start the run");
    let pid = child.id().expect("the run has a pid");
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let lines = whole_lines(&recording);
        let refunded = lines.iter().any(|line| {
            is_event(line, "outcome", KILLED_IN) && line["tool"] == "shop.issue_refund"
        });
        if refunded {
            break;
        }
        if let Some(status) = child.try_wait().expect("poll the run") {
            let log = std::fs::read_to_string(desk.dir.path().join("killed.stderr"));
            panic!("the run ended ({status}) before {KILLED_IN} refunded: {log:?}");
        }
        assert!(
            Instant::now() < deadline,
            "{KILLED_IN} never reached issue_refund"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let killed = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("kill -9 {pid}"))
        .status()
        .expect("run kill");
    assert!(killed.success(), "kill -9 {pid}");
    child.wait().await.expect("reap the killed run");
}

fn model_calls(recording: &Recording) -> BTreeMap<String, usize> {
    let mut counts = BTreeMap::new();
    for event in &recording.events {
        if let Event::ModelCall { ticket, .. } = event {
            *counts.entry(ticket.clone()).or_default() += 1;
        }
    }
    counts
}

fn issued_quotes(recording: &Recording) -> Vec<String> {
    recording
        .events
        .iter()
        .filter_map(|event| match event {
            Event::ToolCall {
                tool, arguments, ..
            } if tool == "shop.issue_refund" => arguments["quote_id"].as_str().map(str::to_owned),
            _ => None,
        })
        .collect()
}

#[test]
fn a_killed_run_resumes_without_working_anything_twice() {
    // The brain sleeps on its thread: it gets a runtime of its own, so the test's timers
    // keep running while it holds a reply.
    let model_runtime = tokio::runtime::Runtime::new().expect("the model's runtime");
    let released = Arc::new(AtomicBool::new(false));
    let model = model_runtime.block_on(MockModel::start(refunding_brain(Arc::clone(&released))));
    let runtime = tokio::runtime::Runtime::new().expect("the test's runtime");
    runtime.block_on(killed_and_resumed(&model, &released));
}

async fn killed_and_resumed(model: &MockModel, released: &AtomicBool) {
    let desk = Desk::new(model);

    run_until_killed(&desk).await;
    released.store(true, Ordering::SeqCst);
    let killed = Recording::read(&desk.recording()).expect("readable after kill -9");
    let written = whole_lines(&desk.recording()).len();
    assert_eq!(
        killed.manifests.len() + killed.events.len(),
        written,
        "every whole line is read back"
    );
    let finished: Vec<String> = killed
        .finished_tickets()
        .into_iter()
        .map(str::to_owned)
        .collect();
    assert!(!finished.is_empty(), "tickets finished before the kill");
    assert!(!finished.iter().any(|t| t == KILLED_IN));
    let quotes_before_kill = issued_quotes(&killed);
    assert!(
        quotes_before_kill.len() >= 2,
        "refunds went out before the kill: {quotes_before_kill:?}"
    );
    // Let the held reply reach the dead connection before counting.
    tokio::time::sleep(MODEL_LATENCY * 2).await;
    let asked_before = requests_per_ticket(model);

    let resumed = summary(&desk.resume(&[]).await);
    assert_eq!(resumed["tickets_worked"], 48);

    let whole = Recording::read(&desk.recording()).expect("readable after resuming");
    assert!(!whole.truncated);
    let mut done: BTreeMap<&str, usize> = BTreeMap::new();
    for ticket in whole.finished_tickets() {
        *done.entry(ticket).or_default() += 1;
    }
    assert_eq!(done.len(), 48, "every ticket is done");
    assert!(done.values().all(|&n| n == 1), "each done once: {done:?}");

    let asked_after = requests_per_ticket(model);
    let recorded_before = model_calls(&killed);
    let recorded_after = model_calls(&whole);
    for ticket in finished.iter().map(String::as_str).chain([KILLED_IN]) {
        assert_eq!(
            asked_after.get(ticket),
            asked_before.get(ticket),
            "{ticket} was not worked again"
        );
        assert_eq!(recorded_after.get(ticket), recorded_before.get(ticket));
    }
    let handed_over = whole.events.iter().find_map(|event| match event {
        Event::TicketDone { ticket, error, .. } if ticket == KILLED_IN => error.clone(),
        _ => None,
    });
    let handed_over = handed_over.expect("the interrupted ticket is settled with a reason");
    assert!(
        handed_over.contains("shop.issue_refund") && handed_over.contains("not worked again"),
        "{handed_over}"
    );
    assert!(resumed["flagged_for_person"].as_u64() >= Some(1));
    assert!(resumed["errors"].as_u64() >= Some(1));

    let mut quotes = issued_quotes(&whole);
    assert!(quotes.len() > quotes_before_kill.len(), "the rest refunded");
    let mut refunds = desk.refunds();
    quotes.sort();
    refunds.sort();
    let sent = quotes.len();
    quotes.dedup();
    assert_eq!(
        quotes.len(),
        sent,
        "no quote was sent to issue_refund twice"
    );
    assert_eq!(
        refunds, quotes,
        "one refund in the shop per issue_refund sent"
    );

    // Resuming a finished recording works nothing and reports the same whole run.
    let again = summary(&desk.resume(&[]).await);
    assert_eq!(again, resumed);
    assert_eq!(requests_per_ticket(model), asked_after);
    let recorded = tokio::process::Command::new(BIN)
        .arg("summary")
        .arg(desk.recording())
        .arg("--json")
        .output()
        .await
        .expect("run the binary");
    assert_eq!(summary(&recorded), resumed, "`summary` reads the same run");
}

#[tokio::test]
async fn resuming_with_other_settings_than_recorded_is_refused() {
    let model = MockModel::start(crate::mock_model::queue_worker()).await;
    let desk = Desk::new(&model);
    let recording = desk.recording();
    let output = desk
        .command(&[
            "--tickets",
            "T-0001",
            "--record",
            recording.to_str().expect("utf-8 path"),
        ])
        .output()
        .await
        .expect("run");
    assert!(output.status.success());
    let before = std::fs::read(&recording).expect("recorded");

    let declined = desk.resume(&["--consent", "decline"]).await;
    assert!(!declined.status.success());
    let stderr = String::from_utf8_lossy(&declined.stderr);
    assert!(
        stderr.contains(r#"--consent: "script: approve" in the recording, "script: decline" now"#),
        "{stderr}"
    );

    let other_model = desk
        .command_with_model(
            "openai:http://127.0.0.1:9/v1",
            &["--resume", recording.to_str().expect("utf-8 path")],
        )
        .output()
        .await
        .expect("run");
    assert!(!other_model.status.success());
    let stderr = String::from_utf8_lossy(&other_model.stderr);
    assert!(stderr.contains("--model: \"openai:"), "{stderr}");
    assert_eq!(
        std::fs::read(&recording).expect("still there"),
        before,
        "a refused resume writes nothing"
    );
}
