//! The shop over Streamable HTTP on 127.0.0.1, behind staff bearer tokens.

use std::net::SocketAddr;

use rmcp::ClientServiceExt;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::json;
use support_desk::shop::QuoteIds;
use support_desk::shop::http::StaffTokens;
use tokio_util::sync::CancellationToken;

use crate::shop_store::delivered_line;
use crate::support::*;

const TOKEN: &str = "staff-0007-token-for-tests-only";

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
    let tokens = StaffTokens::parse(&format!("staff-0007={TOKEN}")).expect("tokens");
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
    let mut config =
        StreamableHttpClientTransportConfig::with_uri(format!("http://{}/mcp", running.addr));
    if let Some(token) = token {
        config = config.auth_header(token);
    }
    let transport = StreamableHttpClientTransport::from_config(config);
    lead.serve_with_lifecycle(transport, lifecycle())
        .await
        .map_err(|e| e.to_string())
}

#[tokio::test]
async fn staff_with_a_valid_token_work_refunds_and_are_named_as_the_releasing_lead() {
    let running = start().await;
    let lead = Lead::answering([accept(json!({"release": true}))]);
    let client = connect(&running, Some(TOKEN), lead.clone())
        .await
        .expect("connect with a token");
    assert_eq!(client.list_all_tools().await.expect("tools").len(), 5);
    let (order, sku) = delivered_line(true);
    let quoted = json(
        &call(
            &client,
            "quote_refund",
            json!({"order_id": order.order_id, "sku": sku, "reason": "dented"}),
        )
        .await,
    );
    let refund = json(
        &call(
            &client,
            "issue_refund",
            json!({"quote_id": quoted["quote_id"]}),
        )
        .await,
    );
    assert_eq!(refund["status"], "released");
    assert_eq!(refund["released_by"], "staff-0007");
    assert_eq!(lead.asked().len(), 1);
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
