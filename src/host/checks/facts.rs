//! What a reply says about an order, read against what the shop last answered for that same
//! order: shipped or not, delivered or not, found or not, and the items (and how many) it
//! holds. A sentence speaks of the orders it names; one that names none speaks of the order
//! named last before it, or of the only order the tools returned.
//!
//! A state no result supports at all ("your order has shipped" with no shipped order in any
//! result) is `claims`' unsupported state and is left to it here.

use std::collections::{HashMap, HashSet};

use super::{
    CLAUSE_BREAKS, CallFact, Finding, Hedge, NEGATIONS, Sentence, Word, hedge_at, listed,
    sentences, work,
};
use crate::host::api::Outcome;

mod orders;
use orders::{Known, Order, State};

/// Words that make a sentence a supposition, or the customer's words retold.
const NOT_STATED: &str = "would could might if unless whether hear heard say says said mention \
    mentioned write wrote tell told report reported understand";
/// Words between a state and the order it is said of that still belong to the claim.
const AUX: &str = "has have had is are was were been be being already now just also still";
/// A claim after these is a plan, not a state: "will be shipped", "expected to be delivered".
const FUTURE: &str = "will shall should can may to";
/// A claim's words and an order's ID farther apart than this are named apart.
const SPAN_WORDS: usize = 16;

/// One claim of a sentence: its kind, whether it is negated, and its words `start..end`.
struct Claim {
    state: State,
    negated: bool,
    start: usize,
    end: usize,
}

/// Every finding of `text` (the reply with handles stripped) against the orders of `calls`.
pub(super) fn check(text: &str, calls: &[CallFact]) -> Vec<Finding> {
    // Read even when no tool returned an order: an order said to be found is then unbacked.
    let known = Known::from_calls(calls);
    let results: String = calls
        .iter()
        .filter(|c| c.outcome == Outcome::Result)
        .map(|c| c.result.to_lowercase())
        .collect::<Vec<_>>()
        .join("\n");
    // Read once, not once a claim: the results do not change while the reply is read.
    let mut out = Out {
        anywhere: [State::Shipped, State::Delivered]
            .into_iter()
            .filter(|s| s.supported_in(&results))
            .collect(),
        ..Out::default()
    };
    let mut last_named: Option<String> = None;
    for sentence in sentences(text) {
        let words = &sentence.words;
        let ids: Vec<(usize, String)> = (0..words.len())
            .filter_map(|k| order_id(words, k).map(|id| (k, id)))
            .collect();
        if stated(&sentence) {
            let claims = claims_in(words);
            let clause = clauses(words);
            for (k, id) in &ids {
                if let Some(c) = nearest(&claims, &clause, *k) {
                    let claim = &claims[c];
                    let phrase = span(text, words, claim.start.min(*k), claim.end.max(k + 1));
                    out.judge(&known, id, claim, phrase, true);
                }
            }
            let mut named_clauses = HashSet::new();
            named_clauses.extend(ids.iter().map(|(k, _)| clause[*k]));
            for claim in claims
                .iter()
                .filter(|c| !named_clauses.contains(&clause[c.start]))
            {
                let Some(id) = last_named.clone().or_else(|| known.only_order()) else {
                    continue;
                };
                if claim.state != State::Found {
                    let phrase = span(text, words, claim.start, claim.end);
                    out.judge(&known, &id, claim, phrase, false);
                }
            }
            items(text, &sentence, &ids, &known, &mut out);
        }
        if let Some((_, id)) = ids.last() {
            last_named = Some(id.clone());
        }
    }
    out.found
}

#[derive(Default)]
struct Out {
    found: Vec<Finding>,
    /// Findings already made, by their words: none repeats.
    seen: HashSet<String>,
    /// What the reply said of an order no tool knows: (order, state) → (negated, its words).
    said: HashMap<(String, State), (bool, String)>,
    /// The states some result of the ticket shows, for any order.
    anywhere: Vec<State>,
}

impl Out {
    fn push(&mut self, finding: Finding) {
        work::step(1);
        if self.seen.insert(format!("{finding:?}")) {
            self.found.push(finding);
        }
    }

    /// The claim on order `id` against what the shop said of it; `named` when the sentence
    /// names the order itself (an order no tool knows is judged only then).
    fn judge(&mut self, known: &Known, id: &str, claim: &Claim, phrase: String, named: bool) {
        let Some(order) = known.order(id) else {
            if named {
                self.unknown(id, claim, phrase);
            }
            return;
        };
        let contradicted = match claim.state {
            State::Found => claim.negated,
            state => {
                let holds = order.is(state);
                // A state no result holds at all is `claims`' to flag, as unsupported.
                let anywhere = claim.negated || self.anywhere.contains(&state);
                anywhere && holds == claim.negated
            }
        };
        if contradicted {
            self.push(Finding::Contradicted {
                phrase,
                tool: order.tool.clone(),
                state: order.status.clone(),
            });
        }
    }

    /// An order no tool returned: a state said of it is unsupported, and said both ways it is
    /// the reply against itself.
    fn unknown(&mut self, id: &str, claim: &Claim, phrase: String) {
        if claim.state == State::Found {
            // "I found your order O-2456" when no tool returned it: nothing looked for it.
            if !claim.negated {
                self.push(Finding::Unsupported {
                    kind: "an order no tool returned".into(),
                    words: phrase,
                });
            }
            return;
        }
        let key = (id.to_owned(), claim.state);
        match self.said.get(&key) {
            Some((negated, first)) if *negated != claim.negated => {
                let said = format!(
                    "{}{}",
                    if *negated { "not " } else { "" },
                    claim.state.word()
                );
                let finding = Finding::Contradicted {
                    phrase,
                    tool: "this reply".into(),
                    state: format!("{said} (\"{first}\")"),
                };
                self.push(finding);
            }
            Some(_) => {}
            None => {
                if !claim.negated && self.anywhere.contains(&claim.state) {
                    self.push(Finding::Unsupported {
                        kind: "order state".into(),
                        words: phrase.clone(),
                    });
                }
                self.said.insert(key, (claim.negated, phrase));
            }
        }
    }
}

/// The reply states the sentence as its own: not a question, a supposition or a retelling.
fn stated(sentence: &Sentence) -> bool {
    let words = &sentence.words;
    !sentence.question
        && !(0..words.len()).any(|k| {
            work::step(1);
            // "If you have any questions" is courtesy, not a condition.
            let courtesy = words[k].norm == "if" && !matches!(hedge_at(words, k), Hedge::Whole);
            listed(NOT_STATED, &words[k].norm) && !courtesy
        })
}

/// An order's ID at word `k`, lower case: `O-2318`, or `order 2318` / `order #2318`.
fn order_id(words: &[Word], k: usize) -> Option<String> {
    let word = &words.get(k)?.norm;
    let digits = |d: &str| (3..=8).contains(&d.len()) && d.bytes().all(|b| b.is_ascii_digit());
    if let Some(d) = word.strip_prefix("o-").filter(|d| digits(d)) {
        return Some(format!("o-{d}"));
    }
    let after_order = k
        .checked_sub(1)
        .is_some_and(|b| matches!(words[b].norm.as_str(), "order" | "orders"));
    (after_order && digits(word)).then(|| format!("o-{word}"))
}

/// The claims of a sentence about an order's state, in word order.
fn claims_in(words: &[Word]) -> Vec<Claim> {
    let norm = |k: usize| words.get(k).map_or("", |w| w.norm.as_str());
    let mut claims = Vec::new();
    for (k, word) in words.iter().enumerate() {
        work::step(1);
        if word.quoted {
            continue;
        }
        // (state, words the claim ends after, may it be positive?)
        let (state, end, positive) = match norm(k) {
            "shipped" | "dispatched" => (State::Shipped, k + 1, true),
            "transit" if norm(k.wrapping_sub(1)) == "in" => (State::Shipped, k + 1, true),
            "ship" | "dispatch" | "leave" | "left" => (State::Shipped, k + 1, false),
            "delivered" => (State::Delivered, k + 1, true),
            "arrived" | "arrive" | "deliver" => (State::Delivered, k + 1, false),
            "found" | "located" => (State::Found, k + 1, true),
            "find" | "locate" | "exist" | "exists" => (State::Found, k + 1, false),
            _ => continue,
        };
        let negation = (k.saturating_sub(4)..k)
            .rev()
            .take_while(|&j| !listed(CLAUSE_BREAKS, norm(j)))
            .find(|&j| listed(NEGATIONS, norm(j)) || (norm(j) == "yet" && norm(j + 1) == "to"));
        let mut start = k;
        while start > 0 && listed(AUX, norm(start - 1)) {
            start -= 1;
        }
        let planned =
            (start.saturating_sub(2)..k).any(|j| listed(FUTURE, norm(j)) && norm(j + 1) != "not");
        match negation {
            Some(j) => claims.push(Claim {
                state,
                negated: true,
                start: j,
                end,
            }),
            None if positive && !planned => claims.push(Claim {
                state,
                negated: false,
                start,
                end,
            }),
            None => {}
        }
    }
    claims
}

/// Each word's clause in its sentence: a new one after "but", "while", …, and at "and"
/// before an order that has its own verb ("…, and O-2730 is still being prepared").
fn clauses(words: &[Word]) -> Vec<usize> {
    let mut clause = Vec::with_capacity(words.len());
    let mut current = 0;
    for k in 0..words.len() {
        work::step(1);
        let w = words[k].norm.as_str();
        let own_verb = matches!(w, "and" | "or")
            && order_id(words, k + 1).is_some()
            && words.get(k + 2).is_some_and(|v| listed(AUX, &v.norm));
        if own_verb || listed("but while whereas although though however", w) {
            current += 1;
        }
        clause.push(current);
    }
    clause
}

/// The claim nearest to word `k` in its clause.
fn nearest(claims: &[Claim], clause: &[usize], k: usize) -> Option<usize> {
    // Claims are in word order: the first at or after `k` and the one before it are the
    // only candidates, found by a binary search rather than a walk over all of them.
    let after = claims.partition_point(|c| c.end <= k);
    let distance = |c: &Claim| {
        if c.start > k {
            c.start - k
        } else {
            k.saturating_sub(c.end)
        }
    };
    [after.checked_sub(1), Some(after)]
        .into_iter()
        .flatten()
        .filter(|&c| {
            claims
                .get(c)
                .is_some_and(|claim| clause[claim.start] == clause[k])
        })
        .min_by_key(|&c| distance(&claims[c]))
}

/// The reply's words `from..to`, as written; a long reach is named by its ends.
fn span(text: &str, words: &[Word], from: usize, to: usize) -> String {
    let slice = |a: usize, b: usize| {
        // Word offsets are where `sentences` found them in `text`: char boundaries.
        text.get(words[a].start..words[b - 1].end)
            .unwrap_or("")
            .to_owned()
    };
    if to - from <= SPAN_WORDS {
        slice(from, to)
    } else {
        format!("{} … {}", slice(from, from + 1), slice(to - 1, to))
    }
}

/// Items the sentence names for an order: one the order does not hold, or a count other
/// than the order's.
fn items(text: &str, sentence: &Sentence, ids: &[(usize, String)], known: &Known, out: &mut Out) {
    let words = &sentence.words;
    let says_order = words
        .iter()
        .any(|w| matches!(w.norm.as_str(), "order" | "ordered" | "orders"));
    for mention in known.mentions(words) {
        let named = nearest_id(ids, mention.start);
        let id = match named {
            Some((_, id)) => Some(id.clone()),
            None if says_order => known.only_order(),
            None => None,
        };
        let Some(order) = id.as_deref().and_then(|id| known.order(id)) else {
            continue;
        };
        let wrong = match order.quantity(&mention.sku) {
            None => !order.skus.is_empty(),
            Some(quantity) => quantity.zip(mention.count).is_some_and(|(q, n)| q != n),
        };
        if wrong {
            let from = named.map_or(mention.start, |(k, _)| (*k).min(mention.start));
            let to = named.map_or(mention.end, |(k, _)| (k + 1).max(mention.end));
            let phrase = span(text, words, from, to);
            out.push(contradiction(order, phrase));
        }
    }
}

fn contradiction(order: &Order, phrase: String) -> Finding {
    Finding::Contradicted {
        phrase,
        tool: order.tool.clone(),
        state: order.holds(),
    }
}

/// The ID named nearest to word `k` (`ids` are in word order).
fn nearest_id(ids: &[(usize, String)], k: usize) -> Option<&(usize, String)> {
    let after = ids.partition_point(|(at, _)| *at < k);
    [after.checked_sub(1), Some(after)]
        .into_iter()
        .flatten()
        .filter_map(|i| ids.get(i))
        .min_by_key(|(at, _)| at.abs_diff(k))
}
