//! `support-desk report`: a scripted day at a desk, appended through the record's own API with
//! the clock the script sets, gives the figures worked out by hand below; on one person's
//! SQLite record and on a team's PostgreSQL (which stamps events with the database's clock,
//! so the test's administrator moves each stamp to the script's time afterwards, as no desk
//! could).
//!
//! The day, in Berlin (UTC+1), against `[sla]` 4h first response in Mon-Fri 09:00-17:00,
//! reported at Monday 7 December 2026, 17:00:
//!
//! | ticket | arrives | then | conversation at 17:00 |
//! | --- | --- | --- | --- |
//! | M-00001 | Fri 16:00 by mail | model's draft sent Mon 09:30 (due 12:00) | pending, 73h old |
//! | M-00002 | Mon 09:00 by mail | draft edited, sent 09:30; solved 11:00 | solved |
//! | M-00003 | Mon 09:10 by mail | nothing (due 13:10: late) | open, 7h50m old |
//! | M-00004 | Mon 10:00 by mail | written by hand, sent 15:00 (due 14:00: late) | pending, 7h old |
//! | M-00005 | Mon 16:45 by mail | nothing (due Tue 10:45) | open, 15m old |
//! | T-0001 | Mon 12:00, its first event | model's draft sent 12:10; solved 12:30 | solved |
//! | T-0002 | Mon 13:00 | approval asked 13:05, lee releases EUR 250.00 at 13:45; sent 14:00 | pending, 4h old |
//! | T-0003 | Mon 14:00 | approval asked 14:10, lee declines 16:10; handed over 16:30 | open, 3h old, late (its tickets.json time is June's) |

use std::cell::Cell;
use std::collections::{HashMap, HashSet};
use std::path::Path;

use serde_json::{Value, json};
use support_desk::mail::message::{Address, Message};
use support_desk::record::postgres::NewApproval;
use support_desk::record::{DeskRecord, Event, Outcome, RECORD_FILE, Record};

use crate::pg_cluster;
use crate::support::BIN;

/// Berlin time `h:m` on Monday 7 December 2026 (UTC+1), as unix ms.
pub(crate) const fn monday(h: i64, m: i64) -> i64 {
    1_796_601_600_000 + ((h - 1) * 60 + m) * 60_000
}

/// The same on Friday 4 December.
const fn friday(h: i64, m: i64) -> i64 {
    monday(h, m) - 3 * 86_400_000
}

pub(crate) const SLA: &str = "[sla]\nfirst_response = \"4h\"\nnext_reply = \"8h\"\nbusiness_hours = \"Mon-Fri 09:00-17:00\"\ntime_zone = \"Europe/Berlin\"\n";
const MAILBOX: &str = "maildir";

/// Who works the day: the person at the desk, and the lead who answers approvals.
pub(crate) struct People {
    pub dana: String,
    pub lee: String,
}

fn mail(ticket: &str, id: &str) -> Event {
    Event::MessageReceived {
        ticket: ticket.into(),
        message: Box::new(Message {
            message_id: id.into(),
            from: Address {
                address: format!("{ticket}@example.net").to_lowercase(),
                name: None,
            },
            date: None,
            subject: "Where is my order?".into(),
            text: "Where is my order?".into(),
            quoted: None,
            attachments: vec![],
            in_reply_to: None,
            references: vec![],
            automatic: None,
            size: 100,
            problems: vec![],
        }),
        mailbox: MAILBOX.into(),
        uid: None,
        customer: None,
        mark: None,
    }
}

fn started(ticket: &str) -> Event {
    Event::TicketStarted {
        ticket: ticket.into(),
        tools: vec!["shop.issue_refund".into()],
        attached: vec![],
        request: None,
    }
}

fn draft(ticket: &str) -> Event {
    Event::Draft {
        ticket: ticket.into(),
        text: "Your parcel left on Friday.".into(),
        findings: vec![],
    }
}

fn edited(ticket: &str, by: &str) -> Event {
    Event::DraftEdited {
        ticket: ticket.into(),
        by: by.into(),
        text: "Your parcel left on Friday; it arrives tomorrow.".into(),
        findings: vec![],
    }
}

/// A reply; one by mail answers the customer's message `answers`.
fn sent(ticket: &str, by: &str, answers: Option<&str>) -> Event {
    Event::Sent {
        ticket: ticket.into(),
        by: by.into(),
        text: "Your parcel left on Friday.".into(),
        override_reason: None,
        message_id: answers.map(|a| format!("reply-{a}")),
        answers: answers.map(str::to_owned),
    }
}

fn solved(ticket: &str, by: &str) -> Event {
    Event::Solved {
        ticket: ticket.into(),
        by: by.into(),
        note: None,
    }
}

fn asked(ticket: &str, approval: i64) -> Event {
    Event::ApprovalAsked {
        ticket: ticket.into(),
        turn: 2,
        approval,
        server: "shop".into(),
        tool: "shop.issue_refund".into(),
        message: "Release refund R-1 of EUR 250.00 on order O-1873?".into(),
    }
}

fn answered(ticket: &str, approval: i64, by: &str, release: bool) -> Event {
    let text = match release {
        true => {
            r#"{"refund_id":"R-1","quote_id":"Q-1","order_id":"O-1873","amount":"250.00","status":"released","currency":"EUR","message":"Refund R-1 of EUR 250.00 is released."}"#
        }
        false => "The lead declined to release refund R-2, so the shop still holds it.",
    };
    Event::ApprovalAnswered {
        ticket: ticket.into(),
        turn: 2,
        approval,
        by: by.into(),
        tool: "shop.issue_refund".into(),
        action: if release { "accept" } else { "decline" }.into(),
        content: release.then(|| r#"{"release":true}"#.to_owned()),
        outcome: if release {
            Outcome::Result
        } else {
            Outcome::ToolError
        },
        text: text.into(),
        truncated: false,
    }
}

/// The day, event by event, each with the moment it happens (unix ms), in the record's order.
pub(crate) fn scripted_day(people: &People) -> Vec<(i64, Event)> {
    let (dana, lee) = (people.dana.as_str(), people.lee.as_str());
    vec![
        (friday(16, 0), mail("M-00001", "m1@x")),
        (monday(9, 0), mail("M-00002", "m2@x")),
        (monday(9, 5), draft("M-00002")),
        (monday(9, 10), mail("M-00003", "m3@x")),
        (monday(9, 20), draft("M-00001")),
        (monday(9, 20), edited("M-00002", dana)),
        (monday(9, 30), sent("M-00001", dana, Some("m1@x"))),
        (monday(9, 30), sent("M-00002", dana, Some("m2@x"))),
        (monday(10, 0), mail("M-00004", "m4@x")),
        (monday(11, 0), solved("M-00002", dana)),
        (monday(12, 0), started("T-0001")),
        (monday(12, 2), draft("T-0001")),
        (monday(12, 10), sent("T-0001", dana, None)),
        (monday(12, 30), solved("T-0001", dana)),
        (monday(13, 0), started("T-0002")),
        (monday(13, 5), asked("T-0002", 1)),
        (monday(13, 45), answered("T-0002", 1, lee, true)),
        (monday(13, 50), draft("T-0002")),
        (monday(14, 0), sent("T-0002", dana, None)),
        (monday(14, 0), started("T-0003")),
        (monday(14, 10), asked("T-0003", 2)),
        (monday(14, 50), edited("M-00004", dana)),
        (monday(15, 0), sent("M-00004", dana, Some("m4@x"))),
        (monday(16, 10), answered("T-0003", 2, lee, false)),
        (
            monday(16, 30),
            Event::HandedOver {
                ticket: "T-0003".into(),
                by: dana.into(),
                to: lee.into(),
                note: "the customer asks for more than the quote".into(),
            },
        ),
        (monday(16, 45), mail("M-00005", "m5@x")),
    ]
}

thread_local! {
    /// The script's clock: a record opened on this thread reads it at each append.
    static NOW: Cell<i64> = const { Cell::new(0) };
}

fn script_clock() -> i64 {
    NOW.with(Cell::get)
}

/// The scripted day in a desk's SQLite record at `dir`, as dana's desk appends it.
pub(crate) fn sqlite_day(dir: &Path) -> DeskRecord {
    let record = DeskRecord::open_for_work(&dir.join(RECORD_FILE), None, "dana", &[])
        .expect("the record opens")
        .with_clock(script_clock);
    let people = People {
        dana: "dana".into(),
        lee: "lee".into(),
    };
    for (at, event) in scripted_day(&people) {
        NOW.with(|now| now.set(at));
        record.append(&event).expect("the record takes the event");
    }
    record
}

/// `support-desk report --json` at Monday 17:00 in Berlin, with `[sla]`, and `extra`.
fn report_json(dir: &Path, extra: &[&str]) -> Value {
    let config = dir.join("report.toml");
    std::fs::write(&config, SLA).expect("write the config");
    let output = std::process::Command::new(BIN)
        .args(["report", "--json", "--at", "2026-12-07T17:00", "--config"])
        .arg(&config)
        .args(extra)
        .output()
        .expect("report runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("one JSON object")
}

fn spread(count: u64, median: u64, p90: u64) -> Value {
    json!({"count": count, "median_seconds": median, "p90_seconds": p90})
}

fn ages(under_1h: u64, to_4h: u64, to_24h: u64, to_3d: u64, over_3d: u64) -> Value {
    json!([
        {"age": "<1h", "tickets": under_1h},
        {"age": "1-4h", "tickets": to_4h},
        {"age": "4-24h", "tickets": to_24h},
        {"age": "1-3d", "tickets": to_3d},
        {"age": ">3d", "tickets": over_3d},
    ])
}

/// The whole day's report, worked out by hand from the table above.
fn whole_day(lee: &str) -> Value {
    json!({
        "as_of": "2026-12-07T16:00:00Z",
        "time_zone": "Europe/Berlin",
        "since": null,
        "tickets": 8,
        // 10m, 30m, 1h, 5h, and Fri 16:00 to Mon 09:30 (65h30m): the median is the middle
        // one, p90 the 5th of 5 by nearest rank.
        "first_response": spread(5, 3600, 65 * 3600 + 1800),
        // 30m and 2h: the mean of the two, and the larger.
        "resolution": spread(2, 4500, 7200),
        "backlog": {
            "open": 3, "pending": 3, "solved": 2, "closed": 0,
            // M-00005 15m · T-0003 3h · M-00003, M-00004, T-0002 · M-00001 73h.
            "by_age": ages(1, 1, 3, 0, 1),
        },
        "late": {
            "now": 2,
            "now_tickets": ["M-00003", "T-0003"],
            "first_reply_late": 1,
            "first_reply_in_time": 4,
        },
        "replies": {
            "sent": 5, "model_unchanged": 3, "model_edited": 1, "by_hand": 1, "handed_over": 1,
        },
        "approvals": {
            "asked": 2, "answered": 2, "withdrawn": 0, "lapsed": 0, "open": 0,
            // 40m and 2h.
            "wait": spread(2, 4800, 7200),
            "by_lead": {lee: {"accepted": 1, "declined": 1, "cancelled": 0}},
        },
        "refunds_released": {
            lee: {"count": 1, "amounts": {"EUR": "250.00"}, "without_amount": 0},
        },
        "daily": [
            {"day": "2026-12-04", "arrived": 1, "replies": 0},
            {"day": "2026-12-05", "arrived": 0, "replies": 0},
            {"day": "2026-12-06", "arrived": 0, "replies": 0},
            {"day": "2026-12-07", "arrived": 7, "replies": 5},
        ],
    })
}

#[test]
fn the_report_of_a_scripted_day_on_a_desks_record_gives_the_figures_worked_out_by_hand() {
    let dir = tempfile::tempdir().expect("dir");
    drop(sqlite_day(dir.path()));
    let data_dir = ["--data-dir", dir.path().to_str().expect("a UTF-8 path")];
    assert_eq!(report_json(dir.path(), &data_dir), whole_day("lee"));

    // Since Monday: Friday's M-00001 is left out, with its reply and its 73 hours.
    let since = report_json(
        dir.path(),
        &[&data_dir[..], &["--since", "2026-12-07"]].concat(),
    );
    let mut expected = whole_day("lee");
    expected["since"] = json!("2026-12-07");
    expected["tickets"] = json!(7);
    // 10m, 30m, 1h, 5h: the mean of 30m and 1h; p90 is the 4th of 4.
    expected["first_response"] = spread(4, 2700, 5 * 3600);
    expected["backlog"]["pending"] = json!(2);
    expected["backlog"]["by_age"] = ages(1, 1, 3, 0, 0);
    expected["late"]["first_reply_in_time"] = json!(3);
    expected["replies"]["sent"] = json!(4);
    expected["replies"]["model_unchanged"] = json!(2);
    expected["daily"] = json!([{"day": "2026-12-07", "arrived": 7, "replies": 4}]);
    assert_eq!(since, expected);
}

#[test]
fn the_report_as_text_is_a_table_for_a_lead() {
    let dir = tempfile::tempdir().expect("dir");
    drop(sqlite_day(dir.path()));
    let config = dir.path().join("report.toml");
    std::fs::write(&config, SLA).expect("write the config");
    let output = std::process::Command::new(BIN)
        .args(["report", "--at", "2026-12-07T17:00", "--config"])
        .arg(&config)
        .arg("--data-dir")
        .arg(dir.path())
        .output()
        .expect("report runs");
    assert!(output.status.success());
    let text = String::from_utf8_lossy(&output.stdout);
    insta::assert_snapshot!("report_text_scripted_day", text);
}

#[test]
fn a_day_that_is_not_a_date_is_refused_with_how_to_write_it() {
    let dir = tempfile::tempdir().expect("dir");
    drop(sqlite_day(dir.path()));
    let output = std::process::Command::new(BIN)
        .args(["report", "--since", "last monday", "--data-dir"])
        .arg(dir.path())
        .output()
        .expect("report runs");
    assert!(!output.status.success());
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(said.contains("write the day as YYYY-MM-DD"), "{said}");
}

/// The same day on a team's record: ana works the tickets, lee answers the approvals, each
/// through their own desk's connection, and the report (read as lee) is the same.
#[tokio::test]
async fn the_report_of_the_same_day_on_a_teams_record_gives_the_same_figures() {
    let Some(pg) = pg_cluster::start().await else {
        return;
    };
    let team = pg.team().await;
    let allow: Vec<String> = vec![];
    let ana = Record::team(&team.ana.url, &allow).await.expect("ana");
    let lee = Record::team(&team.lee.url, &allow).await.expect("lee");
    let admin = pg.admin().await;
    let (holds, _) = ana.hold_mailbox(MAILBOX).await.expect("the mailbox");
    assert!(holds, "ana's desk reads the mailbox");
    let people = People {
        dana: team.ana.name.clone(),
        lee: team.lee.name.clone(),
    };
    let mut claimed = HashSet::new();
    let mut approvals: HashMap<i64, i64> = HashMap::new();
    for (at, event) in scripted_day(&people) {
        let ticket = event
            .ticket()
            .expect("every event is a ticket's")
            .to_owned();
        let is_mail = matches!(event, Event::MessageReceived { .. } | Event::Solved { .. });
        if !is_mail && claimed.insert(ticket.clone()) {
            ana.claim(&ticket).await.expect("ana claims the ticket");
        }
        let seq = match &event {
            Event::ApprovalAsked {
                turn,
                approval,
                message,
                ..
            } => {
                let (filed, appended) = ana
                    .ask_approval(&NewApproval {
                        ticket: ticket.clone(),
                        turn: *turn,
                        server: "shop".into(),
                        origin: "http://127.0.0.1:1/mcp".into(),
                        tool: "issue_refund".into(),
                        canonical: "shop.issue_refund".into(),
                        arguments: Default::default(),
                        request_key: "release".into(),
                        form: json!({"message": message, "requestedSchema": {"type": "object", "properties": {}}}),
                        message: message.clone(),
                        request_state: Some("state".into()),
                        task: None,
                        fallback: None,
                    })
                    .await
                    .expect("filed");
                approvals.insert(*approval, filed.id);
                appended.stored.seq
            }
            Event::ApprovalAnswered { approval, .. } => {
                let id = approvals[approval];
                lee.take_approval(id).await.expect("lee takes it");
                let mut event = event.clone();
                if let Event::ApprovalAnswered { approval, .. } = &mut event {
                    *approval = id;
                }
                lee.answer_approval(&event)
                    .await
                    .expect("answered")
                    .stored
                    .seq
            }
            _ => ana.append(&event).await.expect("appended").stored.seq,
        };
        let seconds = at as f64 / 1000.0;
        let moved = admin
            .execute(
                "UPDATE desk.events SET at = to_timestamp($1) WHERE seq = $2",
                &[&seconds, &seq],
            )
            .await
            .expect("the administrator sets the script's time");
        assert_eq!(moved, 1);
    }
    let dir = tempfile::tempdir().expect("dir");
    let report = report_json(dir.path(), &["--store", &team.lee.url]);
    assert_eq!(report, whole_day(&team.lee.name));
}
