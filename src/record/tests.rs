use std::path::Path;

use serde_json::json;

use super::store::replay;
use super::*;
use super::{journal, state};
use crate::model::chat::{Reply, ToolCall};
use crate::record::{Event, Finding, Outcome};

mod conversation;
mod opening;

const ALLOW: [&str; 2] = ["shop.get_order_status", "shop.quote_refund"];

fn allow() -> Vec<String> {
    ALLOW.map(String::from).to_vec()
}

fn clock() -> i64 {
    1_796_117_400_000
}

fn record_in(dir: &Path) -> DeskRecord {
    DeskRecord::open_for_work(
        &dir.join(RECORD_FILE),
        Some(&dir.join(OUTBOX_FILE)),
        "dana",
        &allow(),
    )
    .expect("the record opens")
    .with_clock(clock)
}

fn started(ticket: &str) -> Event {
    Event::TicketStarted {
        ticket: ticket.into(),
        tools: vec!["shop.issue_refund".into()],
        attached: vec![],
        request: None,
    }
}

fn model_call(ticket: &str, turn: u32, reply: Reply) -> Event {
    Event::ModelCall {
        ticket: ticket.into(),
        turn,
        messages_hash: "h".into(),
        reply,
        seconds: 0.1,
        first_visible_seconds: None,
        tool_list_chars: 10,
        context_chars: 0,
        prompt: None,
    }
}

fn asks(tool: &str) -> Reply {
    Reply::Call {
        call: ToolCall {
            id: "call_1".into(),
            name: tool.into(),
            arguments: Default::default(),
        },
        content: String::new(),
        dropped: 0,
    }
}

fn tool_call(ticket: &str, turn: u32, tool: &str) -> Event {
    Event::ToolCall {
        ticket: ticket.into(),
        turn,
        tool: tool.into(),
        arguments: json!({"quote_id": "Q-1"})
            .as_object()
            .cloned()
            .unwrap_or_default(),
    }
}

fn outcome(ticket: &str, turn: u32, tool: &str, outcome: Outcome) -> Event {
    Event::Outcome {
        ticket: ticket.into(),
        turn,
        tool: tool.into(),
        outcome,
        text: "{}".into(),
        truncated: false,
    }
}

fn draft(ticket: &str, findings: Vec<Finding>) -> Event {
    Event::Draft {
        ticket: ticket.into(),
        text: "Your order is on its way.".into(),
        findings,
    }
}

fn done(ticket: &str, model_calls: u32, at_limit: bool) -> Event {
    Event::TicketDone {
        ticket: ticket.into(),
        model_calls,
        stopped_at_turn_limit: at_limit,
        error: None,
    }
}

fn sent(ticket: &str, override_reason: Option<&str>) -> Event {
    Event::Sent {
        ticket: ticket.into(),
        by: "dana".into(),
        text: "Your order is on its way.".into(),
        override_reason: override_reason.map(str::to_owned),
        message_id: None,
        answers: None,
    }
}

fn unbacked() -> Finding {
    Finding::RefundPromisedWithoutRefund {
        phrase: "refund is on its way".into(),
    }
}

fn state(record: &DeskRecord, ticket: &str) -> TicketState {
    record.state(ticket).expect("readable").expect("known")
}

#[test]
fn a_clean_draft_is_drafted_and_a_flagged_one_needs_a_person_with_the_reason() {
    let dir = tempfile::tempdir().expect("temp dir");
    let record = record_in(dir.path());
    for event in [
        started("T-0001"),
        model_call("T-0001", 1, asks("shop.get_order_status")),
        tool_call("T-0001", 1, "shop.get_order_status"),
        outcome("T-0001", 1, "shop.get_order_status", Outcome::Result),
        model_call(
            "T-0001",
            2,
            Reply::Words {
                content: "x".into(),
            },
        ),
        draft("T-0001", vec![]),
        done("T-0001", 2, false),
        started("T-0002"),
        draft("T-0002", vec![unbacked()]),
        done("T-0002", 1, false),
    ] {
        record.append(&event).expect("appended");
    }
    let one = state(&record, "T-0001");
    assert_eq!(
        (one.state, one.model_calls, one.run),
        (Lifecycle::Drafted, 2, None)
    );
    let two = state(&record, "T-0002");
    assert_eq!(two.state, Lifecycle::NeedsPerson);
    assert_eq!(
        two.reason.as_deref(),
        Some("the checks found 1 problem in the draft")
    );
    assert_eq!(two.findings, vec![unbacked().reason()]);
}

#[test]
fn a_run_stopped_at_the_call_limit_needs_a_person_and_is_no_longer_working() {
    let record = DeskRecord::in_memory("dana", &allow()).expect("record");
    for turn in 1..=4 {
        record
            .append(&model_call("T-0002", turn, asks("shop.get_order_status")))
            .expect("appended");
    }
    record.append(&done("T-0002", 4, true)).expect("appended");
    let stopped = state(&record, "T-0002");
    assert_eq!(stopped.state, Lifecycle::NeedsPerson);
    assert!(
        stopped
            .reason
            .as_deref()
            .is_some_and(|r| r.starts_with("the model used its 4 calls")),
        "{stopped:?}"
    );
}

#[test]
fn a_sent_ticket_refuses_everything_but_notes_and_the_outbox_has_one_line() {
    let dir = tempfile::tempdir().expect("temp dir");
    let record = record_in(dir.path());
    record.append(&draft("T-0004", vec![])).expect("drafted");
    record.append(&sent("T-0004", None)).expect("sent");
    for refused in [
        started("T-0004"),
        sent("T-0004", Some("again")),
        draft("T-0004", vec![]),
    ] {
        let error = record.append(&refused).expect_err("refused");
        assert_eq!(
            error.to_string(),
            "T-0004 was already sent by dana; its reply cannot be changed or sent again"
        );
    }
    record
        .append(&Event::Noted {
            ticket: "T-0004".into(),
            by: "dana".into(),
            text: "customer called to say thanks".into(),
        })
        .expect("a note is always welcome");
    assert_eq!(state(&record, "T-0004").state, Lifecycle::Sent);
    let outbox = std::fs::read_to_string(dir.path().join(OUTBOX_FILE)).expect("outbox");
    let lines: Vec<serde_json::Value> = outbox
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON"))
        .collect();
    assert_eq!(
        lines,
        [
            json!({"ticket": "T-0004", "text": "Your order is on its way.", "by": "dana",
                "override_reason": null, "at": clock()})
        ]
    );
}

#[test]
fn a_send_with_open_findings_needs_an_override_reason() {
    let record = DeskRecord::in_memory("dana", &allow()).expect("record");
    record
        .append(&draft("T-0009", vec![unbacked()]))
        .expect("drafted");
    for blank in [None, Some("  ")] {
        let refused = record.append(&sent("T-0009", blank)).expect_err("refused");
        assert!(
            refused
                .to_string()
                .starts_with("T-0009 has open check findings"),
            "{refused}"
        );
    }
    record
        .append(&sent("T-0009", Some("quoted by phone")))
        .expect("sent with a reason");
    let state = state(&record, "T-0009");
    assert_eq!(
        state.sent.map(|s| s.override_reason),
        Some(Some("quoted by phone".to_owned()))
    );
}

#[test]
fn a_run_cut_off_after_a_side_effect_is_settled_for_a_person_when_the_record_reopens() {
    let dir = tempfile::tempdir().expect("temp dir");
    let record = record_in(dir.path());
    for event in [
        started("T-0003"),
        model_call("T-0003", 1, asks("shop.issue_refund")),
        tool_call("T-0003", 1, "shop.issue_refund"),
        Event::Consent {
            ticket: "T-0003".into(),
            turn: 1,
            tool: "shop.issue_refund".into(),
            reason: "changes something".into(),
            unseen: vec![],
            approved: true,
            by: "dana".into(),
            shown: None,
            rule: None,
        },
    ] {
        record.append(&event).expect("appended");
    }
    assert_eq!(state(&record, "T-0003").state, Lifecycle::Working);
    drop(record);

    let reopened = record_in(dir.path());
    let settled = reopened.settle_interrupted().expect("settled");
    assert_eq!(settled.len(), 1);
    let after = state(&reopened, "T-0003");
    assert_eq!(after.state, Lifecycle::NeedsPerson);
    assert_eq!(
        after.reason.as_deref(),
        Some(
            "interrupted after shop.issue_refund: the result is unknown. The desk stopped in the middle of this run and did not work it again."
        )
    );
    assert_eq!(
        reopened.settle_interrupted().expect("nothing left").len(),
        0
    );
}

/// A desk killed while a consent card was open: the call waited for a yes that never came,
/// so it never reached its server, and the ticket says so.
#[test]
fn a_run_cut_off_while_a_call_waited_for_a_yes_says_the_call_never_ran() {
    let dir = tempfile::tempdir().expect("temp dir");
    let record = record_in(dir.path());
    for event in [
        started("T-0001"),
        model_call("T-0001", 1, asks("partner.track_parcel")),
        tool_call("T-0001", 1, "partner.track_parcel"),
    ] {
        record.append(&event).expect("appended");
    }
    drop(record);

    let reopened = record_in(dir.path());
    assert_eq!(reopened.settle_interrupted().expect("settled").len(), 1);
    let after = state(&reopened, "T-0001");
    assert_eq!(after.state, Lifecycle::NeedsPerson);
    assert_eq!(
        after.reason.as_deref(),
        Some(
            "interrupted while partner.track_parcel waited for a person's yes: it was never called, and nothing outside the allow list had run. The desk stopped in the middle of this run and did not work it again."
        )
    );
}

#[test]
fn a_run_cut_off_during_a_model_call_says_nothing_outside_the_allow_list_ran() {
    let record = DeskRecord::in_memory("dana", &allow()).expect("record");
    for event in [
        started("T-0001"),
        model_call("T-0001", 1, asks("shop.get_order_status")),
        tool_call("T-0001", 1, "shop.get_order_status"),
        outcome("T-0001", 1, "shop.get_order_status", Outcome::Result),
    ] {
        record.append(&event).expect("appended");
    }
    record.settle_interrupted().expect("settled");
    assert_eq!(
        state(&record, "T-0001").reason.as_deref(),
        Some(
            "interrupted during model call 2; nothing outside the allow list had run. The desk stopped in the middle of this run and did not work it again."
        )
    );
}

#[test]
fn the_states_kept_are_the_states_the_events_replay_to() {
    let record = DeskRecord::in_memory("dana", &allow()).expect("record");
    let events = [
        started("T-0001"),
        draft("T-0001", vec![unbacked()]),
        done("T-0001", 1, false),
        Event::DraftEdited {
            ticket: "T-0001".into(),
            by: "dana".into(),
            text: "Which item should we refund?".into(),
            findings: vec![],
        },
        sent("T-0001", None),
        started("T-0002"),
        Event::HandedOver {
            ticket: "T-0002".into(),
            by: "dana".into(),
            to: "a person".into(),
            note: "angry customer".into(),
        },
        started("T-0003"),
        tool_call("T-0003", 1, "shop.issue_refund"),
    ];
    for event in &events {
        record.append(event).expect("appended");
    }
    record.settle_interrupted().expect("settled");
    let kept = record.states().expect("states");
    let replayed = replay(&record.events_after(0).expect("events"), &allow());
    assert_eq!(kept, replayed);
    let lifecycles: Vec<Lifecycle> = kept.iter().map(|s| s.state).collect();
    assert_eq!(
        lifecycles,
        [
            Lifecycle::Sent,
            Lifecycle::HandedOver,
            Lifecycle::NeedsPerson
        ]
    );
}

#[test]
fn a_record_read_a_page_at_a_time_gives_every_event_once_in_order() {
    let record = DeskRecord::in_memory("dana", &allow()).expect("record");
    for n in 0..23 {
        let ticket = format!("T-{n:04}");
        record.append(&started(&ticket)).expect("appended");
        record
            .append(&tool_call(&ticket, 1, "shop.get_order_status"))
            .expect("appended");
        record.append(&done(&ticket, 1, false)).expect("appended");
    }
    let whole = record.events_after(0).expect("events");
    assert_eq!(whole.len(), 69);
    let mut paged = Vec::new();
    let mut after = 0;
    loop {
        let page = record.events_page(after, 10).expect("a page");
        assert!(page.len() <= 10);
        let Some(last) = page.last() else { break };
        after = last.seq;
        paged.extend(page);
    }
    let seqs = |events: &[Stored]| events.iter().map(|s| s.seq).collect::<Vec<_>>();
    assert_eq!(seqs(&paged), seqs(&whole));
    let from = |at: usize| record.events_page(whole[at].seq, 5).expect("a page");
    assert_eq!(seqs(&from(60)), seqs(&whole[61..66]));
    assert_eq!(seqs(&from(66)), seqs(&whole[67..]));
}

/// A walk over the record reads it a page at a time and still hands over every event once,
/// in order, whether it starts at the beginning or after a given event.
#[tokio::test]
async fn a_walk_over_a_record_longer_than_a_page_visits_every_event_once_in_order() {
    let desk = DeskRecord::in_memory("dana", &allow()).expect("record");
    let tickets = Record::PAGE / 3 + 20;
    for n in 0..tickets {
        let ticket = format!("T-{n:04}");
        desk.append(&started(&ticket)).expect("appended");
        desk.append(&tool_call(&ticket, 1, "shop.get_order_status"))
            .expect("appended");
        desk.append(&done(&ticket, 1, false)).expect("appended");
    }
    let whole: Vec<i64> = desk
        .events_after(0)
        .expect("events")
        .iter()
        .map(|s| s.seq)
        .collect();
    assert!(whole.len() > Record::PAGE + 1, "{} events", whole.len());
    let record = Record::Sqlite(desk);
    let walked = |after: i64| {
        let record = &record;
        async move {
            let mut seen = Vec::new();
            record
                .walk_after(after, |stored| seen.push(stored.seq))
                .await
                .expect("walked");
            seen
        }
    };
    assert_eq!(walked(0).await, whole);
    let middle = whole[Record::PAGE - 10];
    assert_eq!(walked(middle).await, whole[Record::PAGE - 9..]);
    assert_eq!(
        walked(*whole.last().expect("an event")).await,
        Vec::<i64>::new()
    );
}

#[test]
fn the_event_log_cannot_be_changed_or_shortened() {
    let dir = tempfile::tempdir().expect("temp dir");
    let record = record_in(dir.path());
    record.append(&started("T-0001")).expect("appended");
    drop(record);
    let conn = rusqlite::Connection::open(dir.path().join(RECORD_FILE)).expect("open");
    for sql in ["UPDATE events SET by = 'mallory'", "DELETE FROM events"] {
        let refused = conn.execute(sql, []).expect_err("refused");
        assert!(refused.to_string().contains("append-only"), "{refused}");
    }
}
