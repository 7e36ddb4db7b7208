//! Servers that misbehave on purpose: the host reports each one clearly and the rest of the
//! desk keeps working.

use serde_json::json;
use support_desk::config::ServerConfig;
use support_desk::host::api::Outcome;

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
async fn a_definition_that_changes_during_a_ticket_is_applied_only_to_the_next() {
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
        "inside the ticket the tools stay as they were when it started"
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
