//! The client's end of a server started as a child process: its stdin and stdout as an rmcp
//! transport of the desk's own.
//!
//! rmcp's `TokioChildProcess` reads every message through `JsonRpcMessage`'s deserializer,
//! which buffers the whole message and tries each shape in turn, and then `ServerResult`'s
//! untagged variants one by one until `CallToolResult` fits: a profile of a tool call put
//! more than a third of the client's CPU there. This transport knows which of its requests
//! are `tools/call`s, so an answer to one is read straight into a `CallToolResult`: by
//! [`answer::read`] when it has the one shape rmcp's servers write, else by serde (whose
//! `CallToolResult` refuses anything but a complete result); anything else, or an answer
//! that does not fit, goes through rmcp's own deserializer as before. Stdout is read through
//! the desk's size guard ([`super::oversize`]), which cuts a message over its limit and
//! answers the request with "too large"; lines longer than rmcp's
//! [`DEFAULT_MAX_LINE_LENGTH`] are dropped, as rmcp drops them.
//! The answer to a call made on the transport's [`CallLane`] goes to its caller, not to rmcp.

use std::collections::HashSet;
use std::process::ExitStatus;
use std::sync::Arc;
use std::time::Duration;

use rmcp::RoleClient;
use rmcp::model::{
    CallToolResult, ClientNotification, ClientRequest, JsonRpcMessage, JsonRpcResponse,
    JsonRpcVersion2_0, RequestId, ServerResult,
};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::transport::async_rw::DEFAULT_MAX_LINE_LENGTH;
use serde::Deserialize;
use tokio::io::AsyncWriteExt;
use tokio::process::{Child, ChildStdout};
use tokio::sync::Mutex;

use crate::wire::busy_poll::Watch;
use crate::wire::lane::{CallLane, Stdin};
use crate::wire::lines::Lines;
use crate::wire::oversize::{Guarded, MAX_MESSAGE_BYTES};

mod answer;

/// How long a closed server may take to exit before it is killed.
const EXIT_WAIT: Duration = Duration::from_secs(3);

pub struct ChildStdio {
    // Boxed: the transport sits in an enum beside HTTP's much smaller ones.
    child: Box<Child>,
    lines: Box<Lines<Guarded<ChildStdout>>>,
    write: Stdin,
    /// `tools/call` requests rmcp sent and not yet answered.
    calls: HashSet<RequestId>,
    /// Calls made beside rmcp, whose answers go to their callers.
    lane: CallLane,
}

/// One line as a message for rmcp, `calls` being the `tools/call` requests rmcp sent and
/// that are not yet answered: `None` for a line that is not a message, or one that answered
/// a call on `lane` and went to its caller.
fn decode(
    calls: &mut HashSet<RequestId>,
    lane: &CallLane,
    line: &[u8],
) -> Option<RxJsonRpcMessage<RoleClient>> {
    let lane_waits = lane.is_waiting();
    if (lane_waits || !calls.is_empty())
        && let Some((id, result)) = answer::read(line).or_else(|| {
            let answer = serde_json::from_slice::<CallAnswer>(line).ok()?;
            Some((answer.id, answer.result))
        })
    {
        if lane_waits && let Some(caller) = lane.claim(&id) {
            // The caller may have given up meanwhile; then nobody wants it.
            let _ = caller.send(Ok(ServerResult::CallToolResult(result)));
            return None;
        }
        if calls.remove(&id) {
            return Some(JsonRpcMessage::Response(JsonRpcResponse {
                jsonrpc: JsonRpcVersion2_0,
                id,
                result: ServerResult::CallToolResult(result),
            }));
        }
    }
    match serde_json::from_slice::<RxJsonRpcMessage<RoleClient>>(line) {
        Ok(JsonRpcMessage::Response(response)) => {
            if let Some(caller) = lane.claim(&response.id) {
                let _ = caller.send(Ok(response.result));
                return None;
            }
            calls.remove(&response.id);
            Some(JsonRpcMessage::Response(response))
        }
        Ok(JsonRpcMessage::Error(error)) => {
            if let Some(id) = &error.id {
                if let Some(caller) = lane.claim(id) {
                    let _ = caller.send(Err(error.error));
                    return None;
                }
                calls.remove(id);
            }
            Some(JsonRpcMessage::Error(error))
        }
        Ok(message) => Some(message),
        Err(e) => {
            // As rmcp does: what is not a message the client knows (a notification of
            // another protocol, a broken line) is left unanswered.
            tracing::debug!(error = %e, "ignoring a line from the server that is not a message");
            None
        }
    }
}

/// An answer to a `tools/call`, read in one pass (when [`answer::read`] does not take it).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CallAnswer {
    #[expect(
        dead_code,
        reason = "only \"2.0\" deserializes: the field checks the version"
    )]
    jsonrpc: JsonRpcVersion2_0,
    id: RequestId,
    result: CallToolResult,
}

impl ChildStdio {
    /// The transport over `child`'s piped stdin and stdout; `None` when either is not piped.
    /// While a tool call waits, its stdout is polled for `busy_poll` before the desk's thread
    /// sleeps ([`crate::wire::busy_poll`]; zero: never).
    pub fn new(mut child: Child, busy_poll: Duration) -> Option<Self> {
        let stdin = child.stdin.take()?;
        let stdout = child.stdout.take()?;
        let watch = Watch::pipe(&stdout, busy_poll).unwrap_or_else(|e| {
            tracing::warn!(error = %e, "cannot watch a stdio server's stdout; its calls wait without polling");
            None
        });
        let write = Arc::new(Mutex::new(Some(stdin)));
        Some(Self {
            child: Box::new(child),
            lines: Box::new(Lines::new(
                Guarded::new(stdout, MAX_MESSAGE_BYTES),
                DEFAULT_MAX_LINE_LENGTH,
                "a server",
            )),
            lane: CallLane::new(write.clone(), watch),
            write,
            calls: HashSet::new(),
        })
    }

    /// The lane for tool calls beside rmcp's service loop (see [`CallLane`]).
    pub fn lane(&self) -> CallLane {
        self.lane.clone()
    }

    /// Closes the server's stdin and waits for it to exit; kills it if it does not.
    async fn shut_down(&mut self) -> std::io::Result<Option<ExitStatus>> {
        self.lane.close();
        drop(self.write.lock().await.take());
        match tokio::time::timeout(EXIT_WAIT, self.child.wait()).await {
            Ok(status) => status.map(Some),
            Err(_) => {
                tracing::warn!("a stdio server did not exit when its stdin closed; killing it");
                self.child.kill().await.map(|()| None)
            }
        }
    }
}

impl Transport<RoleClient> for ChildStdio {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        match &item {
            JsonRpcMessage::Request(request) => {
                if let ClientRequest::CallToolRequest(_) = &request.request {
                    self.calls.insert(request.id.clone());
                }
            }
            JsonRpcMessage::Notification(notification) => {
                if let ClientNotification::CancelledNotification(cancelled) =
                    &notification.notification
                    && let Some(id) = &cancelled.params.request_id
                {
                    self.calls.remove(id);
                }
            }
            JsonRpcMessage::Response(_) | JsonRpcMessage::Error(_) => {}
        }
        let line = serde_json::to_vec(&item).map(|mut line| {
            line.push(b'\n');
            line
        });
        let write = self.write.clone();
        async move {
            let line = line?;
            let mut stdin = write.lock().await;
            let Some(stdin) = stdin.as_mut() else {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::NotConnected,
                    "the server's stdin is closed",
                ));
            };
            stdin.write_all(&line).await
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        loop {
            match self.lines.next().await {
                Ok(true) => {}
                Ok(false) => {
                    self.lane.close();
                    return None;
                }
                Err(e) => {
                    tracing::error!(error = %e, "cannot read from the stdio server");
                    self.lane.close();
                    return None;
                }
            }
            let text = self.lines.line();
            let text = text.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(text);
            if !text.is_empty()
                && let Some(message) = decode(&mut self.calls, &self.lane, text)
            {
                return Some(message);
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.shut_down().await.map(|_| ())
    }
}

impl Drop for ChildStdio {
    fn drop(&mut self) {
        self.lane.close();
    }
}

#[cfg(test)]
mod tests;
