//! The lead's report over a big record: 10,000 tickets and 100,000 events (two weeks of a
//! busy desk: half by mail, half from a file, a lead's approval on one in twenty), read from
//! the record and computed as `support-desk report` does (`report::read`), against the goal of
//! under a second. On one person's SQLite file, and on a team's PostgreSQL when the machine
//! has one (a throwaway cluster on 127.0.0.1, as the tests start one).
//!
//! ```sh
//! cargo bench --bench report
//! ```
//!
//! The SQLite record is written through the record's own API, with a clock the bench moves;
//! the PostgreSQL one is the same events inserted by the cluster's administrator in batches
//! (through the desk, 100,000 appends would take minutes), then read by a member of the team.

// A benchmark's report is its output.
#![allow(clippy::print_stdout)]

use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{Duration, Instant};

use criterion::Criterion;
use serde_json::{Map, Value};
use support_desk::mail::message::{Address, Message};
use support_desk::record::{DeskRecord, Event, Outcome, RECORD_FILE, Record};
use support_desk::report::Settings;
use support_desk::sla::Sla;

#[path = "../tests/it/pg_cluster.rs"]
#[allow(
    dead_code,
    reason = "the tests use more of the fixture than this bench"
)]
mod pg_cluster;

support_desk::global_allocator!();

const TICKETS: usize = 10_000;
const EVENTS_PER_TICKET: usize = 10;
/// Monday 23 November 2026, 08:00 UTC: the first ticket arrives.
const START: i64 = 1_795_420_800_000 + 8 * 3_600_000;
/// Two weeks, over which the tickets arrive evenly.
const PERIOD: i64 = 14 * 86_400_000;
const MINUTE: i64 = 60_000;
const GOAL: Duration = Duration::from_secs(1);
const PG_BATCH: usize = 5_000;

static CLOCK: AtomicI64 = AtomicI64::new(START);

fn clock() -> i64 {
    CLOCK.load(Ordering::Relaxed)
}

fn mail(ticket: &str, i: usize) -> Event {
    Event::MessageReceived {
        ticket: ticket.to_owned(),
        message: Box::new(Message {
            message_id: format!("m{i}@example.net"),
            from: Address {
                address: format!("customer{i}@example.net"),
                name: None,
            },
            date: None,
            subject: "Where is my order?".into(),
            text: "I ordered a watering can two weeks ago and it has not come.".into(),
            quoted: None,
            attachments: vec![],
            in_reply_to: None,
            references: vec![],
            automatic: None,
            size: 600,
            problems: vec![],
        }),
        mailbox: "maildir".into(),
        uid: None,
        customer: None,
        mark: None,
    }
}

fn tool_call(ticket: &str, turn: u32) -> Event {
    let mut arguments = Map::new();
    arguments.insert("order_id".into(), Value::String("O-1873".into()));
    Event::ToolCall {
        ticket: ticket.to_owned(),
        turn,
        tool: "shop.get_order_status".into(),
        arguments,
    }
}

fn outcome(ticket: &str, turn: u32) -> Event {
    Event::Outcome {
        ticket: ticket.to_owned(),
        turn,
        tool: "shop.get_order_status".into(),
        outcome: Outcome::Result,
        text: r#"{"order_id":"O-1873","status":"shipped","parcel":"PT-1"}"#.into(),
        truncated: false,
    }
}

/// Ticket `i`'s ten events, each with its minute after the ticket arrived.
fn ticket_events(i: usize) -> Vec<(i64, Event)> {
    let by_mail = i.is_multiple_of(2);
    let ticket = if by_mail {
        format!("M-{i:05}")
    } else {
        format!("T-{i:05}")
    };
    let t = ticket.as_str();
    let mut events = vec![
        (0, mail(t, i)),
        (
            2,
            Event::TicketStarted {
                ticket: t.to_owned(),
                tools: vec!["shop.get_order_status".into()],
                attached: vec![],
                request: None,
            },
        ),
        (3, tool_call(t, 1)),
        (4, outcome(t, 1)),
    ];
    if !by_mail {
        events.remove(0);
    }
    if !by_mail && i % 20 == 1 {
        let approval = i64::try_from(i).unwrap_or(i64::MAX);
        events.push((
            5,
            Event::ApprovalAsked {
                ticket: t.to_owned(),
                turn: 2,
                approval,
                server: "shop".into(),
                tool: "shop.issue_refund".into(),
                message: "Release refund?".into(),
            },
        ));
        events.push((
            45,
            Event::ApprovalAnswered {
                ticket: t.to_owned(),
                turn: 2,
                approval,
                by: "lee".into(),
                tool: "shop.issue_refund".into(),
                action: "accept".into(),
                content: Some(r#"{"release":true}"#.into()),
                outcome: Outcome::Result,
                text: r#"{"amount":"180.00","status":"released","currency":"EUR"}"#.into(),
                truncated: false,
            },
        ));
    } else {
        events.push((5, tool_call(t, 2)));
        events.push((6, outcome(t, 2)));
    }
    events.push((
        50,
        Event::Draft {
            ticket: t.to_owned(),
            text: "Your watering can left our warehouse on Friday and arrives tomorrow.".into(),
            findings: vec![],
        },
    ));
    events.push((
        51,
        Event::TicketDone {
            ticket: t.to_owned(),
            model_calls: 3,
            stopped_at_turn_limit: false,
            error: None,
        },
    ));
    if by_mail {
        events.push((
            55,
            Event::Sent {
                ticket: t.to_owned(),
                by: "dana".into(),
                text: "Your watering can left our warehouse on Friday.".into(),
                override_reason: None,
                message_id: Some(format!("r{i}@fernbrook.example")),
                answers: Some(format!("m{i}@example.net")),
            },
        ));
        events.push((
            24 * 60,
            Event::Solved {
                ticket: t.to_owned(),
                by: "dana".into(),
                note: None,
            },
        ));
    } else {
        events.push((
            54,
            Event::DraftEdited {
                ticket: t.to_owned(),
                by: "dana".into(),
                text: "Your watering can left on Friday; it arrives tomorrow.".into(),
                findings: vec![],
            },
        ));
        events.push((
            55,
            Event::Sent {
                ticket: t.to_owned(),
                by: "dana".into(),
                text: "Your watering can left on Friday; it arrives tomorrow.".into(),
                override_reason: None,
                message_id: None,
                answers: None,
            },
        ));
        events.push((
            60,
            Event::Noted {
                ticket: t.to_owned(),
                by: "dana".into(),
                text: "the customer called as well".into(),
            },
        ));
    }
    assert_eq!(events.len(), EVENTS_PER_TICKET);
    let arrives = START + PERIOD / TICKETS as i64 * i as i64;
    events
        .into_iter()
        .map(|(minute, event)| (arrives + minute * MINUTE, event))
        .collect()
}

/// Every event of the record, in the order appended (tickets overlap: each ticket's events
/// are spread over its own hour, or its day for a solve).
fn all_events() -> Vec<(i64, Event)> {
    let mut events: Vec<(i64, Event)> = (0..TICKETS).flat_map(ticket_events).collect();
    events.sort_by_key(|(at, _)| *at);
    events
}

fn sla() -> Sla {
    Sla::new(
        "4h",
        "8h",
        "Mon-Fri 09:00-17:00",
        "Europe/Berlin",
        &[],
        "1h",
    )
    .expect("settings")
}

fn settings<'a>(sla: &'a Sla, allow: &'a [String]) -> Settings<'a> {
    Settings {
        now: START + PERIOD + 86_400_000,
        since: None,
        zone: jiff::tz::TimeZone::get("Europe/Berlin").expect("zone"),
        sla: Some(sla),
        tickets: &[],
        allow,
        close_after_days: 4,
    }
}

fn allow() -> Vec<String> {
    vec!["shop.get_order_status".to_owned()]
}

fn sqlite_record(dir: &std::path::Path) -> Record {
    let path = dir.join(RECORD_FILE);
    let started = Instant::now();
    let record = DeskRecord::open_for_work(&path, None, "dana", &allow())
        .expect("the record opens")
        .with_clock(clock);
    let events = all_events();
    for (at, event) in &events {
        CLOCK.store(*at, Ordering::Relaxed);
        record.append(event).expect("appended");
    }
    drop(record);
    println!(
        "SQLite: {} events of {TICKETS} tickets appended in {:.1} s",
        events.len(),
        started.elapsed().as_secs_f64()
    );
    Record::Sqlite(DeskRecord::open(&path, None, "lee", &allow()).expect("the record opens"))
}

/// The same events in a team's record, inserted by the administrator; read as lee.
async fn postgres_record(pg: &pg_cluster::PgCluster) -> Record {
    let team = pg.team().await;
    let admin = pg.admin().await;
    let started = Instant::now();
    let events = all_events();
    for batch in events.chunks(PG_BATCH) {
        let tickets: Vec<Option<String>> = batch
            .iter()
            .map(|(_, e)| e.ticket().map(str::to_owned))
            .collect();
        let kinds: Vec<&str> = batch.iter().map(|(_, e)| e.kind()).collect();
        let bodies: Vec<Value> = batch
            .iter()
            .map(|(_, e)| serde_json::to_value(e).expect("an event serializes"))
            .collect();
        let actors: Vec<&str> = batch
            .iter()
            .map(|(_, e)| match e {
                Event::ApprovalAnswered { .. } => team.lee.name.as_str(),
                _ => team.ana.name.as_str(),
            })
            .collect();
        let seconds: Vec<f64> = batch.iter().map(|(at, _)| *at as f64 / 1000.0).collect();
        admin
            .execute(
                "INSERT INTO desk.events (ticket, actor, kind, body, at)
                 SELECT t, a, k, b, to_timestamp(s)
                 FROM unnest($1::text[], $2::text[], $3::text[], $4::jsonb[], $5::float8[])
                      AS u(t, a, k, b, s)",
                &[&tickets, &actors, &kinds, &bodies, &seconds],
            )
            .await
            .expect("the administrator inserts a batch");
    }
    // A desk appends a few events a second, and autovacuum keeps up; 100,000 in two seconds
    // leave the table unvacuumed and its statistics empty, which no team's record would be.
    admin
        .batch_execute("VACUUM ANALYZE desk.events")
        .await
        .expect("vacuum");
    println!(
        "PostgreSQL: {} events of {TICKETS} tickets inserted (and vacuumed) in {:.1} s",
        events.len(),
        started.elapsed().as_secs_f64()
    );
    Record::team(&team.lee.url, &allow())
        .await
        .expect("lee logs in")
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

/// One report over `record`, timed alone, with what it counted.
fn once(runtime: &tokio::runtime::Runtime, record: &Record, name: &str) {
    let (sla, allow) = (sla(), allow());
    let settings = settings(&sla, &allow);
    let started = Instant::now();
    let report = runtime
        .block_on(support_desk::report::read(record, &settings))
        .expect("the report reads");
    let took = started.elapsed();
    let verdict = if took < GOAL { "met" } else { "missed" };
    println!(
        "{name}: one report in {:.3} s (goal: under 1 s, {verdict}) · {} tickets, {} replies, {} approvals, first response median {:?} s",
        took.as_secs_f64(),
        report.tickets,
        report.replies.sent,
        report.approvals.asked,
        report.first_response.median_seconds
    );
}

fn main() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let mut criterion = Criterion::default()
        .configure_from_args()
        .sample_size(10)
        .measurement_time(Duration::from_secs(10));
    println!("# load average {}", load_average());

    let dir = tempfile::tempdir().expect("temp dir");
    let sqlite = sqlite_record(dir.path());
    once(&runtime, &sqlite, "SQLite");
    let (sla, allow) = (sla(), allow());
    criterion.bench_function("report/sqlite_10k_tickets_100k_events", |b| {
        b.iter(|| {
            runtime
                .block_on(support_desk::report::read(&sqlite, &settings(&sla, &allow)))
                .expect("the report reads")
        })
    });

    let pg = runtime.block_on(pg_cluster::start());
    if let Some(pg) = &pg {
        let team = runtime.block_on(postgres_record(pg));
        once(&runtime, &team, "PostgreSQL");
        criterion.bench_function("report/postgres_10k_tickets_100k_events", |b| {
            b.iter(|| {
                runtime
                    .block_on(support_desk::report::read(&team, &settings(&sla, &allow)))
                    .expect("the report reads")
            })
        });
    }
    println!("# load average {}", load_average());
    criterion.final_summary();
}
