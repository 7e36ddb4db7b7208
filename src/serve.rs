//! Putting an MCP server on a transport: stdio for child processes, a duplex pipe for
//! servers the desk runs in its own process.
//!
//! A stdio server runs on one thread of its own, on a current-thread runtime, and reads and
//! writes its pipes through the I/O driver (`rmcp::transport::stdio_pipes`), so a message is
//! read, handled and answered without crossing a thread or Tokio's blocking pool. Both read a
//! `tools/call` request straight into rmcp's types (`crate::wire::server_stdio::CallsFirst`). After each
//! message it writes, a stdio server polls its stdin for the client's next request for a
//! moment before its thread sleeps ([`crate::wire::busy_poll`]). This module never decides what a
//! server does; it only carries its messages.

use std::time::Duration;

use rmcp::{ServerHandler, ServiceExt};
use tokio::io::DuplexStream;

use crate::wire::busy_poll::{self, Watch, Watching};
use crate::wire::server_stdio::CallsFirst;

/// Buffer of an in-process pipe; large enough for a tool list in one write.
const DUPLEX_BUFFER: usize = 256 * 1024;

/// Why a stdio server could not run.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("the MCP client went away or spoke out of turn before the server started: {0}")]
    Start(Box<rmcp::service::ServerInitializeError>),
    #[error(
        "cannot start the stdio server's thread or runtime ({0}); the machine may be out of threads or memory"
    )]
    Runtime(#[from] std::io::Error),
    #[error("the stdio server's thread stopped without saying why; see the log above")]
    Lost,
}

impl From<rmcp::service::ServerInitializeError> for ServeError {
    fn from(error: rmcp::service::ServerInitializeError) -> Self {
        Self::Start(Box::new(error))
    }
}

/// Serves `server` on this process's stdin and stdout until the client goes away.
/// stdout then belongs to JSON-RPC: log to stderr only.
///
/// The server gets a thread and a current-thread runtime of its own, whatever runtime calls
/// this: on a multi-thread runtime every message would wake another worker. After each
/// message it writes, it polls stdin for `busy_poll` before that thread sleeps (zero: never).
pub async fn stdio<S: ServerHandler>(server: S, busy_poll: Duration) -> Result<(), ServeError> {
    let (done, finished) = tokio::sync::oneshot::channel();
    std::thread::Builder::new()
        .name("mcp-stdio".into())
        .spawn(move || {
            let outcome = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .on_thread_park(busy_poll::before_park)
                .build()
                .map_err(ServeError::from)
                .and_then(|runtime| {
                    let outcome = runtime.block_on(stdio_here(server, busy_poll));
                    // Nothing is left to wait for once the client has gone.
                    runtime.shutdown_background();
                    outcome
                });
            let _ = done.send(outcome);
        })?;
    finished.await.unwrap_or(Err(ServeError::Lost))
}

/// Serves `server` on stdio on the runtime that polls this future.
async fn stdio_here<S: ServerHandler>(server: S, busy_poll: Duration) -> Result<(), ServeError> {
    // Pipes (as an MCP client starts us) go through the I/O driver; anything else, such as
    // a terminal, falls back to rmcp's blocking stdio handles.
    let (read, write) = rmcp::transport::stdio_pipes();
    let running = match stdin_watch(busy_poll) {
        Some(watch) => {
            let (read, write) = (
                Watching::new(read, watch.clone()),
                Watching::new(write, watch),
            );
            server.serve(CallsFirst::new(read, write)).await?
        }
        None => server.serve(CallsFirst::new(read, write)).await?,
    };
    if let Err(e) = running.waiting().await {
        tracing::warn!(error = %e, "server task ended with an error");
    }
    Ok(())
}

/// A watch of stdin, when stdin and stdout are both pipes (otherwise rmcp reads through its
/// blocking handles, whose thread would take the bytes before a poll saw them) and
/// `busy_poll` is not zero.
fn stdin_watch(busy_poll: Duration) -> Option<Watch> {
    use std::os::fd::{AsFd, BorrowedFd};
    use std::os::unix::fs::FileTypeExt;

    let is_pipe = |fd: BorrowedFd<'_>| {
        let file = std::fs::File::from(fd.try_clone_to_owned().ok()?);
        Some(file.metadata().ok()?.file_type().is_fifo())
    };
    let stdin = std::io::stdin();
    let stdout = std::io::stdout();
    if is_pipe(stdin.as_fd()) != Some(true) || is_pipe(stdout.as_fd()) != Some(true) {
        return None;
    }
    Watch::pipe(stdin.as_fd(), busy_poll).unwrap_or_else(|e| {
        tracing::warn!(error = %e, "cannot watch stdin; requests are waited for without polling");
        None
    })
}

/// Serves `server` on a task of its own and returns the client's end of the pipe.
/// The server ends when the client drops its end.
pub fn in_process<S: ServerHandler>(server: S) -> DuplexStream {
    let (server_io, client_io) = tokio::io::duplex(DUPLEX_BUFFER);
    tokio::spawn(async move {
        let (read, write) = tokio::io::split(server_io);
        // serve() returns once the client's first request (not discover) arrives.
        match server.serve(CallsFirst::new(read, write)).await {
            Ok(running) => {
                if let Err(e) = running.waiting().await {
                    tracing::warn!(error = %e, "in-process server ended with an error");
                }
            }
            Err(e) => tracing::debug!(error = %e, "in-process server closed before it started"),
        }
    });
    client_io
}
