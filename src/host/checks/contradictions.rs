//! A reply that says the opposite of what the ticket's latest tool result says: a refund the
//! shop released called waiting for a lead here, and what a reply says of an order (shipped,
//! delivered, found, its items) read against that order's own latest result in `facts`.
//! Each finding names the sentence and the call that decides it. (A state no result supports
//! at all, "your order has shipped" with nothing to say so, is `claims`' unsupported state.)

use super::{CallFact, Finding, Sentence, first_match, is_tool};
use crate::host::api::Outcome;

/// A released refund said to wait: for a lead, a review, an approval.
const STILL_WAITING: &[&str] = &[
    "refund|refunds|it ~4 awaiting|awaits|pending|held",
    "awaits|awaiting|waiting ~3 lead|leads|approval|review|release|manager|supervisor",
    "pending ~2 review|approval|release",
    "needs|requires|need|require ~3 approval|review|sign-off",
    "on hold",
];

/// Words that make a sentence a supposition, or the customer's words retold, rather than
/// the reply's own statement of the facts.
const NOT_STATED: &str = "would could might if unless whether hear heard say says said mention \
    mentioned write wrote tell told report reported understand";

/// Every contradiction of `text` (the reply with handles stripped) with `calls`.
pub(super) fn check(text: &str, calls: &[CallFact]) -> Vec<Finding> {
    let mut found = Vec::new();
    if let Some((call, status)) = latest_status(calls, "issue_refund")
        && status == "released"
        && let Some(phrase) = stated(text, STILL_WAITING)
    {
        found.push(Finding::Contradicted {
            phrase,
            tool: call.tool.clone(),
            state: status,
        });
    }
    found.extend(super::facts::check(text, calls));
    found
}

/// The `status` of the latest successful call of `tool`, as its JSON result says it.
fn latest_status<'a>(calls: &'a [CallFact], tool: &str) -> Option<(&'a CallFact, String)> {
    let call = calls
        .iter()
        .rev()
        .find(|c| is_tool(c, tool) && c.outcome == Outcome::Result)?;
    let value: serde_json::Value = serde_json::from_str(&call.result).ok()?;
    let status = value.get("status")?.as_str()?.to_owned();
    Some((call, status))
}

/// The first phrase of `patterns` the reply states as its own (not in a question, a
/// quotation, a supposition or the customer's words retold), negations included as written.
fn stated(text: &str, patterns: &[&str]) -> Option<String> {
    first_match(text, patterns, supposed, |_, supposed, _, _| !supposed)
}

fn supposed(sentence: &Sentence) -> bool {
    sentence.words.iter().any(|w| {
        super::work::step(1);
        super::listed(NOT_STATED, &w.norm)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(tool: &str, result: &str) -> CallFact {
        CallFact {
            tool: tool.into(),
            turn: 1,
            outcome: Outcome::Result,
            arguments: serde_json::Map::new(),
            result: result.into(),
        }
    }

    fn released() -> Vec<CallFact> {
        vec![
            call(
                "shop.quote_refund",
                r#"{"quote_id": "Q-1", "amount": "279.00"}"#,
            ),
            call(
                "shop.issue_refund",
                r#"{"refund_id": "R-1", "status": "released"}"#,
            ),
        ]
    }

    fn contradicted(text: &str, calls: &[CallFact]) -> Vec<String> {
        check(text, calls)
            .into_iter()
            .map(|f| match f {
                Finding::Contradicted { phrase, state, .. } => format!("{phrase} / {state}"),
                other => panic!("{other:?}"),
            })
            .collect()
    }

    #[test]
    fn a_released_refund_said_to_wait_for_a_lead_is_a_contradiction() {
        assert_eq!(
            contradicted(
                "Your refund of EUR 279.00 is waiting for a lead's review; we will write again.",
                &released()
            ),
            ["waiting for a lead's / released"]
        );
        assert_eq!(
            contradicted("The refund is still pending approval.", &released()),
            ["refund is still pending / released"]
        );
    }

    #[test]
    fn the_same_words_after_a_held_refund_are_true() {
        let held = vec![call(
            "shop.issue_refund",
            r#"{"refund_id": "R-1", "status": "held"}"#,
        )];
        assert!(contradicted("Your refund is waiting for a lead's review.", &held).is_empty());
        assert!(contradicted("Your refund is waiting for a lead's review.", &[]).is_empty());
    }

    #[test]
    fn an_order_a_tool_found_shipped_or_delivered_said_not_to_have_left_is_a_contradiction() {
        let delivered = [call(
            "shop.get_order_status",
            r#"{"order_id": "O-1587", "status": "delivered"}"#,
        )];
        assert_eq!(
            contradicted("Your order has not been delivered yet.", &delivered),
            ["not been delivered / delivered"]
        );
        let shipped = [call(
            "shop.get_order_status",
            r#"{"order_id": "O-1587", "status": "shipped"}"#,
        )];
        assert_eq!(
            contradicted("I see your order hasn't shipped yet.", &shipped),
            ["hasn't shipped / shipped"]
        );
        let placed = [call(
            "shop.get_order_status",
            r#"{"order_id": "O-1587", "status": "placed"}"#,
        )];
        assert!(contradicted("Your order has not shipped yet.", &placed).is_empty());
    }

    #[test]
    fn questions_suppositions_and_the_customers_words_retold_are_not_statements() {
        let delivered = [call(
            "shop.get_order_status",
            r#"{"order_id": "O-1587", "status": "delivered"}"#,
        )];
        for honest in [
            "I'm sorry to hear your parcel has not arrived; our records show it was delivered on 11 June.",
            "If it has not arrived by Friday, please write again.",
            "Has it not arrived?",
            "You wrote \"not delivered\", so we checked: it was delivered on 11 June.",
        ] {
            assert!(contradicted(honest, &delivered).is_empty(), "{honest}");
        }
        assert!(
            contradicted(
                "Your refund was released after a lead's review.",
                &released()
            )
            .is_empty()
        );
    }
}
