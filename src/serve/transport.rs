//! The server's end of a pipe as an rmcp transport: a `tools/call` request is read straight
//! into rmcp's types, and every other line goes to rmcp's own transport, unchanged.
//!
//! rmcp reads each message through `JsonRpcMessage`'s deserializer, which buffers the whole
//! message, checks its shape, then tries `ClientRequest`'s untagged variants one by one
//! (`tools/call` is the fourteenth) and flattens `params` around its `_meta`. A profile of the
//! shop answering `get_order_status` put about a quarter of the server's CPU there. Here a
//! line that is a `tools/call` request with only the fields a request has is read by one
//! derived struct, and its `_meta` is moved where rmcp's deserializer puts it (the request's
//! extensions): the same message, tested side by side with rmcp's. Any other line (another
//! method, a notification, a response, a broken line, an unknown field) is handed to rmcp's
//! `AsyncRwTransport`, which reads it from an in-memory feed and decides what it is, answers
//! a malformed request with "Invalid Request", and writes every message the server sends.

use std::pin::pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};

use rmcp::RoleServer;
use rmcp::model::{
    CallToolRequest, CallToolRequestMethod, CallToolRequestParams, ClientRequest, Extensions,
    JsonRpcMessage, JsonRpcRequest, JsonRpcVersion2_0, RequestId,
};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::transport::async_rw::{AsyncRwTransport, DEFAULT_MAX_LINE_LENGTH};
use serde::Deserialize;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use crate::lines::Lines;

/// A server's transport over `R` (what the client writes) and `W` (what it reads).
pub struct CallsFirst<R, W: AsyncWrite> {
    /// The client's lines, as long as rmcp takes them.
    lines: Lines<R>,
    /// Lines for rmcp's transport, which reads them from here.
    feed: Feed,
    /// rmcp has been handed a line and has not yet asked for the next.
    rmcp_busy: bool,
    rmcp: AsyncRwTransport<RoleServer, Feed, W>,
}

impl<R, W> CallsFirst<R, W>
where
    R: AsyncRead + Send + Unpin,
    W: AsyncWrite + Send + Unpin + 'static,
{
    pub fn new(read: R, write: W) -> Self {
        let feed = Feed::default();
        Self {
            lines: Lines::new(read, DEFAULT_MAX_LINE_LENGTH, "a client"),
            rmcp_busy: false,
            rmcp: AsyncRwTransport::new_server(feed.clone(), write),
            feed,
        }
    }

    /// Lets rmcp's transport work on the line it was handed, until it has made a message of
    /// it, used it up (ignored it, or answered it as invalid) and waits for the next, or
    /// stopped (its writer failed).
    async fn rmcp_reads(&mut self) -> Handed {
        let feed = self.feed.clone();
        let mut receive = pin!(self.rmcp.receive());
        let handed = std::future::poll_fn(|cx: &mut Context<'_>| {
            match receive.as_mut().poll(cx) {
                Poll::Ready(Some(message)) => Poll::Ready(Handed::Message(message)),
                Poll::Ready(None) => Poll::Ready(Handed::Stopped),
                // Waiting on the feed, not on its writer: the line is used up.
                Poll::Pending if feed.starved() => Poll::Ready(Handed::UsedUp),
                Poll::Pending => Poll::Pending,
            }
        })
        .await;
        self.rmcp_busy = false;
        handed
    }
}

/// What rmcp's transport did with a line it was handed.
#[expect(
    clippy::large_enum_variant,
    reason = "returned and taken apart at once, never stored"
)]
enum Handed {
    Message(RxJsonRpcMessage<RoleServer>),
    UsedUp,
    Stopped,
}

impl<R, W> Transport<RoleServer> for CallsFirst<R, W>
where
    R: AsyncRead + Send + Unpin,
    W: AsyncWrite + Send + Unpin + 'static,
{
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.rmcp.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            // A receive cancelled while rmcp worked on a line resumes there.
            if self.rmcp_busy {
                match self.rmcp_reads().await {
                    Handed::Message(message) => return Some(message),
                    Handed::UsedUp => {}
                    Handed::Stopped => return None,
                }
            }
            match self.lines.next().await {
                Ok(true) => {}
                Ok(false) => return None,
                Err(e) => {
                    tracing::error!(error = %e, "cannot read from the MCP client");
                    return None;
                }
            }
            if let Some(call) = call_request(self.lines.line()) {
                return Some(call);
            }
            self.feed.push(self.lines.raw());
            self.rmcp_busy = true;
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.rmcp.close().await
    }
}

/// A `tools/call` request with the fields a request has and nothing else, as rmcp's
/// deserializer makes it: `_meta` in the request's extensions, not in its parameters.
/// `None` for any other line, which then goes to rmcp.
fn call_request(line: &[u8]) -> Option<RxJsonRpcMessage<RoleServer>> {
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct CallLine {
        #[expect(
            dead_code,
            reason = "only \"2.0\" deserializes: the field checks the version"
        )]
        jsonrpc: JsonRpcVersion2_0,
        id: RequestId,
        #[expect(
            dead_code,
            reason = "only \"tools/call\" deserializes: the field checks the method"
        )]
        method: CallToolRequestMethod,
        params: CallToolRequestParams,
    }

    let CallLine { id, mut params, .. } = serde_json::from_slice(line).ok()?;
    let mut extensions = Extensions::new();
    if let Some(meta) = params.meta.take() {
        extensions.insert(meta);
    }
    let mut request = CallToolRequest::new(params);
    request.extensions = extensions;
    Some(JsonRpcMessage::Request(JsonRpcRequest::new(
        id,
        ClientRequest::CallToolRequest(request),
    )))
}

/// Bytes for rmcp's transport to read, shared between it (as its reader) and
/// [`CallsFirst`]. Never at its end: with nothing in it, a read waits and marks the feed
/// starved, which tells `CallsFirst` that rmcp has used up what it was given.
#[derive(Clone, Default)]
struct Feed(Arc<Mutex<FeedState>>);

#[derive(Default)]
struct FeedState {
    bytes: Vec<u8>,
    /// How much of `bytes` has been read.
    read: usize,
    starved: bool,
}

impl Feed {
    fn state(&self) -> std::sync::MutexGuard<'_, FeedState> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn push(&self, line: &[u8]) {
        let mut state = self.state();
        if state.read == state.bytes.len() {
            state.bytes.clear();
            state.read = 0;
        }
        state.bytes.extend_from_slice(line);
        state.starved = false;
    }

    fn starved(&self) -> bool {
        self.state().starved
    }
}

impl AsyncRead for Feed {
    fn poll_read(
        self: std::pin::Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let mut state = self.state();
        let unread = &state.bytes[state.read..];
        if unread.is_empty() {
            // Nobody needs waking: `CallsFirst` polls rmcp again after its next push.
            state.starved = true;
            return Poll::Pending;
        }
        let n = unread.len().min(buf.remaining());
        buf.put_slice(&unread[..n]);
        state.read += n;
        Poll::Ready(Ok(()))
    }
}

#[cfg(test)]
mod tests;
