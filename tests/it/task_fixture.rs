//! A test MCP server over Streamable HTTP on 127.0.0.1 whose one tool, `inspect`, always
//! answers with a task (the Tasks extension), kept by rmcp's own `TaskManager` and shared by
//! every session, so a desk that reconnects, or a second desk, asks after the same tasks. By
//! its `mode` the task completes, fails, asks a question first, or works until cancelled.
//! It also offers one document for the model (`depot://rules`), whose text a test changes
//! ([`TaskCounts::rules`]); a client that listens hears `notifications/resources/updated`.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    Annotations, BooleanSchema, CallToolResponse, CallToolResult, CancelTaskParams, ContentBlock,
    CreateTaskResult, ElicitRequest, ElicitRequestParams, ElicitationSchema, GetTaskParams,
    GetTaskResult, InputRequest, ListResourcesResult, PaginatedRequestParams,
    PrimitiveSchemaDefinition, ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult,
    Resource, ResourceContents, Role, ServerCapabilities, ServerConfig, SubscriptionFilter,
    UpdateTaskParams,
};
use rmcp::service::RequestContext;
use rmcp::task_manager::{TaskExit, TaskManager, TaskOptions};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, RoleServer, ServerHandler, tool, tool_handler, tool_router};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::fixture::serve_mcp_on_loopback;

/// The document the server offers the model.
pub const RULES_URI: &str = "depot://rules";

/// How often the server asks to be polled, in milliseconds.
pub const POLL_MS: u64 = 50;
/// How long a task works before it ends (or asks).
pub const WORK: Duration = Duration::from_millis(600);
/// How long a `slow` task works before it completes, longer than a second's limit.
pub const SLOW: Duration = Duration::from_millis(2500);
/// How long a `long` task works: long enough to kill a desk while it runs.
pub const LONG: Duration = Duration::from_secs(8);
/// What a completed inspection answers.
pub const INSPECTED: &str = "parcel KP123456789 inspected: the box is intact";
/// What an inspection answers after the person's go-ahead.
pub const INSPECTED_AFTER_YES: &str =
    "parcel KP123456789 opened with the person's go-ahead: intact";
/// What a failed inspection says.
pub const JAMMED: &str = "the scanner jammed";
/// The key of the question an `ask` inspection puts.
pub const QUESTION: &str = "open_parcel";
/// Words in the status message, for the desk to show as the server's.
pub const STATUS: &str = "scanning the parcel\u{1b}[2J";

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
pub struct InspectArgs {
    /// `complete`, `slow`, `long`, `fail`, `ask` or `forever`.
    pub mode: String,
}

/// What the server counts, for the tests.
#[derive(Clone)]
pub struct TaskCounts {
    /// `tools/call` requests received.
    pub calls: Arc<AtomicUsize>,
    /// `tasks/cancel` requests received.
    pub cancels: Arc<AtomicUsize>,
    /// `tasks/update` requests received.
    pub updates: Arc<AtomicUsize>,
    /// The text of `depot://rules`; a change is said to every client that listens.
    pub rules: Arc<watch::Sender<String>>,
}

impl Default for TaskCounts {
    fn default() -> Self {
        Self {
            calls: Default::default(),
            cancels: Default::default(),
            updates: Default::default(),
            rules: Arc::new(watch::channel("Depot rules, version 1.".to_owned()).0),
        }
    }
}

impl TaskCounts {
    pub fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }
    pub fn cancels(&self) -> usize {
        self.cancels.load(Ordering::SeqCst)
    }
    pub fn updates(&self) -> usize {
        self.updates.load(Ordering::SeqCst)
    }
}

#[derive(Clone)]
pub struct TaskServer {
    tool_router: ToolRouter<Self>,
    tasks: Arc<TaskManager>,
    counts: TaskCounts,
}

fn text(words: &str) -> CallToolResult {
    CallToolResult::success(vec![ContentBlock::text(words)])
}

fn question() -> InputRequest {
    let schema = ElicitationSchema::builder()
        .required_property(
            "open",
            PrimitiveSchemaDefinition::Boolean(BooleanSchema::new()),
        )
        .build()
        .expect("a valid schema");
    InputRequest::Elicitation(ElicitRequest::new(
        ElicitRequestParams::FormElicitationParams {
            meta: None,
            message: "May the inspector open the parcel?".into(),
            requested_schema: schema,
        },
    ))
}

#[tool_router]
impl TaskServer {
    /// Inspects a parcel at the depot; takes a while, so it runs as a task.
    #[tool(description = "Inspect a parcel at the depot. Runs for a while.")]
    async fn inspect(&self, Parameters(args): Parameters<InspectArgs>) -> CallToolResponse {
        self.counts.calls.fetch_add(1, Ordering::SeqCst);
        let options = TaskOptions::new()
            .with_poll_interval_ms(POLL_MS)
            .with_status_message(STATUS);
        let mode = args.mode;
        let task = self.tasks.spawn(options, move |cx| {
            Box::pin(async move {
                match mode.as_str() {
                    "complete" => {
                        tokio::time::sleep(WORK).await;
                        Ok(text(INSPECTED))
                    }
                    "slow" => {
                        tokio::time::sleep(SLOW).await;
                        Ok(text(INSPECTED))
                    }
                    "long" => {
                        tokio::time::sleep(LONG).await;
                        Ok(text(INSPECTED))
                    }
                    "fail" => {
                        tokio::time::sleep(WORK).await;
                        Err(TaskExit::Error(ErrorData::internal_error(JAMMED, None)))
                    }
                    "ask" => {
                        tokio::time::sleep(WORK).await;
                        let answer = cx.request_input(QUESTION, question()).await?;
                        let yes = answer["action"] == "accept" && answer["content"]["open"] == true;
                        tokio::time::sleep(WORK).await;
                        Ok(if yes {
                            text(INSPECTED_AFTER_YES)
                        } else {
                            text("the parcel stays closed")
                        })
                    }
                    _ => {
                        cx.cancelled().await;
                        Err(TaskExit::Cancelled)
                    }
                }
            })
        });
        CallToolResponse::Task(CreateTaskResult::new(task))
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for TaskServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .enable_resources_subscribe()
                .enable_tasks()
                .build(),
        )
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let rules = Resource::new(RULES_URI, "depot-rules").with_annotations(
            Annotations::default()
                .with_audience(vec![Role::Assistant])
                .with_priority(1.0),
        );
        Ok(ListResourcesResult::with_all_items(vec![rules]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let text = self.counts.rules.borrow().clone();
        Ok(ReadResourceResult::new(vec![ResourceContents::text(text, request.uri)]).into())
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        Some(requested.supported_by(&self.get_info().capabilities))
    }

    /// Says `notifications/resources/updated` each time the rules change, until the client
    /// goes.
    async fn listen(&self, cx: rmcp::service::SubscriptionContext) -> Result<(), ErrorData> {
        let mut changes = self.counts.rules.subscribe();
        loop {
            tokio::select! {
                _ = cx.cancelled() => return Ok(()),
                changed = changes.changed() => {
                    if changed.is_err() {
                        return Ok(());
                    }
                    let _ = cx.sink().notify_resource_updated(RULES_URI).await;
                }
            }
        }
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        Ok(GetTaskResult::new(self.tasks.get_task(&request.task_id)?))
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.counts.updates.fetch_add(1, Ordering::SeqCst);
        self.tasks
            .update_task(&request.task_id, request.input_responses)
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.counts.cancels.fetch_add(1, Ordering::SeqCst);
        self.tasks.cancel_task(&request.task_id)
    }
}

/// Serves the task server at `http://127.0.0.1:PORT/mcp` until the token is cancelled.
pub async fn serve_tasks() -> (String, CancellationToken, TaskCounts) {
    let shutdown = CancellationToken::new();
    let tasks = Arc::new(TaskManager::new());
    let counts = TaskCounts::default();
    let shared = counts.clone();
    let service: StreamableHttpService<TaskServer, LocalSessionManager> =
        StreamableHttpService::new(
            move || {
                Ok(TaskServer {
                    tool_router: TaskServer::tool_router(),
                    tasks: Arc::clone(&tasks),
                    counts: shared.clone(),
                })
            },
            Default::default(),
            StreamableHttpServerConfig::default().with_cancellation_token(shutdown.child_token()),
        );
    let url =
        serve_mcp_on_loopback(axum::Router::new().nest_service("/mcp", service), &shutdown).await;
    (url, shutdown, counts)
}
