//! The shop over Streamable HTTP on 127.0.0.1, behind staff bearer tokens.

use std::net::SocketAddr;

use rmcp::model::{CallToolRequestParams, CallToolResponse, CallToolResult, InputResponses};
use rmcp::service::Peer;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientServiceExt, RoleClient};
use serde_json::Value;
use serde_json::json;
use support_desk::shop::QuoteIds;
use support_desk::shop::http::StaffTokens;
use tokio_util::sync::CancellationToken;

use crate::shop_store::delivered_line;
use crate::support::*;

const TOKEN: &str = "staff-0007-token-for-tests-only";
const OTHER: &str = "staff-0008-token-for-tests-only";
const LEAD: &str = "lead-0002-token-for-tests-only";

struct Running {
    addr: SocketAddr,
    shutdown: CancellationToken,
}

impl Drop for Running {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

async fn start() -> Running {
    // rmcp's default client and `reqwest::Client::new()` use the process's rustls provider.
    support_desk::tls::install_default_provider();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind loopback");
    let addr = listener.local_addr().expect("address");
    let roster = format!("staff-0007={TOKEN},staff-0008={OTHER},lead-0002={LEAD}:lead");
    let tokens = StaffTokens::parse(&roster).expect("tokens");
    let shutdown = CancellationToken::new();
    let server = shop_server(memory_store(QuoteIds::Random));
    tokio::spawn(support_desk::shop::http::serve(
        listener,
        server,
        tokens,
        shutdown.clone(),
    ));
    Running { addr, shutdown }
}

async fn connect(running: &Running, token: Option<&str>, lead: Lead) -> Result<Client, String> {
    connect_to(&format!("http://{}/mcp", running.addr), token, lead).await
}

/// A real rmcp Streamable HTTP client at `url`, with `token` as its bearer token.
pub async fn connect_to(url: &str, token: Option<&str>, lead: Lead) -> Result<Client, String> {
    let mut config = StreamableHttpClientTransportConfig::with_uri(url.to_owned());
    if let Some(token) = token {
        config = config.auth_header(token);
    }
    let transport = StreamableHttpClientTransport::from_config(config);
    lead.serve_with_lifecycle(transport, lifecycle())
        .await
        .map_err(|e| e.to_string())
}

/// A release form to answer: its input request's key and the sealed state.
pub type Form = (String, Option<String>);

/// Asks for `issue_refund` once, without answering anything yet: the release form and its
/// sealed state, for whoever will answer it.
pub async fn held_for_a_lead(client: &Peer<RoleClient>, quote_id: &Value) -> Form {
    let Value::Object(arguments) = json!({"quote_id": quote_id}) else {
        unreachable!("an object");
    };
    let params = CallToolRequestParams::new("issue_refund").with_arguments(arguments);
    match client.call_tool_once(params).await.expect("issue_refund") {
        CallToolResponse::InputRequired(required) => {
            let key = required
                .input_requests
                .unwrap_or_default()
                .into_keys()
                .next()
                .expect("the release form");
            (key, required.request_state)
        }
        other => panic!("a form for a lead, not {other:?}"),
    }
}

/// Retries the call with the form's state and `answer` (an elicitation result), as
/// `client`'s person: what the shop says, a protocol error included.
pub async fn answer_as(
    client: &Peer<RoleClient>,
    quote_id: &Value,
    (key, state): &Form,
    answer: Value,
) -> Result<CallToolResponse, rmcp::service::ServiceError> {
    let Value::Object(arguments) = json!({"quote_id": quote_id}) else {
        unreachable!("an object");
    };
    let mut params = CallToolRequestParams::new("issue_refund").with_arguments(arguments);
    let mut responses = InputResponses::new();
    responses.insert(key.clone(), answer);
    params.input_responses = Some(responses);
    params.request_state = state.clone();
    client.call_tool_once(params).await
}

/// Answers the release form with yes, as `client`'s person, retrying the call with the state.
pub async fn release_as(
    client: &Peer<RoleClient>,
    quote_id: &Value,
    form: &Form,
) -> CallToolResult {
    let yes = json!({"action": "accept", "content": {"release": true}});
    match answer_as(client, quote_id, form, yes)
        .await
        .expect("the retry")
    {
        CallToolResponse::Complete(result) => result,
        other => panic!("an answer, not {other:?}"),
    }
}

#[tokio::test]
async fn a_held_refund_is_released_only_by_a_lead_who_did_not_issue_it() {
    let running = start().await;
    let connect_as =
        |token: &'static str| connect(&running, Some(token), Lead::answering([decline()]));
    let (staff, other, lead) = (
        connect_as(TOKEN).await.expect("staff-0007"),
        connect_as(OTHER).await.expect("staff-0008"),
        connect_as(LEAD).await.expect("lead-0002"),
    );
    let (order, sku) = delivered_line(true);
    let quoted = json(
        &call(
            &staff,
            "quote_refund",
            json!({"order_id": order.order_id, "sku": sku, "reason": "dented"}),
        )
        .await,
    );
    let form = held_for_a_lead(&staff, &quoted["quote_id"]).await;

    // The issuer answering their own form, and another member of staff: refused, still held.
    for (client, who) in [(&staff, "staff-0007"), (&other, "staff-0008")] {
        let refused = release_as(client, &quoted["quote_id"], &form).await;
        assert_eq!(refused.is_error, Some(true));
        let said = tool_error(&refused);
        assert!(
            said.contains(&format!("{who} is not one: a lead other than staff-0007 must release this refund; it stays held")),
            "{said}"
        );
    }
    let released = json(&release_as(&lead, &quoted["quote_id"], &form).await);
    assert_eq!(released["status"], "released");
    assert_eq!(
        released["released_by"], "lead-0002",
        "the lead, from the token"
    );
    // A lead who issued a refund cannot release it either: tests/it/shop_store.rs holds the
    // store to that rule directly.
}

#[tokio::test]
async fn without_a_token_the_shop_answers_401_with_a_bearer_challenge() {
    let running = start().await;
    let response = reqwest::Client::new()
        .post(format!("http://{}/mcp", running.addr))
        .header("content-type", "application/json")
        .body(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#)
        .send()
        .await
        .expect("send");
    assert_eq!(response.status(), 401);
    assert_eq!(
        response
            .headers()
            .get("www-authenticate")
            .and_then(|v| v.to_str().ok()),
        Some("Bearer realm=\"shop-support\"")
    );
    assert!(connect(&running, None, Lead::default()).await.is_err());
}

#[tokio::test]
async fn a_wrong_token_is_refused_as_invalid() {
    let running = start().await;
    let response = reqwest::Client::new()
        .post(format!("http://{}/mcp", running.addr))
        .bearer_auth("not-a-real-staff-token")
        .header("content-type", "application/json")
        .body(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#)
        .send()
        .await
        .expect("send");
    assert_eq!(response.status(), 401);
    let challenge = response
        .headers()
        .get("www-authenticate")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    assert!(challenge.contains("error=\"invalid_token\""), "{challenge}");
    assert!(
        connect(&running, Some("not-a-real-staff-token"), Lead::default())
            .await
            .is_err()
    );
}
