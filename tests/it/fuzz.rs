//! Property tests for the parts that read untrusted input: the text-call parser (model
//! output), the recording reader (files a crash may have cut) and the form validator (a
//! person's answers against a server's fields).
//!
//! Each property runs 256 cases by default, a few seconds in all. For a longer session:
//!
//! ```sh
//! PROPTEST_CASES=100000 cargo test --test it fuzz
//! ```
//!
//! A failure is shrunk to a small case, printed, and saved under `tests/it/proptest-regressions/`
//! so the next run tries it first; commit that file with the fix.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use proptest::prelude::*;
use proptest::sample::Index;
use serde_json::{Map, Value};
use support_desk::host::api::validate;
use support_desk::host::api::{Choice, Field, FieldKind, FieldValue, TextFormat};
use support_desk::model::textcalls::{TextCall, parse_text_call, write_text_call};
use support_desk::record::Event;
use support_desk::recording::Recording;

// ---------------------------------------------------------------------------------------
// The text-call parser

/// Pieces that steer text toward the parser's paths: tags, fences, JSON punctuation, keys.
const CALL_PIECES: &[&str] = &[
    "<tool_call>",
    "</tool_call>",
    "<tool_call",
    "```",
    "```json\n",
    "{",
    "}",
    "[",
    "]",
    ":",
    ",",
    "\"",
    "\\",
    "\"name\"",
    "\"tool\"",
    "\"function\"",
    "\"arguments\"",
    "\"parameters\"",
    "\"args\"",
    "\"shop.get_order_status\"",
    "\"{\\\"order_id\\\": 1}\"",
    "null",
    "true",
    "-1.5e3",
    "\n",
    " ",
    "\t",
    "é",
    "€",
    "\u{0}",
    "\u{202e}",
    "words",
];

fn call_like_text() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(CALL_PIECES), 0..40).prop_map(|p| p.concat())
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("JSON numbers are finite", |f| f.is_finite())
            .prop_map(Value::from),
        any::<String>().prop_map(Value::from),
        prop::sample::select(CALL_PIECES).prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
            prop::collection::vec((any::<String>(), inner), 0..4)
                .prop_map(|pairs| Value::Object(pairs.into_iter().collect())),
        ]
    })
}

fn json_object() -> impl Strategy<Value = Map<String, Value>> {
    let key = prop_oneof![any::<String>(), "[a-z_]{1,10}".prop_map(String::from)];
    prop::collection::vec((key, json_value()), 0..5).prop_map(|pairs| pairs.into_iter().collect())
}

fn tool_name() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z]{1,8}\\.[a-z_]{1,16}".prop_map(String::from),
        any::<String>(),
        prop::sample::select(CALL_PIECES).prop_map(String::from),
    ]
}

/// What serde_json itself reads back: the parser is not asked to beat it on floats.
fn as_reread(arguments: &Map<String, Value>) -> Map<String, Value> {
    let text = Value::Object(arguments.clone()).to_string();
    serde_json::from_str(&text).expect("serde_json reads what it wrote")
}

/// Words that cannot start a call of their own.
fn plain_words() -> impl Strategy<Value = String> {
    "[A-Za-z0-9 .,!?'\n]{0,40}".prop_map(String::from)
}

fn join_words(before: &str, after: &str) -> String {
    [before.trim(), after.trim()]
        .into_iter()
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

proptest! {
    #[test]
    fn the_call_parser_never_panics_on_any_text(text in any::<String>()) {
        let _ = parse_text_call(&text);
    }

    #[test]
    fn the_call_parser_never_panics_on_text_made_of_call_pieces(text in call_like_text()) {
        let _ = parse_text_call(&text);
    }

    #[test]
    fn a_written_call_reads_back_as_the_same_call(name in tool_name(), arguments in json_object()) {
        let parsed = parse_text_call(&write_text_call(&name, &arguments));
        if name.trim().is_empty() {
            prop_assert!(matches!(parsed, Some(Err(_))), "a blank name is a problem: {parsed:?}");
        } else {
            let expected = TextCall {
                name: name.trim().to_owned(),
                arguments: as_reread(&arguments),
                words: String::new(),
                dropped: 0,
            };
            prop_assert_eq!(parsed, Some(Ok(expected)));
        }
    }

    #[test]
    fn a_written_call_keeps_the_plain_words_around_it(
        name in "[a-z]{1,8}\\.[a-z_]{1,16}",
        arguments in json_object(),
        before in plain_words(),
        after in plain_words(),
    ) {
        let text = format!("{before}\n{}\n{after}", write_text_call(&name, &arguments));
        let expected = TextCall {
            name,
            arguments: as_reread(&arguments),
            words: join_words(&before, &after),
            dropped: 0,
        };
        prop_assert_eq!(parse_text_call(&text), Some(Ok(expected)));
    }

    #[test]
    fn a_written_call_cut_anywhere_never_panics(
        name in tool_name(),
        arguments in json_object(),
        cut in any::<Index>(),
    ) {
        let text = write_text_call(&name, &arguments);
        let boundaries: Vec<usize> = text.char_indices().map(|(i, _)| i).collect();
        let _ = parse_text_call(&text[..boundaries[cut.index(boundaries.len())]]);
    }
}

// ---------------------------------------------------------------------------------------
// The recording reader

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        "[a-zé€\u{1F600} \n\"\\\\{}]{0,24}".prop_map(String::from),
    ]
}

fn outcome() -> impl Strategy<Value = support_desk::host::api::Outcome> {
    use support_desk::host::api::Outcome;
    prop::sample::select(vec![
        Outcome::Result,
        Outcome::ToolError,
        Outcome::Declined,
        Outcome::UnknownTool,
        Outcome::Failed,
    ])
}

fn event() -> impl Strategy<Value = Event> {
    let ticket = "T-00[0-4][0-9]";
    prop_oneof![
        (ticket, prop::collection::vec(text(), 0..3)).prop_map(|(ticket, tools)| {
            Event::TicketStarted {
                ticket,
                tools,
                attached: vec!["shop://policies/refund".into()],
                request: None,
            }
        }),
        (ticket, 1..5u32, text(), json_object()).prop_map(|(ticket, turn, tool, arguments)| {
            Event::ToolCall {
                ticket,
                turn,
                tool,
                arguments,
            }
        }),
        (ticket, 1..5u32, text(), outcome(), text(), any::<bool>()).prop_map(
            |(ticket, turn, tool, outcome, text, truncated)| Event::Outcome {
                ticket,
                turn,
                tool,
                outcome,
                text,
                truncated,
            }
        ),
        (ticket, text()).prop_map(|(ticket, text)| Event::Draft {
            ticket,
            text,
            findings: vec![],
        }),
        (ticket, 0..5u32, any::<bool>(), prop::option::of(text())).prop_map(
            |(ticket, model_calls, stopped_at_turn_limit, error)| Event::TicketDone {
                ticket,
                model_calls,
                stopped_at_turn_limit,
                error,
            }
        ),
    ]
}

/// The committed recording's opening lines: a real manifest and real model calls.
fn recorded_lines() -> Vec<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("recordings/ticket-runs/events.jsonl");
    let text = std::fs::read_to_string(path).expect("the committed recording");
    text.lines().take(12).map(str::to_owned).collect()
}

/// A valid recording's lines: some of the committed ones, then generated events.
fn recording_lines() -> impl Strategy<Value = Vec<String>> {
    let recorded = recorded_lines();
    let count = recorded.len();
    (0..=count, prop::collection::vec(event(), 0..10)).prop_map(move |(take, events)| {
        let generated = events
            .iter()
            .map(|e| serde_json::to_string(e).expect("events serialize"));
        recorded[..take].iter().cloned().chain(generated).collect()
    })
}

fn read(bytes: &[u8]) -> Recording {
    let mut recording = Recording::default();
    recording
        .add_bytes(Path::new("cut.jsonl"), bytes)
        .expect("a cut recording stays readable");
    recording
}

proptest! {
    #[test]
    fn the_reader_never_panics_on_any_bytes(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        let _ = Recording::default().add_bytes(Path::new("any.jsonl"), &bytes);
        let text = String::from_utf8_lossy(&bytes);
        let _ = Recording::default().add(Path::new("any.jsonl"), &text);
    }

    #[test]
    fn the_reader_never_panics_on_shuffled_recording_lines(
        lines in recording_lines(),
        junk in prop::collection::vec((any::<Index>(), text()), 0..4),
    ) {
        let mut lines = lines;
        for (at, piece) in junk {
            let index = at.index(lines.len() + 1);
            lines.insert(index, piece);
        }
        let _ = Recording::default().add(Path::new("mixed.jsonl"), &lines.join("\n"));
    }

    #[test]
    fn a_recording_cut_at_any_byte_reads_as_its_whole_lines(
        lines in recording_lines(),
        cut in any::<Index>(),
    ) {
        let text: String = lines.iter().map(|line| format!("{line}\n")).collect();
        let cut = cut.index(text.len() + 1);
        let recording = read(&text.as_bytes()[..cut]);

        let whole = text.as_bytes()[..cut].iter().filter(|&&b| b == b'\n').count();
        let start_of_cut_line: usize = lines[..whole].iter().map(|line| line.len() + 1).sum();
        // The cut fell just before a newline: the line is whole, and is read.
        let only_newline_lost =
            whole < lines.len() && cut - start_of_cut_line == lines[whole].len();
        let kept = whole + usize::from(only_newline_lost);
        let expected: Vec<Event> = lines[..kept]
            .iter()
            .map(|line| serde_json::from_str(line).expect("a whole line is an event"))
            .collect();
        let (manifests, events): (Vec<Event>, Vec<Event>) =
            expected.into_iter().partition(|e| matches!(e, Event::Manifest(_)));
        let manifests: Vec<_> = manifests
            .into_iter()
            .filter_map(|e| match e {
                Event::Manifest(manifest) => Some(*manifest),
                _ => None,
            })
            .collect();
        prop_assert_eq!(&recording.manifests, &manifests);
        prop_assert_eq!(&recording.events, &events);
        let line_was_cut = cut > start_of_cut_line && !only_newline_lost;
        prop_assert_eq!(recording.truncated, line_was_cut);
    }
}

// ---------------------------------------------------------------------------------------
// The form validator

fn some_text_format() -> impl Strategy<Value = TextFormat> {
    prop::sample::select(vec![
        TextFormat::Email,
        TextFormat::Uri,
        TextFormat::Date,
        TextFormat::DateTime,
    ])
}

fn text_format() -> impl Strategy<Value = Option<TextFormat>> {
    prop::option::of(some_text_format())
}

fn field_kind() -> impl Strategy<Value = FieldKind> {
    let bound = || prop::option::of(-1000.0..1000.0f64);
    let options = || {
        prop::collection::btree_set("[a-z]{1,5}", 0..5).prop_map(|values| {
            values
                .into_iter()
                .map(|value| Choice {
                    label: value.to_uppercase(),
                    value,
                })
                .collect::<Vec<_>>()
        })
    };
    prop_oneof![
        (
            prop::option::of(0..20u32),
            prop::option::of(0..20u32),
            text_format(),
            prop::option::of(text())
        )
            .prop_map(
                |(min_length, max_length, format, default)| FieldKind::Text {
                    min_length,
                    max_length,
                    format,
                    default,
                }
            ),
        (bound(), bound(), prop::option::of(any::<f64>())).prop_map(
            |(minimum, maximum, default)| FieldKind::Number {
                minimum,
                maximum,
                default
            }
        ),
        (
            prop::option::of(any::<i64>()),
            prop::option::of(any::<i64>()),
            prop::option::of(any::<i64>())
        )
            .prop_map(|(minimum, maximum, default)| FieldKind::Integer {
                minimum,
                maximum,
                default
            }),
        prop::option::of(any::<bool>()).prop_map(|default| FieldKind::Boolean { default }),
        (options(), prop::option::of("[a-z]{1,5}"))
            .prop_map(|(options, default)| { FieldKind::Choice { options, default } }),
        (
            options(),
            prop::option::of(0..6u64),
            prop::option::of(0..6u64),
            prop::collection::vec("[a-z]{1,5}", 0..3)
        )
            .prop_map(
                |(options, min_items, max_items, default)| FieldKind::Choices {
                    options,
                    min_items,
                    max_items,
                    default,
                }
            ),
    ]
}

fn field_value() -> impl Strategy<Value = FieldValue> {
    prop_oneof![
        text().prop_map(FieldValue::Text),
        any::<f64>().prop_map(FieldValue::Number),
        Just(FieldValue::Number(f64::NAN)),
        any::<i64>().prop_map(FieldValue::Integer),
        any::<bool>().prop_map(FieldValue::Boolean),
        "[a-z]{1,5}".prop_map(FieldValue::Choice),
        prop::collection::vec("[a-z]{1,5}", 0..4).prop_map(FieldValue::Choices),
    ]
}

fn field(name: String, required: bool, kind: FieldKind) -> Field {
    Field {
        name,
        title: None,
        description: None,
        required,
        kind,
    }
}

/// A value of `format` that the form must accept.
fn formatted(format: TextFormat) -> BoxedStrategy<String> {
    let date = (1000..10000u32, 1..13u32, 1..32u32).prop_map(|(year, month, day)| {
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
        let days = match month {
            4 | 6 | 9 | 11 => 30,
            2 if leap => 29,
            2 => 28,
            _ => 31,
        };
        format!("{year:04}-{month:02}-{:02}", day.min(days))
    });
    match format {
        TextFormat::Email => "[a-z0-9.+]{1,8}@[a-z]{1,8}(\\.[a-z]{2,4}){1,2}"
            .prop_map(String::from)
            .boxed(),
        TextFormat::Uri => {
            "[a-z][a-z0-9+.-]{0,6}://([a-z]{1,5}@)?[a-z]{1,8}(:[0-9]{1,4})?(/[a-z]{0,5})?"
                .prop_map(String::from)
                .boxed()
        }
        TextFormat::Date => date.boxed(),
        TextFormat::DateTime => (
            date,
            "[Tt]",
            0..24u32,
            0..60u32,
            0..61u32,
            "(\\.[0-9]{1,4})?",
            "([Zz]|[+-]([01][0-9]|2[0-3]):[0-5][0-9])",
        )
            .prop_map(|(date, t, hour, minute, second, fraction, zone)| {
                format!("{date}{t}{hour:02}:{minute:02}:{second:02}{fraction}{zone}")
            })
            .boxed(),
    }
}

/// A field together with a value it must accept: the value comes first, and the field's
/// limits are drawn around it.
fn field_with_valid_value() -> impl Strategy<Value = (FieldKind, FieldValue)> {
    let options = prop::collection::btree_set("[a-z]{1,5}", 1..6).prop_map(|values| {
        values
            .into_iter()
            .map(|value| Choice {
                label: format!("{value}!"),
                value,
            })
            .collect::<Vec<_>>()
    });
    let free = "\\S{1,3}.{0,20}".prop_map(|t| (t, None::<TextFormat>));
    let formatted = some_text_format()
        .prop_flat_map(|format| formatted(format).prop_map(move |t| (t, Some(format))));
    let text = prop_oneof![free, formatted];
    prop_oneof![
        (text, 0..5u32, 0..5u32, any::<(bool, bool)>()).prop_map(
            |((text, format), below, above, (with_min, with_max))| {
                let length = text.chars().count() as u32;
                let kind = FieldKind::Text {
                    min_length: with_min.then(|| length.saturating_sub(below)),
                    max_length: with_max.then_some(length + above),
                    format,
                    default: None,
                };
                (kind, FieldValue::Text(text))
            }
        ),
        (
            -1e9..1e9f64,
            0.0..1e6f64,
            0.0..1e6f64,
            any::<(bool, bool, bool)>()
        )
            .prop_map(|(value, below, above, (with_min, with_max, whole))| {
                let value = if whole { value.trunc() } else { value };
                let kind = FieldKind::Number {
                    minimum: with_min.then_some(value - below),
                    maximum: with_max.then_some(value + above),
                    default: None,
                };
                // A whole number typed into a number field is still a number.
                let given = if whole {
                    FieldValue::Integer(value as i64)
                } else {
                    FieldValue::Number(value)
                };
                (kind, given)
            }),
        (
            -1_000_000_000_000..1_000_000_000_000i64,
            0..1_000_000i64,
            0..1_000_000i64,
            any::<(bool, bool)>()
        )
            .prop_map(|(value, below, above, (with_min, with_max))| {
                let kind = FieldKind::Integer {
                    minimum: with_min.then_some(value - below),
                    maximum: with_max.then_some(value + above),
                    default: None,
                };
                (kind, FieldValue::Integer(value))
            }),
        any::<bool>().prop_map(|b| (FieldKind::Boolean { default: None }, FieldValue::Boolean(b))),
        (options.clone(), any::<Index>()).prop_map(|(options, pick)| {
            let value = options[pick.index(options.len())].value.clone();
            let kind = FieldKind::Choice {
                options,
                default: None,
            };
            (kind, FieldValue::Choice(value))
        }),
        (
            options,
            any::<Vec<bool>>(),
            0..3u64,
            0..3u64,
            any::<(bool, bool)>()
        )
            .prop_map(|(options, picks, below, above, (with_min, with_max))| {
                let picked: Vec<String> = options
                    .iter()
                    .zip(picks.iter().chain(std::iter::repeat(&false)))
                    .filter(|(_, pick)| **pick)
                    .map(|(option, _)| option.value.clone())
                    .collect();
                let count = picked.len() as u64;
                let kind = FieldKind::Choices {
                    options,
                    min_items: with_min.then(|| count.saturating_sub(below)),
                    max_items: with_max.then_some(count + above),
                    default: vec![],
                };
                (kind, FieldValue::Choices(picked))
            }),
    ]
}

proptest! {
    #[test]
    fn the_validator_never_panics_and_names_each_problem_once(
        fields in prop::collection::btree_map("[a-e]", (any::<bool>(), field_kind()), 0..6),
        answer in prop::collection::btree_map("[a-h]", field_value(), 0..8),
    ) {
        let fields: Vec<Field> = fields
            .into_iter()
            .map(|(name, (required, kind))| field(name, required, kind))
            .collect();
        if let Err(problems) = validate(&fields, &answer) {
            let named: Vec<&str> = problems.iter().map(|p| p.field.as_str()).collect();
            let distinct: BTreeSet<&str> = named.iter().copied().collect();
            prop_assert_eq!(named.len(), distinct.len(), "one problem per field: {:?}", problems);
            prop_assert!(problems.iter().all(|p| !p.problem.is_empty()));
            for name in answer.keys().filter(|n| !fields.iter().any(|f| &f.name == *n)) {
                prop_assert!(distinct.contains(name.as_str()), "unknown {} is named", name);
            }
        }
    }

    #[test]
    fn an_answer_made_of_each_fields_own_valid_values_passes(
        fields in prop::collection::btree_map(
            "[a-z]{1,6}",
            (any::<bool>(), any::<bool>(), field_with_valid_value()),
            0..6,
        ),
    ) {
        let mut answer = BTreeMap::new();
        let mut form = Vec::new();
        for (name, (required, answered, (kind, value))) in fields {
            // An optional field may be left out of the answer.
            if required || answered {
                answer.insert(name.clone(), value);
            }
            form.push(field(name, required, kind));
        }
        prop_assert_eq!(validate(&form, &answer), Ok(()), "{:?}\n{:?}", form, answer);
    }
}

// ---------------------------------------------------------------------------------------
// The draft check

/// Pieces that steer a draft toward the check's paths: claims, amounts, negations, quotes,
/// sentence ends, and characters whose lowercase is longer or shorter than they are.
const DRAFT_PIECES: &[&str] = &[
    "refund",
    "Refund",
    "refunded",
    "released",
    "has been",
    "will be",
    "we have",
    "issued",
    "approved",
    "shipped",
    "delivered",
    "cancelled",
    "not",
    "n't",
    "if",
    "?",
    "!",
    ".",
    ",",
    "\"",
    "“",
    "”",
    "'",
    ">",
    "\n",
    " ",
    "EUR",
    "€",
    "279.00",
    "1.234,56",
    "0",
    "-",
    "%",
    "Q-7F3A",
    "O-1587",
    "order 1587",
    "KP805438627",
    "KP99999",
    "cannot find",
    "arrived",
    "dispatched",
    "KG-1034",
    "3",
    "terracotta planters",
    "sauté pan",
    "discount",
    "free of charge",
    "we will contact you",
    "by Friday",
    "tomorrow",
    "a lead has",
    "money is back",
    "je ne peux pas vous aider",
    "Здравствуйте",
    "İ",
    "ẞ",
    "ﬁ",
    "é",
    "e\u{301}",
    "Σ",
    "\u{200b}",
    "\u{1b}[2J",
    "🎉",
];

fn draft_like_text() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(DRAFT_PIECES), 0..48).prop_map(|p| p.concat())
}

/// A call log with a quote, a refund released or held or failed, and an order's status, lines
/// and products whose names and IDs are draft-like text.
fn call_log() -> impl Strategy<Value = Vec<support_desk::host::checks::CallFact>> {
    use support_desk::host::api::Outcome;
    use support_desk::host::checks::CallFact;
    let status = prop::sample::select(vec!["released", "held", "quoted", "shipped", "délivré"]);
    let outcome = prop::sample::select(vec![
        Outcome::Result,
        Outcome::ToolError,
        Outcome::Declined,
        Outcome::Failed,
    ]);
    let fact = (
        prop::sample::select(vec![
            "shop.quote_refund",
            "shop.issue_refund",
            "shop.get_order_status",
            "partner.track_parcel",
        ]),
        outcome,
        status,
        draft_like_text(),
    )
        .prop_map(|(tool, outcome, status, words)| CallFact {
            tool: tool.to_owned(),
            turn: 1,
            outcome,
            arguments: Map::new(),
            result: serde_json::json!({
                "order_id": "O-1587",
                "status": status,
                "amount": "279.00",
                "note": words,
                "lines": [{"sku": "KG-1034", "item": words, "quantity": 2}],
                "orders": [{"order_id": words, "status": "placed", "skus": ["KG-1059"]}],
                "products": [{"sku": words, "name": "Terracotta planter"}],
            })
            .to_string(),
        });
    prop::collection::vec(fact, 0..4)
}

fn check(draft: &str, calls: &[support_desk::host::checks::CallFact], ticket: &str) {
    let tools = [
        "shop.quote_refund".to_owned(),
        "shop.issue_refund".to_owned(),
    ];
    let checked = support_desk::host::checks::check_reply(draft, calls, ticket, &tools, "The team");
    // Whatever it finds, what it returns is the draft with handles stripped, never more.
    assert!(checked.text.len() <= draft.len() + 1, "{checked:?}");
}

proptest! {
    #[test]
    fn the_draft_check_never_panics_on_any_text(
        draft in any::<String>(),
        ticket in any::<String>(),
        calls in call_log(),
    ) {
        check(&draft, &calls, &ticket);
    }

    #[test]
    fn the_draft_check_never_panics_on_text_made_of_claims(
        draft in draft_like_text(),
        ticket in draft_like_text(),
        calls in call_log(),
    ) {
        check(&draft, &calls, &ticket);
    }
}

/// Every reply the committed recordings hold (the current one and those kept under their
/// dates), checked against every call log their runs made and against none: the check reads
/// each without panicking.
#[test]
fn the_draft_check_reads_every_recorded_reply() {
    use support_desk::host::checks::CallFact;
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("recordings");
    let mut events = Vec::new();
    for dir in std::fs::read_dir(&root).expect("recordings/") {
        let dir = dir.expect("an entry").path();
        if dir.is_dir() {
            let recording = Recording::read(&dir).expect("a committed recording");
            events.extend(recording.events);
        }
    }
    let mut replies = Vec::new();
    let mut calls: Vec<CallFact> = Vec::new();
    for event in &events {
        match event {
            Event::ModelCall {
                reply: support_desk::model::chat::Reply::Words { content },
                ..
            } => replies.push(content.clone()),
            Event::Outcome {
                tool,
                outcome,
                text,
                turn,
                ..
            } => calls.push(CallFact {
                tool: tool.clone(),
                turn: *turn,
                outcome: *outcome,
                arguments: Map::new(),
                result: text.clone(),
            }),
            _ => {}
        }
    }
    assert!(replies.len() >= 120, "{} replies", replies.len());
    for reply in &replies {
        check(reply, &calls, reply);
        check(reply, &[], "");
    }
}
