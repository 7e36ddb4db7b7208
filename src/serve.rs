//! Putting an MCP server on a transport: stdio for child processes, a duplex pipe for
//! servers the desk runs in its own process.

use rmcp::{ServerHandler, ServiceExt};
use tokio::io::DuplexStream;

/// Buffer of an in-process pipe; large enough for a tool list in one write.
const DUPLEX_BUFFER: usize = 256 * 1024;

/// Serves `server` on this process's stdin and stdout until the client goes away.
/// stdout then belongs to JSON-RPC: log to stderr only.
pub async fn stdio<S: ServerHandler>(
    server: S,
) -> Result<(), rmcp::service::ServerInitializeError> {
    let running = server.serve(rmcp::transport::stdio()).await?;
    if let Err(e) = running.waiting().await {
        tracing::warn!(error = %e, "server task ended with an error");
    }
    Ok(())
}

/// Serves `server` on a task of its own and returns the client's end of the pipe.
/// The server ends when the client drops its end.
pub fn in_process<S: ServerHandler>(server: S) -> DuplexStream {
    let (server_io, client_io) = tokio::io::duplex(DUPLEX_BUFFER);
    tokio::spawn(async move {
        // serve() returns once the client's first request (not discover) arrives.
        match server.serve(server_io).await {
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
