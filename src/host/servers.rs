//! One rmcp client per configured server, under the prefix the config gave it.
//!
//! A connection starts with the probe (`server/discover`, falling back to `initialize` for
//! older servers) and remembers what it learned per server configuration in the data
//! directory, so the next start skips the probe (`serve_directly`). A version error sends it
//! back to the probe. A stdio server that dies is started again on the next call.

use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;

use rmcp::model::{
    ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult, ElicitationAction,
    ElicitationCapability, ErrorCode, FormElicitationCapability, Implementation, ProtocolVersion,
    ServerPeerInfo, Tool, UrlElicitationCapability,
};
use rmcp::service::{RequestContext, RunningService, ServiceError, serve_directly};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientHandler, ClientLifecycleMode, ClientServiceExt, ErrorData, RoleClient};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use tokio::io::AsyncBufReadExt;
use tokio::sync::{Mutex, mpsc};

use super::api::{FormAnswer, FormAsk, Pending, Question};
use super::form;
use crate::config::{ServerConfig, Transport, resolve_value};
use crate::tls::{self, CertProblem};

pub type Service = RunningService<RoleClient, HostClient>;

/// The revisions the host speaks, newest first.
pub fn preferred_versions() -> Vec<ProtocolVersion> {
    vec![ProtocolVersion::V_2026_07_28, ProtocolVersion::V_2025_11_25]
}

/// The handler of one connection: it knows which server it belongs to, so a person always
/// sees who asks.
#[derive(Clone)]
pub struct HostClient {
    pub prefix: String,
    pub origin: String,
    questions: mpsc::Sender<Question>,
    /// Time people have spent on this server's questions, and whether one is open now:
    /// a call's timeout leaves that time out, also for older servers that ask in the
    /// middle of a call.
    people: Arc<std::sync::Mutex<PeopleTime>>,
    /// Tickets with a call in flight to this server, to say which ticket an older server's
    /// question belongs to when only one can be.
    in_flight: Arc<std::sync::Mutex<Vec<String>>>,
}

#[derive(Debug, Default)]
struct PeopleTime {
    spent: std::time::Duration,
    open: usize,
}

impl HostClient {
    pub fn new(prefix: &str, origin: &str, questions: mpsc::Sender<Question>) -> Self {
        Self {
            prefix: prefix.to_owned(),
            origin: origin.to_owned(),
            questions,
            people: Default::default(),
            in_flight: Default::default(),
        }
    }

    /// Time people have spent answering this server so far, and whether a question is open.
    pub fn time_with_people(&self) -> (std::time::Duration, bool) {
        let people = self.people.lock().unwrap_or_else(|p| p.into_inner());
        (people.spent, people.open > 0)
    }

    /// Marks a ticket's call in flight until the guard drops.
    pub fn calling(&self, ticket: &str) -> InFlight {
        self.in_flight
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(ticket.to_owned());
        InFlight {
            tickets: Arc::clone(&self.in_flight),
            ticket: ticket.to_owned(),
        }
    }

    /// The ticket a question without one belongs to, when exactly one call is in flight.
    fn only_ticket_in_flight(&self) -> Option<String> {
        let tickets = self.in_flight.lock().unwrap_or_else(|p| p.into_inner());
        match tickets.as_slice() {
            [one] => Some(one.clone()),
            _ => None,
        }
    }

    /// Shows a server's request to a person and waits for the answer, as long as it takes.
    /// A form the host cannot show, or an answer that does not fit it, goes back as cancel.
    pub async fn ask(&self, ticket: Option<&str>, params: &ElicitRequestParams) -> ElicitResult {
        let ask = match form::form_ask(&self.prefix, &self.origin, ticket, params) {
            Ok(ask) => ask,
            Err(e) => {
                tracing::warn!(server = %self.prefix, error = %e, "cannot show a server's form; cancelled it");
                return ElicitResult::new(ElicitationAction::Cancel);
            }
        };
        let started = std::time::Instant::now();
        self.people.lock().unwrap_or_else(|p| p.into_inner()).open += 1;
        let answer = ask_person(&self.questions, ask.clone()).await;
        {
            let mut people = self.people.lock().unwrap_or_else(|p| p.into_inner());
            people.open -= 1;
            people.spent += started.elapsed();
        }
        if let (FormAnswer::Accept(_), super::api::FormKind::Url { .. }) = (&answer, &ask.kind) {
            // URL mode: an accept carries no content.
            return ElicitResult::new(ElicitationAction::Accept);
        }
        if let (FormAnswer::Accept(values), super::api::FormKind::Fields(fields)) =
            (&answer, &ask.kind)
            && let Err(problems) = crate::host::form_checks::validate(fields, values)
        {
            tracing::warn!(server = %self.prefix, ?problems, "an answer did not fit the form; cancelled it");
            return ElicitResult::new(ElicitationAction::Cancel);
        }
        form::elicit_result(&answer)
    }
}

/// A ticket's call to a server, in flight until dropped.
pub struct InFlight {
    tickets: Arc<std::sync::Mutex<Vec<String>>>,
    ticket: String,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        let mut tickets = self.tickets.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(index) = tickets.iter().position(|t| *t == self.ticket) {
            tickets.remove(index);
        }
    }
}

/// Puts a form in front of a person. If nobody can answer any more, that is a cancel.
pub async fn ask_person(questions: &mpsc::Sender<Question>, ask: FormAsk) -> FormAnswer {
    let (pending, answer) = Pending::new(ask);
    if questions.send(Question::Form(pending)).await.is_err() {
        return FormAnswer::Cancel;
    }
    answer.await.unwrap_or(FormAnswer::Cancel)
}

impl ClientHandler for HostClient {
    fn get_info(&self) -> ClientConfig {
        let mut config = ClientConfig::new(
            ClientCapabilities::builder()
                .enable_elicitation_with(
                    ElicitationCapability::new()
                        .with_form(FormElicitationCapability::new())
                        .with_url(UrlElicitationCapability::new()),
                )
                .build(),
            Implementation::new("support-desk", env!("CARGO_PKG_VERSION")),
        );
        // What an `initialize` handshake offers: the newest revision it can name. The
        // discover probe offers 2026-07-28 on its own.
        config.protocol_version = ProtocolVersion::V_2025_11_25;
        config
    }

    /// Input requests from prompts, resource reads and older servers arrive here; the
    /// host's own tool-call loop answers those of tool calls itself, knowing the ticket.
    async fn create_elicitation(
        &self,
        params: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let ticket = self.only_ticket_in_flight();
        Ok(self.ask(ticket.as_deref(), &params).await)
    }
}

/// What the probe learned about a server, kept per server configuration.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Remembered {
    /// The server answered `server/discover`: reconnect with this, skipping the probe.
    modern: Option<ServerPeerInfo>,
}

#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    #[error("server '{prefix}' ({origin}) could not be started: {message}")]
    Start {
        prefix: String,
        origin: String,
        message: String,
    },
    #[error(
        "server '{prefix}' ({origin}) speaks no protocol revision the desk speaks: the desk offers {ours}, the server {theirs}"
    )]
    NoCommonVersion {
        prefix: String,
        origin: String,
        ours: String,
        theirs: String,
    },
    #[error("server '{prefix}' ({origin}) did not complete the handshake: {message}")]
    Handshake {
        prefix: String,
        origin: String,
        message: String,
    },
    /// The TLS handshake refused the server (its certificate, or no TLS at all).
    #[error("server '{prefix}' ({origin}): {advice}")]
    Certificate {
        prefix: String,
        origin: String,
        advice: String,
    },
    #[error("server '{prefix}' ({origin}) connected but listing its tools failed: {message}")]
    Tools {
        prefix: String,
        origin: String,
        message: String,
    },
}

/// A live connection and what the server told us.
pub struct Live {
    pub service: Arc<Service>,
    pub revision: String,
    pub name: Option<String>,
    pub tools: Vec<Tool>,
}

/// One server, reconnectable.
pub struct ServerConn {
    pub prefix: String,
    pub origin: String,
    config: ServerConfig,
    handler: HostClient,
    remembered_at: Option<PathBuf>,
    live: Mutex<Option<Arc<Live>>>,
    connect_timeout: std::time::Duration,
}

/// How long a server may take to start, answer the handshake and list its tools.
pub const CONNECT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(20);

impl ServerConn {
    /// Connects and lists the tools. `data_dir` keeps what the probe learned.
    pub async fn connect(
        prefix: &str,
        config: &ServerConfig,
        questions: mpsc::Sender<Question>,
        data_dir: Option<PathBuf>,
    ) -> Result<Self, ConnectError> {
        Self::connect_within(prefix, config, questions, data_dir, CONNECT_TIMEOUT).await
    }

    /// Like [`connect`](Self::connect), with the time a start may take.
    pub async fn connect_within(
        prefix: &str,
        config: &ServerConfig,
        questions: mpsc::Sender<Question>,
        data_dir: Option<PathBuf>,
        connect_timeout: std::time::Duration,
    ) -> Result<Self, ConnectError> {
        let origin = config.origin();
        let remembered_at = data_dir.map(|dir| {
            dir.join("servers")
                .join(format!("{}.json", config_key(prefix, config)))
        });
        let conn = Self {
            prefix: prefix.to_owned(),
            origin: origin.clone(),
            config: config.clone(),
            handler: HostClient::new(prefix, &origin, questions),
            remembered_at,
            live: Mutex::new(None),
            connect_timeout,
        };
        conn.live().await?;
        Ok(conn)
    }

    pub fn handler(&self) -> &HostClient {
        &self.handler
    }

    /// The live connection, started again if the server went away.
    pub async fn live(&self) -> Result<Arc<Live>, ConnectError> {
        let mut slot = self.live.lock().await;
        if let Some(live) = slot.as_ref()
            && !live.service.is_closed()
        {
            return Ok(Arc::clone(live));
        }
        if slot.is_some() {
            tracing::warn!(server = %self.prefix, "server connection was lost; starting it again");
        }
        let live = Arc::new(self.start().await?);
        *slot = Some(Arc::clone(&live));
        Ok(live)
    }

    /// Drops the live connection so the next call starts the server again.
    pub async fn forget(&self) {
        if let Some(live) = self.live.lock().await.take() {
            live.service.cancellation_token().cancel();
        }
    }

    /// Whether a connection is open right now (without reconnecting).
    pub async fn current(&self) -> Option<Arc<Live>> {
        self.live.lock().await.clone()
    }

    /// Starts the server, giving up when the handshake and tool listing take longer than
    /// the connect timeout (a server that never answers must not hang the desk).
    async fn start(&self) -> Result<Live, ConnectError> {
        match tokio::time::timeout(self.connect_timeout, self.start_unbounded()).await {
            Ok(started) => started,
            Err(_) => Err(ConnectError::Handshake {
                prefix: self.prefix.clone(),
                origin: self.origin.clone(),
                message: format!(
                    "no usable answer within {} s; is it an MCP server {}?",
                    self.connect_timeout.as_secs(),
                    if self.config.url.is_some() {
                        "at that URL"
                    } else {
                        "on stdio"
                    }
                ),
            }),
        }
    }

    async fn start_unbounded(&self) -> Result<Live, ConnectError> {
        let remembered = self.recall();
        if let Some(info) = remembered.and_then(|r| r.modern) {
            match self.start_directly(info).await {
                Ok(live) => return Ok(live),
                Err(e) => {
                    tracing::info!(server = %self.prefix, error = %e, "remembered revision no longer works; probing again");
                    self.forget_remembered();
                }
            }
        }
        self.start_with_probe().await
    }

    async fn start_directly(&self, info: ServerPeerInfo) -> Result<Live, ConnectError> {
        let service = match self.transport()? {
            Opened::Child(t) => {
                serve_directly::<RoleClient, _, _, _, _>(self.handler.clone(), t, Some(info))
            }
            Opened::Duplex(t) => {
                serve_directly::<RoleClient, _, _, _, _>(self.handler.clone(), t, Some(info))
            }
            Opened::Http(t) => {
                serve_directly::<RoleClient, _, _, _, _>(self.handler.clone(), t, Some(info))
            }
        };
        self.finish(service).await
    }

    async fn start_with_probe(&self) -> Result<Live, ConnectError> {
        let lifecycle = ClientLifecycleMode::Auto {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            legacy_version: Some(ProtocolVersion::V_2025_11_25),
        };
        let service = match self.handshake(lifecycle).await? {
            // A lenient older server answers the probe with an empty result instead of an
            // error; it still speaks `initialize`, so start it again and use that.
            Err(rmcp::service::ClientInitializeError::ExpectedInitResult(_)) => {
                tracing::info!(server = %self.prefix, "the probe got an empty answer; connecting with initialize");
                self.handshake(ClientLifecycleMode::Initialize).await?
            }
            other => other,
        };
        let service = match service {
            Ok(service) => service,
            Err(e) => return Err(self.handshake_failed(e).await),
        };
        let live = self.finish(service).await?;
        if live.revision.as_str() >= "2026-07-28"
            && let Some(info) = live.service.peer_info()
        {
            self.remember(&Remembered {
                modern: Some((*info).clone()),
            });
        }
        Ok(live)
    }

    /// Opens a fresh transport and runs one handshake on it. The outer error is a server
    /// that could not be started; the inner one a handshake that failed.
    async fn handshake(
        &self,
        lifecycle: ClientLifecycleMode,
    ) -> Result<Result<Service, rmcp::service::ClientInitializeError>, ConnectError> {
        let handler = self.handler.clone();
        Ok(match self.transport()? {
            Opened::Child(t) => handler.serve_with_lifecycle(t, lifecycle).await,
            Opened::Duplex(t) => handler.serve_with_lifecycle(t, lifecycle).await,
            Opened::Http(t) => handler.serve_with_lifecycle(t, lifecycle).await,
        })
    }

    async fn finish(&self, service: Service) -> Result<Live, ConnectError> {
        let tools = service
            .list_all_tools()
            .await
            .map_err(|e| ConnectError::Tools {
                prefix: self.prefix.clone(),
                origin: self.origin.clone(),
                message: e.to_string(),
            })?;
        let info = service.peer_info();
        let revision = info
            .as_ref()
            .map(|i| i.protocol_version.to_string())
            .unwrap_or_default();
        let name = info
            .as_ref()
            .and_then(|i| i.server_info.as_ref())
            .map(|s| s.name.clone());
        tracing::info!(server = %self.prefix, origin = %self.origin, %revision, tools = tools.len(), "connected");
        Ok(Live {
            service: Arc::new(service),
            revision,
            name,
            tools,
        })
    }

    /// A failed handshake in words. For an `https://` server the TLS error is looked for in
    /// the transport's error; when rmcp kept only words, one handshake of our own says
    /// whether the certificate was the problem.
    async fn handshake_failed(&self, error: rmcp::service::ClientInitializeError) -> ConnectError {
        if let Some(problem) = tls_problem(&error) {
            return self.certificate_error(&problem);
        }
        if let Some(Transport::Http {
            url, ca_file: ca, ..
        }) = self.config.transport(&self.prefix).ok()
            && url.starts_with("https://")
            && let Ok(inspection) = tls::inspect(&url, ca.as_deref()).await
            && let Err(problem) = inspection.verdict
        {
            return self.certificate_error(&problem);
        }
        self.handshake_error(error)
    }

    fn certificate_error(&self, problem: &CertProblem) -> ConnectError {
        ConnectError::Certificate {
            prefix: self.prefix.clone(),
            origin: self.origin.clone(),
            advice: problem.advice(
                &format!("[servers.{}]", self.prefix),
                self.config.ca_file.as_deref(),
            ),
        }
    }

    fn handshake_error(&self, error: rmcp::service::ClientInitializeError) -> ConnectError {
        use rmcp::service::ClientInitializeError as E;
        let (prefix, origin) = (self.prefix.clone(), self.origin.clone());
        match error {
            E::NoCompatibleProtocolVersion {
                client_supported,
                server_supported,
            } => ConnectError::NoCommonVersion {
                prefix,
                origin,
                ours: list(&client_supported),
                theirs: list(&server_supported),
            },
            other => ConnectError::Handshake {
                prefix,
                origin,
                message: other.to_string(),
            },
        }
    }

    fn transport(&self) -> Result<Opened, ConnectError> {
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
                for (key, value) in env {
                    cmd.env(key, resolve_value(&value).map_err(failed)?);
                }
                let (transport, stderr) = TokioChildProcess::builder(cmd)
                    .stderr(Stdio::piped())
                    .spawn()
                    .map_err(|e| failed(e.to_string()))?;
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
            Transport::InProcess(name) => Ok(Opened::Duplex(in_process(&name).map_err(failed)?)),
            Transport::Http {
                url,
                headers,
                bearer_token_env,
                ca_file,
            } => {
                let mut config = StreamableHttpClientTransportConfig::with_uri(url);
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
                Ok(Opened::Http(StreamableHttpClientTransport::with_client(
                    client, config,
                )))
            }
        }
    }

    fn recall(&self) -> Option<Remembered> {
        let path = self.remembered_at.as_ref()?;
        let text = std::fs::read_to_string(path).ok()?;
        serde_json::from_str(&text).ok()
    }

    fn remember(&self, remembered: &Remembered) {
        let Some(path) = &self.remembered_at else {
            return;
        };
        let write = || -> std::io::Result<()> {
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir)?;
            }
            std::fs::write(path, serde_json::to_vec_pretty(remembered)?)
        };
        if let Err(e) = write() {
            tracing::warn!(server = %self.prefix, error = %e, "could not remember the server's revision");
        }
    }

    fn forget_remembered(&self) {
        if let Some(path) = &self.remembered_at {
            let _ = std::fs::remove_file(path);
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

/// The TLS problem inside a failed handshake, if that is what failed it.
fn tls_problem(error: &rmcp::service::ClientInitializeError) -> Option<CertProblem> {
    use rmcp::transport::streamable_http_client::StreamableHttpError;
    type HttpError = StreamableHttpError<reqwest::Error>;
    fn peel<'a>(
        error: &'a (dyn std::error::Error + 'static),
    ) -> Option<&'a (dyn std::error::Error + 'static)> {
        match error.downcast_ref::<HttpError>() {
            // rmcp keeps the client's error out of `source()`.
            Some(StreamableHttpError::Client(inner)) => Some(inner),
            _ => None,
        }
    }
    match error {
        rmcp::service::ClientInitializeError::TransportError { error, .. } => {
            CertProblem::find_with(error, peel)
        }
        _ => None,
    }
}

enum Opened {
    Child(TokioChildProcess),
    Duplex(tokio::io::DuplexStream),
    Http(StreamableHttpClientTransport<reqwest::Client>),
}

/// Servers built into this binary, served on a pipe inside this process.
fn in_process(name: &str) -> Result<tokio::io::DuplexStream, String> {
    match name {
        "partner" => {
            let parcels = Arc::new(crate::partner::Parcels::bundled());
            Ok(crate::serve::in_process(
                crate::partner::PartnerServer::new(parcels),
            ))
        }
        "shop" => {
            let world = Arc::new(crate::shop::ShopWorld::bundled());
            let store = crate::shop::Store::open(
                std::path::Path::new(":memory:"),
                &world,
                crate::shop::QuoteIds::Random,
            )
            .map_err(|e| e.to_string())?;
            let key: [u8; 32] = rand::random();
            let server = crate::shop::ShopServer::new(world, Arc::new(store), &key)
                .map_err(|e| e.message.to_string())?;
            Ok(crate::serve::in_process(server))
        }
        other => Err(format!(
            "there is no built-in server '{other}'; the built-in ones are shop and partner"
        )),
    }
}

/// A key for one server configuration, without secret values.
fn config_key(prefix: &str, config: &ServerConfig) -> String {
    let mut hasher = Sha256::new();
    hasher.update(prefix.as_bytes());
    hasher.update(config.origin().as_bytes());
    for name in config.env.keys().chain(config.headers.keys()) {
        hasher.update(name.as_bytes());
    }
    format!("{prefix}-{}", hex::encode(&hasher.finalize()[..8]))
}

fn list(versions: &[ProtocolVersion]) -> String {
    versions
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Whether an error means the connection is gone (so the server should be started again).
pub fn connection_lost(error: &ServiceError) -> bool {
    matches!(
        error,
        ServiceError::TransportClosed | ServiceError::TransportSend(_)
    ) || matches!(error, ServiceError::Cancelled { .. })
}

/// A -32021: the server needs a client capability the desk did not declare.
pub fn missing_capability(error: &ServiceError) -> Option<String> {
    match error {
        ServiceError::McpError(e) if e.code == ErrorCode(-32021) => Some(match &e.data {
            Some(data) => format!("{} ({data})", e.message),
            None => e.message.to_string(),
        }),
        _ => None,
    }
}
