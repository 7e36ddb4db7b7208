//! What appending one event to the desk's record costs: `DeskRecord::append` on a file in a
//! temporary directory, opened as the desk opens it (`DeskRecord::open_for_work`). An append
//! returns once its line is in the journal (durable against a killed process); the SQLite
//! tables (WAL, `synchronous = NORMAL`) follow on the record's own thread, so the report also
//! says how far behind they were and how long they took to catch up.
//!
//! ```sh
//! cargo bench --bench record
//! ```
//!
//! Criterion times appends of a `ToolCall` event (tickets taking turns); then one loop times
//! 20,000 appends one by one (a `TicketStarted` and three `ToolCall`s per ticket, 5,000
//! tickets) for the median, p99 and worst, against the 50 µs p99 goal, with p90 to p99.9 and
//! how many appends took over 250 µs. Then how long a read waited for the tables to hold
//! every event (a read queues behind the appends before it), and the journal's and the WAL's
//! sizes. The load average is printed beside the figures.

// A benchmark's report is its output.
#![allow(clippy::print_stdout)]

use std::time::{Duration, Instant};

use criterion::Criterion;
use serde_json::{Map, Value};
use support_desk::record::Event;
use support_desk::record::store::DeskRecord;

support_desk::global_allocator!();

const TIMED_TICKETS: usize = 5_000;
const CALLS_PER_TICKET: u32 = 3;
const P99_GOAL: Duration = Duration::from_micros(50);
/// Past this, an append waited on something else: a checkpoint, the journal emptied, the CPU.
const SLOW: Duration = Duration::from_micros(250);

fn started(ticket: &str) -> Event {
    Event::TicketStarted {
        ticket: ticket.to_owned(),
        tools: vec!["shop.get_order_status".into(), "shop.find_orders".into()],
        attached: vec![],
        request: None,
    }
}

fn tool_call(ticket: &str, turn: u32) -> Event {
    let mut arguments = Map::new();
    arguments.insert("order_id".into(), Value::String("O-1744".into()));
    Event::ToolCall {
        ticket: ticket.to_owned(),
        turn,
        tool: "shop.get_order_status".into(),
        arguments,
    }
}

fn open(dir: &std::path::Path) -> DeskRecord {
    DeskRecord::open_for_work(
        &dir.join("desk.sqlite3"),
        Some(&dir.join("outbox.jsonl")),
        "bench",
        &["shop.get_order_status".to_owned()],
    )
    .expect("open the desk's record")
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

fn nearest_rank(sorted: &[Duration], fraction: f64) -> Duration {
    let rank = (fraction * sorted.len() as f64).ceil() as usize;
    sorted[rank.saturating_sub(1)]
}

fn micros(d: Duration) -> f64 {
    d.as_nanos() as f64 / 1000.0
}

/// A file beside the record (`desk.sqlite3-wal`, `desk.journal`), in KiB (0 when there is none).
fn kib(dir: &std::path::Path, file: &str) -> u64 {
    std::fs::metadata(dir.join(file)).map_or(0, |m| m.len() / 1024)
}

const WAL: &str = "desk.sqlite3-wal";
const JOURNAL: &str = "desk.journal";

fn main() {
    let mut criterion = Criterion::default().sample_size(20).configure_from_args();
    let quick = std::env::args().any(|a| a == "--test" || a == "--list");
    let scratch = tempfile::tempdir().expect("a scratch directory");
    let record = open(scratch.path());
    // Tickets to append to: started once, then a tool call per append.
    let tickets: Vec<String> = (0..64).map(|n| format!("T-B{n:04}")).collect();
    for ticket in &tickets {
        record.append(&started(ticket)).expect("append");
    }
    let mut n = 0u32;
    criterion.bench_function("record/append_tool_call", |b| {
        b.iter_custom(|iters| {
            let events: Vec<Event> = (0..iters)
                .map(|_| {
                    n += 1;
                    tool_call(&tickets[n as usize % tickets.len()], n)
                })
                .collect();
            let begun = Instant::now();
            for event in &events {
                record.append(event).expect("append");
            }
            begun.elapsed()
        })
    });
    criterion.final_summary();
    drop(record);

    let scratch = tempfile::tempdir().expect("a scratch directory");
    let record = open(scratch.path());
    let tickets = if quick { 10 } else { TIMED_TICKETS };
    let before = load_average();
    let mut spans = Vec::with_capacity(tickets * (1 + CALLS_PER_TICKET as usize));
    let (mut wal_max, mut journal_max) = (0, 0);
    for t in 0..tickets {
        let ticket = format!("T-{t:05}");
        let mut events = vec![started(&ticket)];
        events.extend((1..=CALLS_PER_TICKET).map(|turn| tool_call(&ticket, turn)));
        for event in &events {
            let begun = Instant::now();
            record.append(event).expect("append");
            spans.push(begun.elapsed());
        }
        if t % 100 == 0 {
            wal_max = wal_max.max(kib(scratch.path(), WAL));
            journal_max = journal_max.max(kib(scratch.path(), JOURNAL));
        }
    }
    // A read runs once the tables hold every event appended before it.
    let begun = Instant::now();
    let last = record.last_seq().expect("a read");
    let caught_up = begun.elapsed();
    let after = load_average();
    let wal_end = kib(scratch.path(), WAL);
    let journal_end = kib(scratch.path(), JOURNAL);
    spans.sort();
    let p99 = nearest_rank(&spans, 0.99);
    println!("\n== record bench report ==");
    println!("load average before {before}, after {after}");
    println!(
        "DeskRecord::append, {} appends ({tickets} tickets: TicketStarted + {CALLS_PER_TICKET} ToolCall each), file in a temp dir via open_for_work",
        spans.len()
    );
    println!(
        "  median {:.1} us  p99 {:.1} us  max {:.1} us  -> p99 = {:.2}x the 50 us goal ({})",
        micros(nearest_rank(&spans, 0.50)),
        micros(p99),
        micros(spans[spans.len() - 1]),
        micros(p99) / micros(P99_GOAL),
        if p99 <= P99_GOAL { "met" } else { "MISSED" },
    );
    println!(
        "  p90 {:.1} us  p95 {:.1} us  p99.5 {:.1} us  p99.9 {:.1} us",
        micros(nearest_rank(&spans, 0.90)),
        micros(nearest_rank(&spans, 0.95)),
        micros(nearest_rank(&spans, 0.995)),
        micros(nearest_rank(&spans, 0.999)),
    );
    let slow = spans.iter().filter(|d| **d > SLOW).count();
    println!(
        "  appends over {} us: {slow} ({:.2} % of them)",
        SLOW.as_micros(),
        100.0 * slow as f64 / spans.len() as f64
    );
    println!(
        "  the tables caught up with event {last} {:.1} us after the last append returned",
        micros(caught_up)
    );
    println!(
        "  journal: at most {journal_max} KiB while appending (sampled every 100 tickets), {journal_end} KiB at the end"
    );
    println!(
        "  WAL file: at most {wal_max} KiB while appending (sampled every 100 tickets), {wal_end} KiB at the end"
    );
    drop(record);
    println!(
        "  once the record is closed: WAL {} KiB, journal {} KiB",
        kib(scratch.path(), WAL),
        kib(scratch.path(), JOURNAL)
    );
}
