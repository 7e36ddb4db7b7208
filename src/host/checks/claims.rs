//! What a careful lead reads for besides money: facts no tool result of this ticket supports
//! (tracking numbers, dates, an order's state), text that is not for a customer (placeholders,
//! tool names, JSON, the host's own markup), a refusal or an empty answer, and a reply that
//! mostly repeats the customer's message. Each finding names the words it found.

use std::collections::{HashMap, HashSet};

use super::{CallFact, Finding, find_phrase, work};
use crate::host::api::Outcome;

/// Every finding of these kinds in `text` (the reply with handles stripped). `signature` is the
/// desk's own sign-off, which answers nothing by itself.
pub(super) fn check(
    text: &str,
    calls: &[CallFact],
    ticket_text: &str,
    tools: &[String],
    signature: &str,
) -> Vec<Finding> {
    if text.trim().is_empty() {
        return vec![Finding::NoAnswer {
            words: String::new(),
        }];
    }
    let results: String = calls
        .iter()
        .filter(|c| c.outcome == Outcome::Result)
        .map(|c| c.result.to_lowercase())
        .collect::<Vec<_>>()
        .join("\n");
    let mut found = Vec::new();
    let mut said = HashSet::new();
    let mut unsupported = |kind: &str, words: String| {
        work::step(1);
        if said.insert((kind.to_owned(), words.clone())) {
            found.push(Finding::Unsupported {
                kind: kind.to_owned(),
                words,
            });
        }
    };
    // Each distinct number or date is looked for in the results once, however often it
    // is written.
    let mut supported: HashMap<String, bool> = HashMap::new();
    let mut in_results = |needle: String| {
        work::step(1);
        *supported
            .entry(needle)
            .or_insert_with_key(|needle| results.contains(needle.as_str()))
    };
    for number in tracking_numbers(text) {
        if !in_results(number.to_lowercase()) {
            unsupported("tracking number", number);
        }
    }
    for (words, iso) in dates(text) {
        if !in_results(iso) {
            unsupported("date", words);
        }
    }
    for (pattern, supported_by) in STATES {
        if let Some(words) = find_phrase(text, &[*pattern])
            && !supported_by.iter().any(|s| results.contains(s))
        {
            unsupported("order state", words);
        }
    }
    found.extend(not_for_customer(text, tools));
    if let Some(words) = refusal(text).or_else(|| too_short(text, signature)) {
        found.push(Finding::NoAnswer { words });
    }
    if let Some(percent) = echo_percent(text, ticket_text) {
        found.push(Finding::Echo { percent });
    }
    found
}

/// A state the reply may claim (a pattern of the draft check's word matcher), and the words a
/// tool result must hold for it.
const STATES: &[(&str, &[&str])] = &[
    ("delivered", &["delivered"]),
    (
        "shipped|dispatched",
        &[
            "shipped",
            "dispatched",
            "in_transit",
            "in transit",
            "out_for_delivery",
            "delivered",
        ],
    ),
    (
        "in transit",
        &["in_transit", "in transit", "out_for_delivery"],
    ),
    (
        "out for delivery",
        &["out_for_delivery", "out for delivery"],
    ),
];

/// Words that look like a parcel's tracking number: two or more capitals, then 5 or more digits.
fn tracking_numbers(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| {
            work::step(1);
            let letters = w.len() - w.trim_start_matches(|c: char| c.is_ascii_uppercase()).len();
            let digits = &w[letters..];
            letters >= 2 && digits.len() >= 5 && digits.chars().all(|c| c.is_ascii_digit())
        })
        .map(str::to_owned)
        .collect()
}

const MONTHS: [&str; 12] = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
];

/// Dates the reply states, as written and as the `-MM-DD` a tool result would hold: ISO dates,
/// and "May 17" / "17 May" / "17th of May" with a month's name (or its first three letters).
fn dates(text: &str) -> Vec<(String, String)> {
    let words: Vec<&str> = text.split_whitespace().collect();
    let clean = |w: &str| {
        w.trim_matches(|c: char| !c.is_alphanumeric() && c != '-')
            .to_lowercase()
    };
    let month = |w: &str| {
        let w = clean(w);
        MONTHS
            .iter()
            .position(|m| w == *m || (w.len() == 3 && m.starts_with(&w) && w != "mar"))
            .map(|i| i + 1)
    };
    let day = |w: &str| {
        let w = clean(w);
        let digits = w.trim_end_matches(|c: char| c.is_ascii_alphabetic());
        let suffix_ok = matches!(&w[digits.len()..], "" | "st" | "nd" | "rd" | "th");
        digits
            .parse::<u32>()
            .ok()
            .filter(|d| suffix_ok && (1..=31).contains(d))
    };
    let mut found = Vec::new();
    for (i, w) in words.iter().enumerate() {
        work::step(1);
        let c = clean(w);
        if c.len() == 10
            && c.as_bytes()[4] == b'-'
            && c.as_bytes()[7] == b'-'
            && c[..4].parse::<u32>().is_ok()
        {
            found.push((c.clone(), format!("-{}", &c[5..])));
            continue;
        }
        let Some(m) = month(w) else { continue };
        let before = i.checked_sub(1).and_then(|k| day(words[k]));
        let before = before.or_else(|| {
            (i >= 2 && clean(words[i - 1]) == "of")
                .then(|| day(words[i - 2]))
                .flatten()
        });
        let after = words.get(i + 1).and_then(|n| day(n));
        if let Some(d) = after.or(before) {
            let from = match (after, i.checked_sub(1).and_then(|k| day(words[k]))) {
                (Some(_), _) => i,
                (None, Some(_)) => i - 1,
                (None, None) => i - 2,
            };
            let to = if after.is_some() { i + 1 } else { i };
            let written = words[from..=to].join(" ");
            let written = written
                .trim_end_matches([',', '.', ';', '!', '?'])
                .to_owned();
            found.push((written, format!("-{m:02}-{d:02}")));
        }
    }
    found
}

/// Placeholders, tool names, JSON and the host's markup: what a customer must never read.
fn not_for_customer(text: &str, tools: &[String]) -> Vec<Finding> {
    let mut found = Vec::new();
    let mut push = |kind: &str, words: String| {
        found.push(Finding::NotForCustomer {
            kind: kind.to_owned(),
            words,
        })
    };
    if let Some(words) = placeholder(text) {
        push("a placeholder", words);
    }
    let lower = text.to_lowercase();
    let named = tools.iter().find_map(|tool| {
        work::step(lower.len());
        let (prefix, name) = tool.split_once('.')?;
        let forms = [tool.clone(), format!("{prefix}__{name}"), name.to_owned()];
        forms
            .into_iter()
            .find(|f| f.contains(['.', '_']) && lower.contains(&f.to_lowercase()))
    });
    if let Some(words) = named {
        push("a tool name", words);
    }
    if let Some(at) = json_start(text) {
        push("JSON", crate::text::cut(&text[at..], 60));
    }
    let markup = [
        "<tool_response",
        "</tool_response",
        "<tool_call",
        "</tool_call",
        "<ticket",
        "</ticket",
        "<|",
        "<document",
    ];
    work::step(lower.len() * markup.len());
    if let Some(tag) = markup.iter().find(|m| lower.contains(*m)) {
        push("the host's markup", (*tag).to_owned());
    }
    if lower.contains("```") {
        push("a code block", "```".to_owned());
    } else if let Some(words) = markdown(text) {
        push("markdown", words);
    }
    if let Some(words) = third_person(&lower) {
        push("words about the customer instead of to them", words);
    }
    found
}

/// Markdown a mail shows as it was typed: bold (`**`), a code span (`` ` ``), a heading.
fn markdown(text: &str) -> Option<String> {
    if text.contains("**") {
        return Some("**".to_owned());
    }
    if text.contains('`') {
        return Some("`".to_owned());
    }
    text.lines()
        .inspect(|_| work::step(1))
        .map(str::trim_start)
        .find(|line| {
            let hashes = line.len() - line.trim_start_matches('#').len();
            (1..=4).contains(&hashes) && line[hashes..].starts_with(' ')
        })
        .map(|line| crate::text::cut(line, 60))
}

/// Words after "the customer" or "the user" that make it the name of a team, a service or a
/// thing: "the customer service team", "the user guide" speak to the customer as well.
const NAMED_AFTER: &str = "service services support care team desk experience relations success \
    portal account guide manual";

/// "The customer is asking…": a reply that speaks of the customer, not to them.
fn third_person(lower: &str) -> Option<String> {
    ["the customer", "the user"].into_iter().find_map(|words| {
        lower.match_indices(words).find_map(|(at, _)| {
            work::step(1);
            let before = lower[..at].chars().next_back();
            let rest = &lower[at + words.len()..];
            let after = rest.chars().next();
            let whole = !before.is_some_and(char::is_alphanumeric)
                && !after.is_some_and(|c| c.is_alphanumeric() && c != 's');
            let next = rest
                .split_whitespace()
                .next()
                .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric()));
            let a_name = after.is_some_and(char::is_whitespace)
                && next.is_some_and(|w| super::listed(NAMED_AFTER, w));
            (whole && !a_name).then(|| words.to_owned())
        })
    })
}

/// The longest blank, in bytes: `[Name of the product you ordered]` is one.
const PLACEHOLDER_LEN: usize = 40;

/// `[Your Name]`, `[insert date]`, `{name}`, `<Customer Name>`: a blank meant to be filled in.
fn placeholder(text: &str) -> Option<String> {
    for (open, close) in [('[', ']'), ('{', '}'), ('<', '>')] {
        let mut rest = text;
        while let Some(start) = rest.find(open) {
            work::step(start + 1);
            let after = &rest[start + 1..];
            // A blank is at most `PLACEHOLDER_LEN` bytes: its close is looked for that far
            // and no further, so many opens and one far close are not a scan each.
            let window = after
                .char_indices()
                .take_while(|(at, _)| *at <= PLACEHOLDER_LEN)
                .inspect(|_| work::step(1))
                .find(|(_, c)| *c == close);
            let Some((len, _)) = window else {
                rest = after;
                continue;
            };
            let inner = &after[..len];
            let followed_by_link = after[len + 1..].starts_with('(');
            // `{result.order_id}`: a saved reply's variable the ticket had no value for.
            let words_only = inner.chars().all(|c| {
                c.is_alphanumeric()
                    || c == ' '
                    || c == '_'
                    || c == '\''
                    || (open == '{' && c == '.')
            });
            let blank = !inner.trim().is_empty()
                && inner.len() <= PLACEHOLDER_LEN
                && inner.chars().any(char::is_alphabetic)
                && words_only
                && (open != '<' || inner.chars().next().is_some_and(char::is_uppercase));
            if blank && !followed_by_link {
                return Some(format!("{open}{inner}{close}"));
            }
            rest = &after[len..];
        }
    }
    None
}

/// Where a JSON object or list of objects starts: `{"key":` or `[{"`.
fn json_start(text: &str) -> Option<usize> {
    text.match_indices('{').map(|(at, _)| at).find(|&at| {
        let rest = text[at + 1..].trim_start();
        work::step(1 + text.len() - at - rest.len());
        rest.starts_with('"')
            && rest[1..].find('"').is_some_and(|end| {
                work::step(end);
                rest[1 + end + 1..].trim_start().starts_with(':')
            })
    })
}

const REFUSALS: &[&str] = &[
    "can't assist",
    "cannot assist",
    "can not assist",
    "unable to assist",
    "can't help with that",
    "cannot help with that",
    "can't help you with that",
    "cannot help you with that",
    "not able to assist",
    "unable to help",
    "not able to help",
    "don't have enough information",
    "do not have enough information",
    "don't have access to",
    "do not have access to",
    "as an ai",
    "je ne peux pas vous aider",
    "ich kann ihnen nicht helfen",
    "no puedo ayudarle",
    "no puedo ayudarte",
    "non posso aiutarla",
    "ik kan u niet helpen",
];

/// The sentence that refuses the customer, if the reply does. Each sentence is lowered on
/// its own: lowering can change a text's length in bytes ("İ"), so places found in the
/// lowered whole would not be places in the text.
fn refusal(text: &str) -> Option<String> {
    text.split_inclusive(['.', '!', '?', '\n'])
        .find(|sentence| {
            work::step(sentence.len() * REFUSALS.len());
            let lower = sentence.to_lowercase().replace('’', "'");
            REFUSALS.iter().any(|r| lower.contains(r))
        })
        .map(|sentence| sentence.trim().to_owned())
}

/// A reply of a few words ("Thanks!", a greeting and the desk's signature) answers nothing.
/// Only words with a letter or a digit count, and the signature's words do not.
fn too_short(text: &str, signature: &str) -> Option<String> {
    let lower = text.to_lowercase();
    let signature = signature.trim().to_lowercase();
    let unsigned = if signature.is_empty() {
        lower
    } else {
        lower.replace(&signature, " ")
    };
    let words = unsigned
        .split_whitespace()
        .filter(|w| w.chars().any(char::is_alphanumeric))
        .count();
    (words < 6).then(|| text.trim().to_owned())
}

/// How much of the reply (in percent of its three-word runs) is the customer's own message,
/// when that is most of it.
fn echo_percent(text: &str, ticket_text: &str) -> Option<u32> {
    let words = |t: &str| -> Vec<String> {
        t.split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
            .collect()
    };
    let (reply, ticket) = (words(text), words(ticket_text));
    let runs = |w: &[String]| -> Vec<String> { w.windows(3).map(|r| r.join(" ")).collect() };
    let (reply_runs, ticket_runs) = (runs(&reply), runs(&ticket));
    if reply_runs.len() < 6 {
        return None;
    }
    work::step(reply_runs.len() + ticket_runs.len());
    let ticket_runs: HashSet<&String> = ticket_runs.iter().collect();
    let repeated = reply_runs
        .iter()
        .filter(|r| ticket_runs.contains(r))
        .count();
    let percent = (repeated * 100 / reply_runs.len()) as u32;
    (percent >= 60).then_some(percent)
}
