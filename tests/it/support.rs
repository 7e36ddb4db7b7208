//! Shared test parts: a scripted lead behind a real rmcp `ClientHandler`, and connections
//! to the bundled servers in-process and as child processes.

use std::collections::VecDeque;
use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex};

use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, ElicitRequestParams,
    ElicitResult, ElicitationAction, ElicitationCapability, FormElicitationCapability,
    Implementation, ProtocolVersion,
};
use rmcp::service::{RequestContext, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, ClientLifecycleMode, ClientServiceExt, ErrorData, RoleClient};
use serde_json::Value;
use support_desk::partner::{Parcels, PartnerServer};
use support_desk::shop::{QuoteIds, ShopServer, ShopWorld, SqliteStore, Store};

pub const BIN: &str = env!("CARGO_BIN_EXE_support-desk");

/// What the lead was shown: the form's message and its fields in order.
#[derive(Debug, Clone, PartialEq)]
pub struct Asked {
    pub message: String,
    pub fields: Vec<String>,
}

/// A lead who answers input requests from a script, and remembers what was asked.
/// With the script empty, the lead cancels (a dismissed form is never a yes).
#[derive(Clone, Default)]
pub struct Lead {
    answers: Arc<Mutex<VecDeque<ElicitResult>>>,
    asked: Arc<Mutex<Vec<Asked>>>,
}

impl Lead {
    pub fn answering(answers: impl IntoIterator<Item = ElicitResult>) -> Self {
        let lead = Self::default();
        lead.answers.lock().expect("lead lock").extend(answers);
        lead
    }

    pub fn asked(&self) -> Vec<Asked> {
        self.asked.lock().expect("lead lock").clone()
    }
}

pub fn accept(content: Value) -> ElicitResult {
    ElicitResult::new(ElicitationAction::Accept).with_content(content)
}

pub fn decline() -> ElicitResult {
    ElicitResult::new(ElicitationAction::Decline)
}

pub fn cancel() -> ElicitResult {
    ElicitResult::new(ElicitationAction::Cancel)
}

impl ClientHandler for Lead {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::builder()
                .enable_elicitation_with(
                    ElicitationCapability::new().with_form(FormElicitationCapability::new()),
                )
                .build(),
            Implementation::new("support-desk-tests", "0"),
        )
    }

    async fn create_elicitation(
        &self,
        params: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let asked = match params {
            ElicitRequestParams::FormElicitationParams {
                message,
                requested_schema,
                ..
            } => Asked {
                message,
                fields: requested_schema
                    .property_order
                    .clone()
                    .unwrap_or_else(|| requested_schema.properties.keys().cloned().collect()),
            },
            other => Asked {
                message: format!("{other:?}"),
                fields: vec![],
            },
        };
        self.asked.lock().expect("lead lock").push(asked);
        Ok(self
            .answers
            .lock()
            .expect("lead lock")
            .pop_front()
            .unwrap_or_else(cancel))
    }
}

pub type Client = RunningService<RoleClient, Lead>;

pub fn lifecycle() -> ClientLifecycleMode {
    ClientLifecycleMode::Auto {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        legacy_version: Some(ProtocolVersion::V_2025_11_25),
    }
}

/// Signs lead-form state in tests.
pub const STATE_KEY: &[u8] = b"a test key that is at least thirty-two bytes long";

pub fn shop_server(store: impl Into<Store>) -> ShopServer {
    ShopServer::new(Arc::new(ShopWorld::bundled()), store, STATE_KEY).expect("shop server")
}

pub fn memory_store(ids: QuoteIds) -> Arc<SqliteStore> {
    Arc::new(
        SqliteStore::open(Path::new(":memory:"), &ShopWorld::bundled(), ids)
            .expect("in-memory store"),
    )
}

/// The shop in this process, over a duplex pipe.
pub async fn in_process_shop(store: impl Into<Store>, lead: Lead) -> Client {
    let io = support_desk::serve::in_process(shop_server(store));
    lead.serve_with_lifecycle(io, lifecycle())
        .await
        .expect("connect to the in-process shop")
}

pub async fn in_process_partner() -> Client {
    let io = support_desk::serve::in_process(PartnerServer::new(Arc::new(Parcels::bundled())));
    Lead::default()
        .serve_with_lifecycle(io, lifecycle())
        .await
        .expect("connect to the in-process partner")
}

/// The built binary as a child process speaking stdio, as any MCP host would start it.
pub async fn stdio_child(args: &[&str], lead: Lead) -> Client {
    let mut command = tokio::process::Command::new(BIN);
    command.args(args).env("RUST_LOG", "warn");
    let (transport, _) = TokioChildProcess::builder(command)
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start the support-desk binary");
    lead.serve_with_lifecycle(transport, lifecycle())
        .await
        .expect("connect over stdio")
}

pub async fn stdio_shop(db: &Path, seed: Option<u64>, lead: Lead) -> Client {
    let db = db.to_str().expect("utf-8 temp path");
    let seed = seed.map(|s| s.to_string());
    let mut args = vec!["serve", "shop", "--stdio", "--db", db];
    if let Some(seed) = &seed {
        args.extend(["--seed", seed.as_str()]);
    }
    stdio_child(&args, lead).await
}

/// Calls a tool and returns its result; a protocol error fails the test.
pub async fn call(client: &Client, tool: &'static str, arguments: Value) -> CallToolResult {
    let Value::Object(arguments) = arguments else {
        panic!("tool arguments are an object");
    };
    client
        .call_tool(CallToolRequestParams::new(tool).with_arguments(arguments))
        .await
        .unwrap_or_else(|e| panic!("{tool} failed at the protocol level: {e}"))
}

pub fn text(result: &CallToolResult) -> &str {
    result
        .content
        .first()
        .and_then(|c| c.as_text())
        .map(|t| t.text.as_str())
        .expect("a text result")
}

/// The result as JSON, asserting it is a success.
pub fn json(result: &CallToolResult) -> Value {
    assert_eq!(
        result.is_error,
        Some(false),
        "expected a result, got an error: {}",
        text(result)
    );
    serde_json::from_str(text(result)).expect("a JSON result")
}

/// The error text, asserting it is a tool error.
pub fn tool_error(result: &CallToolResult) -> &str {
    assert_eq!(
        result.is_error,
        Some(true),
        "expected a tool error, got: {}",
        text(result)
    );
    text(result)
}

/// The data set's label of bundled ticket `id`: what a test knows and the desk never does.
pub fn label(id: &str) -> support_desk::evaluation::Label {
    support_desk::evaluation::find(&support_desk::evaluation::bundled(), id)
        .cloned()
        .unwrap_or_else(|| panic!("{id} is a bundled ticket"))
}

/// `support-desk ARGS… --store URL --config FILE --data-dir DIR`, as one person of a team at
/// their own seat, to its end: whether it succeeded, and what it said.
pub async fn seat_command(
    args: &[&str],
    store: &str,
    config: &Path,
    data_dir: &Path,
) -> (bool, String) {
    let output = tokio::process::Command::new(BIN)
        .args(args)
        .args(["--store", store])
        .arg("--config")
        .arg(config)
        .arg("--data-dir")
        .arg(data_dir)
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .output()
        .await
        .expect("the command runs");
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (output.status.success(), said)
}
