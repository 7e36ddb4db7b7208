//! What a reply gives or promises that only a tool could: a lead's approval or a release said
//! to have happened, a refund said to wait for a lead that no call left held, a discount or a
//! free item, an action promised by a named day, and the day a parcel will arrive. Each is
//! read only where the reply states it as its own (not a question, a condition, a negation or
//! a quotation).

use super::{CallFact, Finding, Outcome, Sentence, first_match, is_tool, listed};
use super::{Hedge, NEGATION_REACH, NEGATIONS, hedge_at, refund_held, work};

/// Words that make a whole sentence conditional, pending or the customer's: not a claim.
const NOT_A_CLAIM: &str = "if unless whether would could might once when after pending awaiting \
    waiting await awaits wait waits ask asked asks request requested wrote mention mentioned";
/// Besides those, what makes a release or an approval not the refund's: "until a lead
/// approves", "released by customs".
const NOT_AN_APPROVAL: &str = "before until needs need requires require customs parcel package \
    shipment carrier courier warehouse";

/// A lead's approval or a refund's release said to have happened.
const APPROVALS: &[&str] = &[
    "lead|leads|manager|managers|supervisor ~2 approved|released|agreed|authorised|authorized|signed",
    "it|refund|refunds|money|payment|amount ~2 has|have|had ~1 been|now approved|released|authorised|authorized",
    "it|refund|refunds|money|payment|amount ~2 is|are|was|were approved|released|authorised|authorized",
    "has|have|had ~1 been approved|released|authorised|authorized",
    "approved|released|authorised|authorized by ~2 lead|leads|manager|supervisor",
];

/// A refund said to exist and wait: held, pending, or to be paid once a lead releases it.
/// Only an issue_refund call the shop holds backs it; a quote alone is not a refund.
const PENDING_REFUNDS: &[&str] = &[
    "your|the|this refund ~4 will|shall be held|kept|pending|waiting|escalated",
    "your|the|this refund ~4 will|shall wait|await",
    "your|the|this refund ~4 is|are held|pending|waiting|awaiting|queued|escalated",
    "your|the|this refund ~4 is|are now|still held|pending|waiting|awaiting|queued",
    "your|the|this refund ~4 is|are on hold",
    "your|the|this refund ~4 awaits|waits",
    "your|the|this refund ~4 has|have been held|escalated|forwarded|passed",
    "your|the|this refund ~4 will|shall be paid|released|sent|issued|processed once|after|when",
];

/// What makes a sentence about a waiting refund hypothetical or the customer's own.
const HYPOTHETICAL: &str =
    "if unless whether would could might ask asked asks wrote mention mentioned";

/// A discount, a voucher or something given for nothing.
const GIFTS: &[&str] = &[
    "#amt ~2 discount|discounts|off|reduction",
    "discount|discounts|voucher|vouchers|coupon|coupons|goodwill",
    "gift card|cards|voucher|vouchers",
    "store|shop credit",
    "free of charge",
    "for free",
    "free|complimentary replacement|replacements|gift|gifts|item|items|upgrade|sample|samples",
    "complimentary",
    "on the house",
];
/// A result that grants one of [`GIFTS`] names it: `"discount": …`, `"voucher_id": …`.
const GIFT_KEYS: [&str; 7] = [
    "discount",
    "voucher",
    "coupon",
    "gift",
    "credit",
    "free",
    "complimentary",
];

/// Who may promise the desk's own action, and the actions a tool would have to schedule.
const PROMISERS: &str = "we i team colleague colleagues someone";
const ACTIONS: &str = "contact call email e-mail write reply respond update send ship dispatch \
    deliver refund replace repair process arrange collect follow get reach ring notify inform \
    message text visit pick resolve release issue";
/// "by Friday", "on Monday", "before the weekend", "this Friday".
const DEADLINES: &str = "by on before until till this next";
const DAYS: &str = "today tomorrow tonight monday tuesday wednesday thursday friday saturday \
    sunday weekend";
/// A tool that schedules a follow-up: only its successful call backs a dated promise.
const SCHEDULERS: [&str; 5] = ["schedule", "callback", "follow", "remind", "appointment"];

/// The approval or release the reply claims when no refund was released: held, failed or
/// never run. `released` says whether an issue_refund call released one.
pub(super) fn approvals(text: &str, calls: &[CallFact], released: bool) -> Option<Finding> {
    if released {
        return None;
    }
    let phrase = asserted(text, APPROVALS, NOT_AN_APPROVAL)?;
    let refunds: Vec<&CallFact> = calls
        .iter()
        .filter(|c| is_tool(c, "issue_refund"))
        .collect();
    if refunds.iter().any(|c| refund_held(c)) {
        return Some(Finding::HeldRefundCalledDone { phrase });
    }
    let tool = refunds.last().map_or("issue_refund", |c| c.tool.as_str());
    Some(Finding::PromiseOfFailedCall {
        tool: tool.to_owned(),
        phrase,
    })
}

/// A refund the reply says is waiting (for a lead, a review, a release); the caller asks only
/// when no issue_refund call left one held, so the customer is told of a refund that does
/// not exist.
pub(super) fn pending_refund(text: &str) -> Option<Finding> {
    let phrase = first_match(
        text,
        PENDING_REFUNDS,
        |sentence| Reading::with(sentence, HYPOTHETICAL, ""),
        |_, reading, start, end| !reading.hedged(start, end),
    )?;
    Some(Finding::RefundPromisedWithoutRefund { phrase })
}

/// A gift no tool granted, a dated promise no tool scheduled, and an arrival day no tool gave.
pub(super) fn check(text: &str, calls: &[CallFact]) -> Vec<Finding> {
    let results: Vec<String> = calls
        .iter()
        .filter(|c| c.outcome == Outcome::Result)
        .map(|c| c.result.to_lowercase())
        .collect();
    let unsupported = |kind: &str, words: String| Finding::Unsupported {
        kind: kind.into(),
        words,
    };
    let mut found = Vec::new();
    let granted = || {
        GIFT_KEYS.iter().any(|key| {
            results.iter().any(|r| {
                work::step(r.len());
                r.contains(&format!("\"{key}")) || r.contains(&format!("_{key}"))
            })
        })
    };
    if let Some(words) = asserted(text, GIFTS, "").filter(|_| !granted()) {
        found.push(unsupported("discount or free item", words));
    }
    let scheduled = calls
        .iter()
        .any(|c| c.outcome == Outcome::Result && SCHEDULERS.iter().any(|s| c.tool.contains(s)));
    if let Some(words) = dated_promise(text).filter(|_| !scheduled) {
        found.push(unsupported("promise with a date", words));
    }
    let estimated = results.iter().any(|r| {
        work::step(r.len());
        r.contains("out_for_delivery")
            || serde_json::from_str::<serde_json::Value>(r)
                .ok()
                .and_then(|v| v.get("estimated_delivery")?.as_str().map(str::len))
                .is_some()
    });
    if let Some(words) = arrival_day(text).filter(|_| !estimated) {
        found.push(unsupported("date", words));
    }
    found
}

/// The first phrase of `patterns` in a sentence the reply states as its own; `also` are
/// more words that make a sentence not a claim.
fn asserted(text: &str, patterns: &[&str], also: &str) -> Option<String> {
    first_match(
        text,
        patterns,
        |sentence| Reading::of(sentence, also),
        |_, reading, start, end| !reading.hedged(start, end),
    )
}

/// A sentence read once: is all of it not a claim, and where do its negations stand?
struct Reading {
    not_a_claim: bool,
    negations_before: Vec<usize>,
}

impl Reading {
    fn of(sentence: &Sentence, also: &str) -> Self {
        Self::with(sentence, NOT_A_CLAIM, also)
    }

    /// `not_a_claim_words` and `also`: the words that make the whole sentence not a claim.
    fn with(sentence: &Sentence, not_a_claim_words: &str, also: &str) -> Self {
        let mut negations_before = vec![0];
        let mut not_a_claim = false;
        for (k, word) in sentence.words.iter().enumerate() {
            work::step(1);
            // "If you have any questions" is courtesy, not a condition.
            let courtesy_if =
                word.norm == "if" && !matches!(hedge_at(&sentence.words, k), Hedge::Whole);
            let courtesy = word.norm == "not"
                && sentence
                    .words
                    .get(k + 1)
                    .is_some_and(|n| matches!(n.norm.as_str(), "hesitate" | "worry"));
            let negation = listed(NEGATIONS, &word.norm) && !courtesy;
            // "as soon as it is released" waits for the release.
            let as_soon_as = word.norm == "soon"
                && k.checked_sub(1)
                    .is_some_and(|b| sentence.words[b].norm == "as");
            not_a_claim |= (listed(not_a_claim_words, &word.norm) && !courtesy_if)
                || as_soon_as
                || listed(also, &word.norm);
            negations_before.push(negations_before[k] + usize::from(negation));
        }
        Self {
            not_a_claim,
            negations_before,
        }
    }

    fn hedged(&self, start: usize, end: usize) -> bool {
        let count = |k: usize| self.negations_before[k.min(self.negations_before.len() - 1)];
        self.not_a_claim || count(end) > count(start.saturating_sub(NEGATION_REACH))
    }
}

/// "We will contact you by Friday": the desk's own action promised by a named day.
fn dated_promise(text: &str) -> Option<String> {
    for sentence in super::sentences(text).iter().filter(|s| !s.question) {
        let words = &sentence.words;
        let reading = Reading::of(sentence, "");
        let norm = |k: usize| words.get(k).map_or("", |w| w.norm.as_str());
        let mut promiser = None;
        let mut action = None;
        for k in 0..words.len() {
            work::step(1);
            let w = norm(k);
            if listed(PROMISERS, w) && matches!(norm(k + 1), "will" | "shall") {
                promiser = Some(k);
                action = None;
            } else if promiser.is_some_and(|p| k <= p + 4) && listed(ACTIONS, w) {
                action = action.or(Some(k));
            }
            let Some(from) = promiser.filter(|_| action.is_some()) else {
                continue;
            };
            let deadline = listed(DEADLINES, norm(k.wrapping_sub(1)))
                || (norm(k.wrapping_sub(1)) == "the" && listed(DEADLINES, norm(k.wrapping_sub(2))));
            let quoted = words[from..=k].iter().any(|w| w.quoted);
            if listed(DAYS, w) && deadline && !quoted && !reading.hedged(from, k + 1) {
                return text.get(words[from].start..words[k].end).map(str::to_owned);
            }
        }
    }
    None
}

/// "Your parcel will arrive tomorrow": the day, as written, of an arrival still to come.
fn arrival_day(text: &str) -> Option<String> {
    for sentence in super::sentences(text).iter().filter(|s| !s.question) {
        let words = &sentence.words;
        let norm = |k: usize| words.get(k).map_or("", |w| w.norm.as_str());
        // A parcel still to come: "will arrive", "reaches you", "be delivered"; not "reach out".
        let arrives = (0..words.len()).any(|k| match norm(k) {
            "arrive" | "arrives" | "arriving" => true,
            "reach" | "reaches" => norm(k + 1) != "out",
            "delivered" => k.checked_sub(1).is_some_and(|b| norm(b) == "be"),
            _ => false,
        });
        let day = words
            .iter()
            .position(|w| listed(DAYS, &w.norm) && w.norm != "weekend" && !w.quoted);
        if let Some(k) = day.filter(|_| arrives)
            && !Reading::of(sentence, "").hedged(k, k + 1)
        {
            return text.get(words[k].start..words[k].end).map(str::to_owned);
        }
    }
    None
}
