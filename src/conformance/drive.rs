//! Running one scenario through the host's own client: [`ServerConn`] connects (probe,
//! fallback, tool list), [`calls::call`] makes each call with the desk's limits, and a task
//! stands in for the person, accepting every form with its defaults.

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{GetPromptRequestParams, ReadResourceRequestParams, Tool};
use serde_json::{Map, Value};
use tokio::sync::mpsc;

use super::{Context, Scenario, ToolCall};
use crate::auth::{ClientIdentity, Headless, PrivateKey, SignInPolicy};
use crate::config::{DeskConfig, Limits, ServerConfig};
use crate::host::api::{ConsentAnswer, FormAnswer, FormKind, Outcome, Question};
use crate::host::servers::calls::{self, CallPlan};
use crate::host::servers::connect::{Live, Reach, ServerConn};

/// The prefix the scenario's server gets, as a config would give it.
const PREFIX: &str = "conformance";

/// How long closing the connection may take before the process exits anyway.
const CLOSE_TIMEOUT: Duration = Duration::from_millis(500);

/// How a scenario ended, as far as this binary can tell (the suite judges the rest).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Everything the plan asked for was sent and answered.
    Done,
    /// The scenario needs a flow the desk leaves out on purpose.
    Unsupported,
    /// The desk could not connect, or a call failed on the protocol level.
    Failed,
}

pub async fn run(scenario: &Scenario, url: &str, context: &Context) -> Verdict {
    let limits = DeskConfig::bundled().limits;
    let (questions, asked) = mpsc::channel(8);
    tokio::spawn(answer_with_defaults(asked));
    let config = ServerConfig {
        url: Some(url.to_owned()),
        ..ServerConfig::default()
    };
    // Grants live where the desk keeps them, in a data directory of this run's own.
    let Ok(data_dir) = tempfile::tempdir() else {
        tracing::error!("cannot make a temporary data directory");
        return Verdict::Failed;
    };
    let reach = match sign_in_reach(scenario, context, data_dir.path()) {
        Ok(reach) => Reach {
            connect_timeout: limits.connect_timeout(),
            ..reach
        },
        Err(e) => {
            tracing::error!(error = %e, "cannot sign in");
            return Verdict::Failed;
        }
    };
    let connected = ServerConn::connect_with(PREFIX, &config, questions, reach).await;
    let conn = match connected {
        Ok(conn) => conn,
        Err(e) => {
            return match scenario {
                Scenario::Unsupported { why } => {
                    tracing::warn!(error = %e, "could not connect; {why}");
                    Verdict::Unsupported
                }
                _ => {
                    tracing::error!(error = %e, "could not connect");
                    Verdict::Failed
                }
            };
        }
    };
    let Some(live) = conn.current().await else {
        tracing::error!("connected, but the connection is gone already");
        return Verdict::Failed;
    };
    tracing::info!(
        revision = %live.revision,
        server = live.name.as_deref().unwrap_or("(unnamed)"),
        tools = ?live.tools.iter().map(|t| t.name.as_ref()).collect::<Vec<_>>(),
        "connected"
    );
    let mut driver = Driver {
        conn: &conn,
        limits,
        sent: 0,
        failed: false,
    };
    let verdict = match *scenario {
        Scenario::Connect => Verdict::Done,
        Scenario::CallTools | Scenario::SignIn { .. } => driver.call_tools(&live, context).await,
        Scenario::Everything => {
            driver.call_tools(&live, context).await;
            driver.read_resources_and_prompts(&live).await
        }
        Scenario::EchoSchema { focal, echo } => driver.echo_schema(&live, focal, echo).await,
        Scenario::Unsupported { why } => {
            // As far as the desk gets without the missing flow: what a person would see.
            driver.call_tools(&live, context).await;
            tracing::warn!("{why}");
            Verdict::Unsupported
        }
    };
    close(conn, live).await;
    verdict
}

/// How the scenario's server is reached: with a grant store, and for the OAuth scenarios
/// signing in whenever the server asks, through the suite's authorization server, which
/// approves at once (its redirect is read, not followed).
fn sign_in_reach(
    scenario: &Scenario,
    context: &Context,
    data_dir: &std::path::Path,
) -> Result<Reach, crate::auth::SignInError> {
    let &Scenario::SignIn { as_client } = scenario else {
        return Ok(Reach::default());
    };
    let private_key = context.private_key_pem.clone().map(|pem| PrivateKey {
        pem,
        algorithm: context
            .signing_algorithm
            .clone()
            .unwrap_or_else(|| "ES256".to_owned()),
    });
    let identity = ClientIdentity {
        client_id: context.client_id.clone(),
        client_secret: context.client_secret.clone(),
        metadata_url: Some(CLIENT_METADATA_URL.to_owned()),
        client_credentials: as_client,
        private_key,
        ..ClientIdentity::default()
    };
    let visitor = Headless::new(REDIRECT_URI)?;
    Ok(Reach {
        data_dir: Some(data_dir.to_owned()),
        sign_in: SignInPolicy::Ask(Arc::new(visitor)),
        identity: Some(identity),
        ..Reach::default()
    })
}

/// The Client ID Metadata Document the suite's authorization server knows.
const CLIENT_METADATA_URL: &str = "https://conformance-test.local/client-metadata.json";
/// Where the desk would listen; the suite's redirect is read before anyone goes there.
const REDIRECT_URI: &str = "http://127.0.0.1:8765/callback";

/// Ends the connection and waits a moment for the transport to finish (an HTTP session is
/// ended with DELETE), so nothing is cut off when the process exits.
async fn close(conn: ServerConn, live: Arc<Live>) {
    drop(conn);
    if let Ok(live) = Arc::try_unwrap(live)
        && let Ok(mut service) = Arc::try_unwrap(live.service)
    {
        let _ = service.close_with_timeout(CLOSE_TIMEOUT).await;
    }
}

/// Stands in for the person: every form is accepted with the defaults it offers (a field
/// without one stays empty, and the host cancels a form whose required fields are left
/// empty). A URL is declined, since nobody is there to visit it; consent never comes up,
/// because the consent gate sits in the ticket loop, which this binary does not run.
async fn answer_with_defaults(mut asked: mpsc::Receiver<Question>) {
    while let Some(question) = asked.recv().await {
        match question {
            Question::Form(pending) => {
                let answer = match &pending.ask.kind {
                    FormKind::Fields(fields) => {
                        FormAnswer::Accept(crate::host::api::form_answers::defaults(fields))
                    }
                    FormKind::Url { .. } => FormAnswer::Decline,
                };
                tracing::info!(message = %pending.ask.message, ?answer, "answered a form");
                pending.answer(answer);
            }
            Question::Consent(pending) => {
                pending.answer(ConsentAnswer {
                    approved: false,
                    by: PREFIX.to_owned(),
                    trust: None,
                    rule: None,
                });
            }
        }
    }
}

struct Driver<'a> {
    conn: &'a ServerConn,
    limits: Limits,
    sent: u32,
    failed: bool,
}

impl Driver<'_> {
    fn verdict(&self) -> Verdict {
        if self.failed {
            Verdict::Failed
        } else {
            Verdict::Done
        }
    }

    /// The calls the context names, or else each listed tool once.
    async fn call_tools(&mut self, live: &Live, context: &Context) -> Verdict {
        let planned: Vec<ToolCall> = if context.tool_calls.is_empty() {
            live.tools.iter().map(call_from_schema).collect()
        } else {
            context.tool_calls.clone()
        };
        for call in planned {
            let read_only = live
                .tools
                .iter()
                .find(|tool| tool.name == call.name)
                .and_then(|tool| tool.annotations.as_ref())
                .and_then(|hints| hints.read_only_hint)
                .unwrap_or(false);
            self.call(call, read_only).await;
        }
        self.verdict()
    }

    async fn call(&mut self, call: ToolCall, read_only: bool) {
        self.sent += 1;
        let plan = CallPlan {
            ticket: PREFIX.to_owned(),
            tool: call.name.clone(),
            arguments: call.arguments,
            request_id: format!("{PREFIX}-{}", self.sent),
            retry_if_lost: read_only,
            timeout: self.limits.request_timeout(),
            max_time: self.limits.call_max(),
            max_rounds: self.limits.input_rounds,
            max_result_bytes: self.limits.result_max_bytes,
            lead_forms: false,
            progress: None,
            task_pace: crate::host::servers::tasks::TaskPace::of(&self.limits),
        };
        let run = calls::call(self.conn, plan).await;
        let outcome = run.outcome.label();
        tracing::info!(tool = %call.name, outcome, text = %run.text, forms = run.exchanges.len(), "called");
        if run.outcome == Outcome::Failed {
            self.failed = true;
        }
    }

    /// Every resource read once and every prompt got once, without arguments. What the
    /// server answers is only logged: a prompt may well need arguments.
    async fn read_resources_and_prompts(&mut self, live: &Live) -> Verdict {
        let service = &live.service;
        match service.list_all_resources().await {
            Ok(resources) => {
                for resource in resources {
                    let read = service
                        .read_resource(ReadResourceRequestParams::new(resource.uri.clone()))
                        .await;
                    tracing::info!(uri = %resource.uri, ok = read.is_ok(), "read a resource");
                }
            }
            Err(e) => tracing::info!(error = %e, "no resources"),
        }
        match service.list_all_prompts().await {
            Ok(prompts) => {
                for prompt in prompts {
                    let got = service
                        .get_prompt(GetPromptRequestParams::new(prompt.name.clone()))
                        .await;
                    tracing::info!(prompt = %prompt.name, ok = got.is_ok(), "got a prompt");
                }
            }
            Err(e) => tracing::info!(error = %e, "no prompts"),
        }
        self.verdict()
    }

    async fn echo_schema(&mut self, live: &Live, focal: &str, echo: &str) -> Verdict {
        let Some(tool) = live.tools.iter().find(|tool| tool.name == focal) else {
            tracing::error!(tool = focal, "the server did not list the tool to echo");
            return Verdict::Failed;
        };
        let schema = Value::Object((*tool.input_schema).clone());
        let arguments = Map::from_iter([("schema".to_owned(), schema)]);
        let call = ToolCall {
            name: echo.to_owned(),
            arguments,
        };
        self.call(call, false).await;
        self.verdict()
    }
}

/// A call to `tool` with a value for each required argument: its default, its constant or
/// first option, or else a plain value of its type.
pub fn call_from_schema(tool: &Tool) -> ToolCall {
    let required: Vec<&str> = tool
        .input_schema
        .get("required")
        .and_then(Value::as_array)
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let properties = tool
        .input_schema
        .get("properties")
        .and_then(Value::as_object);
    let arguments = required
        .iter()
        .map(|name| {
            let property = properties.and_then(|p| p.get(*name));
            ((*name).to_owned(), sample_value(property))
        })
        .collect();
    ToolCall {
        name: tool.name.to_string(),
        arguments,
    }
}

fn sample_value(property: Option<&Value>) -> Value {
    let Some(property) = property else {
        return Value::String("test".to_owned());
    };
    if let Some(value) = property.get("default").or_else(|| property.get("const")) {
        return value.clone();
    }
    if let Some(first) = property
        .get("enum")
        .and_then(Value::as_array)
        .and_then(|options| options.first())
    {
        return first.clone();
    }
    let kind = match property.get("type") {
        Some(Value::Array(kinds)) => kinds.iter().find(|k| *k != "null").and_then(Value::as_str),
        Some(kind) => kind.as_str(),
        None => None,
    };
    match kind {
        Some("integer") => Value::from(1),
        Some("number") => Value::from(1.5),
        Some("boolean") => Value::Bool(true),
        Some("array") => Value::Array(Vec::new()),
        Some("object") => Value::Object(Map::new()),
        Some("null") => Value::Null,
        _ => Value::String("test".to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn tool(schema: Value) -> Tool {
        let schema = schema.as_object().cloned().unwrap_or_default();
        Tool::new("t", "a tool", Arc::new(schema))
    }

    #[test]
    fn required_arguments_get_defaults_options_or_plain_values_and_optional_ones_none() {
        let schema = json!({"type": "object", "required": ["a", "b", "c", "d", "e", "f"],
            "properties": {"a": {"type": "number"}, "b": {"type": "integer"},
            "c": {"type": "string", "default": "x"}, "d": {"type": "string", "enum": ["p", "q"]},
            "e": {"type": ["null", "boolean"]}, "f": {"$ref": "#/$defs/id"},
            "optional": {"type": "string"}}});
        let expected = json!({"a": 1.5, "b": 1, "c": "x", "d": "p", "e": true, "f": "test"});
        let call = call_from_schema(&tool(schema));
        assert_eq!(Value::Object(call.arguments), expected);
    }

    #[test]
    fn a_tool_without_required_arguments_is_called_with_none() {
        let call = call_from_schema(&tool(json!({"type": "object"})));
        assert_eq!(
            call,
            ToolCall {
                name: "t".into(),
                arguments: Map::new()
            }
        );
    }
}
