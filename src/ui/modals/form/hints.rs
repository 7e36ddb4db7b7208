//! The words a form shows about its fields: what a field accepts, beside its title, and a
//! value as the review step shows it.

use super::Editor;
use crate::host::api::{Field, FieldKind, FieldValue, TextFormat};
use crate::ui::sanitize::one_line;

impl Editor {
    /// What the field accepts, in words (dim, beside its title).
    pub(super) fn hint(&self, field: &Field) -> Option<String> {
        match &field.kind {
            FieldKind::Text {
                min_length,
                max_length,
                format,
                ..
            } => {
                let typed = match self {
                    Self::Text(input) => input.lines().concat().chars().count(),
                    _ => 0,
                };
                let min_length = min_length.filter(|&min| min > 0);
                let length = match (min_length, max_length) {
                    (Some(min), Some(max)) => {
                        Some(format!("{min} to {max} characters ({typed} so far)"))
                    }
                    (None, Some(max)) => Some(format!("at most {max} characters ({typed} so far)")),
                    (Some(min), None) => Some(format!("at least {min} characters")),
                    (None, None) => None,
                };
                let format = format.map(|format| match format {
                    TextFormat::Email => "an email address like name@example.com".to_owned(),
                    TextFormat::Uri => "a web address like https://example.com".to_owned(),
                    TextFormat::Date => "a date like 2026-03-31".to_owned(),
                    TextFormat::DateTime => "a date and time like 2026-03-31T14:30:00Z".to_owned(),
                });
                let parts: Vec<String> = format.into_iter().chain(length).collect();
                (!parts.is_empty()).then(|| parts.join(" · "))
            }
            FieldKind::Number {
                minimum, maximum, ..
            } => Some(format!("a number{}", bounds(*minimum, *maximum))),
            FieldKind::Integer {
                minimum, maximum, ..
            } => Some(format!("a whole number{}", bounds(*minimum, *maximum))),
            FieldKind::Boolean { .. } | FieldKind::Choice { .. } => None,
            FieldKind::Choices {
                min_items,
                max_items,
                ..
            } => {
                let picked = match self {
                    Self::Choices { picked, .. } => picked.iter().filter(|p| **p).count(),
                    _ => 0,
                };
                let range = match (min_items, max_items) {
                    (Some(min), Some(max)) if min == max => format!("pick {min}"),
                    (Some(min), Some(max)) => format!("pick {min} to {max}"),
                    (Some(min), None) => format!("pick at least {min}"),
                    (None, Some(max)) => format!("pick at most {max}"),
                    (None, None) => "pick any".to_owned(),
                };
                Some(format!("{range} ({picked} picked)"))
            }
        }
    }
}

/// A value as the review shows it: what is sent, with an option's label beside its value.
pub(super) fn shown_value(field: &Field, value: &FieldValue) -> String {
    let label = |value: &str| {
        let options = match &field.kind {
            FieldKind::Choice { options, .. } | FieldKind::Choices { options, .. } => {
                options.as_slice()
            }
            _ => &[],
        };
        let option = options.iter().find(|option| option.value == value);
        match option.map(|option| one_line(&option.label)) {
            Some(label) if label != value => format!("{label} ({})", one_line(value)),
            _ => one_line(value),
        }
    };
    match value {
        FieldValue::Text(text) => format!("\"{}\"", one_line(text)),
        FieldValue::Number(n) => n.to_string(),
        FieldValue::Integer(n) => n.to_string(),
        FieldValue::Boolean(true) => "yes".to_owned(),
        FieldValue::Boolean(false) => "no".to_owned(),
        FieldValue::Choice(value) => label(value),
        FieldValue::Choices(values) if values.is_empty() => "none picked".to_owned(),
        FieldValue::Choices(values) => {
            let labels: Vec<String> = values.iter().map(|value| label(value)).collect();
            labels.join(", ")
        }
    }
}

fn bounds<T: std::fmt::Display>(minimum: Option<T>, maximum: Option<T>) -> String {
    match (minimum, maximum) {
        (Some(min), Some(max)) => format!(" between {min} and {max}"),
        (Some(min), None) => format!(", at least {min}"),
        (None, Some(max)) => format!(", at most {max}"),
        (None, None) => String::new(),
    }
}
