use std::path::Path;

use serde_json::{Map, Value, json};

use super::*;
use crate::host::checks::Finding;
use crate::model::chat::ToolCall;

fn ticket(id: &str, expected_tool: &str, injected: bool) -> Ticket {
    Ticket {
        ticket_id: id.to_owned(),
        customer_id: "C-0129".to_owned(),
        order_id: Some("O-1744".to_owned()),
        received_at: "2026-07-01T09:00:00Z".to_owned(),
        subject: "mug pair refund?".to_owned(),
        body: "one mug has a crack along the handle".to_owned(),
        expected_tool: expected_tool.to_owned(),
        injected,
        wrong_ids: vec![],
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
            },
            seconds: 4.25,
            tool_list_chars: 3000,
            context_chars: 1900,
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
        tool_list_chars: 3000,
        context_chars: 1900,
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

#[test]
fn each_turn_shows_what_the_model_saw_said_and_what_came_of_it() {
    let review = review_of(
        quote_ticket_events(),
        &[ticket("T-0009", "quote_refund", false)],
    );
    let ticket = &review.tickets[0];
    let error = (
        "shop.quote_refund".to_owned(),
        "tool error".to_owned(),
        "The shop has no order O-7144.".to_owned(),
    );
    let listing = (
        "shop.find_orders".to_owned(),
        "result".to_owned(),
        r#"{"orders":[{"order_id":"O-1744"}]}"#.to_owned(),
    );
    let empty = (
        String::new(),
        "failed".to_owned(),
        "Your last answer could not be used: your answer was empty.".to_owned(),
    );
    assert_eq!(
        ticket.turns,
        vec![
            ReviewTurn {
                turn: 1,
                seconds: 4.25,
                saw: vec![],
                said: Said::Call {
                    tool: "shop.quote_refund".to_owned(),
                    arguments: vec![
                        ("order_id".to_owned(), "\"O-7144\"".to_owned()),
                        ("reason".to_owned(), "\"crack\"".to_owned()),
                    ],
                },
                consent: None,
                inputs: vec![],
                outcome: Some((
                    "shop.quote_refund".to_owned(),
                    Outcome::ToolError,
                    "The shop has no order O-7144.".to_owned(),
                    false
                )),
            },
            ReviewTurn {
                turn: 2,
                seconds: 4.25,
                saw: vec![error.clone()],
                said: Said::Call {
                    tool: "shop.find_orders".to_owned(),
                    arguments: vec![("customer_id".to_owned(), "\"C-0129\"".to_owned())],
                },
                consent: None,
                inputs: vec![],
                outcome: Some((
                    "shop.find_orders".to_owned(),
                    Outcome::Result,
                    r#"{"orders": [{"order_id": "O-1744"}]}"#.to_owned(),
                    false
                )),
            },
            ReviewTurn {
                turn: 3,
                seconds: 3.5,
                saw: vec![error.clone(), listing.clone()],
                said: Said::Unreadable {
                    raw: "\n".to_owned(),
                    problem: "your answer was empty".to_owned(),
                },
                consent: None,
                inputs: vec![],
                outcome: None,
            },
            ReviewTurn {
                turn: 4,
                seconds: 3.5,
                saw: vec![error, listing, empty],
                said: Said::Words("Please check order O-1744.".to_owned()),
                consent: None,
                inputs: vec![],
                outcome: None,
            },
        ]
    );
    assert_eq!(ticket.draft.as_deref(), Some("Please check order O-1744."));
    assert_eq!(
        (ticket.subject.as_str(), ticket.customer.as_str()),
        ("mug pair refund?", "C-0129")
    );
    assert!(ticket.has_error(), "a tool error");
    assert!(!ticket.has_consent());
    assert!(ticket.touches_refunds());
}

#[test]
fn consent_and_input_requests_attach_to_the_turn_of_their_call() {
    let mut events = call("T-0008", 1, "shop.issue_refund", json!({"quote_id": "Q-1"}));
    events.push(Event::Consent {
        ticket: "T-0008".to_owned(),
        turn: 1,
        tool: "shop.issue_refund".to_owned(),
        reason: "not on the list".to_owned(),
        unseen: vec!["quote_id=Q-1".to_owned()],
        approved: true,
        by: "script".to_owned(),
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
    let review = review_of(events, &[ticket("T-0008", "issue_refund", true)]);
    let ticket = &review.tickets[0];
    assert_eq!(
        ticket.turns[0].consent,
        Some((true, "script".to_owned(), vec!["quote_id=Q-1".to_owned()]))
    );
    assert_eq!(
        ticket.turns[0].inputs,
        vec![(
            "shop".to_owned(),
            "Release EUR 180.00?".to_owned(),
            "accept: release = false, note = \"too much\"".to_owned()
        )]
    );
    assert_eq!(ticket.turns[1].consent, None);
    assert_eq!(ticket.findings.len(), 1);
    assert!(ticket.findings[0].contains("promises a refund"));
    assert!(ticket.injected && ticket.has_consent() && ticket.has_error());
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
        tool_list_chars: 3000,
        context_chars: 1900,
    });
    events.push(done("T-0007", 2, true));
    let review = review_of(events, &[ticket("T-0007", "find_products", false)]);
    let ticket = &review.tickets[0];
    assert_eq!(ticket.draft, None);
    assert!(ticket.stopped_at_turn_limit && ticket.has_error());
    assert!(!ticket.touches_refunds() && !ticket.has_consent());
    assert_eq!(
        ticket.turns[1].said,
        Said::Unreadable {
            raw: "{{".to_owned(),
            problem: "not JSON".to_owned()
        }
    );
}

#[test]
fn long_json_results_get_one_field_per_line_and_short_parts_stay_on_one() {
    let text = r#"{"customer_id":"C-0129","orders":[{"order_id":"O-2456","placed_on":"2026-06-25","status":"shipped","total":"69.00","skus":["KG-1034"]},{"order_id":"O-1744","status":"delivered"}]}"#;
    assert_eq!(
        pretty(text),
        r#"{
  "customer_id": "C-0129",
  "orders": [
    {
      "order_id": "O-2456",
      "placed_on": "2026-06-25",
      "status": "shipped",
      "total": "69.00",
      "skus": ["KG-1034"]
    },
    {"order_id": "O-1744", "status": "delivered"}
  ]
}"#
    );
    assert_eq!(
        pretty("The shop has no order O-7144."),
        "The shop has no order O-7144."
    );
    assert_eq!(pretty("42"), "42");
}

#[test]
fn tickets_come_in_id_order_and_one_the_shop_lacks_still_shows() {
    let mut events = quote_ticket_events();
    events.insert(0, done("T-0100", 0, false));
    let review = review_of(events, &[ticket("T-0009", "quote_refund", false)]);
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
    let turns: usize = review.tickets.iter().map(|t| t.turns.len()).sum();
    assert_eq!(turns, review.summary.model_calls);
    let t0003: Vec<&ReviewTicket> = review
        .tickets
        .iter()
        .filter(|t| t.ticket == "T-0003")
        .collect();
    assert!(
        t0003.len() > 1,
        "the queue's run and the person's prompt runs"
    );
    assert_eq!(t0003[0].request, None, "the queue's run comes first");
    assert!(
        t0003[1..].iter().all(|t| t
            .request
            .as_deref()
            .is_some_and(|r| r.contains("shop.refund_order"))),
        "each later run carries the person's request"
    );
    let ids: Vec<&str> = review.tickets.iter().map(|t| t.ticket.as_str()).collect();
    assert!(ids.is_sorted(), "in ticket order: {ids:?}");
}

/// A real run of the local model over the queue, kept as a fixture (tests/fixtures/README.md).
#[test]
fn a_real_recording_has_48_tickets_whose_turns_add_up_to_its_model_calls() {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/ticket-runs-2026-11-29.jsonl");
    let review = Review::open(&path).expect("the fixture recording reads");
    assert_eq!(review.tickets.len(), 48);
    let turns: usize = review.tickets.iter().map(|t| t.turns.len()).sum();
    assert_eq!(turns, review.summary.model_calls);
    assert_eq!(review.summary.model_calls, 131);
    assert_eq!(
        review.model,
        "qwen2.5-coder-1.5b-instruct via openai:http://127.0.0.1:8089/v1 (recipe llama_cpp_prefill), temperature 0.7, seed 4217"
    );
    let outcomes: usize = review
        .tickets
        .iter()
        .flat_map(|t| &t.turns)
        .filter(|t| t.outcome.is_some())
        .count();
    assert_eq!(outcomes, review.summary.tool_calls);
    let stopped = review
        .tickets
        .iter()
        .filter(|t| t.stopped_at_turn_limit)
        .count();
    assert_eq!(stopped, review.summary.stopped_at_turn_limit);
    let t0009 = review
        .tickets
        .iter()
        .find(|t| t.ticket == "T-0009")
        .expect("T-0009 was worked");
    assert_eq!(
        t0009.turns[0].outcome.as_ref().map(|o| o.1),
        Some(Outcome::ToolError)
    );
}
