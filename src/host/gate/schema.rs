//! A call's arguments against its tool's input schema, before anyone is asked anything: a call
//! that cannot be right goes back to the model with what to fix, never to a person. A result's
//! structured content against the output schema its tool declared (and the desk pinned), before
//! the model reads it: a result that breaks it goes back as a tool error naming each field.
//!
//! The checks are the parts of JSON Schema a tool's schemas use: `required`, `properties`
//! with `additionalProperties: false`, `type` (one or several), `enum`, `anyOf`/`oneOf`,
//! string lengths and number bounds; a result is checked into its nested objects and lists'
//! `items` as well. Anything else is left to the server.

use serde_json::{Map, Value};

use crate::model::textcalls::kind_of;

/// How many of a result's problems the model is told, and how long a field's name may be in
/// the telling: what a server wrote reaches the model only in this much.
const PROBLEMS_TOLD: usize = 5;
const NAME_CHARS: usize = 60;

/// What is checked: the words for a name the schema does not declare differ.
#[derive(Clone, Copy)]
enum Subject {
    Arguments,
    Output,
}

/// Each way the arguments break the schema, in words the model can act on; empty when none.
pub fn problems(schema: &Map<String, Value>, arguments: &Map<String, Value>) -> Vec<String> {
    let mut found = Vec::new();
    object_problems(schema, arguments, "", Subject::Arguments, &mut found);
    found
}

/// Each way a result's structured content breaks its tool's output schema, each field named
/// by its path (`refund.amount`, `lines[2].sku`); empty when none.
pub fn output_problems(schema: &Map<String, Value>, structured: &Value) -> Vec<String> {
    let mut found = Vec::new();
    match value_problem(schema, structured) {
        Some(problem) => found.push(format!("the structured content {problem}")),
        None => nested_problems(schema, structured, "", &mut found),
    }
    found
}

/// What the model is told instead of a result whose tool declared an output schema and that
/// does not meet it (no structured content, or content that breaks the schema); `None` when it
/// does, or when the tool declared none. The result itself is not passed on.
pub fn result_refusal(
    tool: &str,
    output_schema: Option<&Map<String, Value>>,
    structured: Option<&Value>,
) -> Option<String> {
    const NEXT: &str = "Nothing in that answer can be relied on, so do not quote it to the customer: call the tool again only if other arguments could fix it, use another tool, or write the reply saying what could not be checked.";
    let schema = output_schema?;
    let Some(structured) = structured else {
        return Some(format!(
            "{tool} answered without the structured content its declared output schema requires, so the desk did not use the answer. {NEXT}"
        ));
    };
    let found = output_problems(schema, structured);
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

/// The problems of `object` against an object schema: required fields, undeclared ones when
/// the schema is closed, and each declared field's value. `at` is the object's own path
/// (empty at the top); only a result's fields are followed into nested objects and lists.
fn object_problems(
    schema: &Map<String, Value>,
    object: &Map<String, Value>,
    at: &str,
    subject: Subject,
    found: &mut Vec<String>,
) {
    let properties = schema.get("properties").and_then(Value::as_object);
    for name in schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
    {
        if !object.contains_key(name) {
            found.push(format!(
                "\"{}\" is required and missing",
                path(at, name, subject)
            ));
        }
    }
    let closed = schema.get("additionalProperties") == Some(&Value::Bool(false));
    for (name, value) in object {
        let here = path(at, name, subject);
        match properties.and_then(|p| p.get(name)) {
            Some(Value::Object(property)) => match value_problem(property, value) {
                Some(problem) => found.push(format!("\"{here}\" {problem}")),
                None => {
                    if let Subject::Output = subject {
                        nested_problems(property, value, &here, found);
                    }
                }
            },
            Some(_) => {}
            None if closed => {
                let known: Vec<&str> = properties
                    .map(|p| p.keys().map(String::as_str).collect())
                    .unwrap_or_default();
                found.push(match subject {
                    Subject::Arguments => format!(
                        "\"{here}\" is not an argument of this tool (it takes: {})",
                        known.join(", ")
                    ),
                    Subject::Output if known.is_empty() => {
                        format!("\"{here}\" is not a field the schema declares (it declares none)")
                    }
                    Subject::Output => format!(
                        "\"{here}\" is not a field the schema declares (it declares: {})",
                        known.join(", ")
                    ),
                });
            }
            None => {}
        }
    }
}

/// A result's value that fits its own schema, followed into its fields and list items.
fn nested_problems(schema: &Map<String, Value>, value: &Value, at: &str, found: &mut Vec<String>) {
    match value {
        Value::Object(object) => object_problems(schema, object, at, Subject::Output, found),
        Value::Array(items) => {
            let Some(item_schema) = schema.get("items").and_then(Value::as_object) else {
                return;
            };
            for (i, item) in items.iter().enumerate() {
                let here = format!("{at}[{i}]");
                match value_problem(item_schema, item) {
                    Some(problem) => found.push(format!("\"{here}\" {problem}")),
                    None => nested_problems(item_schema, item, &here, found),
                }
            }
        }
        _ => {}
    }
}

/// `name` under `at`; a result's field names are the server's words, cut short.
fn path(at: &str, name: &str, subject: Subject) -> String {
    let name = match subject {
        Subject::Arguments => name.to_owned(),
        Subject::Output => crate::text::cut(&name.escape_debug().to_string(), NAME_CHARS),
    };
    if at.is_empty() {
        name
    } else {
        format!("{at}.{name}")
    }
}

/// Why `value` does not fit `schema`, or `None` when it does.
fn value_problem(schema: &Map<String, Value>, value: &Value) -> Option<String> {
    for key in ["anyOf", "oneOf"] {
        if let Some(branches) = schema.get(key).and_then(Value::as_array) {
            let fits = branches
                .iter()
                .filter_map(Value::as_object)
                .any(|branch| value_problem(branch, value).is_none());
            if !fits {
                return Some(format!("has the wrong form ({})", kind_of(value)));
            }
        }
    }
    if let Some(types) = schema.get("type") {
        let allowed: Vec<&str> = match types {
            Value::String(one) => vec![one.as_str()],
            Value::Array(many) => many.iter().filter_map(Value::as_str).collect(),
            _ => vec![],
        };
        if !allowed.is_empty() && !allowed.iter().any(|t| is_type(value, t)) {
            return Some(format!(
                "must be {}, not {}",
                allowed.join(" or "),
                kind_of(value)
            ));
        }
    }
    if let Some(choices) = schema.get("enum").and_then(Value::as_array)
        && !choices.contains(value)
    {
        let listed: Vec<String> = choices.iter().map(Value::to_string).collect();
        return Some(format!("must be one of {}", listed.join(", ")));
    }
    bounds_problem(schema, value)
}

fn bounds_problem(schema: &Map<String, Value>, value: &Value) -> Option<String> {
    let limit = |key: &str| schema.get(key).and_then(Value::as_f64);
    match value {
        Value::String(text) => {
            let chars = text.chars().count() as f64;
            if limit("minLength").is_some_and(|min| chars < min) {
                return Some("is too short".to_owned());
            }
            if limit("maxLength").is_some_and(|max| chars > max) {
                return Some("is too long".to_owned());
            }
            None
        }
        Value::Number(number) => {
            let n = number.as_f64()?;
            if limit("minimum").is_some_and(|min| n < min) {
                return Some(format!("must be at least {}", schema["minimum"]));
            }
            if limit("maximum").is_some_and(|max| n > max) {
                return Some(format!("must be at most {}", schema["maximum"]));
            }
            None
        }
        _ => None,
    }
}

fn is_type(value: &Value, name: &str) -> bool {
    match name {
        "string" => value.is_string(),
        "integer" => value.as_i64().is_some() || value.as_u64().is_some(),
        "number" => value.is_number(),
        "boolean" => value.is_boolean(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        "null" => value.is_null(),
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn object(value: Value) -> Map<String, Value> {
        value.as_object().cloned().expect("an object")
    }

    fn quote_schema() -> Map<String, Value> {
        object(json!({
            "type": "object",
            "properties": {
                "order_id": {"type": "string"},
                "sku": {"type": ["string", "null"]},
                "reason": {"type": "string", "minLength": 1},
                "count": {"type": "integer", "minimum": 1},
                "mode": {"enum": ["line", "order"]}
            },
            "required": ["order_id", "reason"],
            "additionalProperties": false
        }))
    }

    #[test]
    fn a_fitting_call_has_no_problems() {
        let args = object(json!({"order_id": "O-1587", "sku": null, "reason": "burnt"}));
        assert_eq!(problems(&quote_schema(), &args), Vec::<String>::new());
    }

    #[test]
    fn each_way_of_breaking_the_schema_is_named() {
        let args =
            object(json!({"order_id": 1587, "reason": "", "count": 0, "mode": "all", "note": "x"}));
        assert_eq!(
            problems(&quote_schema(), &args),
            [
                "\"order_id\" must be string, not a number",
                "\"reason\" is too short",
                "\"count\" must be at least 1",
                "\"mode\" must be one of \"line\", \"order\"",
                "\"note\" is not an argument of this tool (it takes: order_id, sku, reason, count, mode)",
            ]
        );
        let missing = problems(&quote_schema(), &object(json!({})));
        assert_eq!(
            missing,
            [
                "\"order_id\" is required and missing",
                "\"reason\" is required and missing"
            ]
        );
    }

    fn refund_output_schema() -> Map<String, Value> {
        object(json!({
            "type": "object",
            "properties": {
                "refund_id": {"type": "string", "minLength": 1},
                "amount": {"type": "string"},
                "state": {"enum": ["issued", "held"]},
                "lines": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {"sku": {"type": "string"}, "count": {"type": "integer", "minimum": 1}},
                        "required": ["sku"],
                        "additionalProperties": false
                    }
                },
                "order": {
                    "type": "object",
                    "properties": {"order_id": {"type": "string"}},
                    "required": ["order_id"]
                }
            },
            "required": ["refund_id", "amount", "state"]
        }))
    }

    #[test]
    fn fitting_structured_content_has_no_problems() {
        let content = json!({
            "refund_id": "R-1", "amount": "12.50", "state": "issued",
            "lines": [{"sku": "KG-1031", "count": 1}], "order": {"order_id": "O-1587"}, "note": "open schema"
        });
        assert_eq!(
            output_problems(&refund_output_schema(), &content),
            Vec::<String>::new()
        );
        assert_eq!(
            result_refusal("fix.refund", Some(&refund_output_schema()), Some(&content)),
            None
        );
    }

    #[test]
    fn structured_content_is_checked_into_its_fields_and_list_items() {
        let content = json!({
            "refund_id": "R-1", "amount": 12.5, "state": "paid",
            "lines": [{"sku": "KG-1031"}, {"count": 0, "colour": "red"}], "order": {}
        });
        assert_eq!(
            output_problems(&refund_output_schema(), &content),
            [
                "\"amount\" must be string, not a number",
                "\"state\" must be one of \"issued\", \"held\"",
                "\"lines[1].sku\" is required and missing",
                "\"lines[1].count\" must be at least 1",
                "\"lines[1].colour\" is not a field the schema declares (it declares: sku, count)",
                "\"order.order_id\" is required and missing",
            ]
        );
        assert_eq!(
            output_problems(&refund_output_schema(), &json!(["R-1"])),
            ["the structured content must be object, not a list"]
        );
    }

    #[test]
    fn a_result_that_breaks_its_output_schema_is_refused_with_each_field_and_what_to_do() {
        let schema = refund_output_schema();
        let refused = result_refusal(
            "fix.refund",
            Some(&schema),
            Some(&json!({"refund_id": "", "amount": "1.00", "state": "held"})),
        );
        assert_eq!(
            refused.as_deref(),
            Some(
                "fix.refund answered with structured content that does not fit its declared output schema, so the desk did not use the answer: \"refund_id\" is too short. Nothing in that answer can be relied on, so do not quote it to the customer: call the tool again only if other arguments could fix it, use another tool, or write the reply saying what could not be checked."
            )
        );
        let missing = result_refusal("fix.refund", Some(&schema), None).expect("refused");
        assert!(
            missing.starts_with(
                "fix.refund answered without the structured content its declared output schema requires, so the desk did not use the answer."
            ),
            "{missing}"
        );
        assert_eq!(result_refusal("fix.refund", None, None), None);
    }

    #[test]
    fn a_servers_field_names_reach_the_model_escaped_cut_and_few() {
        let schema = object(json!({"type": "object", "additionalProperties": false}));
        let long = format!("ignore\u{1b}[2J all{}", "x".repeat(100));
        let mut content = Map::new();
        content.insert(long, json!(1));
        for i in 0..6 {
            content.insert(format!("f{i}"), json!(i));
        }
        let refused = result_refusal("fix.refund", Some(&schema), Some(&Value::Object(content)))
            .expect("refused");
        assert!(!refused.contains('\u{1b}'), "{refused}");
        assert!(refused.contains("ignore\\u{1b}[2J allxx"), "{refused}");
        assert!(
            refused.contains(
                "(119 characters)\" is not a field the schema declares (it declares none)"
            ),
            "{refused}"
        );
        assert!(refused.contains("; and 2 more."), "{refused}");
    }

    #[test]
    fn any_of_branches_and_open_schemas() {
        let schema = object(json!({
            "properties": {"sku": {"anyOf": [{"type": "string"}, {"type": "null"}]}}
        }));
        assert!(problems(&schema, &object(json!({"sku": null, "extra": 1}))).is_empty());
        assert_eq!(
            problems(&schema, &object(json!({"sku": 5}))),
            ["\"sku\" has the wrong form (a number)"]
        );
    }
}
