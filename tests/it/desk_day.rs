//! A working day at one desk, with the real binary under a pseudo-terminal: tickets sent,
//! stopped at the call limit, handed over, a refund released by a lead, a policy attached,
//! and the desk killed with SIGKILL in the middle of a run. Reopened on the same data
//! directory, the desk shows exactly what was there, `queue --json` says the same, `W` works
//! only new tickets, and the shop still knows the refund it released.
//! A second test kills the desk at each kind of moment and checks that the record's states are
//! what its events replay to.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use support_desk::record::store::replay;
use support_desk::record::{DeskRecord, Lifecycle, RECORD_FILE};

use crate::desk_pty::Desk;
use crate::mock_model::{Brain, MockModel, call, first_user_message, tool_messages, words};
use crate::support::BIN;

/// The ticket a request is about, from its ticket message ("Ticket T-0001 from …").
fn ticket_of(request: &Value) -> String {
    let messages = request["messages"].as_array().cloned().unwrap_or_default();
    first_user_message(&messages)
        .split_whitespace()
        .nth(1)
        .unwrap_or_default()
        .to_owned()
}

/// How the model works each ticket of the day.
fn day_brain() -> Brain {
    Arc::new(|request: &Value| {
        let tools = tool_messages(request);
        match (ticket_of(request).as_str(), tools.len()) {
            ("T-0001", 0) => call("shop__find_orders", json!({"customer_id": "C-0222"})),
            ("T-0001", _) => words(
                "Thank you for writing. I have looked up your order and a colleague will follow up today.",
            ),
            // Never done looking: it runs into the call limit.
            ("T-0002", _) => call("shop__find_orders", json!({"customer_id": "C-0112"})),
            ("T-0003", 0) => call(
                "shop__quote_refund",
                json!({"order_id": "O-1587", "sku": "KG-1010", "reason": "smells of burning"}),
            ),
            ("T-0003", 1) => {
                let quote = tools[0]
                    .lines()
                    .nth(1)
                    .and_then(|l| serde_json::from_str::<Value>(l).ok())
                    .unwrap_or_default();
                call("shop__issue_refund", json!({"quote_id": quote["quote_id"]}))
            }
            ("T-0003", _) => words("Your refund has been released to your card."),
            // Asks the partner, which needs a person's yes: the desk is killed while it waits.
            ("T-0005", 0) => call(
                "partner__track_parcel",
                json!({"tracking_number": "KP842713906"}),
            ),
            _ => words("Thank you for your message; we are looking into it."),
        }
    })
}

async fn queue_json(dir: &Path) -> Value {
    let output = tokio::process::Command::new(BIN)
        .args(["queue", "--json", "--data-dir"])
        .arg(dir)
        .output()
        .await
        .expect("run queue");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("JSON")
}

fn row<'a>(queue: &'a Value, id: &str) -> &'a Value {
    queue["tickets"]
        .as_array()
        .and_then(|rows| rows.iter().find(|r| r["id"] == id))
        .unwrap_or_else(|| panic!("{id} is in the queue: {queue}"))
}

/// Moves the selection to `ticket` (the queue is in ticket order, T-0001 first).
async fn select(desk: &mut Desk, ticket: &str) {
    desk.press(b"\x1b[H"); // Home
    let index: usize = ticket[2..].parse().expect("T-NNNN");
    desk.press(&b"j".repeat(index - 1));
    desk.screen.wait_for(&format!("{ticket} · C-")).await;
}

fn released_refunds(dir: &Path) -> i64 {
    let shop = rusqlite::Connection::open(dir.join("shop.sqlite3")).expect("the shop's file");
    shop.query_row(
        "SELECT count(*) FROM refunds WHERE status = 'released'",
        [],
        |r| r.get(0),
    )
    .expect("count")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_day_at_the_desk_survives_a_kill_and_reopens_as_it_was() {
    let model = MockModel::start(day_brain()).await;
    let source = format!("openai:{}", model.url);
    let data = tempfile::tempdir().expect("temp dir");
    let mut desk = Desk::start_in(data.path(), &["--model", &source]);
    desk.screen.wait_for("Queue (all) 48/48").await;
    desk.screen.wait_for("shop 2026-07-28").await;

    // T-0001: worked, then its reply sent as it stands.
    select(&mut desk, "T-0001").await;
    desk.press(b"w");
    desk.screen.wait_for("T-0001 drafted").await;
    desk.press(b"e");
    desk.screen.wait_for("Ctrl-S").await;
    desk.press(b"\x13"); // Ctrl-S
    desk.screen.wait_for("T-0001 sent").await;

    // T-0002: the model runs into the call limit.
    select(&mut desk, "T-0002").await;
    desk.press(b"w");
    desk.screen.wait_for("T-0002 needs person").await;

    // T-0003: a refund above the limit, approved and released by the lead at this desk.
    select(&mut desk, "T-0003").await;
    desk.press(b"w");
    desk.screen.wait_for("y approve").await;
    desk.press(b"y");
    desk.screen.wait_for("Release refund").await;
    desk.press(b" \x12"); // release: yes; Ctrl-R reviews
    desk.screen.wait_for("will receive:").await;
    desk.press(b"\r");
    desk.screen.wait_for("T-0003 drafted").await;
    desk.press(b"e");
    desk.screen.wait_for("Ctrl-S").await;
    desk.press(b"\x13");
    desk.screen.wait_for("T-0003 sent").await;
    assert_eq!(released_refunds(data.path()), 1);

    // T-0004: drafted, then handed over with a note; the refund policy attached first.
    select(&mut desk, "T-0004").await;
    desk.press(b"r");
    let picker = desk.screen.wait_for("shop://policies/refund").await;
    for policy in [
        "refund",
        "returns",
        "shipping",
        "stock",
        "escalation",
        "data-handling",
    ] {
        assert!(
            picker.contains(&format!("shop://policies/{policy}")),
            "r lists the shop's six policies: {picker}"
        );
    }
    desk.press(b"\r");
    desk.screen
        .wait_for("+ attached shop://policies/refund")
        .await;
    desk.press(b"w");
    desk.screen.wait_for("T-0004 drafted").await;
    desk.press(b"e");
    desk.screen.wait_for("Ctrl-S").await;
    desk.press(b"\x10"); // Ctrl-P: hand over
    desk.screen
        .wait_for("Note for the person taking over")
        .await;
    desk.press(b"customer asked for the manager\r");
    desk.screen.wait_for("T-0004 handed over").await;

    // T-0005: killed while its consent question is open.
    select(&mut desk, "T-0005").await;
    desk.press(b"w");
    desk.screen.wait_for("y approve").await;
    desk.kill().await;
    let calls_before_reopen = model.requests().len();

    let queue = queue_json(data.path()).await;
    assert_eq!(row(&queue, "T-0001")["state"], "sent");
    assert!(
        row(&queue, "T-0001")["sent"]
            .as_str()
            .is_some_and(|s| s.starts_with("Thank you for writing")),
        "{queue}"
    );
    assert_eq!(row(&queue, "T-0002")["state"], "needs_person");
    assert_eq!(row(&queue, "T-0003")["state"], "sent");
    assert_eq!(row(&queue, "T-0004")["state"], "handed_over");
    assert_eq!(row(&queue, "T-0005")["state"], "needs_person");
    assert!(
        row(&queue, "T-0005")["reason"]
            .as_str()
            // No yes was given, so the call never reached the partner.
            .is_some_and(|r| r.starts_with(
                "interrupted while partner.track_parcel waited for a person's yes: it was never called"
            )),
        "{queue}"
    );
    assert_eq!(row(&queue, "T-0006")["state"], "new");
    assert_eq!(row(&queue, "T-0001")["by"], "tester");

    // Reopened: the same states, with their histories.
    let mut desk = Desk::start_in(data.path(), &["--model", &source]);
    let shown = desk.screen.wait_for("T-0005 needs person").await;
    for expected in [
        "T-0001 sent",
        "T-0002 needs person",
        "T-0003 sent",
        "T-0004 handed over",
        "T-0005 needs person",
        "T-0006 new",
    ] {
        assert!(shown.contains(expected), "{expected}: {shown}");
    }
    // A ticket's history is read from the record when it comes on screen: its second model
    // call is a line of that history, which the ticket's state alone never shows.
    select(&mut desk, "T-0001").await;
    desk.screen.wait_for("model call 2").await;
    desk.screen.wait_for("Sent by tester at").await;
    select(&mut desk, "T-0004").await;
    let handed = desk.screen.wait_for("customer asked for the manager").await;
    assert!(
        handed.contains("Handed over to a person by tester"),
        "{handed}"
    );
    select(&mut desk, "T-0005").await;
    desk.screen
        .wait_for("interrupted while partner.track_parcel waited for a")
        .await;
    assert!(
        desk.screen.text().contains("it was never called"),
        "{}",
        desk.screen.text()
    );
    // The same states and reasons; settling the cut-off run is an event of its own, with a
    // time of its own.
    let without_times = |mut queue: Value| {
        for row in queue["tickets"].as_array_mut().into_iter().flatten() {
            row["at"] = Value::Null;
        }
        queue
    };
    assert_eq!(
        without_times(queue_json(data.path()).await),
        without_times(queue.clone()),
        "queue --json says what the desk shows"
    );

    // A person answers T-0002 by hand; the check reads the record's call log.
    select(&mut desk, "T-0002").await;
    desk.press(b"e");
    desk.screen.wait_for("Ctrl-S").await;
    desk.press(b"Your refund of EUR 120.00 has been issued.");
    desk.press(b"\x0b"); // Ctrl-K
    let checked = desk.screen.wait_for("Checked:").await;
    assert!(
        checked.contains("promises a refund"),
        "the unbacked promise is found: {checked}"
    );
    desk.press(b"\x1b"); // Esc keeps the edit
    tokio::time::sleep(Duration::from_millis(200)).await;

    // W works only the new tickets: 43 of them, one model call each.
    desk.press(b"W");
    desk.screen.wait_for("queue worked: 43 tickets").await;
    let worked: Vec<String> = model.requests()[calls_before_reopen..]
        .iter()
        .map(ticket_of)
        .collect();
    assert_eq!(worked.len(), 43, "{worked:?}");
    for old in ["T-0001", "T-0002", "T-0003", "T-0004", "T-0005"] {
        assert!(!worked.iter().any(|t| t == old), "{old} was worked again");
    }
    desk.quit().await;
    assert_eq!(
        released_refunds(data.path()),
        1,
        "the shop still has the refund released at the desk, and no second one"
    );
}

/// The record's own states must be what its events replay to, after a kill at any moment.
fn assert_record_replays(dir: &Path) {
    let record =
        DeskRecord::open(&dir.join(RECORD_FILE), None, "checker", &[]).expect("the record opens");
    let allow = support_desk::config::DeskConfig::bundled().consent.allow;
    let events = record.events_after(0).expect("events");
    let replayed = replay(&events, &allow);
    assert_eq!(record.states().expect("states"), replayed);
    let events: Vec<_> = events.into_iter().map(|stored| stored.event).collect();
    crate::invariants::assert_the_record_keeps_its_promises(&events, &allow);
}

fn state_of(dir: &Path, ticket: &str) -> Lifecycle {
    let record =
        DeskRecord::open(&dir.join(RECORD_FILE), None, "checker", &[]).expect("the record opens");
    record
        .state(ticket)
        .expect("readable")
        .map_or(Lifecycle::New, |s| s.state)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kill_at_any_moment_leaves_a_record_that_replays_to_its_states() {
    // The model never answers T-0006: the desk is killed during the model call.
    let brain = day_brain();
    let hanging: Brain = Arc::new(move |request: &Value| {
        if ticket_of(request) == "T-0006" {
            json!({"hang_for_secs": 60})
        } else {
            brain(request)
        }
    });
    let model = MockModel::start(hanging).await;
    let source = format!("openai:{}", model.url);
    let data = tempfile::tempdir().expect("temp dir");

    // During a model call.
    let mut desk = Desk::start_in(data.path(), &["--model", &source]);
    desk.screen.wait_for("shop 2026-07-28").await;
    select(&mut desk, "T-0006").await;
    desk.press(b"w");
    desk.screen.wait_for("T-0006 working").await;
    desk.kill().await;
    assert_record_replays(data.path());
    assert_eq!(state_of(data.path(), "T-0006"), Lifecycle::Working);

    // During consent (T-0005 asks the partner).
    let mut desk = Desk::start_in(data.path(), &["--model", &source]);
    desk.screen.wait_for("shop 2026-07-28").await;
    desk.screen.wait_for("T-0006 needs person").await;
    select(&mut desk, "T-0005").await;
    desk.press(b"w");
    desk.screen.wait_for("y approve").await;
    desk.kill().await;
    assert_record_replays(data.path());

    // During the lead's form (T-0003's refund, approved by the person).
    let mut desk = Desk::start_in(data.path(), &["--model", &source]);
    desk.screen.wait_for("shop 2026-07-28").await;
    desk.screen.wait_for("T-0005 needs person").await;
    select(&mut desk, "T-0003").await;
    desk.press(b"w");
    desk.screen.wait_for("y approve").await;
    desk.press(b"y");
    desk.screen.wait_for("Release refund").await;
    desk.kill().await;
    assert_record_replays(data.path());

    // Just after a send.
    let mut desk = Desk::start_in(data.path(), &["--model", &source]);
    desk.screen.wait_for("shop 2026-07-28").await;
    let reopened = desk.screen.wait_for("T-0003 needs person").await;
    assert!(reopened.contains("T-0005 needs person"), "{reopened}");
    select(&mut desk, "T-0001").await;
    desk.press(b"w");
    desk.screen.wait_for("T-0001 drafted").await;
    desk.press(b"e");
    desk.screen.wait_for("Ctrl-S").await;
    desk.press(b"\x13");
    desk.screen.wait_for("T-0001 sent").await;
    desk.kill().await;
    assert_record_replays(data.path());
    assert_eq!(state_of(data.path(), "T-0001"), Lifecycle::Sent);

    // Reopened once more: every cut-off run settled, nothing working, the send kept.
    let desk = Desk::start_in(data.path(), &["--model", &source]);
    desk.screen.wait_for("T-0001 sent").await;
    let queue = queue_json(data.path()).await;
    for ticket in ["T-0003", "T-0005", "T-0006"] {
        assert_eq!(row(&queue, ticket)["state"], "needs_person", "{queue}");
    }
    assert!(
        row(&queue, "T-0006")["reason"]
            .as_str()
            .is_some_and(|r| r.starts_with("interrupted during model call 1")),
        "{queue}"
    );
    assert!(
        row(&queue, "T-0003")["reason"]
            .as_str()
            .is_some_and(|r| r.starts_with("interrupted after shop.issue_refund")),
        "{queue}"
    );
    desk.quit().await;
    assert_record_replays(data.path());
}
