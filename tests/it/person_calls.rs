//! A person calls a tool themselves, through the host's gate: the quote and then the refund
//! of T-0003 (EUR 279.00, above the limit), whose release form the shop asks as it would for
//! a model's call. The calls are the person's in the record, their choice is the yes, and the
//! draft check and the next model run both count them.

use std::collections::BTreeMap;

use serde_json::Value;
use support_desk::host::api::{FieldValue, FormAnswer};
use support_desk::record::Event;
use support_desk::record::Finding;
use support_desk::record::event::{OWN_CALL, PERSON_TURN};

use crate::host::{Setup, harness};
use crate::mock_model::{scripted, words};

fn accept(values: &[(&str, &str)]) -> FormAnswer {
    FormAnswer::Accept(
        values
            .iter()
            .map(|(name, value)| ((*name).to_owned(), FieldValue::Text((*value).to_owned())))
            .collect::<BTreeMap<_, _>>(),
    )
}

#[tokio::test]
async fn a_person_quotes_and_issues_a_refund_and_the_run_and_the_check_count_it() {
    let ticket = "T-0003".to_owned();
    let order_id = crate::support::label(&ticket)
        .order_id
        .expect("T-0003 is about an order");
    let world = support_desk::shop::ShopWorld::bundled();
    let order = world
        .orders
        .iter()
        .find(|o| o.order_id == order_id)
        .expect("its order");
    let sku = order
        .lines
        .iter()
        .find(|l| l.amount() > support_desk::shop::REFUND_LIMIT)
        .map(|l| l.sku.clone())
        .expect("a line above the limit");
    let mut setup = Setup::new(scripted(vec![words(
        "Your refund has been released; it reaches your card within 5 working days.",
    )]));
    setup.form = Box::new(|_| {
        FormAnswer::Accept(BTreeMap::from([(
            "release".to_owned(),
            FieldValue::Boolean(true),
        )]))
    });
    let h = harness(setup).await;

    let offered = h.host.tools_for_people().await;
    assert!(
        offered
            .iter()
            .any(|t| t.name == "shop.issue_refund" && t.withheld.is_none()),
        "{offered:?}"
    );
    let refused = h
        .host
        .person_call(
            &ticket,
            "shop.quote_refund",
            &accept(&[("order_id", "1587")]),
        )
        .await
        .expect_err("the schema is checked before anything is sent");
    assert!(refused.contains("do not fit its input schema"), "{refused}");

    let quoted = h
        .host
        .person_call(
            &ticket,
            "shop.quote_refund",
            &accept(&[
                ("order_id", &order.order_id),
                ("sku", &sku),
                ("reason", "the motor smells burnt"),
            ]),
        )
        .await
        .expect("quoted");
    let quote: Value = serde_json::from_str(&quoted.text).expect("the shop's JSON");
    let quote_id = quote["quote_id"].as_str().expect("a quote id").to_owned();
    // The quote offers its refund next, filled in from the quote's result.
    let next = h.host.next_steps(&ticket, &offered).await;
    let names: Vec<&str> = next.iter().map(|s| s.tool.as_str()).collect();
    assert_eq!(names, ["shop.issue_refund"], "{next:?}");
    assert_eq!(
        next[0].values,
        [(
            "quote_id".to_owned(),
            quote_id.clone(),
            "shop.quote_refund".to_owned()
        )]
    );
    let released = h
        .host
        .person_call(
            &ticket,
            "shop.issue_refund",
            &accept(&[("quote_id", &quote_id)]),
        )
        .await
        .expect("issued");
    assert!(released.text.contains("released"), "{}", released.text);
    let forms = h.people.forms();
    assert_eq!(
        forms.len(),
        1,
        "the shop's release form, asked of the person"
    );
    assert!(
        forms[0].message.starts_with("Release refund R-"),
        "{}",
        forms[0].message
    );
    assert!(
        h.people.consents().is_empty(),
        "nobody was asked: the person chose it"
    );

    let events = h.host.events().await;
    let person = h.host.record().person().to_owned();
    assert!(events.iter().any(|e| matches!(
        e,
        Event::Consent { tool, by, rule: Some(rule), approved: true, .. }
            if tool == "shop.issue_refund" && *by == person && rule == OWN_CALL
    )));
    let person_calls: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            Event::ToolCall {
                turn: PERSON_TURN,
                tool,
                ..
            } => Some(tool.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(person_calls, ["shop.quote_refund", "shop.issue_refund"]);
    let after = h.host.next_steps(&ticket, &offered).await;
    assert!(
        after.iter().all(|s| s.tool != "shop.issue_refund"),
        "the refund it offered was made: {after:?}"
    );

    // The draft check counts the person's refund; on a ticket without one it would not.
    let reply = "Your refund of EUR 279.00 has been released.";
    let checked = h.host.check_text(&ticket, reply).await.expect("checked");
    assert!(
        !checked
            .findings
            .iter()
            .any(|f| matches!(f, Finding::RefundPromisedWithoutRefund { .. })),
        "{:?}",
        checked.findings
    );
    let elsewhere = h.host.check_text("T-0001", reply).await.expect("checked");
    assert!(
        elsewhere
            .findings
            .iter()
            .any(|f| matches!(f, Finding::RefundPromisedWithoutRefund { .. })),
        "{:?}",
        elsewhere.findings
    );

    // The next model run is told of the calls, and its draft is checked against them.
    let run = h.work(&ticket).await;
    assert!(run.findings.is_empty(), "{:?}", run.findings);
    let asked = h.model.requests()[0].to_string();
    assert!(
        asked.contains("A person at the desk already made these calls")
            && asked.contains(&quote_id),
        "{asked}"
    );
}

/// `support-desk call`, headless: the same call as `c`, as the person the desk runs as; on
/// one person's desk `--lead` answers the shop's release form, and without it the form is
/// declined and the refund stays held. Arguments are checked against the tool's form first.
#[tokio::test]
async fn the_call_command_quotes_and_issues_as_the_person() {
    let dir = tempfile::tempdir().expect("dir");
    let data = dir.path().to_string_lossy().into_owned();
    let call = |args: Vec<String>| {
        let data = data.clone();
        async move {
            let output = tokio::process::Command::new(crate::support::BIN)
                .arg("call")
                .args(&args)
                .args(["--data-dir", &data])
                .env("SUPPORT_DESK_STAFF", "ana")
                .output()
                .await
                .expect("runs");
            (
                output.status.success(),
                String::from_utf8_lossy(&output.stdout).into_owned(),
                String::from_utf8_lossy(&output.stderr).into_owned(),
            )
        }
    };
    let owned = |args: &[&str]| args.iter().map(|a| (*a).to_owned()).collect::<Vec<_>>();
    let (ok, _, said) = call(owned(&["T-0003", "shop.issue_refund", "--arg", "quote=1"])).await;
    assert!(!ok && said.contains("its fields are: quote_id"), "{said}");

    let (ok, out, said) = call(owned(&[
        "T-0003",
        "shop.quote_refund",
        "--arg",
        "order_id=O-1587",
        "--arg",
        "reason=the motor smells burnt",
    ]))
    .await;
    assert!(ok, "{said}");
    assert!(
        out.starts_with("T-0003 · shop.quote_refund → result: "),
        "{out}"
    );
    let quote_id = out
        .split('"')
        .find(|w| w.starts_with("Q-"))
        .expect("a quote id")
        .to_owned();
    let issue = |lead: Option<&str>| {
        let mut args = owned(&["T-0003", "shop.issue_refund", "--arg"]);
        args.push(format!("quote_id={quote_id}"));
        if let Some(lead) = lead {
            args.extend(owned(&["--lead", lead]));
        }
        call(args)
    };
    let (ok, out, said) = issue(None).await;
    assert!(
        ok && out.contains("tool error") && out.contains("still holds it"),
        "{out}{said}"
    );
    let (ok, out, said) = issue(Some("accept")).await;
    assert!(ok && out.contains("\"status\":\"released\""), "{out}{said}");

    let record = support_desk::record::DeskRecord::open(
        &dir.path().join(support_desk::record::RECORD_FILE),
        None,
        "checker",
        &[],
    )
    .expect("the desk's record");
    let by: Vec<String> = record
        .ticket_events("T-0003")
        .expect("events")
        .into_iter()
        .filter(|s| {
            matches!(
                s.event,
                Event::ToolCall {
                    turn: PERSON_TURN,
                    ..
                }
            )
        })
        .map(|s| s.by)
        .collect();
    assert_eq!(by, ["ana", "ana", "ana"], "every call is the person's");
}

/// A tool whose definition changed since its pin is called by a person only once they have
/// seen the change and said yes: declined, nothing reaches the server; approved, the pin
/// takes the definition as it is, and the call goes through. A value the schema refuses is
/// never sent.
#[tokio::test]
async fn a_withheld_tool_is_called_only_after_its_change_is_approved_and_a_bad_value_never() {
    let approve = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut setup = Setup::new(scripted(vec![]));
    let approving = std::sync::Arc::clone(&approve);
    setup.consent = Box::new(move |ask| {
        ask.changed_definition.is_none() || approving.load(std::sync::atomic::Ordering::SeqCst)
    });
    setup.tweak = Box::new(|_, dir| {
        let pins = serde_json::json!({"shop.get_order_status": {"name": "get_order_status", "description": "Look up an order."}});
        std::fs::create_dir_all(dir.join("data")).expect("data dir");
        std::fs::write(dir.join("data/pins.json"), pins.to_string()).expect("pins");
    });
    let h = harness(setup).await;
    let ticket = "T-0003";
    let offered = h.host.tools_for(ticket).await;
    let status = offered
        .iter()
        .find(|t| t.name == "shop.get_order_status")
        .expect("listed");
    assert!(status.withheld.is_some(), "{status:?}");

    let asked = accept(&[("order_id", "O-1587")]);
    let refused = h
        .host
        .person_call(ticket, "shop.get_order_status", &asked)
        .await
        .expect_err("declined change");
    assert!(refused.contains("not approved"), "{refused}");
    let consents = h.people.consents();
    assert_eq!(consents.len(), 1);
    assert!(
        consents[0]
            .changed_definition
            .as_deref()
            .is_some_and(|d| d.contains("- was: Look up an order.")),
        "{consents:?}"
    );
    let calls = |events: &[Event]| {
        events
            .iter()
            .filter(|e| matches!(e, Event::ToolCall { .. }))
            .count()
    };
    assert_eq!(
        calls(&h.host.events().await),
        0,
        "nothing reached the server"
    );

    let bad = accept(&[("order_id", "O-1587")]);
    let refused = h
        .host
        .person_call(ticket, "shop.quote_refund", &bad)
        .await
        .expect_err("a reason is required");
    assert!(refused.contains("input schema"), "{refused}");
    assert_eq!(calls(&h.host.events().await), 0);

    approve.store(true, std::sync::atomic::Ordering::SeqCst);
    let called = h
        .host
        .person_call(ticket, "shop.get_order_status", &asked)
        .await
        .expect("approved, then called");
    assert!(called.text.contains("O-1587"), "{}", called.text);
    let events = h.host.events().await;
    // The yes is the answering person's (the harness answers as "tester"), with what they saw.
    assert!(events.iter().any(|e| matches!(
        e,
        Event::Consent { tool, by, approved: true, shown: Some(shown), turn: PERSON_TURN, .. }
            if tool == "shop.get_order_status" && by == "tester" && shown.contains("Look up an order.")
    )), "{events:?}");
    let now = h.host.tools_for(ticket).await;
    assert!(
        now.iter()
            .any(|t| t.name == "shop.get_order_status" && t.withheld.is_none()),
        "pinned as approved"
    );
}

/// What the ticket holds fills the form in, each value saying where it was found; the
/// customer's order number from the text, the customer from the ticket itself.
#[tokio::test]
async fn the_tickets_own_values_fill_a_persons_form_with_where_they_were_found() {
    let h = harness(Setup::new(scripted(vec![]))).await;
    let tools = h.host.tools_for("T-0003").await;
    let quote = tools
        .iter()
        .find(|t| t.name == "shop.quote_refund")
        .expect("offered");
    assert_eq!(
        quote.suggested,
        [(
            "order_id".to_owned(),
            "O-1587".to_owned(),
            "T-0003's text (the order number it gives)".to_owned()
        )]
    );
    let orders = tools
        .iter()
        .find(|t| t.name == "shop.find_orders")
        .expect("offered");
    assert_eq!(
        orders.suggested,
        [(
            "customer_id".to_owned(),
            "C-0156".to_owned(),
            "T-0003's customer".to_owned()
        )]
    );
    let bare = h.host.tools_for_people().await;
    assert!(bare.iter().all(|t| t.suggested.is_empty()));
}
