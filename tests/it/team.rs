//! A team on one queue, through the real binary and a real PostgreSQL (a throwaway cluster per
//! test; skipped in one line where PostgreSQL is missing): two runs split the queue with no
//! ticket worked twice, a killed desk's claim frees its ticket after the lease and the record
//! shows the interrupted run, and a send on one desk shows on another.

use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use support_desk::record::Event;
use support_desk::record::postgres::{LEASE, PgError, PgRecord};
use support_desk::record::{Lifecycle, TicketState};

use crate::desk_pty::Desk;
use crate::mock_model::{
    Brain, MockModel, call, first_user_message, queue_worker, scripted, words,
};
use crate::pg_cluster;
use crate::support::BIN;

fn allow() -> Vec<String> {
    support_desk::config::DeskConfig::bundled().consent.allow
}

/// `support-desk run --store URL …` as a person would start it, on a data directory of its
/// own.
fn run(store: &str, model: &str, extra: &[&str], data: &std::path::Path) -> tokio::process::Child {
    tokio::process::Command::new(BIN)
        .args(["run", "--json", "--store", store, "--model", model])
        .args(extra)
        .args(if extra.contains(&"--consent") {
            &[][..]
        } else {
            &["--consent", "approve"][..]
        })
        .arg("--data-dir")
        .arg(data)
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("start a run")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_runs_on_one_store_split_the_queue_and_work_no_ticket_twice() {
    let Some(pg) = pg_cluster::start().await else {
        return;
    };
    let team = pg.team().await;
    let model = MockModel::with_latency(Duration::from_millis(20), queue_worker()).await;
    let source = format!("openai:{}", model.url);
    let (one, two) = (
        tempfile::tempdir().expect("dir"),
        tempfile::tempdir().expect("dir"),
    );
    let ana = run(&team.ana.url, &source, &["--concurrency", "2"], one.path());
    let bo = run(&team.bo.url, &source, &["--concurrency", "2"], two.path());
    let mut summaries = Vec::new();
    for (who, child) in [("ana", ana), ("bo", bo)] {
        let output = child.wait_with_output().await.expect("the run ends");
        assert!(
            output.status.success(),
            "{who}'s run: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let summary: Value =
            serde_json::from_slice(&output.stdout).expect("one JSON summary on stdout");
        summaries.push(summary);
    }
    let record = PgRecord::connect(&team.lee.url, &allow())
        .await
        .expect("lee");
    let events = record.events_after(0).await.expect("events");
    let mut runs: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    for stored in &events {
        if let Event::TicketStarted { ticket, .. } = &stored.event {
            runs.entry(ticket.clone())
                .or_default()
                .push(stored.by.clone());
        }
    }
    assert_eq!(runs.len(), 48, "every ticket was worked");
    let all: Vec<Event> = events.iter().map(|stored| stored.event.clone()).collect();
    crate::invariants::assert_the_record_keeps_its_promises(&all, &allow());
    let twice: Vec<_> = runs.iter().filter(|(_, by)| by.len() != 1).collect();
    assert_eq!(twice, Vec::<(&String, &Vec<String>)>::new(), "none twice");
    let by_ana = runs.values().filter(|by| by[0] == team.ana.name).count();
    let by_bo = runs.values().filter(|by| by[0] == team.bo.name).count();
    assert_eq!(by_ana + by_bo, 48);
    // Each desk's summary is of its own runs, not of the team's record since it started.
    assert_eq!(summaries[0]["tickets_worked"], by_ana, "ana's summary");
    assert_eq!(summaries[1]["tickets_worked"], by_bo, "bo's summary");
    assert!(
        by_ana > 0 && by_bo > 0,
        "both desks worked: {by_ana} and {by_bo}"
    );
    let states = record.states().await.expect("states");
    assert!(
        states.iter().all(|s| s.state == Lifecycle::Drafted),
        "{:?}",
        states
            .iter()
            .map(|s| (&s.ticket, s.state))
            .collect::<Vec<_>>()
    );
}

/// A headless run on a team decides as the person logged in: its scripted yes to a call
/// outside the allow list is in the team's record, by that person with the flag that gave it,
/// before the call's outcome; and the run's summary counts it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_team_runs_scripted_consent_is_recorded_as_the_persons_with_its_flag() {
    let Some(pg) = pg_cluster::start().await else {
        return;
    };
    let team = pg.team().await;
    let model = MockModel::start(scripted(vec![
        call(
            "partner__track_parcel",
            json!({"tracking_number": "KP123456789"}),
        ),
        words("Your parcel KP123456789 is on its way; thank you for your patience."),
    ]))
    .await;
    let source = format!("openai:{}", model.url);
    let dir = tempfile::tempdir().expect("dir");
    let extra = ["--tickets", "T-0001", "--consent", "approve"];
    let output = run(&team.ana.url, &source, &extra, dir.path())
        .wait_with_output()
        .await
        .expect("the run ends");
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "ana's run: {said}");
    assert!(!said.contains("did not take an event"), "{said}");
    let summary: Value = serde_json::from_slice(&output.stdout).expect("a JSON summary");
    assert_eq!(summary["tickets_worked"], 1, "{summary}");
    assert_eq!(summary["consent_questions"], 1, "{summary}");

    let record = PgRecord::connect(&team.lee.url, &allow())
        .await
        .expect("lee");
    let events = record.events_after(0).await.expect("events");
    let consent = events
        .iter()
        .position(
            |s| matches!(&s.event, Event::Consent { tool, .. } if tool == "partner.track_parcel"),
        )
        .expect("the consent is in the team's record");
    let Event::Consent {
        approved, by, rule, ..
    } = &events[consent].event
    else {
        unreachable!("found above")
    };
    assert!(*approved);
    assert_eq!(by, &team.ana.name);
    assert_eq!(rule.as_deref(), Some("run --consent approve"));
    assert_eq!(events[consent].by, team.ana.name, "the database's who");
    let outcome = events
        .iter()
        .position(
            |s| matches!(&s.event, Event::Outcome { tool, .. } if tool == "partner.track_parcel"),
        )
        .expect("the call ran");
    assert!(
        consent < outcome,
        "the decision comes before the call's outcome"
    );
    let events: Vec<Event> = events.into_iter().map(|stored| stored.event).collect();
    crate::invariants::assert_the_record_keeps_its_promises(&events, &allow());
}

/// A model that never answers T-0001.
fn hangs_on_t0001() -> Brain {
    let worker = queue_worker();
    Arc::new(move |request: &Value| {
        let messages = request["messages"].as_array().cloned().unwrap_or_default();
        if first_user_message(&messages).starts_with("Ticket T-0001 ") {
            json!({"hang_for_secs": 120})
        } else {
            worker(request)
        }
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_desk_killed_holding_a_claim_frees_its_ticket_after_the_lease() {
    let Some(pg) = pg_cluster::start().await else {
        return;
    };
    let team = pg.team().await;
    let model = MockModel::start(hangs_on_t0001()).await;
    let source = format!("openai:{}", model.url);
    let data = tempfile::tempdir().expect("dir");
    let mut ana = run(
        &team.ana.url,
        &source,
        &["--tickets", "T-0001"],
        data.path(),
    );
    let bo = PgRecord::connect(&team.bo.url, &allow()).await.expect("bo");
    let started = std::time::Instant::now();
    loop {
        let state = bo.state("T-0001").await.expect("state");
        if state
            .as_ref()
            .is_some_and(|s| s.state == Lifecycle::Working)
        {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "ana's run never started"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // The queue as the team's record has it: who holds what, while ana's desk works.
    let queue = tokio::process::Command::new(BIN)
        .args(["queue", "--json", "--store", &team.bo.url])
        .output()
        .await
        .expect("queue");
    assert!(
        queue.status.success(),
        "{}",
        String::from_utf8_lossy(&queue.stderr)
    );
    let queue: Value = serde_json::from_slice(&queue.stdout).expect("JSON");
    let t1 = &queue["tickets"][0];
    assert_eq!(
        (
            t1["id"].as_str(),
            t1["state"].as_str(),
            t1["owner"].as_str()
        ),
        (
            Some("T-0001"),
            Some("working"),
            Some(team.ana.name.as_str())
        )
    );
    assert_eq!(
        queue["tickets"][1]["owner"],
        Value::Null,
        "T-0002 is nobody's"
    );
    ana.start_kill().expect("kill -9");
    ana.wait().await.expect("dead");

    let held = bo
        .claim("T-0001")
        .await
        .expect_err("ana's claim still holds");
    assert!(
        matches!(&held, PgError::ClaimRefused { owner, .. } if *owner == team.ana.name),
        "{held}"
    );
    assert_eq!(
        bo.settle_interrupted().await.expect("settle").len(),
        0,
        "not while it holds"
    );
    tokio::time::sleep(LEASE + Duration::from_secs(1)).await;

    // The next desk to open settles the cut-off run, then the ticket is anyone's to claim.
    let settled = bo.settle_interrupted().await.expect("settle");
    assert_eq!(settled.len(), 1);
    bo.claim("T-0001")
        .await
        .expect("free again after the lease");
    let state: TicketState = bo.state("T-0001").await.expect("state").expect("known");
    assert_eq!(state.state, Lifecycle::NeedsPerson);
    assert!(
        state
            .reason
            .as_deref()
            .is_some_and(|r| r.starts_with("interrupted during model call 1")),
        "{state:?}"
    );
}

/// The same person's other processes are other desks: ana's headless run of T-0002 shows on
/// ana's open desk as it happens, as bo's would.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_persons_headless_run_shows_on_their_own_open_desk() {
    let Some(pg) = pg_cluster::start().await else {
        return;
    };
    let team = pg.team().await;
    let model = MockModel::start(queue_worker()).await;
    let source = format!("openai:{}", model.url);
    let (desk_dir, run_dir) = (
        tempfile::tempdir().expect("dir"),
        tempfile::tempdir().expect("dir"),
    );
    let desk = Desk::start_in(
        desk_dir.path(),
        &["--store", &team.ana.url, "--model", &source],
    );
    desk.screen.wait_for("Queue (all) 48/48").await;
    desk.screen.wait_for("T-0002 new").await;
    let output = run(
        &team.ana.url,
        &source,
        &["--tickets", "T-0002"],
        run_dir.path(),
    )
    .wait_with_output()
    .await
    .expect("the run ends");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    desk.screen.wait_for("T-0002 drafted").await;
    desk.quit().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_send_on_one_desk_shows_on_another_and_the_other_cannot_send_again() {
    let Some(pg) = pg_cluster::start().await else {
        return;
    };
    let team = pg.team().await;
    let model = MockModel::start(Arc::new(|_: &Value| {
        words("Thank you for writing; a colleague will follow up today.")
    }))
    .await;
    let source = format!("openai:{}", model.url);
    let (one, two) = (
        tempfile::tempdir().expect("dir"),
        tempfile::tempdir().expect("dir"),
    );
    let mut ana = Desk::start_in(one.path(), &["--store", &team.ana.url, "--model", &source]);
    let mut bo = Desk::start_in(two.path(), &["--store", &team.bo.url, "--model", &source]);
    ana.screen.wait_for("Queue (all) 48/48").await;
    bo.screen.wait_for("Queue (all) 48/48").await;
    ana.screen.wait_for("shop 2026-07-28").await;

    ana.press(b"w");
    ana.screen.wait_for("T-0001 drafted").await;
    bo.screen.wait_for("T-0001 drafted").await;
    ana.press(b"e");
    ana.screen.wait_for("Ctrl-S").await;
    ana.press(b"\x13");
    ana.screen.wait_for("T-0001 sent").await;
    let seen = bo.screen.wait_for("T-0001 sent").await;
    assert!(seen.contains("T-0001"), "{seen}");

    bo.press(b"e");
    let refused = bo.screen.wait_for("was sent by").await;
    assert!(
        refused.contains(&team.ana.name),
        "names the first sender: {refused}"
    );
    ana.quit().await;
    bo.quit().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lead_takes_over_a_ticket_another_desk_holds_and_that_desk_is_told() {
    let Some(pg) = pg_cluster::start().await else {
        return;
    };
    let team = pg.team().await;
    // The partner's tool needs a person's yes: ana's desk holds T-0001 while it asks.
    let model = MockModel::start(Arc::new(|request: &Value| {
        if crate::mock_model::tool_has_answered(
            &request["messages"].as_array().cloned().unwrap_or_default(),
        ) {
            words("Your parcel is on its way.")
        } else {
            crate::mock_model::call(
                "partner__track_parcel",
                json!({"tracking_number": "KP842713906"}),
            )
        }
    }))
    .await;
    let source = format!("openai:{}", model.url);
    let (one, two, three) = (
        tempfile::tempdir().expect("dir"),
        tempfile::tempdir().expect("dir"),
        tempfile::tempdir().expect("dir"),
    );
    let mut ana = Desk::start_in(one.path(), &["--store", &team.ana.url, "--model", &source]);
    let mut bo = Desk::start_in(two.path(), &["--store", &team.bo.url, "--model", &source]);
    let mut lee = Desk::start_in(
        three.path(),
        &["--store", &team.lee.url, "--model", &source],
    );
    for desk in [&ana, &bo, &lee] {
        desk.screen.wait_for("shop 2026-07-28").await;
    }
    lee.screen.wait_for("you: ").await;
    assert!(
        lee.screen.text().contains("(lead)"),
        "{}",
        lee.screen.text()
    );

    ana.press(b"w");
    ana.screen.wait_for("y approve").await;
    lee.screen.wait_for("T-0001 working").await;
    let working = lee
        .screen
        .wait_for(&format!("working ({})", team.ana.name))
        .await;
    assert!(working.contains("T-0001"), "{working}");

    // Staff may not take a ticket another desk holds.
    bo.press(b"t");
    bo.screen.wait_for("Take this ticket over").await;
    bo.press(b"mine now\x13");
    let refused = bo.screen.wait_for("only a lead can take over T-0001").await;
    assert!(refused.contains(&team.ana.name), "{refused}");

    lee.press(b"t");
    lee.screen.wait_for("Take this ticket over").await;
    lee.press(b"the customer called me\x13");
    ana.press(b"\x02"); // Ctrl-B: the question back, the ticket in view
    let told = ana.screen.wait_for("took the ticket over from").await;
    assert!(told.contains("the customer called me"), "{told}");
    // A ticket no desk holds has nothing to take over, said as a team's desk says it.
    lee.press(b"j");
    lee.screen.wait_for("T-0002 · ").await;
    lee.press(b"t");
    lee.screen.wait_for("Take this ticket over").await;
    lee.press(b"nobody had it\x13");
    let said = lee.screen.wait_for("no other desk held T-0002").await;
    assert!(!said.contains("one person's desk"), "{said}");
    for desk in [ana, bo, lee] {
        desk.quit().await;
    }
}
