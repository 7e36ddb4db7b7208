//! Amounts: those a reply states (with a currency sign or word, or next to refund words), and
//! those the ticket's tools returned, in cents.

use serde_json::Value;

use super::*;
use crate::money::Cents;

/// Amounts the reply states: with a currency sign or word, or plain `d.dd` next to refund words.
pub(super) fn amounts_in_reply(text: &str) -> Vec<Cents> {
    let mut found = vec![];
    let mut seen = HashSet::new();
    for number in numbers(text) {
        work::step(1);
        let Some((cents, with_cents)) = parse_amount(number.run) else {
            continue;
        };
        let before: Vec<String> = words_around(&text[..number.start]).rev().take(4).collect();
        let after: Vec<String> = words_around(&text[number.end..]).take(3).collect();
        let refund_word = |w: &String| {
            ["refund", "reimburs", "credit"]
                .iter()
                .any(|p| w.starts_with(p))
                || listed("amount total sum", w)
        };
        let date = before.first().is_some_and(|w| listed(DATE_WORDS, w));
        let percent = after.first().is_some_and(|w| w == "percent");
        let plain = with_cents && !date && !percent && before.iter().chain(&after).any(refund_word);
        if (number.currency || plain) && seen.insert(cents) {
            found.push(cents);
        }
    }
    found
}

fn words_around(text: &str) -> impl DoubleEndedIterator<Item = String> + '_ {
    text.split_whitespace().map(|w| {
        w.trim_matches(|c: char| !c.is_alphanumeric())
            .to_lowercase()
    })
}

/// Every amount a tool returned (the customer's own figures are theirs, not the shop's): `d.dd`
/// anywhere, whole amounts with a currency, and JSON numbers with a fraction.
pub(super) fn known_amounts(calls: &[CallFact]) -> Vec<Cents> {
    let mut known = vec![];
    for text in calls.iter().map(|c| c.result.as_str()) {
        for number in numbers(text) {
            match parse_amount(number.run) {
                Some((cents, with_cents)) if with_cents || number.currency => known.push(cents),
                _ => {}
            }
        }
        if let Ok(value) = serde_json::from_str::<Value>(text) {
            json_fractions(&value, &mut known);
        }
    }
    known
}

fn json_fractions(value: &Value, into: &mut Vec<Cents>) {
    match value {
        Value::Number(n) if n.is_f64() => {
            if let Some(f) = n.as_f64().filter(|f| (0.0..1e10).contains(f)) {
                into.push(Cents((f * 100.0).round() as i64));
            }
        }
        Value::Array(items) => items.iter().for_each(|v| json_fractions(v, into)),
        Value::Object(map) => map.values().for_each(|v| json_fractions(v, into)),
        _ => {}
    }
}

/// A run of digits (with `.` or `,` between digits) that stands on its own.
struct Number<'a> {
    start: usize,
    end: usize,
    run: &'a str,
    currency: bool,
}

const CURRENCY_WORDS: &str = "eur euro euros usd dollar dollars gbp";
/// A plain `12.05` after these is a date or a time, not money.
const DATE_WORDS: &str = "on at since from until by before after";

pub(super) const SIGNS: [char; 3] = ['€', '$', '£'];

pub(super) fn currency_word(word: &str) -> bool {
    listed(CURRENCY_WORDS, &word.to_ascii_lowercase())
}

/// Numbers glued to letters, dashes, slashes, colons, `+`, `#` or `%` are IDs, SKUs, tracking
/// and phone numbers, dates, times or percentages, and are left out.
fn numbers(text: &str) -> Vec<Number<'_>> {
    let bytes = text.as_bytes();
    let mut found = vec![];
    let mut i = 0;
    while i < bytes.len() {
        work::step(1);
        if !bytes[i].is_ascii_digit() {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len()
            && (bytes[i].is_ascii_digit()
                || (matches!(bytes[i], b'.' | b',')
                    && bytes.get(i + 1).is_some_and(u8::is_ascii_digit)))
        {
            i += 1;
        }
        let head = &text[..start];
        let head = head.strip_suffix([' ', '\u{a0}']).unwrap_or(head);
        let word_before = &head[head
            .trim_end_matches(|c: char| c.is_ascii_alphabetic())
            .len()..];
        let sign_before = head.ends_with(SIGNS) || currency_word(word_before);
        let tail = &text[i..];
        let tail = tail.strip_prefix([' ', '\u{a0}']).unwrap_or(tail);
        let letters_after = tail.trim_start_matches(|c: char| c.is_ascii_alphabetic());
        let sign_after =
            tail.starts_with(SIGNS) || currency_word(&tail[..tail.len() - letters_after.len()]);
        let prev = start.checked_sub(1).map(|p| bytes[p]);
        let next = bytes.get(i).copied();
        let glued_before = prev.is_some_and(|b| {
            b"-_/:+#.,".contains(&b) || (b.is_ascii_alphanumeric() && !sign_before)
        });
        let glued_after = next
            .is_some_and(|b| b"-_/:%".contains(&b) || (b.is_ascii_alphanumeric() && !sign_after));
        if !glued_before && !glued_after {
            found.push(Number {
                start,
                end: i,
                run: &text[start..i],
                currency: sign_before || sign_after,
            });
        }
    }
    found
}

/// Reads `24.90`, `24,90`, `1,234.56`, `1.234,56` or `150`; says whether cents were written.
fn parse_amount(run: &str) -> Option<(Cents, bool)> {
    // `numbers` hands over ASCII runs; anything else is not an amount, and is never sliced.
    if !run.is_ascii() {
        return None;
    }
    let (whole, cents) = match run.rfind(['.', ',']) {
        Some(p) if run.len() - p == 3 => (&run[..p], Some(&run[p + 1..])),
        _ => (run, None),
    };
    let groups: Vec<&str> = whole.split(['.', ',']).collect();
    if groups.len() > 1 {
        let mark = run.get(run.len().saturating_sub(3)..run.len().saturating_sub(2))?;
        let mixed = whole.contains('.') && whole.contains(',');
        if mixed
            || (cents.is_some() && whole.contains(mark))
            || groups[0].is_empty()
            || groups[0].len() > 3
            || groups[1..].iter().any(|g| g.len() != 3)
        {
            return None;
        }
    }
    let digits = groups.concat();
    if digits.is_empty() || digits.len() > 9 {
        return None;
    }
    let cents_text = cents.unwrap_or("00");
    format!("{digits}.{cents_text}")
        .parse::<Cents>()
        .ok()
        .map(|c| (c, cents.is_some()))
}
