//! How a server is reached: a child process on stdio, a built-in server on an in-process pipe,
//! or Streamable HTTP with the desk's TLS trust and the server's own CA. An `https://` URL is
//! never tried as plain http; a secret comes from the environment, never from the config.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;

use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use tokio::io::AsyncBufReadExt;

use crate::auth::{SigningClient, Target};
use crate::config::{Transport, resolve_value};
use crate::host::servers::connect::{ConnectError, ServerConn};
use crate::tls;
use crate::wire::child_stdio::ChildStdio;
use crate::wire::oversize::SizeGuarded;

impl ServerConn {
    pub(in crate::host) async fn transport(&self) -> Result<Opened, ConnectError> {
        let failed = |message: String| ConnectError::Start {
            prefix: self.prefix.clone(),
            origin: self.origin.clone(),
            message,
        };
        match self
            .config
            .transport(&self.prefix)
            .map_err(|e| failed(e.to_string()))?
        {
            Transport::Stdio { command, args, env } => {
                let program = if command == "@self" {
                    std::env::current_exe()
                        .map_err(|e| failed(format!("cannot find this program: {e}")))?
                } else {
                    PathBuf::from(command)
                };
                let mut cmd = tokio::process::Command::new(program);
                cmd.args(&args).kill_on_drop(true);
                // Both ends of the pipe poll alike: a server of ours reads this as its window
                // (any other ignores it); the config's own `env` may still set it.
                let window = self.config.busy_poll().as_micros().to_string();
                cmd.env(crate::wire::busy_poll::WINDOW_ENV, window);
                for (key, value) in env {
                    cmd.env(key, resolve_value(&value).map_err(failed)?);
                }
                cmd.stdin(Stdio::piped())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped());
                let mut child = cmd.spawn().map_err(|e| failed(e.to_string()))?;
                let stderr = child.stderr.take();
                let transport = ChildStdio::new(child, self.config.busy_poll())
                    .ok_or_else(|| failed("its stdin or stdout is not a pipe".to_owned()))?;
                if let Some(stderr) = stderr {
                    let prefix = self.prefix.clone();
                    // A child's stderr goes to the log, never to the terminal.
                    tokio::spawn(async move {
                        let mut lines = tokio::io::BufReader::new(stderr).lines();
                        while let Ok(Some(line)) = lines.next_line().await {
                            tracing::info!(target: "server_stderr", server = %prefix, "{line}");
                        }
                    });
                }
                Ok(Opened::Child(transport))
            }
            Transport::InProcess(name) => {
                Ok(Opened::Duplex(self.builtins.open(&name).map_err(failed)?))
            }
            Transport::Http {
                url,
                headers,
                bearer_token_env,
                ca_file,
            } => {
                let mut config = StreamableHttpClientTransportConfig::with_uri(url.as_str());
                let static_token = bearer_token_env.is_some();
                if let Some(var) = bearer_token_env {
                    let token = std::env::var(&var).map_err(|_| {
                        failed(format!(
                            "the environment variable {var} holding its token is not set"
                        ))
                    })?;
                    config = config.auth_header(token);
                }
                let mut custom = std::collections::HashMap::new();
                for (name, value) in headers {
                    let value = resolve_value(&value).map_err(failed)?;
                    let name = name
                        .parse()
                        .map_err(|_| failed(format!("bad header name {name}")))?;
                    let value = value
                        .parse()
                        .map_err(|_| failed("a header value is not valid".to_owned()))?;
                    custom.insert(name, value);
                }
                if !custom.is_empty() {
                    config = config.custom_headers(custom);
                }
                let client = http_client(ca_file.as_deref()).map_err(|e| failed(e.to_string()))?;
                // A static token is the whole story; otherwise the server may ask for a
                // sign-in, and the person's grant lives in the data directory.
                let Some(data_dir) = self.data_dir.as_deref().filter(|_| !static_token) else {
                    return Ok(Opened::Http(StreamableHttpClientTransport::with_client(
                        SizeGuarded(client),
                        config,
                    )));
                };
                let target = self.sign_in_target(data_dir, &url).map_err(failed)?;
                let signing = SigningClient::new(client, target, self.sign_in.clone())
                    .await
                    .map_err(|e| failed(e.to_string()))?;
                Ok(Opened::Signed(StreamableHttpClientTransport::with_client(
                    SizeGuarded(signing),
                    config,
                )))
            }
        }
    }
}

/// The HTTP client of one server: the desk's TLS trust plus this server's CA file, and
/// rmcp's own defaults (no idle connections kept, only same-origin 307/308 redirects, so a
/// JSON-RPC body and the server's headers never go elsewhere).
fn http_client(ca_file: Option<&std::path::Path>) -> Result<reqwest::Client, tls::TlsSetupError> {
    let same_origin = reqwest::redirect::Policy::custom(|attempt| {
        let keeps_body = matches!(
            attempt.status(),
            reqwest::StatusCode::TEMPORARY_REDIRECT | reqwest::StatusCode::PERMANENT_REDIRECT
        );
        let same_origin = attempt
            .previous()
            .first()
            .is_some_and(|first| first.origin() == attempt.url().origin());
        if !keeps_body || !same_origin {
            attempt.stop()
        } else if attempt.previous().len() > 10 {
            attempt.error("more than 10 redirects")
        } else {
            attempt.follow()
        }
    });
    tls::http_client_builder(ca_file)?
        .pool_max_idle_per_host(0)
        .redirect(same_origin)
        .build()
        .map_err(|e| tls::TlsSetupError::Client(e.to_string()))
}

impl Opened {
    /// The transport's lane for tool calls beside rmcp's service loop, if it has one.
    pub(in crate::host) fn lane(&self) -> Option<crate::wire::lane::CallLane> {
        match self {
            Opened::Child(child) => Some(child.lane()),
            Opened::Duplex(_) | Opened::Http(_) | Opened::Signed(_) => None,
        }
    }
}

pub(in crate::host) enum Opened {
    Child(ChildStdio),
    Duplex(tokio::io::DuplexStream),
    Http(StreamableHttpClientTransport<SizeGuarded<reqwest::Client>>),
    /// HTTP that signs in with OAuth when the server asks.
    Signed(StreamableHttpClientTransport<SizeGuarded<SigningClient>>),
}

impl ServerConn {
    /// Who signs in to this server, and where their grant is kept.
    fn sign_in_target(&self, data_dir: &std::path::Path, url: &str) -> Result<Target, String> {
        let target = Target::for_server(&self.prefix, &self.config, data_dir)?
            .ok_or_else(|| format!("server '{}' has no URL to sign in to", self.prefix))?;
        Ok(match &self.identity {
            Some(identity) => Target {
                identity: identity.clone(),
                url: url.to_owned(),
                ..target
            },
            None => target,
        })
    }
}

/// Starts one built-in server on a pipe inside this process.
pub type ServeInProcess = Arc<dyn Fn() -> Result<tokio::io::DuplexStream, String> + Send + Sync>;

/// The servers a binary carries, by the name `in_process = "…"` gives them in the config. The
/// host knows none by itself: whoever starts it hands them over (the CLI hands over the bundled
/// shop and partner).
#[derive(Clone, Default)]
pub struct InProcessServers(BTreeMap<String, ServeInProcess>);

impl InProcessServers {
    /// The same servers, and `name` served by `serve`.
    pub fn with(
        mut self,
        name: &str,
        serve: impl Fn() -> Result<tokio::io::DuplexStream, String> + Send + Sync + 'static,
    ) -> Self {
        self.0.insert(name.to_owned(), Arc::new(serve));
        self
    }

    fn open(&self, name: &str) -> Result<tokio::io::DuplexStream, String> {
        match self.0.get(name) {
            Some(serve) => serve(),
            None if self.0.is_empty() => Err(format!(
                "there is no built-in server '{name}': this program carries none"
            )),
            None => Err(format!(
                "there is no built-in server '{name}'; the built-in ones are {}",
                self.0.keys().cloned().collect::<Vec<_>>().join(", ")
            )),
        }
    }
}
