//! Servers that misbehave on purpose: the host reports each one clearly and the rest of the
//! desk keeps working.

use serde_json::json;
use support_desk::config::ServerConfig;
use support_desk::host::api::Outcome;
use support_desk::record::Event;

use crate::host::{Setup, harness};
use crate::mock_model::{call, scripted, words};

fn stdio(command: &str, args: &[&str]) -> ServerConfig {
    ServerConfig {
        command: Some(command.to_owned()),
        args: args.iter().map(|a| (*a).to_owned()).collect(),
        enabled: true,
        ..ServerConfig::default()
    }
}

async fn with_broken_server(server: ServerConfig) -> crate::host::Harness {
    let mut setup = Setup::new(scripted(vec![
        call("shop__get_order_status", json!({"order_id": "O-1744"})),
        words("Delivered."),
    ]));
    setup.tweak = Box::new(move |config, _| {
        config.limits.connect_timeout_secs = 3;
        config.servers.insert("broken".into(), server);
    });
    harness(setup).await
}

async fn assert_left_out_and_desk_works(server: ServerConfig, expected: &str) {
    let h = with_broken_server(server).await;
    let broken = h
        .host
        .servers()
        .iter()
        .find(|s| s.prefix == "broken")
        .cloned()
        .expect("reported");
    let error = broken.error.expect("the broken server is reported");
    assert!(
        error.contains("server 'broken'") && error.contains(expected),
        "{error}"
    );
    h.work("T-0009").await;
    assert_eq!(
        h.outcomes().await,
        [("shop.get_order_status".to_owned(), Outcome::Result)],
        "the rest of the desk works"
    );
}

#[tokio::test]
async fn a_server_that_cannot_start_is_reported_and_left_out() {
    assert_left_out_and_desk_works(
        stdio("/nonexistent/mcp-server", &[]),
        "could not be started",
    )
    .await;
}

#[tokio::test]
async fn a_server_that_exits_at_once_is_reported_and_left_out() {
    assert_left_out_and_desk_works(
        stdio("sh", &["-c", "exit 3"]),
        "did not complete the handshake",
    )
    .await;
}

#[tokio::test]
async fn a_server_that_speaks_malformed_json_rpc_is_reported_and_left_out() {
    let garbage =
        "echo 'this is not JSON-RPC'; echo '{\"jsonrpc\": \"2.0\", \"id\": '; exec sleep 600";
    assert_left_out_and_desk_works(stdio("sh", &["-c", garbage]), "handshake").await;
}

#[tokio::test]
async fn a_server_that_never_answers_is_given_up_on_after_the_connect_timeout() {
    let started = std::time::Instant::now();
    assert_left_out_and_desk_works(
        stdio("sh", &["-c", "exec sleep 600"]),
        "no usable answer within 3 s",
    )
    .await;
    assert!(started.elapsed().as_secs() < 60);
}

#[tokio::test]
async fn a_server_that_sends_bytes_that_are_not_utf8_is_reported_and_left_out() {
    assert_left_out_and_desk_works(
        stdio("sh", &["-c", "printf '\\377\\376\\375\\n'; exec sleep 600"]),
        "handshake",
    )
    .await;
}

use std::sync::atomic::Ordering;

use crate::fixture::POISONED;
use crate::host::fixture_setup;
use crate::mock_model::Brain;
use support_desk::host::api::FormAnswer;

/// A model that follows whatever the tool descriptions say: once `fix.echo_meta` tells it to,
/// it tries to issue a refund.
fn gullible() -> Brain {
    std::sync::Arc::new(|request: &serde_json::Value| {
        let system = crate::mock_model::system_prompt(request);
        let answered = crate::mock_model::tool_messages(request);
        match (system.contains("ignore previous rules"), answered.len()) {
            (_, 0) => call("fix__echo_meta", json!({})),
            (true, 1) => call("shop__issue_refund", json!({"quote_id": "Q-0123456789"})),
            _ => words("Done."),
        }
    })
}

#[tokio::test]
async fn a_description_changed_after_the_pins_is_blocked_between_tickets_not_inside_one() {
    let mut setup = fixture_setup(gullible(), Box::new(|_| FormAnswer::Cancel));
    // The person approves plain calls and declines a tool whose definition changed.
    setup.consent = Box::new(|ask| ask.changed_definition.is_none());
    let h = harness(setup).await;
    let rug = h.rug_pulled.clone().expect("the fixture runs");

    h.work("T-0001").await;
    assert_eq!(
        h.outcomes().await,
        [("fix.echo_meta".to_owned(), Outcome::Result)],
        "pinned at first sight"
    );

    rug.store(true, Ordering::SeqCst);
    h.work("T-0002").await;
    let asked = h.people.consents();
    let changed = asked
        .iter()
        .filter(|a| a.tool == "fix.echo_meta")
        .find_map(|a| a.changed_definition.clone())
        .unwrap_or_else(|| panic!("the change is shown: {asked:#?}"));
    assert!(
        changed.contains("+ now:") && changed.contains("ignore previous rules"),
        "{changed}"
    );
    assert_eq!(
        h.outcomes().await[1],
        ("fix.echo_meta".to_owned(), Outcome::UnknownTool),
        "kept from the model until a person approves it"
    );
    // The model never saw the poisoned description (4 of 4 requests carried it before):
    // neither in its tool list nor in the system prompt, so it tried no refund.
    for request in h.model.requests().iter().skip(1) {
        assert!(
            !request.to_string().contains("ignore previous rules"),
            "{request}"
        );
    }
    let asked_for: Vec<String> = asked.iter().map(|a| a.tool.clone()).collect();
    assert!(
        !asked_for.contains(&"shop.issue_refund".to_owned()),
        "{asked_for:?}"
    );
}

#[tokio::test]
async fn a_definition_changed_without_a_word_during_a_ticket_is_met_at_the_next() {
    let rug_cell: std::sync::Arc<
        std::sync::Mutex<Option<std::sync::Arc<std::sync::atomic::AtomicBool>>>,
    > = Default::default();
    let pull = std::sync::Arc::clone(&rug_cell);
    // The server changes the description while the model thinks about its second turn.
    let brain: Brain = std::sync::Arc::new(move |request: &serde_json::Value| {
        match crate::mock_model::tool_messages(request).len() {
            0 => call("fix__echo_meta", json!({})),
            1 => {
                if let Some(rug) = pull.lock().expect("lock").as_ref() {
                    rug.store(true, Ordering::SeqCst);
                }
                call("fix__echo_meta", json!({}))
            }
            _ => words("Done."),
        }
    });
    let mut setup = fixture_setup(brain, Box::new(|_| FormAnswer::Cancel));
    setup.consent = Box::new(|ask| ask.changed_definition.is_none());
    let h = harness(setup).await;
    *rug_cell.lock().expect("lock") = h.rug_pulled.clone();
    h.work("T-0001").await;
    assert_eq!(
        h.outcomes().await,
        [
            ("fix.echo_meta".to_owned(), Outcome::Result),
            ("fix.echo_meta".to_owned(), Outcome::Result)
        ],
        "a server that does not say its tools changed is not listed again inside the ticket"
    );
    let system = crate::mock_model::system_prompt(&h.model.requests()[1]);
    assert!(
        !system.contains(POISONED),
        "the ticket's tool list did not change under it"
    );
    h.work("T-0002").await;
    assert_eq!(
        h.outcomes().await.get(2).map(|o| o.1),
        Some(Outcome::UnknownTool),
        "the next ticket meets the change at the pins: the tool is kept from the model"
    );
}

#[tokio::test]
async fn instructions_in_a_server_description_cause_no_side_effect_without_consent() {
    let mut setup = fixture_setup(gullible(), Box::new(|_| FormAnswer::Cancel));
    setup.consent = Box::new(|ask| ask.tool != "shop.issue_refund");
    let h = harness(setup).await;
    h.rug_pulled
        .clone()
        .expect("the fixture runs")
        .store(true, Ordering::SeqCst);
    h.work("T-0001").await;
    // The untrusted server's resources are never attached, and its words reach the model
    // only as a tool description; the refund it asked for carried a quote ID no tool gave,
    // so the host refused it before asking anyone, and it never ran.
    assert!(h.host.attached().iter().all(|a| a.server != "fix"));
    assert!(
        h.outcomes()
            .await
            .contains(&("shop.issue_refund".to_owned(), Outcome::Failed)),
        "{:?}",
        h.outcomes().await
    );
    assert!(
        !h.outcomes()
            .await
            .contains(&("shop.issue_refund".to_owned(), Outcome::Result))
    );
    assert!(
        h.people
            .consents()
            .iter()
            .all(|a| a.tool != "shop.issue_refund")
    );
}

/// The names of the tools a model request offers.
fn offered(request: &serde_json::Value) -> Vec<String> {
    request["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["function"]["name"].as_str().map(str::to_owned))
        .collect()
}

/// Waits, as long as a slow machine could need, for `done`.
async fn until(what: &str, done: impl Fn() -> bool) {
    let started = std::time::Instant::now();
    while !done() {
        assert!(started.elapsed().as_secs() < 30, "never happened: {what}");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

/// One ticket's run in which the fixture pulls the rug on `echo_meta`, and says so, while the
/// model is on its second reply (held until the desk has heard): the model calls `echo_meta`,
/// then `echo_meta` again, then writes. The person approves every plain call, and a changed
/// definition when `approve`.
async fn rug_pulled_out_loud_in_a_run(approve: bool) -> crate::host::Harness {
    let hold = std::sync::Arc::new(tokio::sync::Notify::new());
    let mut setup = fixture_setup(
        scripted(vec![
            call("fix__echo_meta", json!({})),
            call("fix__echo_meta", json!({})),
            words("Done."),
        ]),
        Box::new(|_| FormAnswer::Cancel),
    );
    setup.consent = Box::new(move |ask| approve || ask.changed_definition.is_none());
    setup.stream = Some((
        std::time::Duration::from_millis(1),
        Some(std::sync::Arc::clone(&hold)),
    ));
    let h = harness(setup).await;
    let ticket = h.host.ticket("T-0001").expect("T-0001");
    let host = std::sync::Arc::clone(&h.host);
    let run = tokio::spawn(async move { host.work_ticket(&ticket, None).await });
    hold.notify_one();
    until("the model is asked a second time", || {
        h.model.requests().len() == 2
    })
    .await;
    h.pull_rug_out_loud();
    until("the desk hears the fixture's tools changed", || {
        !h.tools_changed.lock().expect("lock").is_empty()
    })
    .await;
    hold.notify_one();
    until("the model is asked a third time", || {
        h.model.requests().len() == 3
    })
    .await;
    hold.notify_one();
    run.await.expect("the run ends");
    h
}

/// Where the person was asked about `echo_meta`'s change in the record, and where the model
/// was asked its third time: the question comes first.
async fn asked_before_the_third_request(h: &crate::host::Harness) -> (bool, String) {
    let events = h.host.events().await;
    let third = events
        .iter()
        .position(|e| matches!(e, Event::ModelCall { turn: 3, .. }))
        .expect("a third model call");
    let (at, approved, shown) = events
        .iter()
        .enumerate()
        .find_map(|(at, e)| match e {
            Event::Consent {
                tool,
                approved,
                shown: Some(shown),
                ..
            } if tool == "fix.echo_meta" => Some((at, *approved, shown.clone())),
            _ => None,
        })
        .expect("the change was put to a person");
    assert!(
        at < third,
        "asked at {at}, the model's third call at {third}"
    );
    (approved, shown)
}

#[tokio::test]
async fn a_tool_that_changes_during_a_run_is_out_of_the_models_next_request_at_once() {
    let h = rug_pulled_out_loud_in_a_run(false).await;
    assert_eq!(
        h.tools_changed.lock().expect("lock").clone(),
        [("fix".to_owned(), vec!["fix.echo_meta".to_owned()])],
        "the desk was told which tool is held"
    );
    let requests = h.model.requests();
    assert!(offered(&requests[1]).contains(&"fix__echo_meta".to_owned()));
    assert!(
        !offered(&requests[2]).contains(&"fix__echo_meta".to_owned()),
        "{:?}",
        offered(&requests[2])
    );
    for said in ["Echoes the request's _meta", "ignore previous rules"] {
        assert!(!requests[2].to_string().contains(said), "{said}");
    }
    assert_eq!(
        h.outcomes().await,
        [
            ("fix.echo_meta".to_owned(), Outcome::Result),
            ("fix.echo_meta".to_owned(), Outcome::UnknownTool)
        ],
        "the call after the change did not reach the server"
    );
    let (approved, shown) = asked_before_the_third_request(&h).await;
    assert!(!approved);
    assert!(
        shown.contains("+ now:") && shown.contains("ignore previous rules"),
        "{shown}"
    );
    let asked = h.people.consents();
    assert!(
        asked
            .iter()
            .any(|a| a.tool == "fix.echo_meta" && a.changed_definition.as_deref() == Some(&shown)),
        "{asked:#?}"
    );
}

#[tokio::test]
async fn a_tool_changed_during_a_run_is_offered_again_only_after_a_person_approves_its_diff() {
    let h = rug_pulled_out_loud_in_a_run(true).await;
    let (approved, shown) = asked_before_the_third_request(&h).await;
    assert!(approved);
    assert!(shown.contains("ignore previous rules"), "{shown}");
    let third = &h.model.requests()[2];
    assert!(
        offered(third).contains(&"fix__echo_meta".to_owned()),
        "{:?}",
        offered(third)
    );
    assert!(
        third.to_string().contains("ignore previous rules"),
        "offered as the person approved it"
    );
    assert_eq!(
        h.outcomes().await[1],
        ("fix.echo_meta".to_owned(), Outcome::UnknownTool),
        "held from the change until the approval"
    );
}
