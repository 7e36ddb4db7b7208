//! Tool calls on a stdio server, written and answered beside rmcp's service loop.
//!
//! rmcp's client sends every request through its service: the caller hands the request to
//! the service's task over a channel, the service sends it from a task spawned for it, and
//! the answer comes back over a oneshot: a large part of what a client spends around a call
//! (BENCHMARKS.md, 'Tool call against the Python SDK and the floor' and 'The host's own
//! cost per tool call'). A call on a [`CallLane`] is written to the server's stdin by the
//! caller itself, under the same lock rmcp's own messages take, and the transport's reader
//! ([`crate::wire::child_stdio::ChildStdio`]) hands its answer straight to the caller. Everything else
//! (the handshake, listings, the server's own requests and notifications, calls on HTTP or
//! an in-process pipe) stays with rmcp.
//!
//! A call's request carries what rmcp would put in it on the same connection: the client's
//! context in `_meta` on a revision without `initialize` (the same three keys, from the same
//! [`ClientConfig`]), and none on an older one. Its ID is a number above any rmcp counts to
//! (rmcp counts from 0 in a `u32`), so the two never meet, and small enough for a server that
//! reads numbers as doubles. A call given up before its answer (a timeout) sends
//! `notifications/cancelled`, as rmcp does.
//!
//! While a call waits, the lane's [`Watch`] on the server's stdout is armed, so the desk's
//! thread polls that pipe for a moment before it sleeps ([`crate::wire::busy_poll`]); it ends when
//! no call waits any more.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex as SyncMutex, OnceLock};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ClientConfig, ErrorData, MetaObject,
    RequestId, RequestMetaObject, ServerPeerInfo, ServerResult,
};
use rmcp::service::ServiceError;
use serde::Serialize;
use tokio::io::AsyncWriteExt;
use tokio::process::ChildStdin;
use tokio::sync::{Mutex, oneshot};

use crate::wire::busy_poll::Watch;

/// The first ID a lane gives: above every `u32`, which is all rmcp counts to.
const FIRST_ID: i64 = 1 << 32;

/// What came back for a call: the server's result, or its JSON-RPC error.
pub type Answer = Result<ServerResult, ErrorData>;

/// The server's stdin, shared by rmcp's sends and the lane's; `None` once closed.
pub type Stdin = Arc<Mutex<Option<ChildStdin>>>;

/// One connection's lane. Cheap to clone; every clone is the same lane.
#[derive(Clone)]
pub struct CallLane {
    shared: Arc<Shared>,
}

struct Shared {
    stdin: Stdin,
    /// The server's stdout, polled while a call waits (none when the server's config turns
    /// polling off).
    watch: Option<Watch>,
    waiting: SyncMutex<Waiting>,
    next_id: AtomicI64,
    /// The client's context for every request (none on a revision with `initialize`).
    context: OnceLock<Context>,
}

/// The client's context as every call's `_meta` carries it, encoded once per connection.
#[derive(Default)]
struct Context {
    keys: Vec<String>,
    /// The entries as JSON, `"key":value` joined by commas, without the braces.
    entries: Vec<u8>,
}

impl Context {
    fn of(meta: &RequestMetaObject) -> serde_json::Result<Self> {
        let mut context = Context::default();
        for (key, value) in meta.0.0.iter() {
            context.push(key, value)?;
        }
        Ok(context)
    }

    fn push(&mut self, key: &str, value: &serde_json::Value) -> serde_json::Result<()> {
        if !self.entries.is_empty() {
            self.entries.push(b',');
        }
        serde_json::to_writer(&mut self.entries, key)?;
        self.entries.push(b':');
        serde_json::to_writer(&mut self.entries, value)?;
        self.keys.push(key.to_owned());
        Ok(())
    }
}

#[derive(Default)]
struct Waiting {
    /// The transport has stopped reading: nothing more will be answered.
    closed: bool,
    calls: HashMap<RequestId, oneshot::Sender<Answer>>,
}

impl CallLane {
    pub(crate) fn new(stdin: Stdin, watch: Option<Watch>) -> Self {
        Self {
            shared: Arc::new(Shared {
                stdin,
                watch,
                waiting: SyncMutex::default(),
                next_id: AtomicI64::new(FIRST_ID),
                context: OnceLock::new(),
            }),
        }
    }

    /// Sets what each call's `_meta` carries, once the handshake has said which revision the
    /// server speaks; as rmcp's client does, only a revision without `initialize` gets it.
    /// `false` when the lane cannot be used (the context would not encode): then rmcp makes
    /// the calls.
    pub(crate) fn set_context(&self, server: &ServerPeerInfo, client: &ClientConfig) -> bool {
        let context = if server.protocol_version.has_initialize() {
            Context::default()
        } else {
            let meta = RequestMetaObject::with_client_context(
                server.protocol_version.clone(),
                client.client_info.clone(),
                client.capabilities.clone(),
            );
            match Context::of(&meta) {
                Ok(context) => context,
                Err(e) => {
                    tracing::error!(error = %e, "cannot encode the client's context for calls");
                    return false;
                }
            }
        };
        if self.shared.context.set(context).is_err() {
            tracing::warn!("a call lane's client context was set twice; keeping the first");
        }
        true
    }

    /// One `tools/call` round, as rmcp's `call_tool_once` answers it.
    pub async fn call_tool(
        &self,
        params: &mut CallToolRequestParams,
    ) -> Result<CallToolResponse, ServiceError> {
        let Some(context) = self.shared.context.get() else {
            // The lane is used only once its context is set; this is a bug, not a server.
            return Err(ServiceError::UnexpectedResponse);
        };
        let id = RequestId::Number(self.shared.next_id.fetch_add(1, Ordering::Relaxed));
        let line =
            request_line(&id, params, context).map_err(|_| ServiceError::UnexpectedResponse)?;
        let (answered, answer) = oneshot::channel();
        let mut call = InFlight::register(&self.shared, id, answered)?;
        call.send(&line).await?;
        let answer = answer.await.map_err(|_| ServiceError::TransportClosed)?;
        call.answered();
        match answer {
            Ok(result) => call_response(result),
            Err(error) => Err(ServiceError::McpError(error)),
        }
    }

    /// The caller waiting for `id`'s answer, which it no longer is.
    pub(crate) fn claim(&self, id: &RequestId) -> Option<oneshot::Sender<Answer>> {
        self.shared.take(id)
    }

    /// Whether any call waits for its answer.
    pub(crate) fn is_waiting(&self) -> bool {
        !self.shared.lock().calls.is_empty()
    }

    /// The transport stopped reading: every waiting call ends as a lost connection, and no
    /// new one is sent.
    pub(crate) fn close(&self) {
        let mut waiting = self.shared.lock();
        waiting.closed = true;
        waiting.calls.clear();
        if let Some(watch) = &self.shared.watch {
            watch.arrived();
        }
    }

    /// Whether the desk's thread would poll the server's stdout before sleeping now.
    #[cfg(test)]
    pub(crate) fn is_polled(&self) -> bool {
        self.shared.watch.as_ref().is_some_and(Watch::is_polled)
    }
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, Waiting> {
        self.waiting.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Takes `id` off the waiting list; the pipe is no longer polled once no call waits.
    fn take(&self, id: &RequestId) -> Option<oneshot::Sender<Answer>> {
        let mut waiting = self.lock();
        let caller = waiting.calls.remove(id);
        if waiting.calls.is_empty()
            && let Some(watch) = &self.watch
        {
            watch.arrived();
        }
        caller
    }
}

/// A call between its registration and its answer. Dropped before the answer, it is taken
/// off the waiting list and the server is told (`notifications/cancelled`).
struct InFlight<'a> {
    shared: &'a Arc<Shared>,
    id: Option<RequestId>,
}

impl<'a> InFlight<'a> {
    fn register(
        shared: &'a Arc<Shared>,
        id: RequestId,
        answered: oneshot::Sender<Answer>,
    ) -> Result<Self, ServiceError> {
        let mut waiting = shared.lock();
        if waiting.closed {
            return Err(ServiceError::TransportClosed);
        }
        waiting.calls.insert(id.clone(), answered);
        if let Some(watch) = &shared.watch {
            watch.expect();
        }
        Ok(Self {
            shared,
            id: Some(id),
        })
    }

    /// Writes the request. A line cut off partway (the call given up while the pipe was
    /// full) would run into the next message, so a write given up closes the server's stdin
    /// instead: the connection ends, and the next call starts the server again.
    async fn send(&mut self, line: &[u8]) -> Result<(), ServiceError> {
        let mut whole = Whole {
            stdin: self.shared.stdin.lock().await,
            done: false,
        };
        let Some(pipe) = whole.stdin.as_mut() else {
            whole.done = true;
            return Err(ServiceError::TransportClosed);
        };
        let written = pipe.write_all(line).await;
        whole.done = true;
        written.map_err(|e| {
            tracing::warn!(error = %e, "cannot write a tool call to the stdio server");
            ServiceError::TransportClosed
        })
    }

    fn answered(&mut self) {
        self.id = None;
    }
}

/// The server's stdin while a line is being written to it: dropped before the write is
/// done, it closes the pipe.
struct Whole<'a> {
    stdin: tokio::sync::MutexGuard<'a, Option<ChildStdin>>,
    done: bool,
}

impl Drop for Whole<'_> {
    fn drop(&mut self) {
        if !self.done {
            tracing::warn!(
                "a tool call was given up while being written; closing the server's stdin"
            );
            self.stdin.take();
        }
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        let Some(id) = self.id.take() else {
            return;
        };
        if self.shared.take(&id).is_none() {
            // Answered (or the connection ended) as the caller gave up: nothing to cancel.
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let stdin = self.shared.stdin.clone();
        runtime.spawn(async move {
            let Ok(line) = cancelled_line(&id) else {
                return;
            };
            if let Some(pipe) = stdin.lock().await.as_mut() {
                // The server may be gone already; a cancel is a courtesy.
                let _ = pipe.write_all(&line).await;
            }
        });
    }
}

/// The request's line: `params` as rmcp would send them on this connection, the client's
/// context in `_meta` over any key of the caller's by that name, as rmcp sets it. `params`
/// are as they were when it returns: their `_meta` is set aside only while the rest is
/// written.
fn request_line(
    id: &RequestId,
    params: &mut CallToolRequestParams,
    context: &Context,
) -> serde_json::Result<Vec<u8>> {
    let meta = params.meta.take();
    let line = request_line_with(id, params, meta.as_ref(), context);
    params.meta = meta;
    line
}

/// [`request_line`], the caller's `_meta` given apart from the rest of `params`.
fn request_line_with(
    id: &RequestId,
    params: &CallToolRequestParams,
    meta: Option<&RequestMetaObject>,
    context: &Context,
) -> serde_json::Result<Vec<u8>> {
    let mut line = Vec::with_capacity(384 + context.entries.len());
    line.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    serde_json::to_writer(&mut line, id)?;
    line.extend_from_slice(br#","method":"tools/call","params":"#);
    serde_json::to_writer(&mut line, params)?;
    let own = meta
        .into_iter()
        .flat_map(|meta| meta.0.0.iter())
        .filter(|(key, _)| !context.keys.iter().any(|k| k == *key));
    let mut own = own.peekable();
    if !context.entries.is_empty() || own.peek().is_some() {
        // Reopen the params object (a struct: always `{…}`) for its `_meta`.
        line.pop();
        if line.last() != Some(&b'{') {
            line.push(b',');
        }
        line.extend_from_slice(br#""_meta":{"#);
        line.extend_from_slice(&context.entries);
        let mut first = context.entries.is_empty();
        for (key, value) in own {
            if !std::mem::take(&mut first) {
                line.push(b',');
            }
            serde_json::to_writer(&mut line, key)?;
            line.push(b':');
            serde_json::to_writer(&mut line, value)?;
        }
        line.extend_from_slice(b"}}");
    }
    line.extend_from_slice(b"}\n");
    Ok(line)
}

#[derive(Serialize)]
struct Cancelled<'a> {
    jsonrpc: &'static str,
    method: &'static str,
    params: CancelledParams<'a>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CancelledParams<'a> {
    request_id: &'a RequestId,
    reason: &'static str,
}

fn cancelled_line(id: &RequestId) -> serde_json::Result<Vec<u8>> {
    let mut line = serde_json::to_vec(&Cancelled {
        jsonrpc: "2.0",
        method: "notifications/cancelled",
        params: CancelledParams {
            request_id: id,
            reason: "the desk stopped waiting for the call",
        },
    })?;
    line.push(b'\n');
    Ok(line)
}

/// A `tools/call` answer as rmcp's `call_tool_once` reads it: a result, a round that needs
/// input, a task, or a result with nothing in it.
pub(crate) fn call_response(result: ServerResult) -> Result<CallToolResponse, ServiceError> {
    match result {
        ServerResult::CallToolResult(result) => Ok(CallToolResponse::Complete(result)),
        ServerResult::InputRequiredResult(result) => Ok(CallToolResponse::InputRequired(result)),
        ServerResult::CreateTaskResult(result) => Ok(CallToolResponse::Task(result)),
        ServerResult::EmptyResult(_) => Ok(CallToolResponse::Complete(CallToolResult::default())),
        ServerResult::TaskAckResult(ack) => {
            let mut result = CallToolResult::default();
            result.result_type = Some(ack.result_type);
            result.meta = ack.meta;
            Ok(CallToolResponse::Complete(result))
        }
        ServerResult::CustomResult(custom) => {
            let meta = meta_only(custom.0).ok_or(ServiceError::UnexpectedResponse)?;
            let mut result = CallToolResult::default();
            result.meta = Some(meta);
            Ok(CallToolResponse::Complete(result))
        }
        _ => Err(ServiceError::UnexpectedResponse),
    }
}

/// A result that holds only `_meta`.
fn meta_only(value: serde_json::Value) -> Option<MetaObject> {
    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct MetaOnly {
        #[serde(rename = "_meta")]
        meta: MetaObject,
    }
    serde_json::from_value::<MetaOnly>(value)
        .ok()
        .map(|m| m.meta)
}

#[cfg(test)]
mod tests;
