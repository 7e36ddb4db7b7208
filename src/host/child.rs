//! A server run as a child process on stdio: its stdout read through the desk's size guard
//! ([`super::oversize`]), its stderr handed back for the log, and the process stopped with the
//! connection (stdin closed first, so it can end by itself; killed if it does not).

use std::process::Stdio;
use std::time::Duration;

use rmcp::RoleClient;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::transport::async_rw::AsyncRwTransport;
use tokio::process::{ChildStderr, ChildStdin, ChildStdout};

use super::oversize::{Guarded, MAX_MESSAGE_BYTES};

/// How long a child may take to exit once its stdin is closed, before it is killed.
const EXIT_GRACE: Duration = Duration::from_secs(3);

pub struct ChildTransport {
    child: tokio::process::Child,
    transport: AsyncRwTransport<RoleClient, Guarded<ChildStdout>, ChildStdin>,
}

impl ChildTransport {
    /// Starts `command` with piped stdio; the caller reads the returned stderr.
    pub fn spawn(
        mut command: tokio::process::Command,
    ) -> std::io::Result<(Self, Option<ChildStderr>)> {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()?;
        let missing =
            |what: &str| std::io::Error::other(format!("the child's {what} is not a pipe"));
        let stdout = child.stdout.take().ok_or_else(|| missing("stdout"))?;
        let stdin = child.stdin.take().ok_or_else(|| missing("stdin"))?;
        let stderr = child.stderr.take();
        let transport = AsyncRwTransport::new(Guarded::new(stdout, MAX_MESSAGE_BYTES), stdin);
        Ok((Self { child, transport }, stderr))
    }
}

impl Transport<RoleClient> for ChildTransport {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.transport.send(item)
    }

    fn receive(&mut self) -> impl Future<Output = Option<RxJsonRpcMessage<RoleClient>>> + Send {
        self.transport.receive()
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.transport.close().await?;
        match tokio::time::timeout(EXIT_GRACE, self.child.wait()).await {
            Ok(status) => status.map(drop),
            Err(_) => {
                tracing::warn!(
                    "a server did not exit within {EXIT_GRACE:?} of its stdin closing; killing it"
                );
                self.child.kill().await
            }
        }
    }
}
