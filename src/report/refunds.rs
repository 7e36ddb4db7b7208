//! Refunds a lead released: an approval of a refund tool (its own name holds `refund`, as the
//! shop's `issue_refund`), accepted, whose call the server answered as done. The amount is
//! what the server's answer says: the shop answers with the refund as JSON (`"amount":
//! "250.00"`, `"currency": "EUR"`, `"status": "released"`), another server perhaps in words
//! (`EUR 250.00`); failing both, the lead's accepted values, when they carry an `amount`.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use regex::Regex;
use serde_json::Value;

use super::Released;
use super::tally::{Answer, TicketFacts};
use crate::money::Cents;
use crate::record::Outcome;

/// An amount in words: a currency code, then the amount as the shop writes it.
static IN_WORDS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\b([A-Z]{3}) (\d+\.\d{2})\b").expect("the amount pattern compiles")
});

/// Per lead: how many refunds they released, and the sums by currency.
pub fn released(counted: &[(&String, &TicketFacts)]) -> BTreeMap<String, Released> {
    let mut sums: BTreeMap<String, (usize, BTreeMap<String, Cents>, usize)> = BTreeMap::new();
    let answers = counted
        .iter()
        .flat_map(|(_, facts)| facts.approvals.values())
        .filter_map(|approval| approval.answer.as_ref());
    for answer in answers.filter(|answer| is_release(answer)) {
        let (count, amounts, without) = sums.entry(answer.by.clone()).or_default();
        *count += 1;
        match amount(answer) {
            Some((currency, cents)) => {
                let sum = amounts.entry(currency).or_default();
                *sum = *sum + cents;
            }
            None => *without += 1,
        }
    }
    sums.into_iter()
        .map(|(lead, (count, amounts, without_amount))| {
            let amounts = amounts
                .into_iter()
                .map(|(currency, cents)| (currency, cents.to_string()))
                .collect();
            (
                lead,
                Released {
                    count,
                    amounts,
                    without_amount,
                },
            )
        })
        .collect()
}

/// An accepted approval of a refund tool that the server carried out (and, when its answer
/// says a status, says `released`).
fn is_release(answer: &Answer) -> bool {
    let tool = answer.tool.rsplit('.').next().unwrap_or_default();
    let status = json(&answer.text).and_then(|v| v.get("status")?.as_str().map(str::to_owned));
    answer.action == "accept"
        && tool.contains("refund")
        && answer.outcome == Outcome::Result
        && status.is_none_or(|s| s == "released")
}

/// The refund's currency and amount, from the server's answer or else the lead's values.
fn amount(answer: &Answer) -> Option<(String, Cents)> {
    let from_json = |value: Value| {
        let cents: Cents = value.get("amount")?.as_str()?.parse().ok()?;
        let currency = value
            .get("currency")
            .and_then(Value::as_str)
            .unwrap_or("EUR");
        Some((currency.to_owned(), cents))
    };
    let in_words = |text: &str| {
        let found = IN_WORDS.captures(text)?;
        Some((found[1].to_owned(), found[2].parse().ok()?))
    };
    json(&answer.text)
        .and_then(from_json)
        .or_else(|| in_words(&answer.text))
        .or_else(|| answer.content.as_deref().and_then(json).and_then(from_json))
}

fn json(text: &str) -> Option<Value> {
    serde_json::from_str::<Value>(text)
        .ok()
        .filter(Value::is_object)
}
