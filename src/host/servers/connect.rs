//! One rmcp client per configured server, under the prefix the config gave it.
//!
//! A connection starts with the probe (`server/discover`, falling back to `initialize` for
//! older servers) and remembers what it learned per server configuration in the data
//! directory, so the next start skips the probe (`serve_directly`). A version error sends it
//! back to the probe. A stdio server that dies is started again on the next call. How each
//! is reached is `transport`'s; who answers its questions is `elicitation`'s.

use std::path::PathBuf;
use std::sync::Arc;

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResponse, CancelledNotification,
    CancelledNotificationParam, ClientNotification, ClientRequest, ProgressNotificationParam,
    ProtocolVersion, ServerNotification, ServerPeerInfo, SubscriptionFilter, Tool,
};
use rmcp::service::{PeerRequestOptions, RunningService, ServiceError, serve_directly};
use rmcp::{ClientHandler, ClientLifecycleMode, ClientServiceExt, RoleClient};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use tokio::sync::{Mutex, mpsc};

use crate::auth::{ClientIdentity, SignInPolicy};
use crate::config::ServerConfig;
use crate::host::api::Question;
use crate::wire::lane::CallLane;

use super::transport::Opened;
pub use crate::host::servers::elicitation::{HostClient, InFlight};
use crate::host::servers::notices::{ProgressRoutes, ServerNotice};
pub use crate::host::servers::transport::{InProcessServers, ServeInProcess};
pub use errors::{ConnectError, connection_lost, missing_capability};

mod errors;

pub type Service = RunningService<RoleClient, HostClient>;

/// The revisions the host speaks, newest first.
pub fn preferred_versions() -> Vec<ProtocolVersion> {
    vec![ProtocolVersion::V_2026_07_28, ProtocolVersion::V_2025_11_25]
}

/// What the probe learned about a server, kept per server configuration.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Remembered {
    /// The server answered `server/discover`: reconnect with this, skipping the probe.
    modern: Option<ServerPeerInfo>,
}

/// A live connection and what the server told us.
pub struct Live {
    pub service: Arc<Service>,
    /// Tool calls beside rmcp's service loop, on a server started as a child process.
    lane: Option<CallLane>,
    pub revision: String,
    pub name: Option<String>,
    /// What the server says of itself (`instructions`): for people to read, never given to
    /// the model.
    pub instructions: Option<String>,
    pub tools: Vec<Tool>,
}

impl Live {
    /// One `tools/call` round, as rmcp's `call_tool_once` answers it: on the connection's
    /// [`CallLane`] when it has one, through rmcp's service otherwise. The server's progress
    /// on it goes to `heard` while it is under way.
    ///
    /// `params` stay the caller's, for the next round or a retry; only rmcp's service is
    /// given its own copy.
    pub async fn call_tool(
        &self,
        params: &mut CallToolRequestParams,
        progress: &ProgressRoutes,
        heard: &mpsc::Sender<ProgressNotificationParam>,
    ) -> Result<CallToolResponse, ServiceError> {
        match &self.lane {
            Some(lane) => {
                let token = progress.token();
                params
                    .meta
                    .get_or_insert_default()
                    .set_progress_token(token.clone());
                let _following = progress.follow(token, heard.clone());
                lane.call_tool(params).await
            }
            // Boxed: rmcp's future is some kilobytes, and this one is moved into each
            // caller's state; unboxed, every lane call would copy that much as well.
            None => Box::pin(self.call_through_rmcp(params.clone(), progress, heard)).await,
        }
    }

    /// `call_tool_once` as rmcp sends it, with the progress token rmcp gave the request
    /// followed: rmcp puts its own token on every request, over any the caller set.
    async fn call_through_rmcp(
        &self,
        params: CallToolRequestParams,
        progress: &ProgressRoutes,
        heard: &mpsc::Sender<ProgressNotificationParam>,
    ) -> Result<CallToolResponse, ServiceError> {
        let peer = self.service.peer();
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        let handle = peer
            .send_request_with_option(request, PeerRequestOptions::no_options())
            .await?;
        // Followed at once: on the desk's one thread, nothing the server sends back is read
        // before this task waits for the answer.
        let _following = progress.follow(handle.progress_token.clone(), heard.clone());
        let mut abandoned = Abandoned {
            peer: Some(peer.clone()),
            id: handle.id.clone(),
        };
        let answer = handle.await_response().await;
        abandoned.peer = None;
        crate::wire::lane::call_response(answer?)
    }
}

/// A call through rmcp, until its answer came: dropped before (a timeout), the server is
/// told (`notifications/cancelled`), as rmcp's own `call_tool_once` does.
struct Abandoned {
    peer: Option<rmcp::Peer<RoleClient>>,
    id: rmcp::model::RequestId,
}

impl Drop for Abandoned {
    fn drop(&mut self) {
        let Some(peer) = self.peer.take() else {
            return;
        };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let cancelled = CancelledNotification::new(CancelledNotificationParam::new(
            Some(self.id.clone()),
            Some("the desk stopped waiting for the call".to_owned()),
        ));
        runtime.spawn(async move {
            // The server may be gone already; a cancel is a courtesy.
            let _ = peer
                .send_notification(ClientNotification::CancelledNotification(cancelled))
                .await;
        });
    }
}

/// One server, reconnectable.
pub struct ServerConn {
    pub prefix: String,
    pub origin: String,
    pub(in crate::host) config: ServerConfig,
    handler: HostClient,
    remembered_at: Option<PathBuf>,
    live: Mutex<Option<Arc<Live>>>,
    connect_timeout: std::time::Duration,
    /// The built-in servers `in_process` may name.
    pub(in crate::host) builtins: InProcessServers,
    /// Where the person's sign-in grants live (none: the desk does not sign in).
    pub(in crate::host) data_dir: Option<PathBuf>,
    pub(in crate::host) sign_in: SignInPolicy,
    pub(in crate::host) identity: Option<ClientIdentity>,
}

/// What a connection needs besides its config.
#[derive(Clone, Default)]
pub struct Reach {
    /// Where what the probe learned is kept.
    pub data_dir: Option<PathBuf>,
    pub connect_timeout: std::time::Duration,
    pub builtins: InProcessServers,
    /// What a server's request for a sign-in leads to.
    pub sign_in: SignInPolicy,
    /// Who the desk is to the authorization server, instead of the config's `oauth` table.
    pub identity: Option<ClientIdentity>,
    /// Where the server's word that its tools or a resource changed goes, if anyone listens.
    pub notices: Option<mpsc::UnboundedSender<ServerNotice>>,
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
        let reach = Reach {
            data_dir,
            connect_timeout,
            ..Reach::default()
        };
        Self::connect_with(prefix, config, questions, reach).await
    }

    /// Connects, with the built-in servers `in_process` may name.
    pub async fn connect_with(
        prefix: &str,
        config: &ServerConfig,
        questions: mpsc::Sender<Question>,
        reach: Reach,
    ) -> Result<Self, ConnectError> {
        let Reach {
            data_dir,
            connect_timeout,
            builtins,
            sign_in,
            identity,
            notices,
        } = reach;
        let origin = config.origin();
        let remembered_at = data_dir.as_ref().map(|dir| {
            dir.join("servers")
                .join(format!("{}.json", config_key(prefix, config)))
        });
        let conn = Self {
            prefix: prefix.to_owned(),
            origin: origin.clone(),
            config: config.clone(),
            handler: HostClient::new(prefix, &origin, questions).with_notices(notices),
            remembered_at,
            live: Mutex::new(None),
            connect_timeout,
            builtins,
            data_dir,
            sign_in,
            identity,
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
        // Boxed: starting a server is a large future, and this one sits in every call's.
        let live = Arc::new(Box::pin(self.start()).await?);
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
        let opened = self.transport().await?;
        let lane = opened.lane();
        let service = match opened {
            Opened::Child(t) => {
                serve_directly::<RoleClient, _, _, _, _>(self.handler.clone(), t, Some(info))
            }
            Opened::Duplex(t) => {
                serve_directly::<RoleClient, _, _, _, _>(self.handler.clone(), t, Some(info))
            }
            Opened::Http(t) => {
                serve_directly::<RoleClient, _, _, _, _>(self.handler.clone(), t, Some(info))
            }
            Opened::Signed(t) => {
                serve_directly::<RoleClient, _, _, _, _>(self.handler.clone(), t, Some(info))
            }
        };
        self.finish(service, lane).await
    }

    async fn start_with_probe(&self) -> Result<Live, ConnectError> {
        let lifecycle = ClientLifecycleMode::Auto {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            legacy_version: Some(ProtocolVersion::V_2025_11_25),
        };
        let (lane, service) = match self.handshake(lifecycle).await? {
            // A lenient older server answers the probe with an empty result instead of an
            // error; it still speaks `initialize`, so start it again and use that.
            (_, Err(rmcp::service::ClientInitializeError::ExpectedInitResult(_))) => {
                tracing::info!(server = %self.prefix, "the probe got an empty answer; connecting with initialize");
                self.handshake(ClientLifecycleMode::Initialize).await?
            }
            other => other,
        };
        let service = match service {
            Ok(service) => service,
            Err(e) => return Err(self.handshake_failed(e).await),
        };
        let live = self.finish(service, lane).await?;
        if live.revision.as_str() >= "2026-07-28"
            && let Some(info) = live.service.peer_info()
        {
            self.remember(&Remembered {
                modern: Some((*info).clone()),
            });
        }
        Ok(live)
    }

    /// Opens a fresh transport and runs one handshake on it, with the transport's call lane
    /// if it has one. The outer error is a server that could not be started; the inner one a
    /// handshake that failed.
    async fn handshake(
        &self,
        lifecycle: ClientLifecycleMode,
    ) -> Result<
        (
            Option<CallLane>,
            Result<Service, rmcp::service::ClientInitializeError>,
        ),
        ConnectError,
    > {
        let handler = self.handler.clone();
        let opened = self.transport().await?;
        let lane = opened.lane();
        let service = match opened {
            Opened::Child(t) => handler.serve_with_lifecycle(t, lifecycle).await,
            Opened::Duplex(t) => handler.serve_with_lifecycle(t, lifecycle).await,
            Opened::Http(t) => handler.serve_with_lifecycle(t, lifecycle).await,
            Opened::Signed(t) => handler.serve_with_lifecycle(t, lifecycle).await,
        };
        Ok((lane, service))
    }

    async fn finish(&self, service: Service, lane: Option<CallLane>) -> Result<Live, ConnectError> {
        let tools = service
            .list_all_tools()
            .await
            .map_err(|e| match e.auth_challenge() {
                Some(_) => self.sign_in_needed(),
                None => ConnectError::Tools {
                    prefix: self.prefix.clone(),
                    origin: self.origin.clone(),
                    message: e.to_string(),
                },
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
        let instructions = info.as_ref().and_then(|i| i.instructions.clone());
        tracing::info!(server = %self.prefix, origin = %self.origin, %revision, tools = tools.len(), "connected");
        // A lane needs the revision the handshake settled on; without it, rmcp makes the calls.
        let client = self.handler.get_info();
        let lane = lane
            .zip(info.as_ref())
            .filter(|(lane, info)| lane.set_context(info, &client))
            .map(|(lane, _)| lane);
        if let Some(info) = &info
            && !info.protocol_version.has_initialize()
            && info
                .capabilities
                .tools
                .as_ref()
                .is_some_and(|tools| tools.list_changed == Some(true))
        {
            self.listen_for_tool_changes(&service).await;
        }
        Ok(Live {
            service: Arc::new(service),
            lane,
            revision,
            name,
            instructions,
            tools,
        })
    }

    /// On a revision that subscribes (2026-07-28), asks the server to say when its tools
    /// change (`subscriptions/listen`); what it says goes to the handler, as an older
    /// server's unasked notification does. A server that will not is only logged: its tools
    /// are then listed again between tickets, as always.
    async fn listen_for_tool_changes(&self, service: &Service) {
        let filter = SubscriptionFilter::builder().tools_list_changed().build();
        let mut subscription = match service.peer().listen(filter).await {
            Ok(subscription) => subscription,
            Err(e) => {
                tracing::warn!(server = %self.prefix, error = %e, "the server will not say when its tools change; they are listed again between tickets");
                return;
            }
        };
        if subscription.acknowledged().tools_list_changed != Some(true) {
            tracing::info!(server = %self.prefix, "the server does not say when its tools change");
            return;
        }
        let handler = self.handler.clone();
        tokio::spawn(async move {
            loop {
                match subscription.next().await {
                    Ok(Some(ServerNotification::ToolListChangedNotification(_))) => {
                        handler.tools_changed();
                    }
                    Ok(Some(_)) => {}
                    // The connection ended; the next one subscribes again.
                    Ok(None) => return,
                    Err(e) => {
                        tracing::warn!(server = %handler.prefix, error = %e, "the server's subscription ended; its tools are listed again between tickets");
                        return;
                    }
                }
            }
        });
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
