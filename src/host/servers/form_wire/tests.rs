use serde_json::json;

use super::*;
use std::collections::BTreeMap;

use crate::host::api::form_answers::{FieldProblem, defaults, format_problem, validate};
use FieldValue::{Boolean, Integer, Number};
use TextFormat::{Date, DateTime, Email, Uri};

fn params(wire: Value) -> ElicitRequestParams {
    serde_json::from_value(wire).expect("the wire format of an elicitation request")
}

fn form(properties: Value, required: Value) -> ElicitRequestParams {
    let schema = json!({"type": "object", "properties": properties, "required": required});
    params(json!({"mode": "form", "message": "Approve?", "requestedSchema": schema}))
}

fn fields_of(params: &ElicitRequestParams) -> Vec<Field> {
    match form_ask("shop", "in-process", None, params).map(|ask| ask.kind) {
        Ok(FormKind::Fields(fields)) => fields,
        other => panic!("expected fields, got {other:?}"),
    }
}

/// The kind of the one field of a form.
fn kind(property: Value) -> FieldKind {
    let mut fields = fields_of(&form(json!({ "f": property }), json!([])));
    fields.remove(0).kind
}

fn refusal(properties: Value, required: Value) -> Result<FormAsk, FormError> {
    form_ask("shop", "in-process", None, &form(properties, required))
}

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

fn text_kind(min: Option<u32>, max: Option<u32>, format: Option<TextFormat>) -> FieldKind {
    let (min_length, max_length, default) = (min, max, None);
    FieldKind::Text {
        min_length,
        max_length,
        format,
        default,
    }
}

fn number(minimum: Option<f64>, maximum: Option<f64>, default: Option<f64>) -> FieldKind {
    FieldKind::Number {
        minimum,
        maximum,
        default,
    }
}

fn integer(minimum: Option<i64>, maximum: Option<i64>, default: Option<i64>) -> FieldKind {
    FieldKind::Integer {
        minimum,
        maximum,
        default,
    }
}

fn one_of(pairs: &[(&str, &str)], default: Option<&str>) -> FieldKind {
    let (options, default) = (choices(pairs), default.map(str::to_owned));
    FieldKind::Choice { options, default }
}

fn many_of(pairs: &[(&str, &str)], min: Option<u64>, max: Option<u64>) -> FieldKind {
    let (options, min_items, max_items, default) = (choices(pairs), min, max, vec![]);
    FieldKind::Choices {
        options,
        min_items,
        max_items,
        default,
    }
}

fn choices(pairs: &[(&str, &str)]) -> Vec<Choice> {
    pairs
        .iter()
        .map(|(value, label)| choice(value, label))
        .collect()
}

fn strings(values: &[&str]) -> Vec<String> {
    values.iter().map(|value| value.to_string()).collect()
}

fn answer<const N: usize>(values: [(&str, FieldValue); N]) -> BTreeMap<String, FieldValue> {
    let named = values.map(|(name, value)| (name.to_owned(), value));
    BTreeMap::from(named)
}

fn text(value: &str) -> FieldValue {
    FieldValue::Text(value.to_owned())
}

fn pick(value: &str) -> FieldValue {
    FieldValue::Choice(value.to_owned())
}

fn picks(values: &[&str]) -> FieldValue {
    FieldValue::Choices(strings(values))
}

/// Validates one value against a required field `f` of this kind.
fn check(kind: &FieldKind, value: FieldValue) -> Result<(), Vec<FieldProblem>> {
    validate(&[field("f", true, kind.clone())], &answer([("f", value)]))
}

#[track_caller]
fn refuses(kind: &FieldKind, value: FieldValue, problem: &str) {
    assert_eq!(
        check(kind, value),
        Err(vec![FieldProblem::new("f", problem)])
    );
}

#[track_caller]
fn formats(format: TextFormat, good: &str, bad: &str) {
    for value in good.split('|') {
        assert_eq!(
            format_problem(format, value),
            None,
            "{value} is a good {format:?}"
        );
    }
    for value in bad.split('|') {
        assert!(
            format_problem(format, value).is_some(),
            "{value} is no {format:?}"
        );
    }
}

#[test]
fn a_form_request_says_who_asks_and_keeps_the_message_as_given() {
    let schema = json!({"type": "object", "required": ["note"], "properties": {
        "note": {"type": "string", "title": "Note", "description": "For the lead"}}});
    let message = "Approve refund?\u{1b}[2J";
    let params = params(json!({"mode": "form", "message": message, "requestedSchema": schema}));
    let mut note = field("note", true, text_kind(None, None, None));
    (note.title, note.description) = (Some("Note".into()), Some("For the lead".into()));
    let expected = FormAsk {
        ticket: Some("T-0009".into()),
        server: "shop".into(),
        origin: "shop-server --stdio".into(),
        message: message.into(),
        kind: FormKind::Fields(vec![note]),
        asked_by: None,
    };
    let ask = form_ask("shop", "shop-server --stdio", Some("T-0009"), &params);
    assert_eq!(ask, Ok(expected));
}

#[test]
fn a_url_request_keeps_the_whole_url_untouched() {
    let url = "https://partner.example/consent?t=T-0009&next=%2Fdone#top";
    let params = params(json!({"mode": "url", "message": "Sign in", "url": url}));
    let expected = FormAsk {
        ticket: None,
        server: "partner".into(),
        origin: "https://partner.example/mcp".into(),
        message: "Sign in".into(),
        kind: FormKind::Url { url: url.into() },
        asked_by: None,
    };
    let ask = form_ask("partner", "https://partner.example/mcp", None, &params);
    assert_eq!(ask, Ok(expected));
}

#[test]
fn a_form_request_without_a_mode_is_read_as_a_form() {
    let schema = json!({"type": "object", "properties": {"ok": {"type": "boolean"}}});
    let params = params(json!({"message": "Go on?", "requestedSchema": schema}));
    let ok = field("ok", false, FieldKind::Boolean { default: None });
    assert_eq!(fields_of(&params), [ok]);
}

#[test]
fn a_string_field_keeps_its_lengths_format_and_default() {
    let property = json!({"type": "string", "minLength": 3, "maxLength": 80,
        "format": "email", "default": "lead@shop.example"});
    let mut expected = text_kind(Some(3), Some(80), Some(Email));
    if let FieldKind::Text { default, .. } = &mut expected {
        *default = Some("lead@shop.example".into());
    }
    assert_eq!(kind(property), expected);
    for (wire, format) in [("uri", Uri), ("date", Date), ("date-time", DateTime)] {
        let expected = text_kind(None, None, Some(format));
        assert_eq!(kind(json!({"type": "string", "format": wire})), expected);
    }
}

#[test]
fn number_integer_and_boolean_fields_keep_their_bounds_and_defaults() {
    let property = json!({"type": "number", "minimum": 0.5, "maximum": 99.5, "default": 10.25});
    assert_eq!(kind(property), number(Some(0.5), Some(99.5), Some(10.25)));
    let property = json!({"type": "integer", "minimum": 1, "maximum": 500, "default": 3});
    assert_eq!(kind(property), integer(Some(1), Some(500), Some(3)));
    let property = json!({"type": "boolean", "default": true});
    assert_eq!(
        kind(property),
        FieldKind::Boolean {
            default: Some(true)
        }
    );
}

#[test]
fn an_untitled_enum_becomes_a_choice_labelled_by_its_values() {
    let property = json!({"type": "string", "enum": ["refund", "swap"], "default": "swap"});
    let expected = one_of(&[("refund", "refund"), ("swap", "swap")], Some("swap"));
    assert_eq!(kind(property), expected);
}

#[test]
fn a_titled_enum_becomes_a_choice_with_labels() {
    let property = json!({"type": "string", "oneOf": [
        {"const": "dmg", "title": "Arrived damaged"}, {"const": "late", "title": "Late"}]});
    let expected = one_of(&[("dmg", "Arrived damaged"), ("late", "Late")], None);
    assert_eq!(kind(property), expected);
}

#[test]
fn a_legacy_enum_pairs_values_with_enum_names() {
    let property = json!({"type": "string", "enum": ["s", "m"], "enumNames": ["Small", "Mid"]});
    assert_eq!(
        kind(property),
        one_of(&[("s", "Small"), ("m", "Mid")], None)
    );
}

#[test]
fn a_default_that_is_not_an_option_is_dropped() {
    let property = json!({"type": "string", "enum": ["a", "b"], "default": "z"});
    assert_eq!(kind(property), one_of(&[("a", "a"), ("b", "b")], None));
}

#[test]
fn a_multi_select_keeps_its_item_counts_and_default() {
    let property = json!({"type": "array", "minItems": 1, "maxItems": 2, "default": ["a"],
        "items": {"type": "string", "enum": ["a", "b"]}});
    let mut expected = many_of(&[("a", "a"), ("b", "b")], Some(1), Some(2));
    if let FieldKind::Choices { default, .. } = &mut expected {
        *default = strings(&["a"]);
    }
    assert_eq!(kind(property), expected);
    let property = json!({"type": "array", "items": {"anyOf": [
        {"const": "eu", "title": "Europe"}, {"const": "us", "title": "United States"}]}});
    let expected = many_of(&[("eu", "Europe"), ("us", "United States")], None, None);
    assert_eq!(kind(property), expected);
}

#[test]
fn a_schema_the_desk_cannot_show_honestly_is_refused_naming_the_field() {
    let size = json!({"type": "string", "enum": ["s", "m"], "enumNames": ["Small"]});
    let refused = refusal(json!({ "size": size }), json!([]));
    assert_eq!(refused, Err(FormError::LabelMismatch("size".into())));
    let refused = refusal(json!({"a": {"type": "string"}}), json!(["a", "ghost"]));
    assert_eq!(refused, Err(FormError::UnknownRequired("ghost".into())));
}

#[test]
fn fields_keep_the_order_the_server_sent_and_the_required_flags() {
    let properties = json!({"zip": {"type": "string"}, "amount": {"type": "integer"},
        "note": {"type": "string"}});
    let fields = fields_of(&form(properties, json!(["zip", "note"])));
    let flags: Vec<_> = fields
        .iter()
        .map(|f| (f.name.as_str(), f.required))
        .collect();
    assert_eq!(flags, [("zip", true), ("amount", false), ("note", true)]);
}

#[test]
fn property_order_wins_and_fields_it_leaves_out_follow_by_name() {
    let string = json!({"type": "string"});
    let mut params = form(json!({"c": string, "a": string, "b": string}), json!([]));
    if let ElicitRequestParams::FormElicitationParams {
        requested_schema, ..
    } = &mut params
    {
        requested_schema.property_order = Some(strings(&["b", "gone", "b"]));
    }
    let names: Vec<String> = fields_of(&params).into_iter().map(|f| f.name).collect();
    assert_eq!(names, ["b", "a", "c"]);
}

#[test]
fn defaults_give_each_fields_starting_value_and_leave_out_the_rest() {
    let xy = json!({"type": "string", "enum": ["x", "y"]});
    let properties = json!({"note": {"type": "string", "default": "ok"},
        "rate": {"type": "number", "default": 1.5}, "count": {"type": "integer", "default": 2},
        "go": {"type": "boolean", "default": false}, "blank": {"type": "string"},
        "one": {"type": "string", "enum": ["x", "y"], "default": "x"},
        "many": {"type": "array", "items": xy, "default": ["y"]},
        "none": {"type": "array", "items": xy}});
    let expected = answer([
        ("note", text("ok")),
        ("rate", Number(1.5)),
        ("count", Integer(2)),
        ("go", Boolean(false)),
        ("one", pick("x")),
        ("many", picks(&["y"])),
    ]);
    assert_eq!(defaults(&fields_of(&form(properties, json!([])))), expected);
}

#[test]
fn a_complete_answer_passes_and_optional_fields_may_be_left_out() {
    let properties = json!({"lead": {"type": "string", "format": "email"},
        "approve": {"type": "boolean"}, "amount": {"type": "number", "maximum": 500},
        "reason": {"type": "string", "enum": ["damaged", "late"]}, "note": {"type": "string"}});
    let fields = fields_of(&form(properties, json!(["lead", "approve"])));
    let given = answer([
        ("lead", text("dana@shop.example")),
        ("approve", Boolean(true)),
        ("amount", Integer(150)),
        ("reason", pick("late")),
    ]);
    assert_eq!(validate(&fields, &given), Ok(()));
}

#[test]
fn problems_come_one_per_field_in_field_order_then_unknown_names() {
    let properties = json!({"lead": {"type": "string", "minLength": 2, "format": "email"},
        "approve": {"type": "boolean"}, "note": {"type": "string"}, "by": {"type": "string"}});
    let fields = fields_of(&form(properties, json!(["lead", "approve", "by"])));
    let given = answer([("lead", text("D")), ("by", text("  ")), ("x", text("1"))]);
    let expected = vec![
        FieldProblem::new("lead", "must be at least 2 characters"),
        FieldProblem::new("approve", "is required"),
        FieldProblem::new("by", "is required"),
        FieldProblem::new("x", "is not a field of this form"),
    ];
    assert_eq!(validate(&fields, &given), Err(expected));
}

#[test]
fn a_value_of_the_wrong_kind_is_refused() {
    let ab = [("a", "Apple"), ("b", "Banana")];
    refuses(&text_kind(None, None, None), Boolean(true), "must be text");
    refuses(&number(None, None, None), text("5"), "must be a number");
    refuses(
        &integer(None, None, None),
        Number(1.5),
        "must be a whole number",
    );
    refuses(
        &FieldKind::Boolean { default: None },
        text("yes"),
        "must be yes or no",
    );
    refuses(
        &one_of(&ab, None),
        text("a"),
        "must be one of: Apple, Banana",
    );
    refuses(
        &many_of(&ab, None, None),
        pick("a"),
        "must be a list of choices",
    );
}

#[test]
fn text_length_is_counted_in_characters() {
    let two_to_four = text_kind(Some(2), Some(4), None);
    assert_eq!(check(&two_to_four, text("ééé")), Ok(()));
    refuses(&two_to_four, text("é"), "must be at least 2 characters");
    refuses(&two_to_four, text("ééééé"), "must be at most 4 characters");
    refuses(
        &text_kind(None, Some(1), None),
        text("ab"),
        "must be at most 1 character",
    );
}

#[test]
fn each_text_format_accepts_good_values_and_refuses_bad_ones() {
    let good = "lead@shop.example|a.b+c@x.co.uk";
    let bad = "lead|@shop.example|lead@shop|lead@.example|a@b@c.io|le ad@x.io";
    formats(Email, good, bad);
    let good = "https://partner.example/a?b#c|http://me@host:8080|ftp://h";
    let bad = "partner.example|https://|://host|1http://h|https://a b.io|http://:80";
    formats(Uri, good, bad);
    let good = "2026-03-31|2024-02-29|2000-02-29";
    let bad = "2023-02-29|1900-02-29|2026-04-31|2026-13-01|2026-00-10|2026-3-31|2026/03/31";
    formats(
        Date,
        good,
        &format!("{bad}|2026-03-31x|26-03-31|２026-03-31"),
    );
    let good = "2026-03-31T14:30:00Z|2026-12-31t23:59:60.125-05:30";
    let bad = "2026-03-31|2026-03-31 14:30:00Z|2026-03-31T24:00:00Z|2026-03-31T14:30:00";
    let worse = "2026-03-31T14:30:00.Z|2026-03-31T14:30Z|2026-03-31T14:30:00+2:00";
    formats(
        DateTime,
        good,
        &format!("{bad}|{worse}|2026-02-30T10:00:00Z|2026-03-31T1:30:00.xZ"),
    );
    let email = text_kind(None, None, Some(Email));
    refuses(
        &email,
        text("lead"),
        "must be an email address like name@example.com",
    );
}

#[test]
fn number_and_integer_bounds_are_inclusive() {
    let number = number(Some(0.5), Some(10.0), None);
    assert_eq!(check(&number, Number(0.5)), Ok(()));
    assert_eq!(check(&number, Number(10.0)), Ok(()));
    refuses(&number, Number(0.25), "must be at least 0.5");
    refuses(&number, Integer(11), "must be at most 10");
    refuses(&number, Number(f64::NAN), "must be a number");
    let integer = integer(Some(1), Some(500), None);
    assert_eq!(check(&integer, Integer(500)), Ok(()));
    refuses(&integer, Integer(0), "must be at least 1");
    refuses(&integer, Integer(501), "must be at most 500");
}

#[test]
fn a_choice_outside_the_options_names_the_options() {
    let reason = one_of(&[("dmg", "Arrived damaged"), ("late", "Late")], None);
    assert_eq!(check(&reason, pick("late")), Ok(()));
    refuses(
        &reason,
        pick("lost"),
        "must be one of: Arrived damaged, Late",
    );
}

#[test]
fn multi_choices_are_checked_for_options_repeats_and_counts() {
    let abc = many_of(&[("a", "A"), ("b", "B"), ("c", "C")], Some(1), Some(2));
    assert_eq!(check(&abc, picks(&["a", "c"])), Ok(()));
    refuses(&abc, picks(&["a", "z"]), "must each be one of: A, B, C");
    refuses(
        &abc,
        picks(&["a", "a"]),
        "must not pick the same option twice",
    );
    refuses(&abc, picks(&[]), "must have at least 1 choice");
    refuses(&abc, picks(&["a", "b", "c"]), "must have at most 2 choices");
}

#[test]
fn an_accepted_answer_becomes_json_content_of_each_kind() {
    let accept = FormAnswer::Accept(answer([
        ("note", text("ok")),
        ("rate", Number(2.5)),
        ("count", Integer(3)),
        ("go", Boolean(true)),
        ("why", pick("late")),
        ("to", picks(&["eu", "us"])),
    ]));
    let content = json!({"note": "ok", "rate": 2.5, "count": 3, "go": true, "why": "late",
        "to": ["eu", "us"]});
    let expected = ElicitResult::new(ElicitationAction::Accept).with_content(content);
    assert_eq!(elicit_result(&accept), expected);
}

#[test]
fn decline_and_cancel_carry_no_content() {
    let decline = serde_json::to_value(elicit_result(&FormAnswer::Decline));
    assert_eq!(decline.expect("serializable"), json!({"action": "decline"}));
    let cancel = serde_json::to_value(elicit_result(&FormAnswer::Cancel));
    assert_eq!(cancel.expect("serializable"), json!({"action": "cancel"}));
}
