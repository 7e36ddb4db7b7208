//! The shop's damage claims as MCP tasks, through a real rmcp client that declares the tasks
//! extension: in-process over a duplex pipe, the built binary over stdio (killed with SIGKILL
//! mid-review and started again on its file), and over HTTP with staff identities
//! (`shop_claims/`). The claim's record on SQLite and PostgreSQL is in `shop_claims/store.rs`.

use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, ClientCapabilities, ClientConfig,
    CreateTaskResult, DetailedTask, ElicitRequestParams, ElicitResult, ErrorCode, GetTaskParams,
    Implementation, InputRequest, InputResponses, TaskPayload, TaskStatus, UpdateTaskParams,
};
use rmcp::service::{RunningService, ServiceError};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, ClientServiceExt, RoleClient};
use serde_json::{Value, json};
use support_desk::shop::data::{Order, OrderStatus};
use support_desk::shop::server::{CLAIM_APPROVAL_REQUEST, ClaimTimes};
use support_desk::shop::store::Claim;
use support_desk::shop::{QuoteIds, REFUND_LIMIT, ShopWorld, SqliteStore};

use crate::support::*;

mod http;
mod store;

/// A client that declares the tasks extension and nothing else: the lead's form comes in
/// `tasks/get` and goes back with `tasks/update`.
#[derive(Clone, Default)]
pub struct TasksClient;

impl ClientHandler for TasksClient {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::builder().enable_tasks().build(),
            Implementation::new("support-desk-tests", "0"),
        )
    }
}

pub type TaskClient = RunningService<RoleClient, TasksClient>;

pub fn times(review_ms: u64, settle_ms: u64) -> ClaimTimes {
    ClaimTimes {
        review: Duration::from_millis(review_ms),
        settle: Duration::from_millis(settle_ms),
    }
}

/// The first order of the bundled world that `wanted` picks.
pub fn order_where(wanted: impl Fn(&Order) -> bool) -> Order {
    ShopWorld::bundled()
        .orders
        .into_iter()
        .find(|o| wanted(o))
        .expect("the bundled world has such an order")
}

pub fn small_order() -> Order {
    order_where(|o| o.status == OrderStatus::Delivered && o.total <= REFUND_LIMIT)
}

pub fn large_order() -> Order {
    order_where(|o| o.status == OrderStatus::Delivered && o.total > REFUND_LIMIT)
}

/// A shop with claims on, in this process, and its record.
async fn claims_shop(times: ClaimTimes) -> (TaskClient, Arc<SqliteStore>) {
    let store = memory_store(QuoteIds::Random);
    let io = support_desk::serve::in_process(shop_server(Arc::clone(&store)).with_claims(times));
    let client = TasksClient
        .serve_with_lifecycle(io, lifecycle())
        .await
        .expect("connect to the in-process shop");
    (client, store)
}

fn claim_call(order_id: &str, damage: &str) -> CallToolRequestParams {
    let Value::Object(arguments) = json!({"order_id": order_id, "damage": damage}) else {
        unreachable!("an object");
    };
    CallToolRequestParams::new("file_damage_claim").with_arguments(arguments)
}

/// Files a claim and returns the task it answers with.
pub async fn file(client: &TaskClient, order_id: &str, damage: &str) -> CreateTaskResult {
    match client
        .call_tool_once(claim_call(order_id, damage))
        .await
        .expect("file_damage_claim")
    {
        CallToolResponse::Task(task) => task,
        other => panic!("expected a task, got {other:?}"),
    }
}

pub async fn get(client: &TaskClient, task_id: &str) -> DetailedTask {
    client
        .get_task(GetTaskParams::new(task_id))
        .await
        .expect("tasks/get")
        .task
}

/// Polls `tasks/get` at the suggested interval until the task reaches `status`; returns it
/// and every status message seen on the way, each once.
pub async fn wait_for(
    client: &TaskClient,
    task_id: &str,
    status: TaskStatus,
) -> (DetailedTask, Vec<String>) {
    let started = Instant::now();
    let mut seen: Vec<String> = Vec::new();
    loop {
        let task = get(client, task_id).await;
        if let Some(message) = &task.task.status_message
            && seen.last() != Some(message)
        {
            seen.push(message.clone());
        }
        if task.status() == status {
            return (task, seen);
        }
        assert!(
            !task.status().is_terminal(),
            "{task_id} ended {:?} waiting for {status:?}",
            task.status()
        );
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "{task_id} never reached {status:?}: {seen:?}"
        );
        let poll = task.task.poll_interval_ms.expect("a poll interval");
        tokio::time::sleep(Duration::from_millis(poll)).await;
    }
}

pub async fn answer(
    client: &TaskClient,
    task_id: &str,
    key: &str,
    answer: ElicitResult,
) -> Result<(), ServiceError> {
    let mut responses = InputResponses::new();
    responses.insert(key.to_owned(), serde_json::to_value(answer).expect("JSON"));
    client
        .update_task(UpdateTaskParams::new(task_id, responses))
        .await
}

/// The settled claim's structured content.
pub fn settled(task: &DetailedTask) -> Value {
    let TaskPayload::Completed { result } = &task.payload else {
        panic!("not completed: {task:?}");
    };
    assert_eq!(result.get("isError"), Some(&json!(false)), "{result:?}");
    result["structuredContent"].clone()
}

/// The lead form's message and its fields in order.
pub fn form_of(task: &DetailedTask) -> (String, Vec<String>) {
    let TaskPayload::InputRequired { input_requests } = &task.payload else {
        panic!("not waiting for input: {task:?}");
    };
    assert_eq!(
        input_requests.keys().collect::<Vec<_>>(),
        [CLAIM_APPROVAL_REQUEST]
    );
    let Some(InputRequest::Elicitation(form)) = input_requests.get(CLAIM_APPROVAL_REQUEST) else {
        panic!("the lead form is an elicitation");
    };
    let ElicitRequestParams::FormElicitationParams {
        message,
        requested_schema,
        ..
    } = &form.params
    else {
        panic!("the lead form is a form: {form:?}");
    };
    let fields = requested_schema
        .property_order
        .clone()
        .unwrap_or_else(|| requested_schema.properties.keys().cloned().collect());
    (message.clone(), fields)
}

fn invalid_params(result: Result<impl std::fmt::Debug, ServiceError>) -> String {
    match result {
        Err(ServiceError::McpError(error)) => {
            assert_eq!(error.code, ErrorCode::INVALID_PARAMS, "{error:?}");
            error.message.into_owned()
        }
        other => panic!("expected an invalid-params error, got {other:?}"),
    }
}

fn rows(store: &SqliteStore, order_id: &str) -> Vec<Claim> {
    store.claims_of(order_id).expect("claims of the order")
}

#[tokio::test]
async fn a_small_claim_is_reviewed_then_settled_and_completes_accepted() {
    let (client, store) = claims_shop(times(400, 400)).await;
    let order = small_order();
    let created = file(&client, &order.order_id, "cracked lid").await;
    assert_eq!(created.task.status, TaskStatus::Working);
    assert!(created.task.task_id.starts_with("claim-") && created.task.task_id.len() == 38);
    assert_eq!(created.task.poll_interval_ms, Some(100));
    assert_eq!(created.task.ttl_ms, Some(7 * 24 * 60 * 60 * 1000));
    let id = created.task.task_id;
    let (task, seen) = wait_for(&client, &id, TaskStatus::Completed).await;
    assert_eq!(
        seen,
        [
            "The carrier is reviewing the claim.",
            "The carrier is settling the claim.",
            "The carrier accepted the claim."
        ]
    );
    let [claim] = rows(&store, &order.order_id).try_into().expect("one claim");
    assert_eq!(
        settled(&task),
        json!({
            "claim_id": id,
            "order_id": order.order_id,
            "status": "accepted",
            "amount": order.total,
            "currency": "EUR",
            "carrier_reference": claim.carrier_reference(),
        })
    );
    assert_eq!(claim.damage, "cracked lid");
    assert_eq!(claim.filed_by, None);
    assert!(task.task.created_at < task.task.last_updated_at, "{task:?}");
}

#[tokio::test]
async fn a_large_claim_waits_for_a_lead_and_a_yes_files_it_with_the_carrier() {
    let (client, store) = claims_shop(times(200, 200)).await;
    let order = large_order();
    let id = file(&client, &order.order_id, "shattered glass top")
        .await
        .task
        .task_id;
    let (task, _) = wait_for(&client, &id, TaskStatus::InputRequired).await;
    let (message, fields) = form_of(&task);
    assert_eq!(
        message,
        format!(
            "File a damage claim of EUR {} with the carrier for order {} (shattered glass top)? It is above the EUR 150.00 refund limit, so a lead must confirm it; no withdraws the claim. This shop is reached without staff identities (stdio), so it cannot check that whoever answers is a lead other than the one who filed it.",
            order.total, order.order_id
        )
    );
    assert_eq!(fields, ["approve", "note"]);

    // A dismissed form, and keys the task never asked for, change nothing.
    answer(&client, &id, CLAIM_APPROVAL_REQUEST, cancel())
        .await
        .expect("update");
    answer(
        &client,
        &id,
        "something_else",
        accept(json!({"approve": true})),
    )
    .await
    .expect("update");
    tokio::time::sleep(Duration::from_millis(250)).await;
    assert_eq!(get(&client, &id).await.status(), TaskStatus::InputRequired);

    let yes = accept(json!({"approve": true, "note": "photos checked"}));
    answer(&client, &id, CLAIM_APPROVAL_REQUEST, yes)
        .await
        .expect("update");
    let (task, seen) = wait_for(&client, &id, TaskStatus::Completed).await;
    assert_eq!(
        seen,
        [
            "The carrier is settling the claim.",
            "The carrier accepted the claim."
        ]
    );
    assert_eq!(settled(&task)["status"], "accepted");
    assert!(settled(&task)["carrier_reference"].is_string());

    // The answer was taken once: a later no is ignored.
    answer(&client, &id, CLAIM_APPROVAL_REQUEST, decline())
        .await
        .expect("update");
    assert_eq!(settled(&get(&client, &id).await)["status"], "accepted");
    let [claim] = rows(&store, &order.order_id).try_into().expect("one claim");
    let answer = claim.answer.expect("the lead's answer");
    assert!(answer.approve);
    assert_eq!(answer.note.as_deref(), Some("photos checked"));
}

#[tokio::test]
async fn a_leads_no_withdraws_the_claim_and_it_completes_without_an_error() {
    let (client, _store) = claims_shop(times(100, 100)).await;
    let order = large_order();
    let id = file(&client, &order.order_id, "dented").await.task.task_id;
    wait_for(&client, &id, TaskStatus::InputRequired).await;
    let no = accept(json!({"approve": false}));
    answer(&client, &id, CLAIM_APPROVAL_REQUEST, no)
        .await
        .expect("update");
    let (task, _) = wait_for(&client, &id, TaskStatus::Completed).await;
    assert_eq!(
        settled(&task),
        json!({
            "claim_id": id,
            "order_id": order.order_id,
            "status": "withdrawn",
            "amount": order.total,
            "currency": "EUR",
        })
    );
    assert_eq!(
        task.task.status_message.as_deref(),
        Some("A lead declined to file the claim, so it was withdrawn.")
    );
}

#[tokio::test]
async fn a_cancel_stops_a_claim_in_review_and_a_settled_claim_stays_settled() {
    let (client, store) = claims_shop(times(60_000, 100)).await;
    let order = small_order();
    let id = file(&client, &order.order_id, "torn box")
        .await
        .task
        .task_id;
    client
        .cancel_task(CancelTaskParams::new(&id))
        .await
        .expect("tasks/cancel");
    assert_eq!(get(&client, &id).await.status(), TaskStatus::Cancelled);
    client
        .cancel_task(CancelTaskParams::new(&id))
        .await
        .expect("a second cancel");
    let [claim] = rows(&store, &order.order_id).try_into().expect("one claim");
    assert!(claim.cancelled_at_ms.is_some());

    let (client, _store) = claims_shop(times(50, 50)).await;
    let id = file(&client, &order.order_id, "torn box")
        .await
        .task
        .task_id;
    wait_for(&client, &id, TaskStatus::Completed).await;
    client
        .cancel_task(CancelTaskParams::new(&id))
        .await
        .expect("tasks/cancel");
    assert_eq!(settled(&get(&client, &id).await)["status"], "accepted");
}

#[tokio::test]
async fn an_unknown_task_id_is_an_invalid_params_error_that_says_so() {
    let (client, _store) = claims_shop(times(100, 100)).await;
    for id in ["claim-00000000000000000000000000000000", "nonsense"] {
        let message = invalid_params(client.get_task(GetTaskParams::new(id)).await);
        assert!(message.starts_with("unknown task"), "{message}");
        let cancelled = client.cancel_task(CancelTaskParams::new(id)).await;
        assert!(invalid_params(cancelled).starts_with("unknown task"));
        let answered = answer(&client, id, CLAIM_APPROVAL_REQUEST, decline()).await;
        assert!(invalid_params(answered).starts_with("unknown task"));
    }
}

#[tokio::test]
async fn a_client_without_the_tasks_extension_gets_a_tool_error_and_nothing_is_filed() {
    let store = memory_store(QuoteIds::Random);
    let server = shop_server(Arc::clone(&store)).with_claims(times(100, 100));
    let client = Lead::default()
        .serve_with_lifecycle(support_desk::serve::in_process(server), lifecycle())
        .await
        .expect("connect");
    let order = small_order();
    let result = client
        .call_tool(claim_call(&order.order_id, "cracked"))
        .await
        .expect("a tool result, not a protocol error");
    assert_eq!(
        tool_error(&result),
        "file_damage_claim runs as a task, and this client did not declare the io.modelcontextprotocol/tasks extension: the client must declare it in its capabilities to file a claim. Nothing was filed."
    );
    assert_eq!(rows(&store, &order.order_id), []);
}

#[tokio::test]
async fn unknown_and_never_shipped_orders_are_tool_errors_and_file_nothing() {
    let (client, store) = claims_shop(times(100, 100)).await;
    let error = |response: CallToolResponse| match response {
        CallToolResponse::Complete(result) => tool_error(&result).to_owned(),
        other => panic!("expected a tool error, got {other:?}"),
    };
    let unknown = client.call_tool_once(claim_call("O-0000", "cracked")).await;
    assert_eq!(
        error(unknown.expect("call")),
        "The shop has no order O-0000. Check the number with the customer, or use find_orders to list their orders."
    );
    let placed = order_where(|o| o.status == OrderStatus::Placed);
    let unshipped = client
        .call_tool_once(claim_call(&placed.order_id, "cracked"))
        .await;
    assert_eq!(
        error(unshipped.expect("call")),
        format!(
            "Order {} is placed: it was never shipped, so no parcel of it can have arrived damaged and nothing was filed. Check the order number with the customer.",
            placed.order_id
        )
    );
    assert_eq!(rows(&store, &placed.order_id), []);
    let blank = client
        .call_tool_once(claim_call(&small_order().order_id, "  "))
        .await;
    assert!(error(blank.expect("call")).starts_with("A damage claim needs the damage"));
}

#[tokio::test]
async fn without_claims_the_tool_is_absent_and_every_task_is_unknown() {
    let store = memory_store(QuoteIds::Random);
    let io = support_desk::serve::in_process(shop_server(Arc::clone(&store)));
    let client = TasksClient
        .serve_with_lifecycle(io, lifecycle())
        .await
        .expect("connect");
    let tools = client.list_all_tools().await.expect("tools");
    assert!(tools.iter().all(|t| t.name != "file_damage_claim"));
    let call = client
        .call_tool_once(claim_call(&small_order().order_id, "cracked"))
        .await;
    assert!(
        matches!(&call, Err(ServiceError::McpError(e)) if e.code == ErrorCode::INVALID_PARAMS),
        "{call:?}"
    );
    // A claim in the record from a shop that had them on is still unknown here.
    let filed = store
        .file_claim(
            &small_order().order_id,
            "cracked",
            None,
            support_desk::shop::store::ClaimSchedule {
                review_ms: 0,
                settle_ms: 0,
            },
        )
        .expect("file");
    let message = invalid_params(client.get_task(GetTaskParams::new(&filed.claim_id)).await);
    assert!(message.starts_with("unknown task"), "{message}");
}

/// The built binary over stdio with `args` after `serve shop --stdio --db DB`, and its pid.
async fn stdio_claims_shop(db: &Path, args: &[&str]) -> (TaskClient, u32) {
    let mut command = tokio::process::Command::new(BIN);
    command
        .args(["serve", "shop", "--stdio", "--db"])
        .arg(db)
        .args(args)
        .env("RUST_LOG", "warn");
    let (transport, _) = TokioChildProcess::builder(command)
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start the support-desk binary");
    let pid = transport.id().expect("the child's pid");
    let client = TasksClient
        .serve_with_lifecycle(transport, lifecycle())
        .await
        .expect("connect over stdio");
    (client, pid)
}

#[tokio::test]
async fn over_stdio_the_tool_is_offered_only_with_the_claims_flag() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("shop.sqlite3");
    let names = |tools: Vec<rmcp::model::Tool>| -> Vec<String> {
        tools.into_iter().map(|t| t.name.into_owned()).collect()
    };
    let (plain, _) = stdio_claims_shop(&db, &[]).await;
    let listed = names(plain.list_all_tools().await.expect("tools"));
    assert!(
        !listed.iter().any(|n| n == "file_damage_claim"),
        "{listed:?}"
    );
    let (with, _) = stdio_claims_shop(&db, &["--claims"]).await;
    let listed = names(with.list_all_tools().await.expect("tools"));
    assert!(
        listed.iter().any(|n| n == "file_damage_claim"),
        "{listed:?}"
    );
}

#[tokio::test]
async fn a_shop_killed_mid_review_and_started_again_on_its_file_completes_the_same_claim() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("shop.sqlite3");
    let args = [
        "--claims",
        "--claim-review-ms",
        "1500",
        "--claim-settle-ms",
        "300",
    ];
    let (client, pid) = stdio_claims_shop(&db, &args).await;
    let order = small_order();
    let id = file(&client, &order.order_id, "crushed corner")
        .await
        .task
        .task_id;
    let task = get(&client, &id).await;
    assert_eq!(
        task.task.status_message.as_deref(),
        Some("The carrier is reviewing the claim.")
    );
    // SIGKILL, as a crash would: the shell's own kill, so the test needs no procps.
    let status = std::process::Command::new("sh")
        .args(["-c", &format!("kill -9 {pid}")])
        .status()
        .expect("sh");
    assert!(status.success());
    let after = tokio::time::timeout(
        Duration::from_secs(5),
        client.get_task(GetTaskParams::new(&id)),
    )
    .await;
    assert!(!matches!(after, Ok(Ok(_))), "the killed shop answered");

    let (client, _) = stdio_claims_shop(&db, &args).await;
    let (task, _) = wait_for(&client, &id, TaskStatus::Completed).await;
    assert_eq!(settled(&task)["status"], "accepted");
    assert_eq!(settled(&task)["claim_id"], json!(id));
    let store = SqliteStore::open(&db, &ShopWorld::bundled(), QuoteIds::Random).expect("reopen");
    assert_eq!(rows(&store, &order.order_id).len(), 1);
}
