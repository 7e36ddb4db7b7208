//! A call its server runs as a task, on the desk's screen (ratatui's TestBackend): its status
//! under the call's line while it runs (the server's words as data, escape sequences
//! stripped), where it started and how it ended in the ticket's history, also when it ended
//! after the run had given the ticket to a person.

use serde_json::json;
use support_desk::host::api::{HostEvent, Outcome};
use support_desk::record::Event;

use crate::ui_desk::{
    app, asks_for, happen, model_call, outcome, record, screen, select, tool_call,
};

const TASK: &str = "claim-6f1c";

#[test]
fn a_tasks_status_shows_under_its_call_and_its_start_and_end_in_the_history() {
    let record = record();
    let mut app = app();
    select(&mut app, "T-0001");
    let args = json!({"order_id": "O-1744", "damage": "the lid is cracked"});
    for event in [
        Event::TicketStarted {
            ticket: "T-0001".into(),
            tools: vec!["shop.file_damage_claim".into()],
            attached: vec![],
            request: None,
        },
        model_call(
            "T-0001",
            1,
            asks_for("shop.file_damage_claim", args.clone()),
        ),
        tool_call("T-0001", 1, "shop.file_damage_claim", args),
        Event::TaskStarted {
            ticket: "T-0001".into(),
            turn: 1,
            server: "shop".into(),
            tool: "shop.file_damage_claim".into(),
            task: TASK.into(),
        },
    ] {
        happen(&mut app, &record, event);
    }
    app.on_host(HostEvent::TaskStatus {
        ticket: "T-0001".into(),
        turn: 1,
        tool: "shop.file_damage_claim".into(),
        task: TASK.into(),
        status: "working".into(),
        seconds: 40,
        message: Some("the carrier is reviewing the claim\u{1b}[2J".into()),
    });
    let working = screen(&app, 80, 24);
    assert!(!working.contains("[2J"), "{working}");
    assert!(
        working.contains("  working: task working, 40 s"),
        "{working}"
    );
    assert!(
        working.contains("shop runs shop.file_damage_claim"),
        "{working}"
    );
    insta::assert_snapshot!("desk_task_working_80x24", working);

    // The run gave the ticket to a person; the task ended later, and its end is in the
    // history with what it came to.
    happen(
        &mut app,
        &record,
        outcome(
            "T-0001",
            1,
            "shop.file_damage_claim",
            Outcome::Failed,
            "still working: shop's task claim-6f1c was not done after 600 s ([limits] task_max_secs), so the ticket goes to a person",
        ),
    );
    happen(
        &mut app,
        &record,
        Event::TaskEnded {
            ticket: "T-0001".into(),
            server: "shop".into(),
            task: TASK.into(),
            status: "completed".into(),
            outcome: Outcome::Result,
            text: "Claim claim-6f1c accepted: EUR 54.90 for order O-1744.".into(),
            truncated: false,
        },
    );
    let ended = screen(&app, 120, 36);
    assert!(!ended.contains("working: task"), "{ended}");
    assert!(
        ended.contains("task claim-6f1c of shop completed"),
        "{ended}"
    );
    assert!(ended.contains("Claim claim-6f1c accepted"), "{ended}");
    insta::assert_snapshot!("desk_task_ended_120x36", ended);
}
