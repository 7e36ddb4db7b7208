//! Tool calls written in the reply's text, for models (or servers) without native tool calls.
//!
//! Three shapes are read: a `<tool_call>…</tool_call>` block, a fenced code block holding
//! `{"name": …, "arguments": …}`, and a bare JSON object that is the whole reply. The input
//! is model output, so nothing here may panic; an attempt that cannot be read comes back as
//! a problem in plain words, for the host to hand to the model.

use serde_json::{Map, Value};

const OPEN_TAG: &str = "<tool_call>";
const CLOSE_TAG: &str = "</tool_call>";
const FENCE: &str = "```";
const NAME_KEYS: [&str; 3] = ["name", "tool", "function"];
const ARGUMENT_KEYS: [&str; 3] = ["arguments", "parameters", "args"];
const SHAPE_HINT: &str = "write exactly one JSON object like \
    {\"name\": \"prefix.tool\", \"arguments\": {\"key\": \"value\"}}";

/// One call read from text, with the words that came around it.
#[derive(Debug, Clone, PartialEq)]
pub struct TextCall {
    pub name: String,
    pub arguments: Map<String, Value>,
    pub words: String,
    /// How many further calls the text held after this one (never run).
    pub dropped: usize,
}

/// Reads the first tool call written in `text`. `None`: no attempt at a call (plain words).
/// `Some(Err(problem))`: an attempt that could not be read; `problem` says what to fix.
pub fn parse_text_call(text: &str) -> Option<Result<TextCall, String>> {
    if let Some(start) = text.find(OPEN_TAG) {
        return Some(tagged_call(text, start));
    }
    if let Some(found) = fenced_call(text) {
        return Some(found);
    }
    bare_call(text)
}

/// How a call is written back into a text transcript.
pub fn write_text_call(name: &str, arguments: &Map<String, Value>) -> String {
    let name = Value::String(name.to_owned());
    let arguments = Value::Object(arguments.clone());
    format!("{OPEN_TAG}\n{{\"name\": {name}, \"arguments\": {arguments}}}\n{CLOSE_TAG}")
}

/// `<tool_call>` at `start`: always an attempt. The closing tag may be missing when the
/// text ends there (the server stopped at it).
fn tagged_call(text: &str, start: usize) -> Result<TextCall, String> {
    let before = &text[..start];
    let inside = text[start + OPEN_TAG.len()..].trim_start();
    let inside = strip_fence_opener(inside).unwrap_or(inside);
    if inside.trim().is_empty() || inside.trim_start().starts_with(CLOSE_TAG) {
        return Err(format!(
            "the <tool_call> block is empty; {SHAPE_HINT} between <tool_call> and </tool_call>"
        ));
    }
    let (value, rest) = first_json_value(inside).map_err(|error| {
        format!("the JSON in the <tool_call> block could not be read ({error}); {SHAPE_HINT}")
    })?;
    let rest = rest.trim_start();
    let rest = rest.strip_prefix(FENCE).unwrap_or(rest).trim_start();
    let after = match rest.strip_prefix(CLOSE_TAG) {
        Some(after) => after,
        None if until_next_call(rest).contains(CLOSE_TAG) => {
            return Err(format!(
                "there is text after the JSON object inside the <tool_call> block; {SHAPE_HINT} \
                 and nothing else before </tool_call>"
            ));
        }
        None => rest,
    };
    let (name, arguments) = call_fields(&value)?;
    Ok(TextCall {
        name,
        arguments,
        words: join_words(before, until_next_call(after)),
        dropped: after.matches(OPEN_TAG).count(),
    })
}

/// The first fenced block that is a call attempt; blocks holding other JSON are skipped.
fn fenced_call(text: &str) -> Option<Result<TextCall, String>> {
    let mut from = 0;
    while let Some(offset) = text[from..].find(FENCE) {
        let open = from + offset;
        let body_start = match text[open..].find('\n') {
            Some(newline) => open + newline + 1,
            None => text.len(),
        };
        let (body_end, after) = match text[body_start..].find(FENCE) {
            Some(close) => (body_start + close, body_start + close + FENCE.len()),
            None => (text.len(), text.len()),
        };
        let body = text[body_start..body_end].trim();
        if body.starts_with('{') {
            let read = match first_json_value(body) {
                Ok((value, rest)) if rest.trim().is_empty() => Ok(value),
                Ok(_) => Err("there is more than one JSON value in the block".to_owned()),
                Err(error) => Err(error.to_string()),
            };
            let found = match read {
                Ok(value) if looks_like_call(&value) => Some(call_fields(&value)),
                Ok(_) => None,
                Err(error) if mentions_a_name(body) => Some(Err(format!(
                    "the JSON in the fenced block could not be read ({error}); {SHAPE_HINT}"
                ))),
                Err(_) => None,
            };
            if let Some(found) = found {
                return Some(found.map(|(name, arguments)| TextCall {
                    name,
                    arguments,
                    words: join_words(&text[..open], &text[after..]),
                    dropped: 0,
                }));
            }
        }
        if after >= text.len() {
            return None;
        }
        from = after;
    }
    None
}

/// A reply that is a JSON object and nothing else (words after a call are kept as words).
fn bare_call(text: &str) -> Option<Result<TextCall, String>> {
    let trimmed = text.trim();
    if !trimmed.starts_with('{') {
        return None;
    }
    match first_json_value(trimmed) {
        Ok((value, rest)) if looks_like_call(&value) => {
            Some(call_fields(&value).map(|(name, arguments)| TextCall {
                name,
                arguments,
                words: rest.trim().to_owned(),
                dropped: 0,
            }))
        }
        Ok(_) => None,
        Err(error) if mentions_a_name(trimmed) => Some(Err(format!(
            "the reply looks like a tool call but its JSON could not be read ({error}); \
             {SHAPE_HINT}"
        ))),
        Err(_) => None,
    }
}

/// The first JSON value at the start of `text` and the text after it.
fn first_json_value(text: &str) -> Result<(Value, &str), serde_json::Error> {
    let mut values = serde_json::Deserializer::from_str(text).into_iter::<Value>();
    match values.next() {
        Some(Ok(value)) => {
            let end = values.byte_offset();
            Ok((value, text.get(end..).unwrap_or("")))
        }
        Some(Err(error)) => Err(error),
        // Reading nothing fails, which is the error wanted for an empty block.
        None => serde_json::from_str::<Value>("").map(|value| (value, "")),
    }
}

/// An object with a name key, and either an arguments key or nothing else.
fn looks_like_call(value: &Value) -> bool {
    let Some(object) = value.as_object() else {
        return false;
    };
    let Some(name_key) = NAME_KEYS.iter().find(|key| object.contains_key(**key)) else {
        return false;
    };
    if let Some(Value::Object(inner)) = object.get(*name_key) {
        return looks_like_call(&Value::Object(inner.clone()));
    }
    object.len() == 1 || ARGUMENT_KEYS.iter().any(|key| object.contains_key(*key))
}

fn mentions_a_name(text: &str) -> bool {
    NAME_KEYS
        .iter()
        .any(|key| text.contains(&format!("\"{key}\"")))
}

/// Name and arguments of a call object; OpenAI's `{"function": {"name", "arguments"}}` too.
fn call_fields(value: &Value) -> Result<(String, Map<String, Value>), String> {
    let Some(object) = value.as_object() else {
        return Err(format!(
            "the tool call is {} instead of a JSON object; {SHAPE_HINT}",
            kind_of(value)
        ));
    };
    if let Some(Value::Object(inner)) = object.get("function") {
        return call_fields(&Value::Object(inner.clone()));
    }
    let name = match NAME_KEYS.iter().find_map(|key| object.get(*key)) {
        Some(Value::String(name)) if !name.trim().is_empty() => name.trim().to_owned(),
        Some(Value::String(_)) => {
            return Err(format!("the tool call's \"name\" is empty; {SHAPE_HINT}"));
        }
        Some(other) => {
            return Err(format!(
                "the tool call's \"name\" is {} instead of a string; {SHAPE_HINT}",
                kind_of(other)
            ));
        }
        None => return Err(format!("the tool call has no \"name\"; {SHAPE_HINT}")),
    };
    let arguments = match ARGUMENT_KEYS.iter().find_map(|key| object.get(*key)) {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(arguments)) => arguments.clone(),
        Some(Value::String(text)) => match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(arguments)) => arguments,
            Ok(other) => {
                return Err(format!(
                    "the arguments of {name} are a string holding {} instead of a JSON \
                     object; give \"arguments\" as an object like {{\"key\": \"value\"}}",
                    kind_of(&other)
                ));
            }
            Err(error) => {
                return Err(format!(
                    "the arguments of {name} are a string that is not JSON ({error}); give \
                     \"arguments\" as an object like {{\"key\": \"value\"}}"
                ));
            }
        },
        Some(other) => {
            return Err(format!(
                "the arguments of {name} are {} instead of a JSON object; give \"arguments\" \
                 as an object like {{\"key\": \"value\"}}",
                kind_of(other)
            ));
        }
    };
    Ok((name, arguments))
}

/// How a JSON value's kind is named to a model ("a number", "a list").
pub fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// Fence opener at the start of `text` (```json, ``` …) and the text after its line.
fn strip_fence_opener(text: &str) -> Option<&str> {
    let rest = text.strip_prefix(FENCE)?;
    Some(match rest.find('\n') {
        Some(newline) => &rest[newline + 1..],
        None => "",
    })
}

/// Only the first call is taken; later calls are dropped rather than kept as words.
fn until_next_call(text: &str) -> &str {
    match text.find(OPEN_TAG) {
        Some(next) => &text[..next],
        None => text,
    }
}

fn join_words(before: &str, after: &str) -> String {
    let (before, after) = (before.trim(), after.trim());
    match (before.is_empty(), after.is_empty()) {
        (true, _) => after.to_owned(),
        (false, true) => before.to_owned(),
        (false, false) => format!("{before}\n{after}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn call(name: &str, arguments: Value, words: &str) -> Option<Result<TextCall, String>> {
        let Value::Object(arguments) = arguments else {
            panic!("test arguments are an object");
        };
        Some(Ok(TextCall {
            name: name.into(),
            arguments,
            words: words.into(),
            dropped: 0,
        }))
    }

    fn problem(text: &str) -> String {
        match parse_text_call(text) {
            Some(Err(problem)) => problem,
            other => panic!("expected a problem for {text:?}, got {other:?}"),
        }
    }

    #[test]
    fn plain_words_are_no_call() {
        assert_eq!(parse_text_call("Your order ships tomorrow."), None);
        assert_eq!(parse_text_call(""), None);
        assert_eq!(parse_text_call("Use {braces} freely."), None);
        assert_eq!(parse_text_call("```rust\nfn main() {}\n```"), None);
        assert_eq!(parse_text_call("{\"order\": \"O-1\"}"), None);
        assert_eq!(parse_text_call("```json\n{\"total\": 3}\n```"), None);
    }

    #[test]
    fn a_tagged_call_is_read_with_the_words_around_it() {
        let text = "Let me check.\n<tool_call>\n{\"name\": \"shop.get_order_status\", \"arguments\": {\"order_id\": \"O-7144\"}}\n</tool_call>\nOne moment.";
        assert_eq!(
            parse_text_call(text),
            call(
                "shop.get_order_status",
                json!({"order_id": "O-7144"}),
                "Let me check.\nOne moment."
            )
        );
    }

    #[test]
    fn a_tagged_call_without_its_closing_tag_is_read() {
        let text =
            "<tool_call>\n{\"name\": \"shop.quote_refund\", \"arguments\": {\"cents\": 150}}";
        assert_eq!(
            parse_text_call(text),
            call("shop.quote_refund", json!({"cents": 150}), "")
        );
    }

    #[test]
    fn a_tagged_call_may_hold_a_fenced_block() {
        let text =
            "<tool_call>\n```json\n{\"name\": \"a.b\", \"arguments\": {}}\n```\n</tool_call>";
        assert_eq!(parse_text_call(text), call("a.b", json!({}), ""));
    }

    #[test]
    fn braces_and_tags_inside_strings_do_not_end_the_call() {
        let text = "<tool_call>{\"name\": \"a.note\", \"arguments\": {\"text\": \"}} </tool_call> {\"}}</tool_call>";
        assert_eq!(
            parse_text_call(text),
            call("a.note", json!({"text": "}} </tool_call> {"}), "")
        );
    }

    #[test]
    fn only_the_first_of_several_calls_is_taken() {
        let text = "<tool_call>{\"name\": \"a.one\", \"arguments\": {}}</tool_call>\nthen\n<tool_call>{\"name\": \"a.two\", \"arguments\": {}}</tool_call>";
        let mut first = call("a.one", json!({}), "then");
        if let Some(Ok(c)) = &mut first {
            c.dropped = 1;
        }
        assert_eq!(parse_text_call(text), first);
    }

    #[test]
    fn a_fenced_block_with_other_keys_is_read() {
        let text = "Checking now:\n```json\n{\"tool\": \"shop.get_order_status\", \"parameters\": {\"order_id\": \"O-1\"}}\n```";
        assert_eq!(
            parse_text_call(text),
            call(
                "shop.get_order_status",
                json!({"order_id": "O-1"}),
                "Checking now:"
            )
        );
        let text = "```\n{\"function\": \"a.b\", \"args\": {\"x\": [1, {\"y\": null}]}}\n```\ndone";
        assert_eq!(
            parse_text_call(text),
            call("a.b", json!({"x": [1, {"y": null}]}), "done")
        );
    }

    #[test]
    fn a_fenced_block_of_other_json_is_skipped_for_a_later_call() {
        let text =
            "```json\n{\"total\": 3}\n```\n```json\n{\"name\": \"a.b\", \"arguments\": {}}\n```";
        assert_eq!(
            parse_text_call(text),
            call("a.b", json!({}), "```json\n{\"total\": 3}\n```")
        );
    }

    #[test]
    fn arguments_given_as_a_json_string_are_read() {
        let text = r#"{"name": "a.b", "arguments": "{\"order_id\": \"O-9\"}"}"#;
        assert_eq!(
            parse_text_call(text),
            call("a.b", json!({"order_id": "O-9"}), "")
        );
    }

    #[test]
    fn a_bare_object_is_read_and_the_openai_shape_too() {
        let text = r#"  {"name": "a.b", "arguments": {"q": "ü 日本 🚚"}}  "#;
        assert_eq!(
            parse_text_call(text),
            call("a.b", json!({"q": "ü 日本 🚚"}), "")
        );
        let text = r#"{"type": "function", "function": {"name": "a.b", "arguments": "{}"}}"#;
        assert_eq!(parse_text_call(text), call("a.b", json!({}), ""));
        assert_eq!(
            parse_text_call(r#"{"name": "a.b"}"#),
            call("a.b", json!({}), "")
        );
    }

    #[test]
    fn broken_json_in_a_tag_says_what_was_wrong() {
        let broken = problem("<tool_call>\n{\"name\": \"a.b\", \"arguments\": {\"x\": 1}\n");
        assert!(broken.starts_with("the JSON in the <tool_call> block could not be read (EOF"));
        assert!(broken.contains("{\"name\": \"prefix.tool\""));
        assert!(problem("<tool_call></tool_call>").contains("empty"));
        assert!(problem("<tool_call>{\"name\": \"a\"} junk </tool_call>").contains("text after"));
        let two = "<tool_call>{\"name\": \"a.one\"}\n<tool_call>{\"name\": \"a.two\"}</tool_call>";
        let mut first = call("a.one", json!({}), "");
        if let Some(Ok(c)) = &mut first {
            c.dropped = 1;
        }
        assert_eq!(parse_text_call(two), first);
    }

    #[test]
    fn a_call_whose_arguments_are_not_an_object_is_a_problem() {
        assert_eq!(
            problem("<tool_call>{\"name\": \"a.b\", \"arguments\": [1]}</tool_call>"),
            "the arguments of a.b are a list instead of a JSON object; give \"arguments\" as an object like {\"key\": \"value\"}"
        );
        assert!(problem(r#"{"name": "a.b", "arguments": "nope"}"#).contains("not JSON"));
        assert!(problem(r#"{"name": "a.b", "arguments": "[2]"}"#).contains("holding a list"));
        assert!(problem("<tool_call>{\"arguments\": {}}</tool_call>").contains("no \"name\""));
        assert!(problem("<tool_call>{\"name\": 7}</tool_call>").contains("a number instead"));
        assert!(problem("<tool_call>[1]</tool_call>").contains("a list instead"));
    }

    #[test]
    fn a_broken_fenced_or_bare_call_is_a_problem_only_when_it_names_a_tool() {
        assert!(problem("```json\n{\"name\": \"a.b\", \"arguments\": {\n```").contains("fenced"));
        assert!(problem("{\"name\": \"a.b\", \"arguments\": {").contains("looks like a tool call"));
        assert_eq!(parse_text_call("```json\n{\"total\": \n```"), None);
        assert_eq!(parse_text_call("{ not json"), None);
    }

    #[test]
    fn odd_input_never_panics() {
        let inputs = [
            "<tool_call>",
            "<tool_call>```",
            "<tool_call>```json",
            "```",
            "``````",
            "```json\n{",
            "{",
            "}",
            "<tool_call>\u{1F69A}\"",
            "ü<tool_call>{\"name\":\"ü\",\"arguments\":{}}</tool_call>日本",
            "</tool_call><tool_call>",
        ];
        for input in inputs {
            let _ = parse_text_call(input);
            for end in 0..=input.len() {
                if let Some(prefix) = input.get(..end) {
                    let _ = parse_text_call(prefix);
                }
            }
        }
    }

    #[test]
    fn a_written_call_reads_back_as_the_same_call() {
        let Value::Object(arguments) = json!({"order_id": "O-1", "note": "a \"quoted\" }"}) else {
            panic!("object");
        };
        let text = write_text_call("shop.get_order_status", &arguments);
        assert_eq!(
            text,
            "<tool_call>\n{\"name\": \"shop.get_order_status\", \"arguments\": {\"order_id\":\"O-1\",\"note\":\"a \\\"quoted\\\" }\"}}\n</tool_call>"
        );
        assert_eq!(
            parse_text_call(&text),
            Some(Ok(TextCall {
                name: "shop.get_order_status".into(),
                arguments,
                words: String::new(),
                dropped: 0,
            }))
        );
    }
}
