//! A call its server answered with a task (the Tasks extension, SEP-2663): followed with
//! `tasks/get` as often as the server suggests (kept within the desk's bounds), its status
//! shown on the call's line, its questions put to a person like any form (or parked for the
//! team's leads), and its result handed back like any call's. A task outlives the
//! connection that started it: a lost connection is made again and the task asked after
//! once more. When the desk stops following a task before it ended (a person stopped the
//! run), the server is told with `tasks/cancel`; when the desk only stops *waiting* (the
//! task ran past `[limits] task_max_secs`), the task goes on and is followed elsewhere.

use std::collections::HashSet;
use std::ops::RangeInclusive;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    CallToolResult, CancelTaskParams, DetailedTask, GetTaskParams, InputRequests, TaskPayload,
    TaskStatus, UpdateTaskParams,
};
use serde_json::Value;

use crate::host::events::HostEvent;
use crate::host::servers::calls::{CallPlan, CallRun, InputExchange, Parked, answer_round, park};
use crate::host::servers::connect::{ServerConn, connection_lost};

/// A task the server made of a call: what the desk needs to follow it from anywhere.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskRef {
    pub id: String,
    /// The server's suggested interval between two looks, when it gave one.
    pub poll: Option<Duration>,
}

/// How a followed task stood when the desk stopped following it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskEnd {
    Completed,
    Failed,
    Cancelled,
    /// Still running at the server: the desk stopped waiting (its limit) or parked it for a
    /// lead.
    Open,
}

impl TaskEnd {
    pub fn label(self) -> &'static str {
        match self {
            TaskEnd::Completed => "completed",
            TaskEnd::Failed => "failed",
            TaskEnd::Cancelled => "cancelled",
            TaskEnd::Open => "open",
        }
    }
}

/// The tasks this desk follows now, by server and task: each is followed once. Beside them,
/// the tickets that may hold a task nobody here follows yet, which are all a desk looks at
/// again while it is open (never the whole record).
#[derive(Default)]
pub struct Followed {
    tasks: Arc<Mutex<HashSet<(String, String)>>>,
    tickets: Mutex<std::collections::BTreeSet<String>>,
}

/// This desk follows a task until dropped.
pub struct Following {
    set: Arc<Mutex<HashSet<(String, String)>>>,
    key: (String, String),
}

impl Followed {
    /// `None` when this desk follows it already.
    pub fn follow(&self, server: &str, task: &str) -> Option<Following> {
        let key = (server.to_owned(), task.to_owned());
        let mut set = self.tasks.lock().unwrap_or_else(|p| p.into_inner());
        set.insert(key.clone()).then(|| Following {
            set: Arc::clone(&self.tasks),
            key,
        })
    }

    /// `ticket` may hold a task to follow: looked at again until it holds none.
    pub fn watch(&self, ticket: &str) {
        self.watching().insert(ticket.to_owned());
    }

    /// `ticket` holds no task to follow any more.
    pub fn unwatch(&self, ticket: &str) {
        self.watching().remove(ticket);
    }

    /// The tickets that may hold a task to follow.
    pub fn watched(&self) -> Vec<String> {
        self.watching().iter().cloned().collect()
    }

    fn watching(&self) -> std::sync::MutexGuard<'_, std::collections::BTreeSet<String>> {
        self.tickets.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Drop for Following {
    fn drop(&mut self) {
        self.set
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&self.key);
    }
}

/// What following a task needs besides the call's plan.
#[derive(Debug, Clone)]
pub struct TaskPace {
    /// How long to wait on it before handing the ticket to a person (people's time aside).
    pub max: Duration,
    /// The bounds kept on the server's suggested interval.
    pub poll: RangeInclusive<Duration>,
    /// Whether the task's questions are put to this desk's person. Off, a question is shown
    /// as the task's status and waits for whoever may answer it.
    pub asks: bool,
}

impl Default for TaskPace {
    /// The config's defaults (`[limits] task_max_secs`, `task_poll_min_ms`, `task_poll_max_ms`).
    fn default() -> Self {
        Self {
            max: Duration::from_secs(600),
            poll: Duration::from_millis(250)..=Duration::from_secs(10),
            asks: true,
        }
    }
}

impl TaskPace {
    pub fn of(limits: &crate::config::Limits) -> Self {
        Self {
            max: limits.task_max(),
            poll: limits.task_poll(),
            asks: true,
        }
    }
}

/// How many looks in a row may fail on a lost connection before the desk gives up on it.
const LOST_LOOKS: u32 = 5;

/// How much of a server's status message is shown, in characters.
const STATUS_SHOWN: usize = 200;

/// Follows `task` to its end, or to the plan's limit, or (with `lead_forms`) to a question
/// for the team's leads. Dropped before that, the server is told to cancel the task.
pub async fn follow(
    conn: &ServerConn,
    plan: &CallPlan,
    task: &TaskRef,
    pace: &TaskPace,
    mut exchanges: Vec<InputExchange>,
) -> (CallRun, TaskEnd) {
    let started = tokio::time::Instant::now();
    let (people_before, _) = conn.handler().time_with_people();
    let peer = conn
        .live()
        .await
        .ok()
        .map(|live| live.service.peer().clone());
    let mut cancel = CancelOnDrop::new(peer, &task.id);
    let mut wait = bounded(task.poll, &pace.poll);
    let mut answered: HashSet<String> = HashSet::new();
    let mut lost = 0u32;
    loop {
        let got = match conn.live().await {
            Ok(live) => {
                live.service
                    .peer()
                    .get_task(GetTaskParams::new(&task.id))
                    .await
            }
            Err(e) => {
                cancel.disarm();
                let text = format!(
                    "server gone while following its task {}: {e}; the task may still be running there, and the desk follows it again when the server is back",
                    task.id
                );
                return (stopped_waiting(text, exchanges), TaskEnd::Open);
            }
        };
        let detailed = match got {
            Ok(got) => {
                lost = 0;
                got.task
            }
            Err(error) if connection_lost(&error) && lost < LOST_LOOKS => {
                lost += 1;
                conn.forget().await;
                tokio::time::sleep(wait).await;
                continue;
            }
            Err(error) => {
                cancel.disarm();
                let text = format!(
                    "{} would not say how its task {} stands ({error}); it may still be running there",
                    conn.prefix, task.id
                );
                return (stopped_waiting(text, exchanges), TaskEnd::Open);
            }
        };
        wait = bounded(
            detailed.task.poll_interval_ms.map(Duration::from_millis),
            &pace.poll,
        );
        let people_spent = conn
            .handler()
            .time_with_people()
            .0
            .saturating_sub(people_before);
        let waited = started.elapsed().saturating_sub(people_spent);
        show(plan, &detailed, waited);
        match detailed.payload {
            TaskPayload::Working => {}
            TaskPayload::InputRequired { input_requests } => {
                let fresh: InputRequests = input_requests
                    .into_iter()
                    .filter(|(key, _)| !answered.contains(key))
                    .collect();
                if !fresh.is_empty() && pace.asks {
                    if plan.lead_forms {
                        cancel.disarm();
                        let mut run = park(conn, fresh, None, exchanges);
                        if let Some(parked) = &mut run.parked {
                            parked.task = Some(task.id.clone());
                        }
                        return (run, TaskEnd::Open);
                    }
                    answered.extend(fresh.keys().cloned());
                    let round = Box::pin(answer_round(conn, &plan.ticket, fresh, &mut exchanges));
                    let responses = match round.await {
                        Ok(responses) => responses,
                        Err(problem) => {
                            return (stopped_waiting(problem, exchanges), TaskEnd::Open);
                        }
                    };
                    if let Err(problem) = update(conn, &task.id, responses).await {
                        return (stopped_waiting(problem, exchanges), TaskEnd::Open);
                    }
                    continue;
                }
            }
            TaskPayload::Completed { result } => {
                cancel.disarm();
                return (
                    completed(conn, plan, &task.id, result, exchanges),
                    TaskEnd::Completed,
                );
            }
            TaskPayload::Failed { error } => {
                cancel.disarm();
                let said = error
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or("no reason given");
                let text = format!(
                    "{}'s task {} failed: {}",
                    conn.prefix,
                    task.id,
                    crate::text::cut(said, STATUS_SHOWN)
                );
                return (CallRun::failed(text, exchanges), TaskEnd::Failed);
            }
            TaskPayload::Cancelled => {
                cancel.disarm();
                let text = format!("{}'s task {} was cancelled", conn.prefix, task.id);
                return (CallRun::failed(text, exchanges), TaskEnd::Cancelled);
            }
            // A status this desk does not know yet: asked after again.
            _ => {}
        }
        if waited >= pace.max {
            cancel.disarm();
            let text = format!(
                "still working: {}'s task {} was not done after {} s ([limits] task_max_secs), so the ticket goes to a person; the task goes on at the server and the desk records how it ends",
                conn.prefix,
                task.id,
                pace.max.as_secs()
            );
            return (stopped_waiting(text, exchanges), TaskEnd::Open);
        }
        tokio::time::sleep(wait).await;
    }
}

/// Sends a person's (or a lead's) answers to a task's questions.
pub async fn update(
    conn: &ServerConn,
    task: &str,
    responses: rmcp::model::InputResponses,
) -> Result<(), String> {
    let live = conn
        .live()
        .await
        .map_err(|e| format!("server gone before the answer to its task {task} was sent: {e}"))?;
    live.service
        .peer()
        .update_task(UpdateTaskParams::new(task, responses))
        .await
        .map_err(|e| {
            format!(
                "{} did not take the answer to its task {task}: {e}",
                conn.prefix
            )
        })
}

/// The task's questions as they stand now, for a lead who opens its approval: the first
/// one outstanding, parked as a form. `Err` in words when it asks none (it moved on).
pub async fn current_question(conn: &ServerConn, task: &str) -> Result<Parked, String> {
    let live = conn.live().await.map_err(|e| format!("server gone: {e}"))?;
    let got = live
        .service
        .peer()
        .get_task(GetTaskParams::new(task))
        .await
        .map_err(|e| {
            format!(
                "{} would not say how its task {task} stands: {e}",
                conn.prefix
            )
        })?;
    match got.task.payload {
        TaskPayload::InputRequired { input_requests } => {
            let first = input_requests.into_iter().take(1);
            let run = park(conn, first, None, Vec::new());
            match run.parked {
                Some(mut parked) => {
                    parked.task = Some(task.to_owned());
                    Ok(parked)
                }
                None => Err(run.text),
            }
        }
        other => Err(format!(
            "{}'s task {task} asks nothing now; it is {}",
            conn.prefix,
            status_word(other.status())
        )),
    }
}

fn status_word(status: TaskStatus) -> &'static str {
    match status {
        TaskStatus::Working => "working",
        TaskStatus::InputRequired => "waiting for an answer",
        TaskStatus::Completed => "completed",
        TaskStatus::Failed => "failed",
        TaskStatus::Cancelled => "cancelled",
        _ => "in a state the desk does not know",
    }
}

/// The task's result, read as the call's result would have been.
fn completed(
    conn: &ServerConn,
    plan: &CallPlan,
    task: &str,
    result: serde_json::Map<String, Value>,
    exchanges: Vec<InputExchange>,
) -> CallRun {
    match serde_json::from_value::<CallToolResult>(Value::Object(result)) {
        Ok(result) => CallRun::answered(result, plan.max_result_bytes, exchanges),
        Err(e) => CallRun::failed(
            format!(
                "{}'s task {task} completed with a result that is not a tool's result ({e})",
                conn.prefix
            ),
            exchanges,
        ),
    }
}

/// The desk stops waiting on a task that goes on: the ticket is a person's.
fn stopped_waiting(text: String, exchanges: Vec<InputExchange>) -> CallRun {
    CallRun {
        to_person: true,
        ..CallRun::failed(text, exchanges)
    }
}

/// The server's suggestion, kept within the desk's bounds; the slowest bound's middle when
/// it made none.
fn bounded(suggested: Option<Duration>, bounds: &RangeInclusive<Duration>) -> Duration {
    let (min, max) = (*bounds.start(), *bounds.end());
    suggested.unwrap_or(Duration::from_secs(1)).clamp(min, max)
}

/// How the task stands, on the call's line: its status and how long the desk has waited,
/// and the server's message (its words, data for people).
fn show(plan: &CallPlan, task: &DetailedTask, waited: Duration) {
    let Some(shown) = &plan.progress else {
        return;
    };
    let message = task
        .task
        .status_message
        .as_deref()
        .filter(|m| !m.trim().is_empty())
        .map(|m| crate::text::cut(m, STATUS_SHOWN));
    let _ = shown.events.send(HostEvent::TaskStatus {
        ticket: plan.ticket.clone(),
        turn: shown.turn,
        tool: shown.tool.clone(),
        task: task.task.task_id.clone(),
        status: status_word(task.status()).to_owned(),
        seconds: waited.as_secs(),
        message,
    });
}

/// A task the desk follows: dropped before it ended (the run was stopped), the server is
/// asked to cancel it, as a dropped call is cancelled.
struct CancelOnDrop {
    peer: Option<(rmcp::Peer<rmcp::RoleClient>, String)>,
}

impl CancelOnDrop {
    fn new(peer: Option<rmcp::Peer<rmcp::RoleClient>>, task: &str) -> Self {
        Self {
            peer: peer.map(|peer| (peer, task.to_owned())),
        }
    }

    fn disarm(&mut self) {
        self.peer = None;
    }
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        let Some((peer, task)) = self.peer.take() else {
            return;
        };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        runtime.spawn(async move {
            match peer.cancel_task(CancelTaskParams::new(&task)).await {
                Ok(()) => tracing::info!(%task, "asked the server to cancel a task the desk stopped following"),
                Err(e) => tracing::warn!(%task, error = %e, "could not ask the server to cancel a task"),
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_servers_pace_is_kept_within_the_desks_bounds() {
        let bounds = Duration::from_millis(250)..=Duration::from_secs(10);
        assert_eq!(
            bounded(Some(Duration::from_millis(1)), &bounds),
            Duration::from_millis(250)
        );
        assert_eq!(
            bounded(Some(Duration::from_secs(60)), &bounds),
            Duration::from_secs(10)
        );
        assert_eq!(
            bounded(Some(Duration::from_secs(2)), &bounds),
            Duration::from_secs(2)
        );
        assert_eq!(bounded(None, &bounds), Duration::from_secs(1));
    }
}
