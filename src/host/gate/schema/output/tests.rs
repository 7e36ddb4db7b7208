use super::*;
use serde_json::json;

fn object(value: Value) -> Map<String, Value> {
    value.as_object().cloned().expect("an object")
}

fn problems(schema: &Map<String, Value>, content: &Value) -> Vec<String> {
    output_problems(schema, content).expect("a schema the desk reads")
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
        problems(&refund_output_schema(), &content),
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
        problems(&refund_output_schema(), &content),
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
        problems(&refund_output_schema(), &json!(["R-1"])),
        ["the structured content must be object, not a list"]
    );
}

/// What a generated schema (schemars, pydantic) looks like: nested types under `$defs`,
/// reached by `$ref`, and an optional one as `anyOf` with `null`.
#[test]
fn references_into_the_schemas_own_definitions_are_followed() {
    let schema = object(json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {
            "parcel": {"$ref": "#/$defs/Parcel"},
            "return_parcel": {"anyOf": [{"$ref": "#/$defs/Parcel"}, {"type": "null"}]}
        },
        "required": ["parcel"],
        "$defs": {
            "Parcel": {
                "type": "object",
                "properties": {
                    "status": {"type": "string", "enum": ["in transit", "delivered"]},
                    "weight_kg": {"type": "number", "exclusiveMinimum": 0}
                },
                "required": ["status"]
            }
        }
    }));
    let fitting =
        json!({"parcel": {"status": "delivered", "weight_kg": 1.5}, "return_parcel": null});
    assert_eq!(problems(&schema, &fitting), Vec::<String>::new());
    let broken =
        json!({"parcel": {"status": "lost", "weight_kg": 0}, "return_parcel": {"weight_kg": 2}});
    assert_eq!(
        problems(&schema, &broken),
        [
            "\"parcel.status\" must be one of \"in transit\", \"delivered\"",
            "\"parcel.weight_kg\" must be more than 0",
            "\"return_parcel\" fits none of the forms the schema allows (it is an object)",
        ]
    );
}

#[test]
fn the_rest_of_json_schema_is_checked_too() {
    let schema = object(json!({
        "type": "object",
        "properties": {
            "kind": {"const": "tracking"},
            "code": {"type": "string", "pattern": "^[A-Z]{2}[0-9]+$"},
            "tags": {"type": "array", "minItems": 1, "uniqueItems": true},
            "flags": {"type": "array", "maxItems": 1},
            "secret": false
        },
        "allOf": [{"required": ["kind"]}]
    }));
    let content =
        json!({"kind": "refund", "code": "kp1", "tags": [], "flags": [1, 2], "secret": "x"});
    assert_eq!(
        problems(&schema, &content),
        [
            "\"kind\" must be \"tracking\"",
            "\"code\" does not match the pattern the schema sets",
            "\"tags\" must hold at least 1 item",
            "\"flags\" must hold at most 1 item",
            "\"secret\" is not allowed by the schema",
        ]
    );
    assert_eq!(
        problems(&schema, &json!({"tags": ["a", "a"]})),
        [
            "\"tags\" must hold each item once, but items 0 and 1 are the same",
            "\"kind\" is required and missing",
        ]
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
            "fix.refund answered with structured content that does not fit its declared output schema, so the desk did not use the answer: \"refund_id\" is too short (at least 1 character). Nothing in that answer can be relied on, so do not quote it to the customer: call the tool again only if other arguments could fix it, use another tool, or write the reply saying what could not be checked."
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
fn a_servers_field_names_and_values_reach_the_model_escaped_cut_and_few() {
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
        refused
            .contains("(119 characters)\" is not a field the schema declares (it declares none)"),
        "{refused}"
    );
    assert!(refused.contains("; and 2 more."), "{refused}");

    let many: Vec<String> = (0..20)
        .map(|i| format!("state {i} {}", "y".repeat(60)))
        .collect();
    let schema = object(json!({"properties": {"state": {"enum": many}}}));
    let told = problems(&schema, &json!({"state": "lost \u{1b}[2J for good"}));
    assert_eq!(told.len(), 1);
    assert!(told[0].ends_with(", or 12 more"), "{told:?}");
    let first = format!("\"state 0 {}… (70 characters)", "y".repeat(31));
    assert!(told[0].contains(&first), "{told:?}");
    assert!(
        !told[0].contains("lost"),
        "the server's value is never told: {told:?}"
    );
}

/// A `$ref` that leaves the schema is never followed: neither a file on this machine nor an
/// address on the network is read, and the result is not used.
#[test]
fn a_schema_that_refers_outside_itself_or_is_no_schema_is_unreadable_and_the_result_unused() {
    let passwd = object(json!({"$ref": "file:///etc/passwd"}));
    let remote = object(json!({"$ref": "https://example.com/parcel.json"}));
    let relative = object(json!({"properties": {"p": {"$ref": "parcel.json"}}}));
    let nonsense = object(json!({"type": 7}));
    for schema in [passwd, remote, relative, nonsense] {
        assert!(
            output_problems(&schema, &json!({"p": 1})).is_err(),
            "{schema:?}"
        );
        let refused =
            result_refusal("fix.parcel", Some(&schema), Some(&json!({"p": 1}))).expect("refused");
        assert!(
            refused.starts_with(
                "fix.parcel declares an output schema the desk cannot read, so the desk could not check the answer and did not use it."
            ),
            "{refused}"
        );
    }
}
