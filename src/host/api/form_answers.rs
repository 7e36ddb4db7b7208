//! The pure checks of a form's answers, shared by the desk (as a person types) and the host
//! (before an answer goes back to the server): every problem in words a person can act on,
//! and each field's starting value. Nothing here knows the protocol.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Display;
use std::ops::Range;

use crate::host::api::{Choice, Field, FieldKind, FieldValue, TextFormat};

/// What is wrong with one field of an answer, in words a person can act on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldProblem {
    pub field: String,
    pub problem: String,
}
impl FieldProblem {
    pub(in crate::host) fn new(field: &str, problem: impl Into<String>) -> Self {
        let (field, problem) = (field.to_owned(), problem.into());
        Self { field, problem }
    }
}

pub(in crate::host) fn is_option(options: &[Choice], value: &str) -> bool {
    options.iter().any(|option| option.value == value)
}

/// Checks an accepted answer against the fields. Returns every problem, one per field, in
/// field order; names that are not fields of the form come last. The UI leaves a blank
/// optional field out of the answer; a blank required text field counts as missing.
pub fn validate(
    fields: &[Field],
    answer: &BTreeMap<String, FieldValue>,
) -> Result<(), Vec<FieldProblem>> {
    let known = |name: &&String| fields.iter().any(|field| &field.name == *name);
    let field_problems = fields.iter().filter_map(|field| {
        let problem = match answer.get(&field.name) {
            None => field.required.then(|| "is required".to_owned()),
            Some(FieldValue::Text(text)) if field.required && text.trim().is_empty() => {
                Some("is required".to_owned())
            }
            Some(value) => value_problem(&field.kind, value),
        };
        problem.map(|problem| FieldProblem::new(&field.name, problem))
    });
    let unknown = answer.keys().filter(|name| !known(name));
    let unknown = unknown.map(|name| FieldProblem::new(name, "is not a field of this form"));
    let problems: Vec<FieldProblem> = field_problems.chain(unknown).collect();
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems)
    }
}

fn value_problem(kind: &FieldKind, value: &FieldValue) -> Option<String> {
    use {FieldKind as K, FieldValue as V};
    match (kind, value) {
        (
            K::Text {
                min_length,
                max_length,
                format,
                ..
            },
            V::Text(text),
        ) => {
            let length = text.chars().count();
            if let Some(min) = min_length.filter(|&min| length < min as usize) {
                return Some(format!("must be at least {}", count(min, "character")));
            }
            if let Some(max) = max_length.filter(|&max| length > max as usize) {
                return Some(format!("must be at most {}", count(max, "character")));
            }
            format
                .and_then(|format| format_problem(format, text))
                .map(str::to_owned)
        }
        (K::Number { .. }, V::Number(n)) if !n.is_finite() => Some("must be a number".to_owned()),
        // A whole number typed into a number field is still a number.
        (
            K::Number {
                minimum, maximum, ..
            },
            V::Number(n),
        ) => bounds(*n, *minimum, *maximum),
        (
            K::Number {
                minimum, maximum, ..
            },
            V::Integer(i),
        ) => bounds(*i as f64, *minimum, *maximum),
        (
            K::Integer {
                minimum, maximum, ..
            },
            V::Integer(i),
        ) => bounds(*i, *minimum, *maximum),
        (K::Boolean { .. }, V::Boolean(_)) => None,
        (K::Choice { options, .. }, V::Choice(value)) if is_option(options, value) => None,
        (
            K::Choices {
                options,
                min_items,
                max_items,
                ..
            },
            V::Choices(values),
        ) => {
            let picked = values.len() as u64;
            if values.iter().any(|value| !is_option(options, value)) {
                Some(format!("must each be one of: {}", labels(options)))
            } else if values.iter().collect::<BTreeSet<_>>().len() < values.len() {
                Some("must not pick the same option twice".to_owned())
            } else if let Some(min) = min_items.filter(|&min| picked < min) {
                Some(format!("must have at least {}", count(min, "choice")))
            } else {
                let max = max_items.filter(|&max| picked > max);
                max.map(|max| format!("must have at most {}", count(max, "choice")))
            }
        }
        (K::Text { .. }, _) => Some("must be text".to_owned()),
        (K::Number { .. }, _) => Some("must be a number".to_owned()),
        (K::Integer { .. }, _) => Some("must be a whole number".to_owned()),
        (K::Boolean { .. }, _) => Some("must be yes or no".to_owned()),
        (K::Choice { options, .. }, _) => Some(format!("must be one of: {}", labels(options))),
        (K::Choices { .. }, _) => Some("must be a list of choices".to_owned()),
    }
}

fn bounds<T: PartialOrd + Display>(value: T, min: Option<T>, max: Option<T>) -> Option<String> {
    match (min, max) {
        (Some(min), _) if value < min => Some(format!("must be at least {min}")),
        (_, Some(max)) if value > max => Some(format!("must be at most {max}")),
        _ => None,
    }
}

fn count(n: impl Into<u64>, noun: &str) -> String {
    let n = n.into();
    format!("{n} {noun}{}", if n == 1 { "" } else { "s" })
}

fn labels(options: &[Choice]) -> String {
    let labels: Vec<&str> = options.iter().map(|option| option.label.as_str()).collect();
    labels.join(", ")
}

pub(in crate::host) fn format_problem(format: TextFormat, text: &str) -> Option<&'static str> {
    match format {
        TextFormat::Email if !is_email(text) => {
            Some("must be an email address like name@example.com")
        }
        TextFormat::Uri if !is_uri(text) => Some("must be a web address like https://example.com"),
        TextFormat::Date if !is_date(text) => Some("must be a date like 2026-03-31"),
        TextFormat::DateTime if !is_date_time(text) => {
            Some("must be a date and time like 2026-03-31T14:30:00Z")
        }
        _ => None,
    }
}

/// `something@something.tld`, without spaces.
fn is_email(text: &str) -> bool {
    let parts = |(local, domain): (&str, &str)| {
        let labels: Vec<&str> = domain.split('.').collect();
        !local.is_empty() && labels.len() >= 2 && labels.iter().all(|label| !label.is_empty())
    };
    text.split('@').count() == 2
        && !text.contains(char::is_whitespace)
        && text.split_once('@').is_some_and(parts)
}

/// A scheme (`https://`) and a host, without spaces.
fn is_uri(text: &str) -> bool {
    let parts = |(scheme, rest): (&str, &str)| {
        let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
        let host = authority
            .rsplit_once('@')
            .map_or(authority, |(_, host)| host);
        let scheme_char = |c: char| c.is_ascii_alphanumeric() || "+-.".contains(c);
        scheme.starts_with(|c: char| c.is_ascii_alphabetic())
            && scheme.chars().all(scheme_char)
            && !host.is_empty()
            && !host.starts_with(':')
    };
    !text.contains(char::is_whitespace) && text.split_once("://").is_some_and(parts)
}

/// `YYYY-MM-DD`, a real calendar date.
fn is_date(text: &str) -> bool {
    let (year, month, day) = (number(text, 0..4), number(text, 5..7), number(text, 8..10));
    let (Some(year), Some(month), Some(day)) = (year, month, day) else {
        return false;
    };
    let days = match month {
        4 | 6 | 9 | 11 => 30,
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        _ => 31,
    };
    let dashes = text.len() == 10 && text.as_bytes()[4] == b'-' && text.as_bytes()[7] == b'-';
    dashes && (1..=12).contains(&month) && (1..=days).contains(&day)
}

/// RFC 3339: `2026-03-31T14:30:00Z`, with optional fractional seconds and a `±HH:MM` offset.
fn is_date_time(text: &str) -> bool {
    let (Some(date), Some(time)) = (text.get(..10), text.get(11..)) else {
        return false;
    };
    let Some(mut zone) = time.get(8..) else {
        return false;
    };
    let clock = time.as_bytes()[2] == b':'
        && time.as_bytes()[5] == b':'
        && number(time, 0..2).is_some_and(|hour| hour < 24)
        && number(time, 3..5).is_some_and(|minute| minute < 60)
        && number(time, 6..8).is_some_and(|second| second <= 60);
    if let Some(fraction) = zone.strip_prefix('.') {
        let digits = fraction.bytes().take_while(u8::is_ascii_digit).count();
        zone = fraction.get(digits..).filter(|_| digits > 0).unwrap_or("");
    }
    let offset = zone.len() == 6
        && (zone.starts_with('+') || zone.starts_with('-'))
        && zone.as_bytes()[3] == b':'
        && number(zone, 1..3).is_some_and(|hours| hours < 24)
        && number(zone, 4..6).is_some_and(|minutes| minutes < 60);
    let separator = matches!(text.as_bytes()[10], b'T' | b't');
    is_date(date) && separator && clock && (zone == "Z" || zone == "z" || offset)
}

/// The ASCII digits at `range` of `text`, as a number.
fn number(text: &str, range: Range<usize>) -> Option<u32> {
    let part = text.get(range)?;
    let digits = part.bytes().all(|b| b.is_ascii_digit());
    digits.then(|| part.parse().ok())?
}

/// Starting values a form shows: each field's default; fields without one are left out.
pub fn defaults(fields: &[Field]) -> BTreeMap<String, FieldValue> {
    let default = |kind: &FieldKind| match kind {
        FieldKind::Text { default, .. } => default.clone().map(FieldValue::Text),
        FieldKind::Number { default, .. } => default.map(FieldValue::Number),
        FieldKind::Integer { default, .. } => default.map(FieldValue::Integer),
        FieldKind::Boolean { default } => default.map(FieldValue::Boolean),
        FieldKind::Choice { default, .. } => default.clone().map(FieldValue::Choice),
        FieldKind::Choices { default, .. } if default.is_empty() => None,
        FieldKind::Choices { default, .. } => Some(FieldValue::Choices(default.clone())),
    };
    let named = |field: &Field| Some((field.name.clone(), default(&field.kind)?));
    fields.iter().filter_map(named).collect()
}
