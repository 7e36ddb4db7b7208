//! Over HTTP the shop knows who answers: only a lead who did not file a claim may confirm it.

use std::sync::Arc;

use rmcp::ClientServiceExt;
use rmcp::model::TaskStatus;
use rmcp::service::ServiceError;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::json;
use support_desk::shop::QuoteIds;
use support_desk::shop::http::StaffTokens;
use support_desk::shop::server::CLAIM_APPROVAL_REQUEST;
use tokio_util::sync::CancellationToken;

use super::{TaskClient, TasksClient, answer, file, form_of, large_order, times, wait_for};
use crate::support::*;

const STAFF: &str = "staff-0008-token-for-claim-tests";
const FILER: &str = "lead-0002-token-for-claim-tests";
const LEAD: &str = "lead-0003-token-for-claim-tests";

async fn connect(url: &str, token: &str) -> TaskClient {
    let config = StreamableHttpClientTransportConfig::with_uri(url.to_owned()).auth_header(token);
    TasksClient
        .serve_with_lifecycle(
            StreamableHttpClientTransport::from_config(config),
            lifecycle(),
        )
        .await
        .expect("connect over HTTP")
}

fn refused(result: Result<(), ServiceError>) -> String {
    match result {
        Err(ServiceError::McpError(error)) => error.message.into_owned(),
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[tokio::test]
async fn over_http_only_a_lead_other_than_the_one_who_filed_it_answers_a_claim() {
    support_desk::tls::install_default_provider();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind loopback");
    let url = format!("http://{}/mcp", listener.local_addr().expect("address"));
    let roster = format!("staff-0008={STAFF},lead-0002={FILER}:lead,lead-0003={LEAD}:lead");
    let tokens = StaffTokens::parse(&roster).expect("tokens");
    let shutdown = CancellationToken::new();
    let store = memory_store(QuoteIds::Random);
    let server = shop_server(Arc::clone(&store)).with_claims(times(100, 100));
    tokio::spawn(support_desk::shop::http::serve(
        listener,
        server,
        tokens,
        shutdown.clone(),
    ));
    let _stop = shutdown.drop_guard();

    let filer = connect(&url, FILER).await;
    let order = large_order();
    let id = file(&filer, &order.order_id, "split handle")
        .await
        .task
        .task_id;
    let (task, _) = wait_for(&filer, &id, TaskStatus::InputRequired).await;
    let (message, _) = form_of(&task);
    assert!(
        message.ends_with("Only a lead who did not file it may confirm it."),
        "{message}"
    );

    let yes = || accept(json!({"approve": true}));
    let staff = connect(&url, STAFF).await;
    assert_eq!(
        refused(answer(&staff, &id, CLAIM_APPROVAL_REQUEST, yes()).await),
        format!(
            "Only a lead may answer claim {id}, and staff-0008 is not one: a lead other than lead-0002 must confirm or decline it; it still waits."
        )
    );
    assert_eq!(
        refused(answer(&filer, &id, CLAIM_APPROVAL_REQUEST, yes()).await),
        format!(
            "A lead other than lead-0002 must answer claim {id}: the one who filed a claim cannot confirm it too; it still waits."
        )
    );
    wait_for(&filer, &id, TaskStatus::InputRequired).await;

    let lead = connect(&url, LEAD).await;
    answer(&lead, &id, CLAIM_APPROVAL_REQUEST, yes())
        .await
        .expect("another lead answers");
    wait_for(&filer, &id, TaskStatus::Completed).await;
    let [claim] = store
        .claims_of(&order.order_id)
        .expect("claims")
        .try_into()
        .expect("one claim");
    assert_eq!(claim.filed_by.as_deref(), Some("lead-0002"));
    assert_eq!(
        claim.answer.and_then(|a| a.by).as_deref(),
        Some("lead-0003")
    );
}
