//! What the suite passes in `MCP_CONFORMANCE_CONTEXT`: the tool calls some scenarios want
//! made, with their exact arguments, and for the OAuth scenarios the client the
//! authorization server has registered (its ID and secret, or the private key its
//! assertions are signed with). Other keys (the scenario's name) are left alone.

use serde::Deserialize;
use serde_json::{Map, Value};

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Context {
    #[serde(default)]
    pub tool_calls: Vec<ToolCall>,
    #[serde(default, rename = "client_id")]
    pub client_id: Option<String>,
    #[serde(default, rename = "client_secret")]
    pub client_secret: Option<String>,
    #[serde(default, rename = "private_key_pem")]
    pub private_key_pem: Option<String>,
    #[serde(default, rename = "signing_algorithm")]
    pub signing_algorithm: Option<String>,
}

/// One call the scenario asks for. Argument values go as given, `null` included: leaving a
/// null out of a header is the client's job, and the scenario checks it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ToolCall {
    pub name: String,
    #[serde(default)]
    pub arguments: Map<String, Value>,
}

impl Context {
    /// The context from the environment; none at all is an empty context.
    pub fn from_env() -> Result<Self, serde_json::Error> {
        match std::env::var("MCP_CONFORMANCE_CONTEXT") {
            Ok(text) if !text.trim().is_empty() => Self::parse(&text),
            _ => Ok(Self::default()),
        }
    }

    pub fn parse(text: &str) -> Result<Self, serde_json::Error> {
        serde_json::from_str(text)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn tool_calls_keep_their_arguments_nulls_included_and_other_keys_are_ignored() {
        let text = json!({"name": "http-custom-headers", "client_id": "x", "toolCalls": [
            {"name": "test_custom_headers_null", "arguments": {"region": "us-east1", "verbose": null}},
            {"name": "bare"}]})
        .to_string();
        let arguments = json!({"region": "us-east1", "verbose": null});
        let expected = Context {
            tool_calls: vec![
                ToolCall {
                    name: "test_custom_headers_null".into(),
                    arguments: arguments.as_object().cloned().unwrap_or_default(),
                },
                ToolCall {
                    name: "bare".into(),
                    arguments: Map::new(),
                },
            ],
            client_id: Some("x".into()),
            ..Context::default()
        };
        assert_eq!(Context::parse(&text).ok(), Some(expected));
    }

    #[test]
    fn a_context_without_tool_calls_asks_for_none_and_keeps_the_client() {
        let context = Context::parse(
            r#"{"name": "auth/pre-registration", "client_id": "c", "client_secret": "s"}"#,
        );
        let expected = Context {
            client_id: Some("c".into()),
            client_secret: Some("s".into()),
            ..Context::default()
        };
        assert_eq!(context.ok(), Some(expected));
    }
}
