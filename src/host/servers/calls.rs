//! One tool call, start to finish: an idle timeout per request that the server's progress
//! starts again, bounded by a most a call may take, neither counting the time a person
//! spends on a form; the progress shown as it comes; the input-request rounds, a read
//! retried once on a lost connection, and a result capped before it enters the model's
//! context.

use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ElicitRequestParams, InputRequest,
    InputResponses, RequestMetaObject,
};
use rmcp::service::ServiceError;
use serde_json::{Map, Value};
use tokio::sync::mpsc;

use crate::host::api::Outcome;
use crate::host::events::HostEvent;
use crate::host::servers::connect::{ServerConn, connection_lost, missing_capability};
use crate::host::servers::notices::PROGRESS_HELD;
use crate::host::servers::tasks::{self, TaskPace, TaskRef};

mod timing;

use timing::{TimedOut, within_server_time};

/// Where the desk puts its own request ID in `_meta`: the project's prefix, never
/// `io.modelcontextprotocol/`.
pub const REQUEST_ID_META: &str = "dev.support-desk/request-id";

/// How the call should be made.
#[derive(Debug, Clone)]
pub struct CallPlan {
    pub ticket: String,
    /// The server's own name for the tool (without the prefix).
    pub tool: String,
    pub arguments: Map<String, Value>,
    /// Desk request ID, quotable by staff.
    pub request_id: String,
    /// Only a tool that says it changes nothing is ever sent twice.
    pub retry_if_lost: bool,
    /// How long the server may stay silent on a round: each progress it reports starts the
    /// wait again.
    pub timeout: Duration,
    /// The most a round may take, however much progress its server reports.
    pub max_time: Duration,
    pub max_rounds: u32,
    pub max_result_bytes: usize,
    /// The tool's forms are a lead's and go to the team's leads: a round that asks for one
    /// is parked ([`CallRun::parked`]) instead of being put to this desk's person.
    pub lead_forms: bool,
    /// Where the server's progress is shown while the call is under way (nowhere: only
    /// counted against the timeout).
    pub progress: Option<ProgressShown>,
    /// How a call its server runs as a task is followed.
    pub task_pace: TaskPace,
}

/// Where a call's progress is shown: the host's events, as the call's turn and tool.
#[derive(Debug, Clone)]
pub struct ProgressShown {
    pub events: mpsc::UnboundedSender<HostEvent>,
    pub turn: u32,
    /// The tool as the host names it (`prefix.tool`).
    pub tool: String,
}

/// A lead's form the call stopped at: what a lead's desk needs to send the next round.
#[derive(Debug, Clone, PartialEq)]
pub struct Parked {
    pub key: String,
    /// The form as the server sent it (the `ElicitRequestParams`, as JSON).
    pub form: Value,
    pub message: String,
    pub request_state: Option<String>,
    /// The server's task the form belongs to, when the call runs as one: the answer goes to
    /// the task (`tasks/update`), not in a new round of the call.
    pub task: Option<String>,
}

/// The next round of a call that stopped at a form: the answer to send, and the server's
/// state for it.
#[derive(Debug, Clone)]
pub struct NextRound {
    pub responses: InputResponses,
    pub request_state: Option<String>,
    /// The server's task the answer is for (see [`Parked::task`]).
    pub task: Option<String>,
}

/// A server's question during the call, with the answer it got.
#[derive(Debug, Clone, PartialEq)]
pub struct InputExchange {
    pub key: String,
    pub message: String,
    /// `accept`, `decline` or `cancel`.
    pub action: String,
    /// The accepted values as JSON text, when accepted.
    pub content: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct CallRun {
    pub outcome: Outcome,
    /// What goes back to the model: the tool's text, or what went wrong.
    pub text: String,
    pub truncated: bool,
    pub exchanges: Vec<InputExchange>,
    /// Set when the call stopped at a lead's form, which went to the leads; `outcome` and
    /// `text` then say so, and a lead's answer brings the real outcome.
    pub parked: Option<Parked>,
    /// A resumed round the server refused for its parameters (see [`resume`]).
    pub stale_state: bool,
    /// A result's structured content as the server sent it, whole, for the host to check
    /// against the tool's output schema before the model reads `text`; `None` for anything
    /// but a result.
    pub structured: Option<Value>,
    /// The server made a task of the call and it is not followed yet: the caller records it
    /// and follows it ([`tasks::follow`]); `outcome` and `text` say only that it started.
    pub task: Option<TaskRef>,
    /// The desk stopped waiting on the call's task, which goes on at its server (`text` says
    /// why): the ticket is a person's now, and the model is not asked to go on.
    pub to_person: bool,
}

impl CallRun {
    pub(super) fn failed(text: impl Into<String>, exchanges: Vec<InputExchange>) -> Self {
        Self {
            outcome: Outcome::Failed,
            text: text.into(),
            truncated: false,
            exchanges,
            parked: None,
            stale_state: false,
            structured: None,
            task: None,
            to_person: false,
        }
    }

    /// The server answered: a result, or a tool error the model can act on, capped.
    pub(super) fn answered(
        result: CallToolResult,
        max_bytes: usize,
        exchanges: Vec<InputExchange>,
    ) -> Self {
        let (text, truncated) = cap(result_text(&result), max_bytes);
        let (outcome, structured) = if result.is_error == Some(true) {
            (Outcome::ToolError, None)
        } else {
            (Outcome::Result, result.structured_content)
        };
        CallRun {
            outcome,
            text,
            truncated,
            exchanges,
            parked: None,
            stale_state: false,
            structured,
            task: None,
            to_person: false,
        }
    }
}

/// One tool call as the plan says: each round timed on its own, the server's input requests
/// put to a person, a read sent again once when the connection was lost.
pub async fn call(conn: &ServerConn, plan: CallPlan) -> CallRun {
    let ticket = plan.ticket.clone();
    let mut run = call_from(conn, plan, None).await;
    // Forms an older server asked in the middle of the call belong to its run too.
    run.exchanges.extend(conn.handler().take_heard(&ticket));
    run
}

/// A call that stopped at a form, taken up again with its answer: the next round is sent as
/// this desk (so the server sees who answered), and the call goes on as [`call`] does.
/// `Err` when the server refused the round's parameters (its state expired, or was not its
/// own): the call must be made again from the start for a fresh form.
/// An answer to a task's question is sent to the task, which is then followed to its end
/// as this desk; a task that will not take it is `Err` the same way.
pub async fn resume(
    conn: &ServerConn,
    plan: CallPlan,
    next: NextRound,
) -> Result<CallRun, CallRun> {
    if let Some(task) = next.task {
        if let Err(problem) = tasks::update(conn, &task, next.responses).await {
            let mut run = CallRun::failed(problem, Vec::new());
            run.stale_state = true;
            return Err(run);
        }
        let task = TaskRef {
            id: task,
            poll: None,
        };
        let (run, _) = tasks::follow(conn, &plan, &task, &plan.task_pace, Vec::new()).await;
        return Ok(run);
    }
    let run = call_from(conn, plan, Some(next)).await;
    if run.stale_state { Err(run) } else { Ok(run) }
}

async fn call_from(conn: &ServerConn, mut plan: CallPlan, next: Option<NextRound>) -> CallRun {
    let arguments = std::mem::take(&mut plan.arguments);
    let mut params = CallToolRequestParams::new(plan.tool.clone()).with_arguments(arguments);
    if let Some(next) = next {
        params.input_responses = Some(next.responses);
        params.request_state = next.request_state;
    }
    let mut meta = RequestMetaObject::default();
    meta.0.0.insert(
        REQUEST_ID_META.to_owned(),
        Value::String(plan.request_id.clone()),
    );
    params.meta = Some(meta);
    let resumed = params.request_state.is_some() || params.input_responses.is_some();
    let mut exchanges = Vec::new();
    let mut rounds = 0u32;
    let mut retried = false;
    let (progress, mut heard) = mpsc::channel(PROGRESS_HELD);
    loop {
        let live = match conn.live().await {
            Ok(live) => live,
            Err(e) => return CallRun::failed(format!("server gone: {e}"), exchanges),
        };
        let _in_flight = conn.handler().calling(&plan.ticket);
        let round = live.call_tool(&mut params, conn.handler().progress(), &progress);
        let answer = within_server_time(conn, &plan, &mut heard, round).await;
        // Progress that came after the round's answer belongs to no round now.
        while heard.try_recv().is_ok() {}
        match answer {
            // Dropping the request sent notifications/cancelled to the server.
            Err(TimedOut::Silent) => {
                return CallRun::failed(
                    format!(
                        "timed out: {} did not answer within {} s",
                        conn.prefix,
                        plan.timeout.as_secs()
                    ),
                    exchanges,
                );
            }
            Err(TimedOut::TooLong) => {
                return CallRun::failed(
                    format!(
                        "timed out: {} was still working after {} s, the most a call may take ([limits] call_max_secs), and the call was stopped; check its effect before making it again",
                        conn.prefix,
                        plan.max_time.as_secs()
                    ),
                    exchanges,
                );
            }
            Ok(Err(error)) if connection_lost(&error) => {
                conn.forget().await;
                if plan.retry_if_lost && !retried && exchanges.is_empty() {
                    retried = true;
                    tracing::warn!(server = %conn.prefix, tool = %plan.tool, "connection lost; retrying this read once");
                    continue;
                }
                // A server that now asks for a sign-in (expired or revoked) says so on the
                // reconnect, with the command that signs in.
                if let Err(e) = conn.live().await
                    && let Some(command) = e.sign_in_command()
                {
                    return CallRun::failed(
                        format!(
                            "{} asks you to sign in again: run `{command}`; the call may not have reached it, so check its effect before trying again",
                            conn.prefix
                        ),
                        exchanges,
                    );
                }
                let why = if plan.retry_if_lost {
                    "server gone: the connection was lost again after a retry"
                } else {
                    "server gone: the connection was lost during the call, which was not retried because this tool may change things; check its effect before trying again"
                };
                return CallRun::failed(why, exchanges);
            }
            Ok(Err(error)) => {
                let mut run = protocol_error(conn, &error, exchanges);
                run.stale_state = resumed
                    && rounds == 0
                    && matches!(&error, ServiceError::McpError(e) if e.code == rmcp::model::ErrorCode::INVALID_PARAMS);
                return run;
            }
            Ok(Ok(CallToolResponse::Complete(result))) => {
                return CallRun::answered(result, plan.max_result_bytes, exchanges);
            }
            Ok(Ok(CallToolResponse::InputRequired(required))) => {
                rounds += 1;
                if rounds > plan.max_rounds {
                    return CallRun::failed(
                        format!(
                            "{} asked for input more than {} times; the call was stopped",
                            conn.prefix, plan.max_rounds
                        ),
                        exchanges,
                    );
                }
                let requests = required.input_requests.unwrap_or_default();
                if plan.lead_forms {
                    return park(conn, requests, required.request_state, exchanges);
                }
                // Boxed: a person's answer is rare beside a call, and large to hold.
                let answered = Box::pin(answer_round(conn, &plan.ticket, requests, &mut exchanges));
                match answered.await {
                    Ok(responses) => params.input_responses = Some(responses),
                    Err(problem) => return CallRun::failed(problem, exchanges),
                }
                params.request_state = required.request_state;
            }
            Ok(Ok(CallToolResponse::Task(created))) => {
                let mut run = CallRun::failed(
                    format!(
                        "{} runs the call as its task {}",
                        conn.prefix, created.task.task_id
                    ),
                    exchanges,
                );
                run.task = Some(TaskRef {
                    id: created.task.task_id,
                    poll: created.task.poll_interval_ms.map(Duration::from_millis),
                });
                return run;
            }
            Ok(Ok(_)) => {
                return CallRun::failed(
                    format!(
                        "{} answered the call with something that is neither a result, a question nor a task",
                        conn.prefix
                    ),
                    exchanges,
                );
            }
        }
    }
}

/// A round of a lead's forms, parked for the team's leads: exactly one form, kept whole.
pub(super) fn park(
    conn: &ServerConn,
    requests: impl IntoIterator<Item = (String, InputRequest)>,
    request_state: Option<String>,
    exchanges: Vec<InputExchange>,
) -> CallRun {
    let mut requests = requests.into_iter();
    let (key, request) = match (requests.next(), requests.next()) {
        (Some((key, InputRequest::Elicitation(request))), None) => (key, request),
        (Some(_), None) => {
            return CallRun::failed(
                format!(
                    "{} asked a lead for something the desk does not offer (only forms are)",
                    conn.prefix
                ),
                exchanges,
            );
        }
        _ => {
            return CallRun::failed(
                format!(
                    "{} asked a lead several things at once; the desk sends a lead one form at a time",
                    conn.prefix
                ),
                exchanges,
            );
        }
    };
    let message = elicitation_message(&request.params);
    CallRun {
        outcome: Outcome::Failed,
        text: format!(
            "not finished yet: {} asks a lead to answer (\"{}\"); the ticket waits for a lead",
            conn.prefix,
            message.chars().take(200).collect::<String>()
        ),
        truncated: false,
        exchanges,
        parked: Some(Parked {
            key,
            form: serde_json::to_value(&request.params).unwrap_or(Value::Null),
            message,
            request_state,
            task: None,
        }),
        stale_state: false,
        structured: None,
        task: None,
        to_person: false,
    }
}

/// One round of a server's input requests, each put to a person through the server's own
/// handler and kept as an exchange; `Err` when the server asked for something other than a
/// form.
pub(super) async fn answer_round(
    conn: &ServerConn,
    ticket: &str,
    requests: impl IntoIterator<Item = (String, InputRequest)>,
    exchanges: &mut Vec<InputExchange>,
) -> Result<InputResponses, String> {
    let mut responses = InputResponses::new();
    for (key, request) in requests {
        let InputRequest::Elicitation(request) = request else {
            return Err(format!(
                "{} asked for something the desk does not offer (only forms are)",
                conn.prefix
            ));
        };
        let answer = conn.handler().ask(Some(ticket), &request.params).await;
        exchanges.push(InputExchange {
            key: key.clone(),
            message: elicitation_message(&request.params),
            action: format!("{:?}", answer.action).to_lowercase(),
            content: answer.content.as_ref().map(Value::to_string),
        });
        responses.insert(key, serde_json::to_value(&answer).unwrap_or(Value::Null));
    }
    Ok(responses)
}

fn protocol_error(
    conn: &ServerConn,
    error: &ServiceError,
    exchanges: Vec<InputExchange>,
) -> CallRun {
    if let Some(capability) = missing_capability(error) {
        return CallRun::failed(
            format!(
                "{} needs a client capability the desk does not declare: {capability}",
                conn.prefix
            ),
            exchanges,
        );
    }
    match error {
        // The desk cut an answer over its size limit short (see `oversize`).
        ServiceError::McpError(e) if e.code.0 == crate::wire::oversize::TOO_LARGE_CODE => {
            CallRun::failed(
                format!(
                    "{}: {}. Ask for less (a narrower query, one item at a time), and check the call's effect before making a change again",
                    conn.prefix, e.message
                ),
                exchanges,
            )
        }
        // The server refused the request itself (unknown tool, bad parameters): the model can act on that.
        ServiceError::McpError(e) => CallRun {
            outcome: Outcome::ToolError,
            text: format!(
                "{} refused the call: {} (code {})",
                conn.prefix, e.message, e.code.0
            ),
            truncated: false,
            exchanges,
            parked: None,
            stale_state: false,
            structured: None,
            task: None,
            to_person: false,
        },
        other => CallRun::failed(
            format!("the call to {} failed: {other}", conn.prefix),
            exchanges,
        ),
    }
}

pub(in crate::host) fn elicitation_message(params: &ElicitRequestParams) -> String {
    match params {
        ElicitRequestParams::FormElicitationParams { message, .. } => message.clone(),
        ElicitRequestParams::UrlElicitationParams { message, url, .. } => {
            format!("{message} ({url})")
        }
        _ => String::new(),
    }
}

/// The text a model reads from a result: its text blocks, else its structured content.
pub fn result_text(result: &CallToolResult) -> String {
    let texts: Vec<&str> = result
        .content
        .iter()
        .filter_map(|c| c.as_text())
        .map(|t| t.text.as_str())
        .collect();
    if !texts.is_empty() {
        return texts.join("\n");
    }
    match &result.structured_content {
        Some(value) => value.to_string(),
        None if result.content.is_empty() => String::new(),
        None => "[the tool answered with content that is not text]".to_owned(),
    }
}

/// Cuts `text` to at most `max` bytes on a character boundary, saying so.
pub fn cap(text: String, max: usize) -> (String, bool) {
    if text.len() <= max {
        return (text, false);
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let rest = text.len() - end;
    (
        format!(
            "{}\n[truncated by the desk: {rest} more bytes]",
            &text[..end]
        ),
        true,
    )
}

#[cfg(test)]
mod tests {
    use super::cap;

    #[test]
    fn long_results_are_cut_on_a_character_boundary_and_marked() {
        let (text, truncated) = cap("é".repeat(10), 5);
        assert!(truncated);
        assert_eq!(text, "éé\n[truncated by the desk: 16 more bytes]");
        assert_eq!(cap("short".into(), 5), ("short".to_owned(), false));
    }
}
