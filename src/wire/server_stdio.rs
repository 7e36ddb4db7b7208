//! The server's end of a pipe as an rmcp transport: a `tools/call` request is read straight
//! into rmcp's types, a tool's plain answer is written straight from them, and every other
//! line goes to rmcp's own transport, unchanged.
//!
//! rmcp reads each message through `JsonRpcMessage`'s deserializer, which buffers the whole
//! message, checks its shape, then tries `ClientRequest`'s untagged variants one by one
//! (`tools/call` is the fourteenth) and flattens `params` around its `_meta`. A profile of the
//! shop answering `get_order_status` put about a quarter of the server's CPU there. Here a
//! line that is a `tools/call` request with only the fields a request has is read by one
//! derived struct, and its `_meta` is moved where rmcp's deserializer puts it (the request's
//! extensions): the same message, tested side by side with rmcp's. Any other line (another
//! method, a notification, a response, a broken line, an unknown field) is handed to rmcp's
//! `AsyncRwTransport`, which reads it from an in-memory feed, decides what it is, and
//! answers a malformed request with "Invalid Request".
//!
//! Every message the server sends is written here, as rmcp's transport would write it: a
//! tool's answer of text blocks by [`answer::write`], anything else by serde_json. What rmcp's
//! transport writes itself (its "Invalid Request") goes to an in-memory outbox and from there
//! to the pipe, under the same lock as every other message.

use std::pin::{Pin, pin};
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
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, ReadBuf};

use crate::wire::lines::Lines;

mod answer;

/// The pipe to the client, shared by every message's write; `None` once closed.
type Writer<W> = Arc<tokio::sync::Mutex<Option<W>>>;

/// A server's transport over `R` (what the client writes) and `W` (what it reads).
pub struct CallsFirst<R, W: AsyncWrite> {
    /// The client's lines, as long as rmcp takes them.
    lines: Lines<R>,
    /// Lines for rmcp's transport, which reads them from here.
    feed: Feed,
    /// rmcp has been handed a line and has not yet asked for the next.
    rmcp_busy: bool,
    rmcp: AsyncRwTransport<RoleServer, Feed, Outbox>,
    /// What rmcp's transport wrote, on its way to `write`.
    outbox: Outbox,
    /// Bytes taken from the outbox and how many of them are written: a receive dropped
    /// while writing them resumes there.
    unsent: Vec<u8>,
    unsent_written: usize,
    write: Writer<W>,
}

impl<R, W> CallsFirst<R, W>
where
    R: AsyncRead + Send + Unpin,
    W: AsyncWrite + Send + Unpin + 'static,
{
    pub fn new(read: R, write: W) -> Self {
        let feed = Feed::default();
        let outbox = Outbox::default();
        Self {
            lines: Lines::new(read, DEFAULT_MAX_LINE_LENGTH, "a client"),
            rmcp_busy: false,
            rmcp: AsyncRwTransport::new_server(feed.clone(), outbox.clone()),
            feed,
            outbox,
            unsent: Vec::new(),
            unsent_written: 0,
            write: Arc::new(tokio::sync::Mutex::new(Some(write))),
        }
    }

    /// Writes what rmcp's transport wrote to the outbox, if anything.
    async fn write_rmcps(&mut self) -> std::io::Result<()> {
        self.outbox.take_into(&mut self.unsent);
        if self.unsent.is_empty() {
            return Ok(());
        }
        let write = self.write.clone();
        let mut write = write.lock().await;
        let write = write.as_mut().ok_or_else(closed)?;
        while self.unsent_written < self.unsent.len() {
            match write.write(&self.unsent[self.unsent_written..]).await? {
                0 => return Err(std::io::ErrorKind::WriteZero.into()),
                n => self.unsent_written += n,
            }
        }
        write.flush().await?;
        self.unsent.clear();
        self.unsent_written = 0;
        Ok(())
    }

    /// Lets rmcp's transport work on the line it was handed, until it has made a message of
    /// it, used it up (ignored it, or answered it as invalid) and waits for the next, or
    /// stopped (closed).
    async fn rmcp_reads(&mut self) -> Handed {
        let feed = self.feed.clone();
        let mut receive = pin!(self.rmcp.receive());
        let handed = std::future::poll_fn(|cx: &mut Context<'_>| {
            match receive.as_mut().poll(cx) {
                Poll::Ready(Some(message)) => Poll::Ready(Handed::Message(message)),
                Poll::Ready(None) => Poll::Ready(Handed::Stopped),
                // Waiting on the feed (its writer, the outbox, never waits): the line is used up.
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
        let line = encode(&item);
        let write = self.write.clone();
        async move {
            let line = line?;
            let mut write = write.lock().await;
            let write = write.as_mut().ok_or_else(closed)?;
            write.write_all(&line).await?;
            write.flush().await
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            // What rmcp's transport answered (an invalid message) goes out before more is read.
            if let Err(e) = self.write_rmcps().await {
                tracing::error!(error = %e, "cannot write to the MCP client");
                return None;
            }
            // A receive cancelled while rmcp worked on a line resumes there.
            if self.rmcp_busy {
                match self.rmcp_reads().await {
                    Handed::Message(message) => return Some(message),
                    Handed::UsedUp => continue,
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
        self.rmcp.close().await?;
        match self.write.lock().await.take() {
            Some(mut write) => write.shutdown().await,
            None => Ok(()),
        }
    }
}

/// `message` as a line, as rmcp's transport writes it: serde_json, then a newline.
fn encode(message: &TxJsonRpcMessage<RoleServer>) -> std::io::Result<Vec<u8>> {
    if let Some(line) = answer::write(message) {
        return Ok(line);
    }
    let mut line = serde_json::to_vec(message)?;
    line.push(b'\n');
    Ok(line)
}

/// The error of a write after the transport closed, as rmcp's transport gives it.
fn closed() -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::NotConnected, "Transport is closed")
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
        self: Pin<&mut Self>,
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

/// What rmcp's transport writes, held for [`CallsFirst`] to write to the pipe.
#[derive(Clone, Default)]
struct Outbox(Arc<Mutex<Vec<u8>>>);

impl Outbox {
    /// Moves everything written so far to the end of `into`.
    fn take_into(&self, into: &mut Vec<u8>) {
        let mut bytes = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        into.append(&mut bytes);
    }
}

impl AsyncWrite for Outbox {
    fn poll_write(
        self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let mut bytes = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        bytes.extend_from_slice(buf);
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

#[cfg(test)]
mod tests;
