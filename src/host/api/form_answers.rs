//! The pure checks of a form's answers, shared by the desk (as a person types) and the host
//! (before an answer goes back to the server): every problem in words a person can act on,
//! and each field's starting value. Nothing here knows the protocol.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Display;
use std::ops::Range;

use crate::host::api::{Choice, Field, FieldKind, FieldValue, FormAnswer, FormKind, TextFormat};

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

/// An answer checked against the form it answers: a decline, a cancel and any answer to a
/// request for a URL fit; an accept of fields fits when every value does. The one check before
/// an answer goes to a server, whoever gave it (a person at the desk, a lead, a script).
pub fn check_answer(kind: &FormKind, answer: &FormAnswer) -> Result<(), Vec<FieldProblem>> {
    match (answer, kind) {
        (FormAnswer::Accept(values), FormKind::Fields(fields)) => validate(fields, values),
        _ => Ok(()),
    }
}

/// Problems in one line: `amount: must be at most 500; note: is required`.
pub fn in_words(problems: &[FieldProblem]) -> String {
    let said: Vec<String> = problems
        .iter()
        .map(|p| format!("{}: {}", p.field, p.problem))
        .collect();
    said.join("; ")
}

/// A number field's value from what a person typed (trimmed, not empty).
pub fn parse_number(kind: &FieldKind, text: &str) -> Result<FieldValue, &'static str> {
    if let FieldKind::Integer { .. } = kind {
        return text
            .parse()
            .map(FieldValue::Integer)
            .map_err(|_| "must be a whole number, like 12");
    }
    let number = text.parse::<f64>().ok().filter(|n| n.is_finite());
    number
        .map(FieldValue::Number)
        .ok_or("must be a number, like 12.5")
}

/// An accepted answer from `name=value` text, as a command line gives it: each value read
/// as its field's type, the form's defaults for the rest. `Err` names a field the form does
/// not have, or a value its field cannot take; whether the whole fits is [`validate`]'s.
pub fn from_text(
    fields: &[Field],
    given: BTreeMap<String, String>,
) -> Result<BTreeMap<String, FieldValue>, String> {
    let mut values = defaults(fields);
    for (name, text) in given {
        let Some(field) = fields.iter().find(|f| f.name == name) else {
            let names: Vec<&str> = fields.iter().map(|f| f.name.as_str()).collect();
            return Err(format!(
                "the form has no field {name:?}; its fields are: {}",
                names.join(", ")
            ));
        };
        let value = typed(&field.kind, &text)
            .map_err(|problem| format!("field {name} {problem}, not {text:?}"))?;
        values.insert(name, value);
    }
    Ok(values)
}

fn typed(kind: &FieldKind, text: &str) -> Result<FieldValue, &'static str> {
    Ok(match kind {
        FieldKind::Boolean { .. } => match text {
            "true" | "yes" => FieldValue::Boolean(true),
            "false" | "no" => FieldValue::Boolean(false),
            _ => return Err("must be true or false"),
        },
        FieldKind::Integer { .. } | FieldKind::Number { .. } => parse_number(kind, text.trim())?,
        FieldKind::Choice { .. } => FieldValue::Choice(text.to_owned()),
        FieldKind::Choices { .. } => {
            FieldValue::Choices(text.split(',').map(|c| c.trim().to_owned()).collect())
        }
        FieldKind::Text { .. } => FieldValue::Text(text.to_owned()),
    })
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

#[cfg(test)]
mod tests {
    use super::*;

    fn field(name: &str, required: bool, kind: FieldKind) -> Field {
        let (name, title, description) = (name.to_owned(), None, None);
        Field {
            name,
            title,
            description,
            required,
            kind,
        }
    }

    fn release_form() -> Vec<Field> {
        let release = FieldKind::Boolean {
            default: Some(false),
        };
        let amount = FieldKind::Integer {
            minimum: Some(1),
            maximum: Some(500),
            default: None,
        };
        vec![
            field("release", true, release),
            field("amount", true, amount),
        ]
    }

    #[test]
    fn a_command_lines_text_becomes_typed_values_with_the_defaults_for_the_rest() {
        let given = BTreeMap::from([("amount".to_owned(), " 120 ".to_owned())]);
        let values = from_text(&release_form(), given).expect("typed");
        assert_eq!(values.get("amount"), Some(&FieldValue::Integer(120)));
        assert_eq!(values.get("release"), Some(&FieldValue::Boolean(false)));

        let unknown = BTreeMap::from([("amout".to_owned(), "1".to_owned())]);
        let said = from_text(&release_form(), unknown).expect_err("no such field");
        assert_eq!(
            said,
            "the form has no field \"amout\"; its fields are: release, amount"
        );
        let bad = BTreeMap::from([("release".to_owned(), "maybe".to_owned())]);
        let said = from_text(&release_form(), bad).expect_err("not a boolean");
        assert_eq!(said, "field release must be true or false, not \"maybe\"");
    }

    #[test]
    fn numbers_parse_the_same_for_the_desk_and_the_command_line() {
        let integer = FieldKind::Integer {
            minimum: None,
            maximum: None,
            default: None,
        };
        let number = FieldKind::Number {
            minimum: None,
            maximum: None,
            default: None,
        };
        assert_eq!(parse_number(&integer, "12"), Ok(FieldValue::Integer(12)));
        assert!(parse_number(&integer, "12.5").is_err());
        assert_eq!(parse_number(&number, "12.5"), Ok(FieldValue::Number(12.5)));
        // Text that f64 reads but no person means as a number.
        assert!(parse_number(&number, "NaN").is_err());
        assert!(parse_number(&number, "inf").is_err());
    }

    #[test]
    fn only_an_accept_of_fields_is_checked_and_its_problems_read_as_one_line() {
        let fields = release_form();
        let kind = FormKind::Fields(fields.clone());
        assert_eq!(check_answer(&kind, &FormAnswer::Decline), Ok(()));
        assert_eq!(check_answer(&kind, &FormAnswer::Cancel), Ok(()));
        let url = FormKind::Url {
            url: "https://shop.example/verify".to_owned(),
        };
        assert_eq!(
            check_answer(&url, &FormAnswer::Accept(BTreeMap::new())),
            Ok(())
        );
        let too_much = BTreeMap::from([
            ("release".to_owned(), FieldValue::Boolean(true)),
            ("amount".to_owned(), FieldValue::Integer(900)),
            ("note".to_owned(), FieldValue::Text("x".to_owned())),
        ]);
        let problems = check_answer(&kind, &FormAnswer::Accept(too_much)).expect_err("unfit");
        assert_eq!(
            in_words(&problems),
            "amount: must be at most 500; note: is not a field of this form"
        );
    }
}
