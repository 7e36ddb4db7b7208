//! Elicitation forms on the wire: a server's request becomes our own [`FormAsk`], and an
//! answer goes back as rmcp's `ElicitResult`.
//!
//! rmcp does not check answers against the schema, so
//! [`check_answer`](crate::host::api::check_answer) is the only check before content reaches
//! a server (the elicitation handler and a lead's approval call it). The message and URL pass through untouched: the UI strips
//! control characters when it shows them, and the host never opens a URL.

use std::borrow::Cow;
use std::collections::BTreeSet;

use rmcp::model::{
    ConstTitle, ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationSchema,
    EnumSchema, MultiSelectEnumSchema, PrimitiveSchemaDefinition, SingleSelectEnumSchema,
    StringFormat,
};
use serde_json::Value;

use crate::host::api::form_answers::is_option;
use crate::host::api::{
    Choice, Field, FieldKind, FieldValue, FormAnswer, FormAsk, FormKind, TextFormat,
};

/// A request the desk cannot show as asked. Answer it with a cancel: never guess at a form.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum FormError {
    #[error("the server asked for input in a way the desk does not know; ask its owner")]
    UnsupportedMode,
    #[error("field `{0}` is of a kind the desk cannot show; ask the server's owner")]
    UnsupportedField(String),
    #[error("field `{0}` does not give exactly one label per option; ask the server's owner")]
    LabelMismatch(String),
    #[error("field `{0}` is required but the form does not have it; ask the server's owner")]
    UnknownRequired(String),
}

/// Turns a server's elicitation request into the host's form. `server` is the prefix the host
/// gave that server, `origin` its command line or URL, `ticket` the ticket whose call caused it.
pub fn form_ask(
    server: &str,
    origin: &str,
    ticket: Option<&str>,
    params: &ElicitRequestParams,
) -> Result<FormAsk, FormError> {
    let (message, kind) = match params {
        ElicitRequestParams::FormElicitationParams {
            message,
            requested_schema,
            ..
        } => (message, FormKind::Fields(fields(requested_schema)?)),
        ElicitRequestParams::UrlElicitationParams { message, url, .. } => {
            (message, FormKind::Url { url: url.clone() })
        }
        _ => return Err(FormError::UnsupportedMode),
    };
    let (server, origin) = (server.to_owned(), origin.to_owned());
    let (ticket, message) = (ticket.map(str::to_owned), message.clone());
    Ok(FormAsk {
        ticket,
        server,
        origin,
        message,
        kind,
        asked_by: None,
    })
}

fn fields(schema: &ElicitationSchema) -> Result<Vec<Field>, FormError> {
    let required = schema.required.as_deref().unwrap_or_default();
    let unknown = required
        .iter()
        .find(|n| !schema.properties.contains_key(*n));
    if let Some(field) = unknown {
        return Err(FormError::UnknownRequired(field.clone()));
    }
    // The server's order first; properties it left out of that order follow, by name.
    let mut seen = BTreeSet::new();
    let order = schema.property_order.iter().flatten();
    (order.chain(schema.properties.keys()))
        .filter(|name| seen.insert(name.as_str()))
        .filter_map(|name| schema.properties.get_key_value(name))
        .map(|(name, definition)| field(name, definition, required.contains(name)))
        .collect()
}

fn field(name: &str, def: &PrimitiveSchemaDefinition, required: bool) -> Result<Field, FormError> {
    use PrimitiveSchemaDefinition as Def;
    use {EnumSchema as Enum, MultiSelectEnumSchema as Multi, SingleSelectEnumSchema as Single};
    let unsupported = || FormError::UnsupportedField(name.to_owned());
    let (title, description, kind) = match def {
        Def::String(s) => {
            let format = s
                .format
                .map(|format| text_format(format).ok_or_else(unsupported));
            let kind = FieldKind::Text {
                min_length: s.min_length,
                max_length: s.max_length,
                format: format.transpose()?,
                default: s.default.clone(),
            };
            (&s.title, &s.description, kind)
        }
        Def::Number(n) => {
            let kind = FieldKind::Number {
                minimum: n.minimum,
                maximum: n.maximum,
                default: n.default,
            };
            (&n.title, &n.description, kind)
        }
        Def::Integer(i) => {
            let kind = FieldKind::Integer {
                minimum: i.minimum,
                maximum: i.maximum,
                default: i.default,
            };
            (&i.title, &i.description, kind)
        }
        Def::Boolean(b) => {
            let kind = FieldKind::Boolean { default: b.default };
            (&b.title, &b.description, kind)
        }
        Def::Enum(Enum::Single(Single::Untitled(s))) => {
            let kind = one(untitled(&s.enum_), &s.default);
            (&s.title, &s.description, kind)
        }
        Def::Enum(Enum::Single(Single::Titled(s))) => {
            (&s.title, &s.description, one(titled(&s.one_of), &s.default))
        }
        Def::Enum(Enum::Multi(Multi::Untitled(m))) => {
            let options = untitled(&m.items.enum_);
            let kind = many(options, m.min_items, m.max_items, &m.default);
            (&m.title, &m.description, kind)
        }
        Def::Enum(Enum::Multi(Multi::Titled(m))) => {
            let options = titled(&m.items.any_of);
            let kind = many(options, m.min_items, m.max_items, &m.default);
            (&m.title, &m.description, kind)
        }
        Def::Enum(Enum::Legacy(l)) => {
            let labels = l.enum_names.as_ref().unwrap_or(&l.enum_);
            if labels.len() != l.enum_.len() {
                return Err(FormError::LabelMismatch(name.to_owned()));
            }
            let pairs = l.enum_.iter().zip(labels);
            let options = pairs.map(|(value, label)| choice(value, label)).collect();
            (&l.title, &l.description, one(options, &l.default))
        }
        _ => return Err(unsupported()),
    };
    let text = |text: &Option<Cow<'static, str>>| text.as_deref().map(str::to_owned);
    let (name, title, description) = (name.to_owned(), text(title), text(description));
    Ok(Field {
        name,
        title,
        description,
        required,
        kind,
    })
}

fn text_format(format: StringFormat) -> Option<TextFormat> {
    match format {
        StringFormat::Email => Some(TextFormat::Email),
        StringFormat::Uri => Some(TextFormat::Uri),
        StringFormat::Date => Some(TextFormat::Date),
        StringFormat::DateTime => Some(TextFormat::DateTime),
        _ => None,
    }
}

fn choice(value: &str, label: &str) -> Choice {
    let (value, label) = (value.to_owned(), label.to_owned());
    Choice { value, label }
}

fn untitled(values: &[String]) -> Vec<Choice> {
    values.iter().map(|value| choice(value, value)).collect()
}

fn titled(options: &[ConstTitle]) -> Vec<Choice> {
    let choices = options.iter().map(|o| choice(&o.const_, &o.title));
    choices.collect()
}

// A default that is not among the options is dropped: the form must not start out invalid.
fn one(options: Vec<Choice>, default: &Option<String>) -> FieldKind {
    let default = default.clone().filter(|value| is_option(&options, value));
    FieldKind::Choice { options, default }
}

fn many(
    options: Vec<Choice>,
    min_items: Option<u64>,
    max_items: Option<u64>,
    default: &Option<Vec<String>>,
) -> FieldKind {
    let default = default.iter().flatten().filter(|v| is_option(&options, v));
    let default = default.cloned().collect();
    FieldKind::Choices {
        options,
        min_items,
        max_items,
        default,
    }
}

/// The answer as rmcp's `ElicitResult`: Accept with the values as a JSON object, Decline and
/// Cancel without content.
pub fn elicit_result(answer: &FormAnswer) -> ElicitResult {
    let json = |value: &FieldValue| match value {
        FieldValue::Text(text) | FieldValue::Choice(text) => Value::from(text.as_str()),
        FieldValue::Number(n) => Value::from(*n),
        FieldValue::Integer(i) => Value::from(*i),
        FieldValue::Boolean(b) => Value::from(*b),
        FieldValue::Choices(values) => Value::from(values.clone()),
    };
    match answer {
        FormAnswer::Accept(values) => {
            let content = values
                .iter()
                .map(|(name, value)| (name.clone(), json(value)));
            let accept = ElicitResult::new(ElicitationAction::Accept);
            accept.with_content(Value::Object(content.collect()))
        }
        FormAnswer::Decline => ElicitResult::new(ElicitationAction::Decline),
        FormAnswer::Cancel => ElicitResult::new(ElicitationAction::Cancel),
    }
}

#[cfg(test)]
mod tests;
