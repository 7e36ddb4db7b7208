use std::path::Path;

use serde_json::{Map, Value, json};

use super::*;
use crate::model::chat::{Reply, ToolCall};
use crate::record::Finding;

fn ticket(id: &str) -> Ticket {
    Ticket {
        ticket_id: id.to_owned(),
        customer_id: "C-0129".to_owned(),
        received_at: "2026-07-01T09:00:00Z".to_owned(),
        subject: "mug pair refund?".to_owned(),
        body: "one mug has a crack along the handle".to_owned(),
        customer_name: None,
        ..Default::default()
    }
}

fn arguments(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => panic!("arguments are an object"),
    }
}

fn call(ticket: &str, turn: u32, tool: &str, args: Value) -> Vec<Event> {
    vec![
        Event::ModelCall {
            ticket: ticket.to_owned(),
            turn,
            messages_hash: format!("h{turn}"),
            reply: Reply::Call {
                call: ToolCall {
                    id: format!("c{turn}"),
                    name: tool.to_owned(),
                    arguments: arguments(args.clone()),
                },
                content: String::new(),
                dropped: 0,
            },
            seconds: 4.25,
            first_visible_seconds: None,
            tool_list_chars: 3000,
            context_chars: 1900,
            prompt: None,
        },
        Event::ToolCall {
            ticket: ticket.to_owned(),
            turn,
            tool: tool.to_owned(),
            arguments: arguments(args),
        },
    ]
}

fn outcome(ticket: &str, turn: u32, tool: &str, outcome: Outcome, text: &str) -> Event {
    Event::Outcome {
        ticket: ticket.to_owned(),
        turn,
        tool: tool.to_owned(),
        outcome,
        text: text.to_owned(),
        truncated: false,
    }
}

fn words(ticket: &str, turn: u32, content: &str) -> Event {
    Event::ModelCall {
        ticket: ticket.to_owned(),
        turn,
        messages_hash: format!("h{turn}"),
        reply: Reply::Words {
            content: content.to_owned(),
        },
        seconds: 3.5,
        first_visible_seconds: None,
        tool_list_chars: 3000,
        context_chars: 1900,
        prompt: None,
    }
}

fn done(ticket: &str, model_calls: u32, stopped: bool) -> Event {
    Event::TicketDone {
        ticket: ticket.to_owned(),
        model_calls,
        stopped_at_turn_limit: stopped,
        error: None,
    }
}

/// T-0009 as the real run worked it, shortened: a wrong order, a listing, an empty answer, a
/// draft.
fn quote_ticket_events() -> Vec<Event> {
    let mut events = vec![Event::TicketStarted {
        ticket: "T-0009".to_owned(),
        tools: vec!["shop.quote_refund".to_owned()],
        attached: vec![],
        request: None,
    }];
    events.extend(call(
        "T-0009",
        1,
        "shop.quote_refund",
        json!({"order_id": "O-7144", "reason": "crack"}),
    ));
    events.push(outcome(
        "T-0009",
        1,
        "shop.quote_refund",
        Outcome::ToolError,
        "The shop has no order O-7144.",
    ));
    events.extend(call(
        "T-0009",
        2,
        "shop.find_orders",
        json!({"customer_id": "C-0129"}),
    ));
    events.push(outcome(
        "T-0009",
        2,
        "shop.find_orders",
        Outcome::Result,
        r#"{"orders":[{"order_id":"O-1744"}]}"#,
    ));
    events.push(words("T-0009", 3, "\n"));
    events.push(words("T-0009", 4, "Please check order O-1744."));
    events.push(Event::Draft {
        ticket: "T-0009".to_owned(),
        text: "Please check order O-1744.".to_owned(),
        findings: vec![],
    });
    events.push(done("T-0009", 4, false));
    events
}

fn review_of(events: Vec<Event>, tickets: &[Ticket]) -> Review {
    let recording = Recording {
        manifests: vec![],
        events,
        truncated: false,
    };
    Review::from_recording("test.jsonl", &recording, tickets)
}

/// The kinds of a step's entries, for comparing shapes.
fn kinds<'a>(step: &Step<'a>) -> Vec<&'static str> {
    step.entries
        .iter()
        .map(|e| match e.kind {
            EntryKind::RunStarted { .. } => "run started",
            EntryKind::ModelCall { .. } => "model call",
            EntryKind::Said { .. } => "said",
            EntryKind::Unreadable { .. } => "unreadable",
            EntryKind::Call { .. } => "call",
            EntryKind::Consent { .. } => "consent",
            EntryKind::Input { .. } => "input",
            EntryKind::Outcome { .. } => "outcome",
            EntryKind::Draft { .. } => "draft",
            EntryKind::RunEnded { .. } => "run ended",
            EntryKind::Edited { .. } => "edited",
            EntryKind::Sent { .. } => "sent",
            EntryKind::HandedOver { .. } => "handed over",
            EntryKind::Attached { .. } => "attached",
            EntryKind::Noted { .. } => "noted",
            EntryKind::Assigned { .. } => "assigned",
            EntryKind::Tagged { .. } => "tagged",
            EntryKind::NeedsPerson { .. } => "needs person",
            EntryKind::AskedLead { .. } => "asked a lead",
            EntryKind::LeadAnswered { .. } => "lead answered",
            EntryKind::Withdrawn { .. } => "withdrawn",
            EntryKind::FellBack { .. } => "fell back",
            EntryKind::RunContinued { .. } => "run continued",
            EntryKind::Received { .. } => "received",
            EntryKind::Delivery { .. } => "delivery",
            EntryKind::Solved { .. } => "solved",
            EntryKind::TaskStarted { .. } => "task started",
            EntryKind::TaskEnded { .. } => "task ended",
        })
        .collect()
}

#[test]
fn a_run_carries_the_same_entries_the_live_desk_draws() {
    let events = quote_ticket_events();
    let review = review_of(events.clone(), &[ticket("T-0009")]);
    let ticket = &review.tickets[0];
    assert_eq!(ticket.entries, crate::record::transcript::entries(&events));
    assert!(
        ticket
            .entries
            .iter()
            .all(|e| e.by.is_none() && e.at.is_none())
    );
    assert_eq!(
        (ticket.subject.as_str(), ticket.customer.as_str()),
        ("mug pair refund?", "C-0129")
    );
    assert_eq!(ticket.model_calls(), 4);
    assert!(ticket.has_error(), "a tool error");
    assert!(!ticket.has_consent());
    assert!(ticket.touches_refunds(), "a refund was quoted");
}

#[test]
fn each_model_call_is_a_step_and_the_run_start_comes_before_turn_1() {
    let review = review_of(quote_ticket_events(), &[ticket("T-0009")]);
    let steps = review.tickets[0].steps();
    let turns: Vec<Option<u32>> = steps.iter().map(|s| s.turn).collect();
    assert_eq!(turns, [Some(1), Some(2), Some(3), Some(4), None]);
    assert_eq!(
        kinds(&steps[0]),
        ["run started", "model call", "call", "outcome"]
    );
    assert_eq!(kinds(&steps[1]), ["model call", "call", "outcome"]);
    assert_eq!(kinds(&steps[2]), ["model call", "unreadable"]);
    // Words are the draft: shown once, as the draft at the end.
    assert_eq!(kinds(&steps[3]), ["model call"]);
    assert_eq!(kinds(&steps[4]), ["draft", "run ended"]);
}

#[test]
fn what_people_did_after_the_run_belongs_to_its_end() {
    let mut events = quote_ticket_events();
    events.push(Event::DraftEdited {
        ticket: "T-0009".to_owned(),
        by: "dana".to_owned(),
        text: "Your refund of EUR 99.00 is on its way.".to_owned(),
        findings: vec![Finding::RefundPromisedWithoutRefund {
            phrase: "refund of EUR 99.00 is on its way".to_owned(),
        }],
    });
    events.push(Event::Noted {
        ticket: "T-0009".to_owned(),
        by: "dana".to_owned(),
        text: "called the customer".to_owned(),
    });
    let review = review_of(events, &[ticket("T-0009")]);
    let ticket = &review.tickets[0];
    let steps = ticket.steps();
    assert_eq!(
        kinds(&steps[steps.len() - 1]),
        ["draft", "run ended", "edited", "noted"]
    );
    assert_eq!(ticket.findings().len(), 1, "the person's edit is checked");
    assert!(ticket.findings()[0].contains("promises a refund"));
}

#[test]
fn consent_and_input_requests_join_the_step_of_their_call() {
    let mut events = call("T-0008", 1, "shop.issue_refund", json!({"quote_id": "Q-1"}));
    events.push(Event::Consent {
        ticket: "T-0008".to_owned(),
        turn: 1,
        tool: "shop.issue_refund".to_owned(),
        reason: "not on the list".to_owned(),
        unseen: vec!["quote_id=Q-1".to_owned()],
        approved: true,
        by: "script".to_owned(),
        shown: None,
        rule: None,
    });
    events.push(Event::InputRequest {
        ticket: "T-0008".to_owned(),
        turn: 1,
        server: "shop".to_owned(),
        message: "Release EUR 180.00?".to_owned(),
        action: "accept".to_owned(),
        content: Some(r#"{"release":false,"note":"too much"}"#.to_owned()),
    });
    events.push(outcome(
        "T-0008",
        1,
        "shop.issue_refund",
        Outcome::ToolError,
        "held",
    ));
    events.push(words("T-0008", 2, "Your refund is on its way."));
    events.push(Event::Draft {
        ticket: "T-0008".to_owned(),
        text: "Your refund is on its way.".to_owned(),
        findings: vec![Finding::RefundPromisedWithoutRefund {
            phrase: "refund is on its way".to_owned(),
        }],
    });
    events.push(done("T-0008", 2, false));
    let review = review_of(events, &[ticket("T-0008")]);
    let ticket = &review.tickets[0];
    let steps = ticket.steps();
    assert_eq!(
        kinds(&steps[0]),
        ["model call", "call", "consent", "input", "outcome"]
    );
    assert_eq!(kinds(&steps[1]), ["model call"]);
    assert_eq!(ticket.findings().len(), 1);
    assert!(ticket.has_consent() && ticket.has_error() && ticket.touches_refunds());
}

#[test]
fn a_ticket_that_ran_out_of_turns_has_no_draft_and_counts_as_an_error() {
    let mut events = call("T-0007", 1, "shop.find_products", json!({"query": "pasta"}));
    events.push(outcome(
        "T-0007",
        1,
        "shop.find_products",
        Outcome::Result,
        "[]",
    ));
    events.push(Event::ModelCall {
        ticket: "T-0007".to_owned(),
        turn: 2,
        messages_hash: "h2".to_owned(),
        reply: Reply::Malformed {
            raw: "{{".to_owned(),
            problem: "not JSON".to_owned(),
        },
        seconds: 7.0,
        first_visible_seconds: None,
        tool_list_chars: 3000,
        context_chars: 1900,
        prompt: None,
    });
    events.push(done("T-0007", 2, true));
    let review = review_of(events, &[ticket("T-0007")]);
    let ticket = &review.tickets[0];
    let steps = ticket.steps();
    assert_eq!(kinds(&steps[2]), ["run ended"], "no draft at the end");
    assert!(ticket.has_error());
    assert!(!ticket.touches_refunds() && !ticket.has_consent());
}

#[test]
fn a_ticket_tagged_for_a_refund_that_never_asked_for_one_is_not_a_refund_run() {
    let mut events = call(
        "T-0013",
        1,
        "shop.find_orders",
        json!({"customer_id": "C-1"}),
    );
    events.push(outcome(
        "T-0013",
        1,
        "shop.find_orders",
        Outcome::Result,
        "[]",
    ));
    let review = review_of(events, &[ticket("T-0013")]);
    assert!(
        !review.tickets[0].touches_refunds(),
        "the data set's tag is not the desk's to know"
    );
}

#[test]
fn tickets_come_in_id_order_and_one_the_shop_lacks_still_shows() {
    let mut events = quote_ticket_events();
    events.insert(0, done("T-0100", 0, false));
    let review = review_of(events, &[ticket("T-0009")]);
    let ids: Vec<&str> = review.tickets.iter().map(|t| t.ticket.as_str()).collect();
    assert_eq!(ids, ["T-0009", "T-0100"]);
    assert_eq!(review.tickets[1].subject, "");
    assert_eq!(
        review.model,
        "unknown model (the recording has no manifest)"
    );
    assert_eq!(review.summary.tickets_worked, 2);
}

#[test]
fn the_committed_recording_shows_each_run_of_a_ticket_on_its_own() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("recordings/ticket-runs");
    let review = Review::open(&path).expect("the committed recording reads");
    let calls: usize = review.tickets.iter().map(ReviewTicket::model_calls).sum();
    assert_eq!(calls, review.summary.model_calls);
    let t0003: Vec<&ReviewTicket> = review
        .tickets
        .iter()
        .filter(|t| t.ticket == "T-0003")
        .collect();
    assert!(
        t0003.len() > 1,
        "the queue's run and the person's prompt runs"
    );
    assert_eq!(t0003[0].request(), None, "the queue's run comes first");
    assert!(
        t0003[1..]
            .iter()
            .all(|t| t.request().is_some_and(|r| r.contains("shop.refund_order"))),
        "each later run carries the person's request"
    );
    let ids: Vec<&str> = review.tickets.iter().map(|t| t.ticket.as_str()).collect();
    assert!(ids.is_sorted(), "in ticket order: {ids:?}");
}

/// A real run of the local model over the queue, kept as a fixture (tests/fixtures/README.md).
#[test]
fn a_real_recording_has_48_tickets_whose_entries_add_up_to_its_figures() {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/ticket-runs-2026-11-29.jsonl");
    let review = Review::open(&path).expect("the fixture recording reads");
    assert_eq!(review.tickets.len(), 48);
    let calls: usize = review.tickets.iter().map(ReviewTicket::model_calls).sum();
    assert_eq!(calls, review.summary.model_calls);
    assert_eq!(review.summary.model_calls, 131);
    assert_eq!(
        review.model,
        "qwen2.5-coder-1.5b-instruct via openai:http://127.0.0.1:8089/v1 (recipe llama_cpp_prefill), temperature 0.7, seed 4217"
    );
    let entries = || review.tickets.iter().flat_map(|t| &t.entries);
    let outcomes = entries()
        .filter(|e| matches!(e.kind, EntryKind::Outcome { .. }))
        .count();
    assert_eq!(outcomes, review.summary.tool_calls);
    let stopped = entries()
        .filter(|e| {
            matches!(
                e.kind,
                EntryKind::RunEnded {
                    stopped_at_turn_limit: true,
                    ..
                }
            )
        })
        .count();
    assert_eq!(stopped, review.summary.stopped_at_turn_limit);
    let t0009 = review
        .tickets
        .iter()
        .find(|t| t.ticket == "T-0009")
        .expect("T-0009 was worked");
    let first = t0009.steps().into_iter().next().expect("a first step");
    assert!(first.entries.iter().any(|e| matches!(
        e.kind,
        EntryKind::Outcome {
            outcome: Outcome::ToolError,
            ..
        }
    )));
}

#[test]
fn a_desk_record_reads_with_who_did_each_thing_and_when() {
    fn fixed_clock() -> i64 {
        1_796_117_400_000
    }
    let dir = tempfile::tempdir().expect("a temporary folder");
    let path = dir.path().join("desk.sqlite");
    let mut events = quote_ticket_events();
    events.push(Event::Noted {
        ticket: "T-0009".to_owned(),
        by: "dana".to_owned(),
        text: "called the customer".to_owned(),
    });
    {
        let record = crate::record::DeskRecord::open_for_work(&path, None, "dana", &[])
            .expect("a new record")
            .with_clock(fixed_clock);
        for event in &events {
            record.append(event).expect("the record takes it");
        }
    }
    let review = Review::open_record(&path).expect("the record reads");
    let expected: Vec<Entry> = events
        .iter()
        .flat_map(|e| crate::record::transcript::entries_of(e, Some("dana"), Some(fixed_clock())))
        .collect();
    assert_eq!(review.tickets.len(), 1);
    assert_eq!(review.tickets[0].entries, expected);
}
