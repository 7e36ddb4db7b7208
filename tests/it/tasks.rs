//! Calls a server runs as tasks (the Tasks extension), through the host: the task server
//! over HTTP on 127.0.0.1, a mock model. A task is followed at the server's pace to its end
//! and its result read like any result; a failed one is a failed call; its question goes to
//! the person; a person's stop cancels it at the server; one that runs past the desk's limit
//! sends the ticket to a person while the desk follows it to its end; each is recorded as
//! started and ended, and no call is sent twice.

use std::time::Duration;

use serde_json::json;
use support_desk::host::api::{FieldValue, FormAnswer, Outcome};
use support_desk::record::{Event, Lifecycle};

use crate::host::{Harness, Setup, harness, out};
use crate::mock_model::*;
use crate::task_fixture::{INSPECTED, INSPECTED_AFTER_YES, JAMMED, TaskCounts, serve_tasks};

async fn with_tasks(setup: impl FnOnce(&mut Setup)) -> (Harness, TaskCounts) {
    let (url, stop, counts) = serve_tasks().await;
    let mut s = Setup::new(scripted(vec![]));
    setup(&mut s);
    let tweak = std::mem::replace(&mut s.tweak, Box::new(|_, _| {}));
    s.tweak = Box::new(move |config, dir| {
        config.servers.insert(
            "tasks".into(),
            support_desk::config::ServerConfig {
                url: Some(url),
                enabled: true,
                attach_resources: true,
                ..Default::default()
            },
        );
        tweak(config, dir);
    });
    let mut h = harness(s).await;
    h.fixture_stop = Some(stop);
    (h, counts)
}

fn inspect(mode: &str) -> serde_json::Value {
    call("tasks__inspect", json!({ "mode": mode }))
}

/// The task events of the record, as (kind, status).
async fn task_events(h: &Harness) -> Vec<(String, String)> {
    h.host
        .events()
        .await
        .into_iter()
        .filter_map(|e| match e {
            Event::TaskStarted { task, .. } => Some(("started".into(), task)),
            Event::TaskEnded { status, .. } => Some(("ended".into(), status)),
            _ => None,
        })
        .collect()
}

async fn eventually(what: &str, mut check: impl AsyncFnMut() -> bool) {
    for _ in 0..200 {
        if check().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("never happened: {what}");
}

#[tokio::test]
async fn a_task_is_followed_to_its_end_and_its_result_read_like_any_result() {
    let (h, counts) = with_tasks(|s| {
        s.brain = scripted(vec![inspect("complete"), words("Your parcel is intact.")]);
    })
    .await;
    h.work("T-0001").await;
    assert_eq!(h.outcomes().await, [out("tasks.inspect", Outcome::Result)]);
    assert_eq!(h.outcome_texts().await, [INSPECTED]);
    let events = task_events(&h).await;
    assert_eq!(events.len(), 2, "{events:?}");
    assert_eq!(events[1], ("ended".to_owned(), "completed".to_owned()));
    let requests = h.model.requests();
    assert!(
        requests[1].to_string().contains(INSPECTED),
        "the model read the result"
    );
    assert_eq!(counts.calls(), 1, "the call was sent once");
    // Its status was shown as it went, the server's words as sent, and never to the model.
    let shown = h.task_statuses.lock().expect("lock").clone();
    assert!(
        shown
            .iter()
            .any(|(tool, status, message)| tool == "tasks.inspect"
                && status == "working"
                && message.as_deref() == Some(crate::task_fixture::STATUS)),
        "{shown:?}"
    );
    for request in &requests {
        assert!(
            !request.to_string().contains("scanning the parcel"),
            "{request}"
        );
    }
    let state = h
        .host
        .record()
        .state("T-0001")
        .await
        .expect("read")
        .expect("state");
    assert!(
        state.tasks.is_empty(),
        "no task stays open: {:?}",
        state.tasks
    );
}

#[tokio::test]
async fn a_failed_task_is_a_failed_call_in_the_servers_words() {
    let (h, _) = with_tasks(|s| {
        s.brain = scripted(vec![inspect("fail"), words("We are looking into it.")]);
    })
    .await;
    h.work("T-0001").await;
    assert_eq!(h.outcomes().await, [out("tasks.inspect", Outcome::Failed)]);
    let text = &h.outcome_texts().await[0];
    assert!(text.contains("failed") && text.contains(JAMMED), "{text}");
    assert_eq!(
        task_events(&h).await[1],
        ("ended".to_owned(), "failed".to_owned())
    );
}

#[tokio::test]
async fn a_tasks_question_goes_to_the_person_and_the_answer_to_the_task() {
    let (h, counts) = with_tasks(|s| {
        s.brain = scripted(vec![inspect("ask"), words("Your parcel is intact.")]);
        s.form = Box::new(|ask| {
            assert!(ask.message.contains("open the parcel"), "{}", ask.message);
            FormAnswer::Accept(std::collections::BTreeMap::from([(
                "open".to_owned(),
                FieldValue::Boolean(true),
            )]))
        });
    })
    .await;
    h.work("T-0001").await;
    assert_eq!(h.outcomes().await, [out("tasks.inspect", Outcome::Result)]);
    assert_eq!(h.outcome_texts().await, [INSPECTED_AFTER_YES]);
    assert_eq!(h.people.forms().len(), 1, "asked once");
    assert_eq!(counts.updates(), 1, "answered once");
    let asked: Vec<Event> = h
        .host
        .events()
        .await
        .into_iter()
        .filter(|e| matches!(e, Event::InputRequest { .. }))
        .collect();
    assert!(
        matches!(&asked[..], [Event::InputRequest { action, server, .. }] if action == "accept" && server == "tasks"),
        "{asked:?}"
    );
}

#[tokio::test]
async fn a_person_who_stops_the_run_cancels_its_task_at_the_server() {
    let (h, counts) = with_tasks(|s| {
        s.brain = scripted(vec![inspect("forever"), words("Done.")]);
    })
    .await;
    let watch = h.host.watch_tasks();
    let host = std::sync::Arc::clone(&h.host);
    let ticket = host
        .tickets()
        .iter()
        .find(|t| t.ticket_id == "T-0001")
        .cloned()
        .expect("ticket");
    let run = tokio::spawn(async move { host.work_ticket(&ticket, None).await });
    eventually("the task started", async || {
        !task_events(&h).await.is_empty()
    })
    .await;
    h.host.stop("T-0001").await.expect("a run to stop");
    let stopped = run.await.expect("the run ended");
    assert!(stopped.error.is_some_and(|e| e.starts_with("stopped by")));
    eventually("the server was asked to cancel", async || {
        counts.cancels() == 1
    })
    .await;
    eventually("the task's end was recorded", async || {
        task_events(&h).await.last() == Some(&("ended".to_owned(), "cancelled".to_owned()))
    })
    .await;
    let state = h
        .host
        .record()
        .state("T-0001")
        .await
        .expect("read")
        .expect("state");
    assert_eq!(state.state, Lifecycle::NeedsPerson);
    assert!(state.tasks.is_empty());
    assert_eq!(counts.calls(), 1);
    watch.abort();
}

#[tokio::test]
async fn a_task_past_the_limit_sends_the_ticket_to_a_person_and_is_followed_to_its_end() {
    let (h, counts) = with_tasks(|s| {
        s.brain = scripted(vec![inspect("slow"), words("Should never be asked.")]);
        s.tweak = Box::new(|config, _| config.limits.task_max_secs = 1);
    })
    .await;
    let run = h.work("T-0001").await;
    let why = run.error.expect("the run ended for a person");
    assert!(
        why.contains("task_max_secs") && why.contains("goes on at the server"),
        "{why}"
    );
    assert_eq!(
        h.model.requests().len(),
        1,
        "the model was not asked to go on"
    );
    let state = h
        .host
        .record()
        .state("T-0001")
        .await
        .expect("read")
        .expect("state");
    assert_eq!(state.state, Lifecycle::NeedsPerson);
    assert_eq!(state.tasks.len(), 1, "its task is open");
    assert_eq!(counts.cancels(), 0, "the task was left to run");
    let watch = h.host.watch_tasks();
    eventually("the task's end was recorded", async || {
        task_events(&h).await.last() == Some(&("ended".to_owned(), "completed".to_owned()))
    })
    .await;
    let ended = h.host.events().await.into_iter().find_map(|e| match e {
        Event::TaskEnded { text, outcome, .. } => Some((text, outcome)),
        _ => None,
    });
    assert_eq!(ended, Some((INSPECTED.to_owned(), Outcome::Result)));
    assert_eq!(counts.calls(), 1, "the call was sent once");
    watch.abort();
}

/// The bundled shop started with `--claims`: its damage claim runs as a task. A small one is
/// followed to `accepted`; one above the refund limit asks a lead's go-ahead in the task,
/// which on one person's desk is that person's, and is followed on to `accepted` too.
#[tokio::test]
async fn the_shops_damage_claim_is_followed_through_its_review_and_a_lead_s_go_ahead() {
    use crate::shop_claims::{large_order, small_order};
    let (small, large) = (small_order(), large_order());
    let brain = scripted(vec![
        call(
            "shop__file_damage_claim",
            json!({"order_id": small.order_id, "damage": "the lid is cracked"}),
        ),
        call(
            "shop__file_damage_claim",
            json!({"order_id": large.order_id, "damage": "the motor housing is dented"}),
        ),
        words("Both claims are filed."),
    ]);
    let mut setup = Setup::new(brain);
    setup.tweak = Box::new(|config, _| {
        let shop = config.servers.get_mut("shop").expect("the shop");
        shop.args.extend(
            [
                "--claims",
                "--claim-review-ms",
                "300",
                "--claim-settle-ms",
                "300",
            ]
            .map(String::from),
        );
        config.limits.model_calls_per_ticket = 4;
    });
    setup.form = Box::new(|ask| {
        assert!(ask.message.contains("claim"), "{}", ask.message);
        FormAnswer::Accept(std::collections::BTreeMap::from([(
            "approve".to_owned(),
            FieldValue::Boolean(true),
        )]))
    });
    let h = harness(setup).await;
    h.work("T-0001").await;
    assert_eq!(
        h.outcomes().await,
        [
            out("shop.file_damage_claim", Outcome::Result),
            out("shop.file_damage_claim", Outcome::Result)
        ]
    );
    for text in h.outcome_texts().await {
        assert!(text.contains("accepted"), "{text}");
    }
    assert_eq!(h.people.forms().len(), 1, "only the large claim asked");
    let ended: Vec<(String, String)> = task_events(&h)
        .await
        .into_iter()
        .filter(|(kind, _)| kind == "ended")
        .collect();
    assert_eq!(ended.len(), 2, "{ended:?}");
}

/// A document every run starts with, which its server says changed while the desk is open,
/// is read again before the next run: the first ticket's model read the old text, the next
/// one's the new.
#[tokio::test]
async fn an_attached_document_its_server_changes_is_read_again_before_the_next_run() {
    let (h, counts) = with_tasks(|s| {
        s.brain = scripted(vec![words("First."), words("Second.")]);
    })
    .await;
    h.work("T-0001").await;
    counts
        .rules
        .send_replace("Depot rules, version 2: no parcels after six.".to_owned());
    eventually("the change was heard", async || {
        h.host.documents_changed()
            == [(
                "tasks".to_owned(),
                crate::task_fixture::RULES_URI.to_owned(),
            )]
    })
    .await;
    h.work("T-0002").await;
    let requests = h.model.requests();
    assert!(
        requests[0].to_string().contains("version 1."),
        "{}",
        requests[0]
    );
    assert!(
        requests[1]
            .to_string()
            .contains("version 2: no parcels after six."),
        "{}",
        requests[1]
    );
    assert!(!requests[1].to_string().contains("version 1."));
}

/// `config/claims.toml`, layered over the default, turns the shop's claims on and changes
/// nothing else of it.
#[test]
fn the_claims_config_turns_the_shops_claims_on_over_the_default() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("config/claims.toml");
    let layered = support_desk::config::DeskConfig::load(&[path]).expect("it loads");
    let default = support_desk::config::DeskConfig::bundled();
    let (shop, was) = (&layered.servers["shop"], &default.servers["shop"]);
    assert!(shop.args.iter().any(|a| a == "--claims"), "{:?}", shop.args);
    assert_eq!(
        shop.args[..was.args.len()],
        was.args[..],
        "the default's args come first"
    );
    assert!(shop.lead_forms.iter().any(|t| t == "file_damage_claim"));
    assert_eq!(shop.command, was.command);
    assert_eq!(layered.servers.len(), default.servers.len());
}

/// A task followed where nobody may answer its question (a team's desk following a task no
/// run waits on): the question is shown as the task's status and put to nobody, and the
/// task is left waiting for whoever may answer it.
#[tokio::test]
async fn a_follower_that_does_not_ask_shows_the_question_and_answers_nothing() {
    use support_desk::host::servers::calls::{self, CallPlan, ProgressShown};
    use support_desk::host::servers::connect::ServerConn;
    use support_desk::host::servers::tasks::{TaskEnd, TaskPace, follow};

    let (url, stop, counts) = serve_tasks().await;
    let (questions, mut asked) = tokio::sync::mpsc::channel(1);
    let server = support_desk::config::ServerConfig {
        url: Some(url),
        enabled: true,
        ..Default::default()
    };
    let conn = ServerConn::connect("tasks", &server, questions, None)
        .await
        .expect("the task server connects");
    let (events, mut shown) = tokio::sync::mpsc::unbounded_channel();
    let plan = CallPlan {
        ticket: "T-0001".into(),
        tool: "inspect".into(),
        arguments: json!({"mode": "ask"})
            .as_object()
            .cloned()
            .expect("an object"),
        request_id: "T-0001-1".into(),
        retry_if_lost: false,
        timeout: Duration::from_secs(10),
        max_time: Duration::from_secs(60),
        max_rounds: 3,
        max_result_bytes: 65536,
        lead_forms: false,
        progress: Some(ProgressShown {
            events,
            turn: 0,
            tool: "tasks.inspect".into(),
        }),
        task_pace: TaskPace {
            max: Duration::from_secs(2),
            asks: false,
            ..TaskPace::default()
        },
    };
    let started = calls::call(&conn, plan.clone()).await;
    let task = started
        .task
        .clone()
        .expect("the server made a task of the call");
    let (run, end) = follow(&conn, &plan, &task, &plan.task_pace, Vec::new()).await;
    assert_eq!(end, TaskEnd::Open);
    assert!(run.to_person, "{}", run.text);
    assert!(asked.try_recv().is_err(), "nobody was asked");
    assert_eq!(counts.updates(), 0, "nothing was answered");
    let mut statuses = Vec::new();
    while let Ok(event) = shown.try_recv() {
        if let support_desk::host::api::HostEvent::TaskStatus { status, .. } = event {
            statuses.push(status);
        }
    }
    assert_eq!(
        statuses.last().map(String::as_str),
        Some("waiting for an answer"),
        "{statuses:?}"
    );
    stop.cancel();
}

/// After the run gave the ticket to a person and the task goes on, the person cancels it
/// (`:cancel-task` on the desk): the server is asked once, the request is noted as theirs,
/// and the task's end is recorded as cancelled. With nothing running, they are told so.
#[tokio::test]
async fn a_person_cancels_a_task_the_run_stopped_waiting_on() {
    let (h, counts) = with_tasks(|s| {
        s.brain = scripted(vec![inspect("forever"), words("Should never be asked.")]);
        s.tweak = Box::new(|config, _| config.limits.task_max_secs = 1);
    })
    .await;
    h.work("T-0001").await;
    assert_eq!(counts.cancels(), 0);
    h.host
        .cancel_tasks("T-0001")
        .await
        .expect("a task to cancel");
    assert_eq!(counts.cancels(), 1);
    eventually("the task's end was recorded", async || {
        task_events(&h).await.last() == Some(&("ended".to_owned(), "cancelled".to_owned()))
    })
    .await;
    let noted = h.host.events().await.into_iter().find_map(|e| match e {
        Event::Noted { by, text, .. } => Some((by, text)),
        _ => None,
    });
    let (by, text) = noted.expect("the request is noted");
    assert_eq!(by, h.host.record().person());
    assert!(text.starts_with("asked tasks to cancel its task"), "{text}");
    let refused = h
        .host
        .cancel_tasks("T-0001")
        .await
        .expect_err("nothing runs now");
    assert!(refused.contains("no task running"), "{refused}");
    assert_eq!(counts.cancels(), 1);
}
