//! The checks a draft reply must pass before staff may send it: the model's reply is its
//! claim, the ticket's call log is what happened.
//!
//! A reply that promises a refund no call released, says a held, declined or failed call did
//! its work, or states an amount no tool returned gets a finding, and any finding sends the
//! ticket to a person. Handles the customer must never see (quote IDs) are stripped first.
//! The scanning is plain word matching tuned to miss rather than to cry wolf: a sentence that
//! is conditional, negative, a question or a quotation is never read as a promise.

use std::collections::HashSet;

use serde_json::Value;

use crate::money::Cents;
use crate::record::{Finding, Outcome};
use amounts::{SIGNS, amounts_in_reply, currency_word, known_amounts};

/// One tool call of this ticket as it really ran.
#[derive(Debug, Clone, PartialEq)]
pub struct CallFact {
    /// `prefix.tool`, as the model named it (`shop.issue_refund`).
    pub tool: String,
    /// The turn the call was made on.
    pub turn: u32,
    pub outcome: Outcome,
    pub arguments: serde_json::Map<String, Value>,
    /// The text the tool returned, JSON or words.
    pub result: String,
}

/// A draft after the checks: the text the customer would get, and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checked {
    /// The reply with handles stripped.
    pub text: String,
    pub findings: Vec<Finding>,
}

mod amounts;
mod claims;
mod contradictions;
mod facts;
mod handles;
mod language;
mod promises;
pub mod recheck;
mod work;

/// Checks a draft against the ticket's call log. `ticket_text` is the customer's subject + body;
/// `tools` the ticket's tools as `prefix.tool`; `signature` the desk's sign-off. Each kind of
/// finding can arise once per phrase or amount, so none repeats.
pub fn check_reply(
    draft: &str,
    calls: &[CallFact],
    ticket_text: &str,
    tools: &[String],
    signature: &str,
) -> Checked {
    let text = strip_handles(draft);
    let mut findings = vec![];
    let refunds: Vec<&CallFact> = calls
        .iter()
        .filter(|c| is_tool(c, "issue_refund"))
        .collect();
    let released = refunds.iter().any(|c| json_status(c) == Some("released"));
    let held = refunds.iter().any(|c| refund_held(c));
    let promised = promises_refund(&text);
    if let Some(phrase) = promised.clone().filter(|_| !released) {
        findings.push(Finding::RefundPromisedWithoutRefund {
            phrase: phrase.clone(),
        });
        if held {
            findings.push(Finding::HeldRefundCalledDone { phrase });
        } else if let Some(failed) = refunds.iter().find(|c| c.outcome != Outcome::Result) {
            findings.push(Finding::PromiseOfFailedCall {
                tool: failed.tool.clone(),
                phrase,
            });
        }
    }
    // A refund said to wait for a lead is the truth only when the shop holds one.
    if promised.is_none() && !released && !held {
        findings.extend(promises::pending_refund(&text));
    }
    for claim in ACTION_CLAIMS {
        let done = |c: &CallFact| {
            (is_tool(c, claim.tool) && c.outcome == Outcome::Result)
                || json_status(c) == Some(claim.done_status)
        };
        let Some(phrase) = find_phrase(&text, claim.patterns).filter(|_| !calls.iter().any(done))
        else {
            continue;
        };
        let tried = calls.iter().find(|c| is_tool(c, claim.tool));
        let tool = tried.map_or(claim.tool, |c| c.tool.as_str()).to_owned();
        findings.push(Finding::PromiseOfFailedCall { tool, phrase });
    }
    if promised.is_none() {
        findings.extend(promises::approvals(&text, calls, released));
    }
    let known: HashSet<Cents> = known_amounts(calls).into_iter().collect();
    for amount in amounts_in_reply(&text)
        .into_iter()
        .filter(|a| !known.contains(a))
    {
        findings.push(Finding::AmountNotFromTool {
            amount: amount.to_string(),
        });
    }
    findings.extend(claims::check(&text, calls, ticket_text, tools, signature));
    findings.extend(contradictions::check(&text, calls));
    findings.extend(promises::check(&text, calls));
    findings.extend(language::check(&text, ticket_text));
    findings.extend(handles::emptied_by_a_cut(draft));
    Checked { text, findings }
}

fn is_tool(call: &CallFact, tool: &str) -> bool {
    call.tool.rsplit('.').next() == Some(tool)
}

/// The `status` a successful call's JSON result reports (`released`, `held`, `cancelled`).
fn json_status(call: &CallFact) -> Option<&'static str> {
    if call.outcome != Outcome::Result {
        return None;
    }
    let value: Value = serde_json::from_str(&call.result).ok()?;
    let status = value.get("status")?.as_str()?;
    ["released", "held", "cancelled"]
        .into_iter()
        .find(|s| *s == status)
}

/// Held: the result says so, or the lead declined and the shop's error says it still holds it.
fn refund_held(call: &CallFact) -> bool {
    let text = call.result.to_ascii_lowercase();
    json_status(call) == Some("held")
        || (call.outcome == Outcome::ToolError && (text.contains("held") || text.contains("holds")))
}

/// An action a reply may claim, the tool that does it, and the status that shows it done.
struct ActionClaim {
    tool: &'static str,
    done_status: &'static str,
    patterns: &'static [&'static str],
}

const ACTION_CLAIMS: &[ActionClaim] = &[ActionClaim {
    tool: "cancel_order",
    done_status: "cancelled",
    patterns: &[
        "have|has cancelled|canceled ~2 order|orders",
        "cancelled|canceled your|the|this|that ~1 order|orders",
        "order|orders ~3 has|have|is|are|was been|now|already cancelled|canceled",
        "order|orders ~3 has|have|is|are|was cancelled|canceled",
        "will cancel ~2 order|orders",
    ],
}];

// Patterns are words in order; `a|b` is either word, `~N` skips up to N words, `#amt` (a step
// of its own, not one of `a|b`) is an amount. Words are lower case with contractions spelled out ("we'll" reads "we will").
const REFUND_VERBS: &str = "issued|processed|approved|released|made|sent|paid|credited|completed|initiated|transferred|refunded|reimbursed|returned|submitted";
const REFUND_PROMISES: &[&str] = &[
    "will|shall be refunded|reimbursed|credited",
    "has|have been refunded|reimbursed|credited",
    "is|are being refunded|reimbursed|credited",
    "has|have refunded|reimbursed|credited",
    "are|am|is refunding",
    "will|shall refund|reimburse",
    "will|shall issue|process|release|send|pay|arrange|initiate ~2 refund|refunds",
    "issued|processed|released|approved|initiated|sent|made|arranged|completed ~2 refund|refunds",
    "refund|refunds ~4 will|has|have|was|were|is|are be|been|being @verbs",
    "refund|refunds ~4 has|have|was|were|is|are @verbs",
    "refund|refunds ~2 will be #amt",
    "refund|refunds of ~3 will",
    "refund|refunds ~5 and|so it|this will|shall be @verbs",
    "refund|refunds|money|payment ~2 is|are on its|the|their way",
    "refund|refunds|money ~3 will|should reach|arrive|appear|show|land",
    "amount|money|sum|total ~4 will|has|have be|been refunded|credited|returned|reimbursed",
    "you will|should receive|get|see|have ~3 refund|refunds|money|credit",
    "money back within|in|by",
    "refund|refunds @verbs",
    "refund|refunds ~3 is|are|was|were|has|have complete|done|finished|confirmed|through|successful|final",
    "refund|refunds|payment|money|#amt ~2 went|gone|go|goes through",
    "#amt ~2 has|have|was|were|is been|being sent|returned|refunded|credited|paid|transferred|released|reimbursed",
    "#amt ~2 is|are on its|the|their way",
    "money|amount|sum|payment ~1 is|are|was|were back",
    "money|amount|sum|payment ~1 is|are|was|were back on|in|to ~2 card|account|bank",
    "#amt ~1 is|are|was|were back on|in|to ~2 card|account|bank",
    "put|paid|sent|transferred|moved ~1 money|amount|sum back",
    "put|paid|sent|transferred|moved ~1 #amt back",
    "#amt ~3 will|should reach|arrive|appear|show|land",
    "#amt ~2 was|were sent|refunded|credited|transferred|released|reimbursed",
    "sent|transferred|refunded|credited|reimbursed #amt",
];

/// Words that make a whole sentence conditional or pending: not a promise.
const CONDITIONAL: &str = "would could might if once unless whether await awaits awaiting waiting \
    pending held hold holds review approval approve approves lead leads manager supervisor";
/// Words that negate a match when they come inside it or up to five words before it.
const NEGATIONS: &str = "not never no nothing cannot unable";
const NEGATION_REACH: usize = 5;
/// A skip in a pattern never crosses into another clause: "a refund for the mug that was returned".
const CLAUSE_BREAKS: &str = "that which who and but because since so while when";
/// "a refund quote" or "your refund request" is not a refund.
const NOT_A_REFUND: &str = "quote quotes request requests policy form limit";

/// Is `word` one of the space-separated (or `|`-separated) words of `list`?
fn listed(list: &str, word: &str) -> bool {
    list.split([' ', '|']).any(|w| w == word)
}

/// Does the text promise a refund? Returns the matched phrase.
pub fn promises_refund(text: &str) -> Option<String> {
    find_phrase(text, REFUND_PROMISES)
}

struct Word {
    norm: String,
    start: usize,
    end: usize,
    quoted: bool,
}

#[derive(Default)]
struct Sentence {
    words: Vec<Word>,
    question: bool,
}

/// The earliest (then longest) match of any pattern in a sentence that asserts it.
fn find_phrase(text: &str, patterns: &[&str]) -> Option<String> {
    first_match(
        text,
        patterns,
        |sentence| Hedges::of(&sentence.words),
        |sentence, hedges, start, end| {
            let words = &sentence.words;
            let last = &words[end - 1].norm;
            let next = words.get(end).map(|w| w.norm.as_str());
            let not_a_refund =
                last.starts_with("refund") && next.is_some_and(|n| listed(NOT_A_REFUND, n));
            !not_a_refund && !hedges.hedge(start, end)
        },
    )
}

/// The first phrase of `patterns` in a sentence of `text` that is not a question, with no
/// quoted word in it, that `stands` accepts (given the sentence, what `read` made of the
/// sentence, and the phrase's word range). `read` runs at most once a sentence, so that
/// whatever it scans is scanned once, however many phrases the sentence holds.
fn first_match<S>(
    text: &str,
    patterns: &[&str],
    read: impl Fn(&Sentence) -> S,
    stands: impl Fn(&Sentence, &S, usize, usize) -> bool,
) -> Option<String> {
    let steps: Vec<Vec<&str>> = patterns.iter().map(|p| p.split(' ').collect()).collect();
    for sentence in sentences(text).iter().filter(|s| !s.question) {
        let words = &sentence.words;
        let mut read_once = None;
        for start in 0..words.len() {
            let Some(end) = steps
                .iter()
                .filter_map(|s| match_steps(words, start, s))
                .max()
            else {
                continue;
            };
            if end <= start || words[start..end].iter().any(|w| w.quoted) {
                continue;
            }
            let read = read_once.get_or_insert_with(|| read(sentence));
            if stands(sentence, read, start, end) {
                // Word offsets are where `sentences` found them in `text`: char boundaries.
                return text
                    .get(words[start].start..words[end - 1].end)
                    .map(str::to_owned);
            }
        }
    }
    None
}

fn match_steps(words: &[Word], at: usize, steps: &[&str]) -> Option<usize> {
    let Some((step, rest)) = steps.split_first() else {
        return Some(at);
    };
    if let Some(max) = step.strip_prefix('~') {
        let max: usize = max.parse().unwrap_or(0);
        return (0..=max)
            .take_while(|&skip| {
                at + skip <= words.len()
                    && (skip == 0 || !listed(CLAUSE_BREAKS, &words[at + skip - 1].norm))
            })
            .find_map(|skip| match_steps(words, at + skip, rest));
    }
    let word = words.get(at)?.norm.as_str();
    work::step(1);
    let fits = match *step {
        "#amt" => {
            word.starts_with(SIGNS)
                || word.starts_with(|c: char| c.is_ascii_digit())
                || currency_word(word)
        }
        "@verbs" => listed(REFUND_VERBS, word),
        alternatives => listed(alternatives, word),
    };
    if fits {
        match_steps(words, at + 1, rest)
    } else {
        None
    }
}

/// What in one sentence keeps a phrase from being a claim, read once for the sentence: a
/// word that makes all of it conditional, and where its negations stand.
struct Hedges {
    conditional: bool,
    /// `negations_before[k]`: how many negations stand among the sentence's first `k` words.
    negations_before: Vec<usize>,
}

/// What one word does to the sentence it stands in.
enum Hedge {
    None,
    /// The whole sentence is conditional or pending.
    Whole,
    /// A negation, which undoes a phrase it stands in or a few words before.
    Negation,
}

impl Hedges {
    fn of(words: &[Word]) -> Self {
        let mut conditional = false;
        let mut negations_before = Vec::with_capacity(words.len() + 1);
        negations_before.push(0);
        for k in 0..words.len() {
            work::step(1);
            let negation = match hedge_at(words, k) {
                Hedge::None => false,
                Hedge::Whole => {
                    conditional = true;
                    false
                }
                Hedge::Negation => true,
            };
            negations_before.push(negations_before[k] + usize::from(negation));
        }
        Self {
            conditional,
            negations_before,
        }
    }

    /// Is the phrase of words `start..end` hedged: the sentence conditional, or a negation
    /// inside the phrase or up to [`NEGATION_REACH`] words before it?
    fn hedge(&self, start: usize, end: usize) -> bool {
        let count = |k: usize| self.negations_before[k.min(self.negations_before.len() - 1)];
        self.conditional || count(end) > count(start.saturating_sub(NEGATION_REACH))
    }
}

fn hedge_at(words: &[Word], k: usize) -> Hedge {
    let norm = |k: usize| words.get(k).map_or("", |w| w.norm.as_str());
    let whole = |yes: bool| if yes { Hedge::Whole } else { Hedge::None };
    match norm(k) {
        // Courtesy, not a condition: "if you have any questions", "if there is anything".
        "if" => whole(
            !(norm(k + 1) == "there"
                || norm(k + 1).starts_with("any")
                || (norm(k + 1) == "you" && (norm(k + 2) == "need" || norm(k + 3) == "any"))),
        ),
        "subject" => whole(norm(k + 1) == "to"),
        "no" if norm(k + 1) == "later" => Hedge::None,
        // "the held refund is released" claims the release; "held" describes the refund.
        "held" if norm(k + 1).starts_with("refund") => Hedge::None,
        "not" if matches!(norm(k + 1), "worry" | "hesitate") => Hedge::None,
        w if listed(NEGATIONS, w) => Hedge::Negation,
        w => whole(listed(CONDITIONAL, w)),
    }
}

/// Lines and sentences of the text as normalised words that remember where they stood.
/// Lines quoted email-style (`> …`) and words inside quotation marks are marked quoted.
fn sentences(text: &str) -> Vec<Sentence> {
    let mut out = vec![];
    let mut current = Sentence::default();
    for line in text.split('\n') {
        let quoted_line = line.trim_start().starts_with('>');
        let mut in_quotes = false;
        for raw in line.split_whitespace() {
            work::step(1);
            let offset = raw.as_ptr() as usize - text.as_ptr() as usize;
            let core_from = raw.len()
                - raw
                    .trim_start_matches(|c: char| !c.is_alphanumeric() && !SIGNS.contains(&c))
                    .len();
            let core = raw[core_from..].trim_end_matches(|c: char| !c.is_alphanumeric());
            let trail = &raw[core_from + core.len()..];
            in_quotes |= raw[..core_from].contains(['"', '“', '„', '«']);
            let quoted = in_quotes || quoted_line;
            in_quotes &= !trail.contains(['"', '”', '»']);
            for norm in spelled_out(core) {
                let (start, end) = (offset + core_from, offset + core_from + core.len());
                current.words.push(Word {
                    norm,
                    start,
                    end,
                    quoted,
                });
            }
            if trail.contains(['.', '!', '?', ';'])
                || (core.is_empty() && raw.contains(['.', '!', '?', ';']))
            {
                current.question = trail.contains('?') || (core.is_empty() && raw.contains('?'));
                out.push(std::mem::take(&mut current));
            }
        }
        out.push(std::mem::take(&mut current));
    }
    out
}

/// Lower case, with contractions spelled out: "won't" → "will not", "we've" → "we have".
fn spelled_out(core: &str) -> Vec<String> {
    if core.is_empty() {
        return vec![];
    }
    let word = core.to_lowercase().replace(['’', '‘'], "'");
    let two = |a: &str, b: &str| vec![a.to_owned(), b.to_owned()];
    match word.as_str() {
        "can't" | "cannot" => return two("can", "not"),
        "won't" => return two("will", "not"),
        "shan't" => return two("shall", "not"),
        _ => {}
    }
    let endings = "n't:not 'll:will 've:have 're:are 'm:am 'd:would 's:is";
    for (ending, full) in endings.split(' ').filter_map(|e| e.split_once(':')) {
        if let Some(base) = word.strip_suffix(ending).filter(|b| !b.is_empty()) {
            // "lead's review" is a possessive; "it's" and "that's" are verbs.
            let is_verb = ending != "'s" || listed("it that there here what he she who", base);
            return if is_verb {
                two(base, full)
            } else {
                vec![base.to_owned()]
            };
        }
    }
    vec![word]
}

/// Removes handles the customer must never see: quote IDs (`Q-` and 10 hex digits, any case),
/// tidying the spaces, brackets and punctuation they leave behind.
pub fn strip_handles(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some((start, end)) = find_quote_id(rest) {
        out.push_str(&rest[..start]);
        rest = close_seam(&mut out, &rest[end..]);
    }
    out.push_str(rest);
    out
}

fn find_quote_id(text: &str) -> Option<(usize, usize)> {
    let bytes = text.as_bytes();
    let word_byte = |b: &u8| b.is_ascii_alphanumeric() || *b == b'_' || *b == b'-';
    (0..bytes.len().saturating_sub(11)).find_map(|i| {
        work::step(1);
        let hex = bytes.get(i + 2..i + 12)?;
        let shaped = matches!(bytes[i], b'Q' | b'q')
            && bytes[i + 1] == b'-'
            && hex.iter().all(u8::is_ascii_hexdigit);
        let alone =
            (i == 0 || !word_byte(&bytes[i - 1])) && !bytes.get(i + 12).is_some_and(word_byte);
        (shaped && alone).then_some((i, i + 12))
    })
}

/// Joins the text before a removed handle (`out`) with the text after it, returning what of
/// the rest is still to copy: no empty brackets, doubled commas or stray spaces.
fn close_seam<'a>(out: &mut String, rest: &'a str) -> &'a str {
    let spaced_before = out.ends_with([' ', '\t']);
    trim_end_spaces(out);
    for label in ["quote_id:", "quote_id=", "quote_id"] {
        work::step(1);
        // Only the tail is compared: lowering all of `out` at every handle grew with its square.
        let tail = out
            .len()
            .checked_sub(label.len())
            .map(|at| &out.as_bytes()[at..]);
        if tail.is_some_and(|tail| tail.eq_ignore_ascii_case(label.as_bytes())) {
            // ASCII bytes matched, so the cut falls on a char boundary.
            out.truncate(out.len() - label.len());
            trim_end_spaces(out);
            break;
        }
    }
    let spaced_after = rest.starts_with([' ', '\t']);
    let mut rest = rest.trim_start_matches([' ', '\t']);
    match (out.chars().last(), rest.chars().next()) {
        (Some('(' | '['), Some(')' | ']')) => {
            out.pop();
            trim_end_spaces(out);
            rest = past_first(rest);
        }
        (Some('(' | '['), Some(',' | ';')) => rest = past_first(rest).trim_start_matches(' '),
        (Some(',' | ';'), Some(')' | ']' | '.' | '!' | '?' | ':')) => {
            out.pop();
        }
        (Some(','), Some(',')) => {
            out.pop();
            rest = past_first(rest);
        }
        (Some(':'), Some('.' | '\n') | None) => {
            out.pop();
        }
        (None | Some('\n'), Some(',' | ':' | ';')) => rest = &rest[1..],
        _ => {}
    }
    let rest_spaced = rest.starts_with([' ', '\t']);
    let rest = rest.trim_start_matches([' ', '\t']);
    let joins_words = !rest.starts_with(['.', ',', ';', ':', '!', '?', ')', ']', '\n'])
        && !rest.is_empty()
        && !out.is_empty()
        && !out.ends_with(['\n', '(', '[']);
    if joins_words && (spaced_before || spaced_after || rest_spaced) {
        out.push(' ');
    }
    rest
}

/// `text` without its first character, whatever its width.
fn past_first(text: &str) -> &str {
    let mut chars = text.chars();
    chars.next();
    chars.as_str()
}

fn trim_end_spaces(out: &mut String) {
    out.truncate(out.trim_end_matches([' ', '\t']).len());
}

#[cfg(test)]
mod tests;
