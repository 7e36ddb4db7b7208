//! A call's arguments against its tool's input schema, before anyone is asked anything: a call
//! that cannot be right goes back to the model with what to fix, never to a person. A result's
//! structured content against the output schema its tool declared (and the desk pinned) is
//! `output`'s: a result that breaks it goes back as a tool error naming each field.
//!
//! The arguments' checks are the parts of JSON Schema a tool's input schemas use: `required`,
//! `properties` with `additionalProperties: false`, `type` (one or several), `enum`,
//! `anyOf`/`oneOf`, string lengths and number bounds. Anything else is left to the server,
//! which checks its own arguments; a result, which the model would take as fact, is checked
//! against the whole of JSON Schema.

use serde_json::{Map, Value};

use crate::model::textcalls::kind_of;

mod output;

pub use output::{output_problems, result_refusal};

/// Each way the arguments break the schema, in words the model can act on; empty when none.
pub fn problems(schema: &Map<String, Value>, arguments: &Map<String, Value>) -> Vec<String> {
    let mut found = Vec::new();
    let properties = schema.get("properties").and_then(Value::as_object);
    for name in schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
    {
        if !arguments.contains_key(name) {
            found.push(format!("\"{name}\" is required and missing"));
        }
    }
    let closed = schema.get("additionalProperties") == Some(&Value::Bool(false));
    for (name, value) in arguments {
        match properties.and_then(|p| p.get(name)) {
            Some(Value::Object(property)) => {
                if let Some(problem) = value_problem(property, value) {
                    found.push(format!("\"{name}\" {problem}"));
                }
            }
            Some(_) => {}
            None if closed => {
                let known: Vec<&str> = properties
                    .map(|p| p.keys().map(String::as_str).collect())
                    .unwrap_or_default();
                found.push(format!(
                    "\"{name}\" is not an argument of this tool (it takes: {})",
                    known.join(", ")
                ));
            }
            None => {}
        }
    }
    found
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
