//! A result's structured content against the output schema its tool declared (as pinned),
//! before the model reads it.
//!
//! The whole of JSON Schema (2020-12, and the older drafts a schema names in `$schema`) is
//! checked by `boon`, `$ref`s into the schema's own `$defs` included. Nothing is ever fetched
//! for a schema: its loader refuses every address, so a `$ref` to a file or a URL makes the
//! schema one the desk cannot read, and the result is not used. What the model is told is the
//! host's own words: each field by its path, with what was wrong, never the value the server
//! sent, and the server's field names escaped and cut short.

use boon::{Compiler, ErrorKind, InstanceToken, Schemas, UrlLoader, ValidationError};
use serde_json::{Map, Value};

use crate::model::textcalls::kind_of;

/// How many of a result's problems the model is told, how long a field's name may be in the
/// telling, and how many of a schema's allowed values are listed: what a server wrote reaches
/// the model only in this much.
const PROBLEMS_TOLD: usize = 5;
const NAME_CHARS: usize = 60;
const VALUES_LISTED: usize = 8;
const VALUE_CHARS: usize = 40;

/// Where the schema is put for `boon`: a name of the desk's own, so that a relative `$ref`
/// resolves to an address no loader answers.
const SCHEMA_URL: &str = "urn:support-desk:output-schema";

/// What the model is told after a refusal: what it may do next.
const NEXT: &str = "Nothing in that answer can be relied on, so do not quote it to the customer: call the tool again only if other arguments could fix it, use another tool, or write the reply saying what could not be checked.";

/// What the model is told instead of a result whose tool declared an output schema and that
/// does not meet it (no structured content, or content that breaks the schema, or a schema
/// the desk cannot read); `None` when it does, or when the tool declared none. The result
/// itself is not passed on.
pub fn result_refusal(
    tool: &str,
    output_schema: Option<&Map<String, Value>>,
    structured: Option<&Value>,
) -> Option<String> {
    let schema = output_schema?;
    let Some(structured) = structured else {
        return Some(format!(
            "{tool} answered without the structured content its declared output schema requires, so the desk did not use the answer. {NEXT}"
        ));
    };
    let found = match output_problems(schema, structured) {
        Ok(found) => found,
        Err(unreadable) => {
            tracing::warn!(%tool, error = %unreadable, "a tool's output schema could not be read");
            return Some(format!(
                "{tool} declares an output schema the desk cannot read, so the desk could not check the answer and did not use it. {NEXT}"
            ));
        }
    };
    if found.is_empty() {
        return None;
    }
    let mut told: Vec<String> = found.iter().take(PROBLEMS_TOLD).cloned().collect();
    if found.len() > PROBLEMS_TOLD {
        told.push(format!("and {} more", found.len() - PROBLEMS_TOLD));
    }
    Some(format!(
        "{tool} answered with structured content that does not fit its declared output schema, so the desk did not use the answer: {}. {NEXT}",
        told.join("; ")
    ))
}

/// Each way a result's structured content breaks its tool's output schema, each field named
/// by its path (`refund.amount`, `lines[2].sku`), in the order they come in the content;
/// empty when none. `Err` when the schema itself cannot be read (not JSON Schema, or a `$ref`
/// to anything outside it), with why, for the log.
pub fn output_problems(
    schema: &Map<String, Value>,
    structured: &Value,
) -> Result<Vec<String>, String> {
    let mut compiler = Compiler::new();
    compiler.use_loader(Box::new(LoadsNothing));
    compiler
        .add_resource(SCHEMA_URL, Value::Object(schema.clone()))
        .map_err(|e| e.to_string())?;
    let mut schemas = Schemas::new();
    let index = compiler
        .compile(SCHEMA_URL, &mut schemas)
        .map_err(|e| e.to_string())?;
    let mut found = Vec::new();
    if let Err(error) = schemas.validate(structured, index) {
        tell(&error, schema, structured, &mut found);
    }
    Ok(found)
}

/// A schema's loader that fetches nothing: a `$ref` must stay inside the schema the tool
/// declared, never reach a file or the network.
struct LoadsNothing;

impl UrlLoader for LoadsNothing {
    fn load(&self, url: &str) -> Result<Value, Box<dyn std::error::Error>> {
        Err(format!("the desk loads nothing for a tool's schema, and {url} is outside it").into())
    }
}

/// The problems in `error` and its causes, in the host's words, onto `found`.
fn tell(
    error: &ValidationError,
    schema: &Map<String, Value>,
    content: &Value,
    found: &mut Vec<String>,
) {
    let tokens = &error.instance_location.tokens;
    let at = path(tokens);
    let here = || match &at {
        None => "the structured content".to_owned(),
        Some(path) => format!("\"{path}\""),
    };
    let field = |name: &str| format!("\"{}\"", joined(at.as_deref(), &escaped(name)));
    let mut say = |problem: String| found.push(format!("{} {problem}", here()));
    match &error.kind {
        // Wrappers: what is wrong is in their causes.
        ErrorKind::Group
        | ErrorKind::Schema { .. }
        | ErrorKind::Reference { .. }
        | ErrorKind::AllOf => {
            for cause in &error.causes {
                tell(cause, schema, content, found);
            }
        }
        ErrorKind::Required { want } => {
            for name in want {
                found.push(format!("{} is required and missing", field(name)));
            }
        }
        ErrorKind::Dependency { prop, missing }
        | ErrorKind::DependentRequired { prop, missing } => {
            for name in missing {
                found.push(format!(
                    "{} is required when {} is there, and missing",
                    field(name),
                    field(prop)
                ));
            }
        }
        ErrorKind::AdditionalProperties { got } => {
            let declared = declared_fields(schema, error.schema_url);
            for name in got {
                found.push(format!(
                    "{} is not a field the schema declares ({declared})",
                    field(name)
                ));
            }
        }
        ErrorKind::PropertyName { prop } => {
            found.push(format!(
                "{} is not a name the schema allows for a field",
                field(prop)
            ));
        }
        ErrorKind::Type { want, .. } => {
            let allowed: Vec<String> = want.iter().map(|t| t.to_string()).collect();
            let got = value_at(content, tokens).map_or("something else", kind_of);
            say(format!("must be {}, not {got}", allowed.join(" or ")));
        }
        ErrorKind::Enum { want } => say(format!("must be one of {}", listed(want))),
        ErrorKind::Const { want } => say(format!("must be {}", shown(want))),
        ErrorKind::Format { want, .. } => say(format!("is not a valid {want}")),
        ErrorKind::MinLength { want, .. } => say(format!(
            "is too short (at least {})",
            counted(*want, "character")
        )),
        ErrorKind::MaxLength { want, .. } => say(format!(
            "is too long (at most {})",
            counted(*want, "character")
        )),
        ErrorKind::Pattern { .. } => say("does not match the pattern the schema sets".to_owned()),
        ErrorKind::Minimum { want, .. } => say(format!("must be at least {want}")),
        ErrorKind::Maximum { want, .. } => say(format!("must be at most {want}")),
        ErrorKind::ExclusiveMinimum { want, .. } => say(format!("must be more than {want}")),
        ErrorKind::ExclusiveMaximum { want, .. } => say(format!("must be less than {want}")),
        ErrorKind::MultipleOf { want, .. } => say(format!("must be a multiple of {want}")),
        ErrorKind::MinItems { want, .. } => {
            say(format!("must hold at least {}", counted(*want, "item")))
        }
        ErrorKind::MaxItems { want, .. } => {
            say(format!("must hold at most {}", counted(*want, "item")))
        }
        ErrorKind::UniqueItems { got: [a, b] } => say(format!(
            "must hold each item once, but items {a} and {b} are the same"
        )),
        ErrorKind::AdditionalItems { .. } => {
            say("holds more items than the schema declares".to_owned())
        }
        ErrorKind::Contains | ErrorKind::MinContains { .. } | ErrorKind::MaxContains { .. } => {
            say("does not hold the items the schema asks for".to_owned())
        }
        ErrorKind::MinProperties { want, .. } => {
            say(format!("must have at least {}", counted(*want, "field")))
        }
        ErrorKind::MaxProperties { want, .. } => {
            say(format!("must have at most {}", counted(*want, "field")))
        }
        ErrorKind::FalseSchema => say("is not allowed by the schema".to_owned()),
        ErrorKind::Not => say("has a form the schema rules out".to_owned()),
        ErrorKind::AnyOf | ErrorKind::OneOf(None) => {
            let got = value_at(content, tokens).map_or("something else", kind_of);
            say(format!(
                "fits none of the forms the schema allows (it is {got})"
            ))
        }
        ErrorKind::OneOf(Some(_)) => say(
            "fits more than one of the forms the schema allows, where it must fit one".to_owned(),
        ),
        ErrorKind::ContentSchema
        | ErrorKind::ContentEncoding { .. }
        | ErrorKind::ContentMediaType { .. } => {
            say("does not hold the content the schema declares".to_owned())
        }
        ErrorKind::RefCycle { .. } => {
            say("could not be checked: the schema refers to itself in a loop".to_owned())
        }
    }
}

/// A value's place in the content as the model reads it (`lines[1].sku`); `None` at the top.
fn path(tokens: &[InstanceToken]) -> Option<String> {
    let mut at: Option<String> = None;
    for token in tokens {
        at = Some(match token {
            InstanceToken::Prop(name) => joined(at.as_deref(), &escaped(name)),
            InstanceToken::Item(i) => format!("{}[{i}]", at.unwrap_or_default()),
        });
    }
    at
}

fn joined(at: Option<&str>, name: &str) -> String {
    match at {
        None => name.to_owned(),
        Some(at) => format!("{at}.{name}"),
    }
}

/// A server's field name as the model may read it: escaped, and cut short.
fn escaped(name: &str) -> String {
    crate::text::cut(&name.escape_debug().to_string(), NAME_CHARS)
}

/// The value at `tokens` in the content, for the kind of thing it is (never the value).
fn value_at<'v>(content: &'v Value, tokens: &[InstanceToken]) -> Option<&'v Value> {
    tokens.iter().try_fold(content, |value, token| match token {
        InstanceToken::Prop(name) => value.get(name.as_ref()),
        InstanceToken::Item(i) => value.get(*i),
    })
}

/// The fields an object's schema declares, for a field it does not, found by the schema
/// location `boon` gives (`urn:…#/properties/lines/items`).
fn declared_fields(schema: &Map<String, Value>, schema_url: &str) -> String {
    let pointer = schema_url
        .strip_prefix(SCHEMA_URL)
        .and_then(|rest| rest.strip_prefix('#'))
        .unwrap_or("");
    let root = Value::Object(schema.clone());
    let names: Vec<String> = root
        .pointer(pointer)
        .and_then(|at| at.get("properties"))
        .and_then(Value::as_object)
        .map(|properties| properties.keys().map(|name| escaped(name)).collect())
        .unwrap_or_default();
    if names.is_empty() {
        "it declares none".to_owned()
    } else {
        format!("it declares: {}", names.join(", "))
    }
}

/// `n` things, in words: `1 item`, `2 items`.
fn counted(n: usize, thing: &str) -> String {
    if n == 1 {
        format!("1 {thing}")
    } else {
        format!("{n} {thing}s")
    }
}

/// The values a schema allows, as few and as short as the model is told.
fn listed(values: &[Value]) -> String {
    let mut shown: Vec<String> = values.iter().take(VALUES_LISTED).map(shown).collect();
    if values.len() > VALUES_LISTED {
        shown.push(format!("or {} more", values.len() - VALUES_LISTED));
    }
    shown.join(", ")
}

/// One of the schema's values as JSON (which escapes control characters), cut short.
fn shown(value: &Value) -> String {
    crate::text::cut(&value.to_string(), VALUE_CHARS)
}

#[cfg(test)]
mod tests;
