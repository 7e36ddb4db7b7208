use serde_json::Map;

use super::*;
use crate::model::chat::Reply;
use crate::record::Finding;

fn started(ticket: &str) -> Event {
    Event::TicketStarted {
        ticket: ticket.into(),
        tools: vec![],
        attached: vec![],
        request: None,
    }
}

fn model_call(ticket: &str, turn: u32) -> Event {
    model_said(ticket, turn, "")
}

fn model_said(ticket: &str, turn: u32, words: &str) -> Event {
    Event::ModelCall {
        ticket: ticket.into(),
        turn,
        messages_hash: String::new(),
        reply: Reply::Words {
            content: words.into(),
        },
        seconds: 1.0,
        first_visible_seconds: None,
        tool_list_chars: 0,
        context_chars: 0,
        prompt: None,
    }
}

fn call(ticket: &str, turn: u32, tool: &str, outcome: Outcome) -> Vec<Event> {
    vec![
        model_call(ticket, turn),
        Event::ToolCall {
            ticket: ticket.into(),
            turn,
            tool: tool.into(),
            arguments: Map::new(),
        },
        Event::Outcome {
            ticket: ticket.into(),
            turn,
            tool: tool.into(),
            outcome,
            text: String::new(),
            truncated: false,
        },
    ]
}

fn done(ticket: &str, model_calls: u32, stopped: bool) -> Event {
    Event::TicketDone {
        ticket: ticket.into(),
        model_calls,
        stopped_at_turn_limit: stopped,
        error: None,
    }
}

fn draft(ticket: &str, findings: Vec<Finding>) -> Event {
    Event::Draft {
        ticket: ticket.into(),
        text: "Hello".into(),
        findings,
    }
}

fn recording(events: Vec<Vec<Event>>) -> Recording {
    Recording {
        manifests: vec![],
        events: events.into_iter().flatten().collect(),
        truncated: false,
    }
}

/// T-0001 stops at the limit after the same failing call, then (new) answers from a result;
/// T-0002 is the same in both.
fn pair() -> (Recording, Recording) {
    let same = vec![
        vec![started("T-0002")],
        call("T-0002", 1, "shop.find_products", Outcome::Result),
        vec![
            model_call("T-0002", 2),
            draft("T-0002", vec![]),
            done("T-0002", 2, false),
        ],
    ];
    let mut old = vec![vec![started("T-0001")]];
    for turn in 1..=4 {
        old.push(call(
            "T-0001",
            turn,
            "shop.find_products",
            Outcome::ToolError,
        ));
    }
    old.push(vec![done("T-0001", 4, true)]);
    old.extend(same.clone());
    let new = vec![
        vec![started("T-0001")],
        call("T-0001", 1, "shop.get_order_status", Outcome::Result),
        vec![
            model_call("T-0001", 2),
            draft("T-0001", vec![Finding::NoAnswer { words: "no".into() }]),
            done("T-0001", 2, false),
        ],
    ];
    let mut new = new;
    new.extend(same);
    (recording(old), recording(new))
}

#[test]
fn each_ticket_is_lined_up_and_its_changes_named() {
    let (old, new) = pair();
    let comparison = Comparison::of(&old, &new, &[]);
    assert_eq!(comparison.tickets.len(), 2);
    let changed: Vec<&TicketComparison> = comparison.changed().collect();
    assert_eq!(changed.len(), 1);
    assert_eq!(
        changed[0].changes,
        [
            "first tool shop.find_products → shop.get_order_status",
            "model calls 4 → 2",
            "outcomes find_products:tool error find_products:tool error find_products:tool error find_products:tool error → get_order_status:result",
            "ended with the turn limit → a draft",
            "findings none → no_answer",
        ]
    );
    let text = comparison.to_text();
    assert!(text.contains("runs that changed: 1 of 2"), "{text}");
    assert!(
        text.contains("\nT-0001: first tool shop.find_products → shop.get_order_status; "),
        "{text}"
    );
    assert!(
        text.contains("stopped at the turn limit                   1          0"),
        "{text}"
    );
    assert!(
        text.contains("ended with a draft                          1          2"),
        "{text}"
    );
}

#[test]
fn a_run_in_one_recording_only_is_said_so_and_json_has_both_sides() {
    let (old, _) = pair();
    let comparison = Comparison::of(&old, &recording(vec![]), &[]);
    assert!(
        comparison
            .tickets
            .iter()
            .all(|t| t.changes == ["only in the old recording"])
    );
    let json = serde_json::to_value(&comparison).expect("serialises");
    assert_eq!(json["tickets"][0]["ticket"], "T-0001");
    assert_eq!(json["tickets"][0]["old"]["stopped_at_turn_limit"], true);
    assert!(json["tickets"][0]["new"].is_null());
}

/// Runs that end the same way but said other words, sent other arguments or asked the model
/// more often are changed runs.
#[test]
fn other_words_other_arguments_or_more_model_calls_are_changes() {
    let run = |order: &str, words: &str, calls: u32| {
        let mut events = vec![
            started("T-0003"),
            model_call("T-0003", 1),
            Event::ToolCall {
                ticket: "T-0003".into(),
                turn: 1,
                tool: "shop.get_order_status".into(),
                arguments: serde_json::json!({"order_id": order})
                    .as_object()
                    .cloned()
                    .unwrap_or_default(),
            },
            Event::Outcome {
                ticket: "T-0003".into(),
                turn: 1,
                tool: "shop.get_order_status".into(),
                outcome: Outcome::Result,
                text: String::new(),
                truncated: false,
            },
        ];
        events.push(Event::Draft {
            ticket: "T-0003".into(),
            text: words.into(),
            findings: vec![],
        });
        events.push(done("T-0003", calls, false));
        recording(vec![events])
    };
    let same = Comparison::of(
        &run("O-1587", "It shipped.", 2),
        &run("O-1587", "It shipped.", 2),
        &[],
    );
    assert_eq!(same.changed().count(), 0);
    let other = Comparison::of(
        &run("O-1587", "It shipped.", 2),
        &run("O-1578", "It shipped on Monday.", 3),
        &[],
    );
    let changed: Vec<&TicketComparison> = other.changed().collect();
    assert_eq!(
        changed[0].changes,
        [
            "model calls 2 → 3",
            "shop.get_order_status arguments {\"order_id\":\"O-1587\"} → {\"order_id\":\"O-1578\"}",
            "the draft's words changed (11 → 21 characters)",
        ]
    );
}

/// A draft today's check reads otherwise than the recording: both are shown, and the run has
/// not changed for it.
#[test]
fn a_draft_todays_check_reads_otherwise_is_shown_beside_the_run_and_is_no_change() {
    let run = || {
        recording(vec![vec![
            started("T-0001"),
            model_call("T-0001", 1),
            Event::Draft {
                ticket: "T-0001".into(),
                text: "Your refund of €24.90 has been issued and reaches your card in five days."
                    .into(),
                findings: vec![],
            },
            done("T-0001", 1, false),
        ]])
    };
    let comparison = Comparison::of(&run(), &run(), &[]);
    assert_eq!(comparison.changed().count(), 0);
    let today = "recorded none, today refund_promised_without_refund, amount_not_from_tool";
    assert_eq!(
        comparison.tickets[0].rechecked,
        [format!("old: {today}"), format!("new: {today}")]
    );
    let text = comparison.to_text();
    assert!(
        text.ends_with(&format!(
            "drafts today's check reads otherwise than recorded: 1\nT-0001: old: {today}; new: {today}\n"
        )),
        "{text}"
    );
}

/// The recording keeps a draft with its quote ID cut, and the model's own words in its last
/// call: checked again, the draft reads as it did when the run was made, a sentence the cut
/// left empty included.
#[test]
fn a_draft_whose_quote_id_was_cut_is_checked_again_from_the_models_own_words() {
    let said = "Hello Isabelle,\nThe quote ID is Q-8625c2a621. The amount is EUR 389.00.";
    let emptied = Finding::NotForCustomer {
        kind: "a sentence left empty where a quote ID was cut".into(),
        words: "The quote ID is.".into(),
    };
    let run = |words: &str| {
        recording(vec![vec![
            started("T-0033"),
            model_said("T-0033", 1, words),
            Event::Draft {
                ticket: "T-0033".into(),
                text: crate::host::checks::strip_handles(said),
                findings: vec![emptied.clone()],
            },
            done("T-0033", 1, false),
        ]])
    };
    let rechecked = rechecked_runs(&run(said), &[]);
    let now = &rechecked[&("T-0033".to_owned(), 1)];
    assert_eq!(
        now.text,
        "Hello Isabelle,\nThe quote ID is. The amount is EUR 389.00."
    );
    assert!(now.now.contains(&emptied), "{now:?}");
    // Words that are not what the draft was cut from are not taken for it.
    let other = rechecked_runs(&run("Something else entirely."), &[]);
    assert!(
        !other[&("T-0033".to_owned(), 1)].now.contains(&emptied),
        "{other:?}"
    );
}
