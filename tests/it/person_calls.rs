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
    let order_id = support_desk::tickets::find(&support_desk::tickets::bundled(), &ticket)
        .and_then(|t| t.order_id.clone())
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
