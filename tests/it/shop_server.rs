//! The shop's MCP server through a real rmcp client: in-process over a duplex pipe and as
//! the built binary over stdio.

use std::sync::Arc;

use rmcp::model::{
    CacheScope, CallToolRequestParams, CallToolResponse, ErrorCode, GetPromptRequestParams,
    InputResponses, ReadResourceRequestParams, Role,
};
use rmcp::service::ServiceError;
use rmcp::{ClientLifecycleMode, ClientServiceExt};
use serde_json::{Value, json};
use support_desk::shop::data::OrderStatus;
use support_desk::shop::{QuoteIds, ShopWorld};

use crate::shop_store::delivered_line;
use crate::support::*;

async fn shop(lead: Lead) -> Client {
    in_process_shop(memory_store(QuoteIds::Random), lead).await
}

async fn quote(client: &Client, order_id: &str, sku: &str) -> Value {
    json(
        &call(
            client,
            "quote_refund",
            json!({"order_id": order_id, "sku": sku, "reason": "arrived broken"}),
        )
        .await,
    )
}

#[tokio::test]
async fn the_tools_are_listed_in_order_with_titles_annotations_and_a_cache_hint() {
    let client = shop(Lead::default()).await;
    let listed = client
        .list_all_tools_with_cache_hint()
        .await
        .expect("list tools");
    let names: Vec<&str> = listed.items.iter().map(|t| t.name.as_ref()).collect();
    let mut sorted = names.clone();
    sorted.sort_unstable();
    assert_eq!(
        sorted,
        [
            "find_orders",
            "find_products",
            "get_order_status",
            "issue_refund",
            "quote_refund"
        ]
    );
    // The client reports what is left of the five minutes.
    assert!(
        listed
            .ttl_ms
            .is_some_and(|ttl| (290_000..=300_000).contains(&ttl)),
        "{:?}",
        listed.ttl_ms
    );
    assert_eq!(listed.cache_scope, Some(CacheScope::Public));
    for tool in &listed.items {
        assert!(tool.title.is_some(), "{} has a title", tool.name);
        assert!(tool.annotations.is_some(), "{} has annotations", tool.name);
    }
    let hints = |name: &str| {
        let tool = listed.items.iter().find(|t| t.name == name).expect("tool");
        let a = tool.annotations.clone().expect("annotations");
        (a.read_only_hint, a.destructive_hint)
    };
    assert_eq!(hints("get_order_status"), (Some(true), Some(false)));
    assert_eq!(hints("issue_refund"), (Some(false), Some(true)));
}

#[tokio::test]
async fn tool_descriptions_hold_no_value_a_model_could_copy_as_real() {
    let client = shop(Lead::default()).await;
    let tools = client.list_all_tools().await.expect("list tools");
    let world = ShopWorld::bundled();
    let real: Vec<String> = world
        .orders
        .iter()
        .flat_map(|o| {
            [o.order_id.clone(), o.customer_id.clone()]
                .into_iter()
                .chain(o.tracking_number.clone())
        })
        .chain(world.products.iter().map(|p| p.sku.clone()))
        .collect();
    for tool in tools {
        let text = serde_json::to_string(&tool).expect("tool as JSON");
        for id in &real {
            assert!(
                !text.contains(id.as_str()),
                "{} mentions the real ID {id}",
                tool.name
            );
        }
    }
}

#[tokio::test]
async fn an_order_is_looked_up_in_the_forms_customers_write_it() {
    let client = shop(Lead::default()).await;
    for written in ["O-1744", "o1744", "#1744"] {
        let order = json(&call(&client, "get_order_status", json!({"order_id": written})).await);
        assert_eq!(order["order_id"], "O-1744");
        assert_eq!(order["customer_id"], "C-0129");
        assert_eq!(order["status"], "delivered");
        assert!(
            order["lines"]
                .as_array()
                .expect("lines")
                .iter()
                .any(|l| l["sku"] == "KG-1031")
        );
    }
}

#[tokio::test]
async fn a_wrong_order_number_gets_an_error_that_says_what_to_do() {
    let client = shop(Lead::default()).await;
    let result = call(&client, "get_order_status", json!({"order_id": "o7144"})).await;
    assert_eq!(
        tool_error(&result),
        "The shop has no order O-7144. Check the number with the customer, or use find_orders to list their orders."
    );
    let result = call(
        &client,
        "get_order_status",
        json!({"order_id": "the blue one"}),
    )
    .await;
    assert!(tool_error(&result).contains("O- followed by four digits"));
}

#[tokio::test]
async fn a_customers_orders_are_listed_newest_first() {
    let client = shop(Lead::default()).await;
    let found = json(&call(&client, "find_orders", json!({"customer_id": "C-0129"})).await);
    let orders = found["orders"].as_array().expect("orders");
    let ids: Vec<&str> = orders
        .iter()
        .filter_map(|o| o["order_id"].as_str())
        .collect();
    assert!(
        ids.contains(&"O-1744") && ids.contains(&"O-2456"),
        "{ids:?}"
    );
    let dates: Vec<&str> = orders
        .iter()
        .filter_map(|o| o["placed_on"].as_str())
        .collect();
    assert!(dates.windows(2).all(|w| w[0] >= w[1]), "{dates:?}");

    let unknown = call(&client, "find_orders", json!({"customer_id": "C-9999"})).await;
    assert_eq!(
        tool_error(&unknown),
        "The shop has no customer C-9999. Take the customer ID from the ticket."
    );
}

#[tokio::test]
async fn products_are_found_by_sku_or_by_name_with_sizes_and_stock() {
    let client = shop(Lead::default()).await;
    let world = ShopWorld::bundled();
    let by_sku = json(&call(&client, "find_products", json!({"query": "kg1031"})).await);
    assert_eq!(by_sku["products"][0]["sku"], "KG-1031");
    assert_eq!(by_sku["products"][0]["price"], "24.90");

    let sized = world
        .products
        .iter()
        .find(|p| !p.sizes.is_empty())
        .expect("a product with sizes");
    let by_name = json(
        &call(
            &client,
            "find_products",
            json!({"query": sized.name.to_lowercase()}),
        )
        .await,
    );
    let first = &by_name["products"][0];
    assert_eq!(first["sku"], sized.sku.as_str());
    assert_eq!(
        first["sizes"].as_array().map(Vec::len),
        Some(sized.sizes.len())
    );

    let unknown = call(&client, "find_products", json!({"query": "KG-0000"})).await;
    assert!(tool_error(&unknown).starts_with("The shop has no product KG-0000."));
    let nothing = call(&client, "find_products", json!({"query": "xylophone"})).await;
    assert!(tool_error(&nothing).starts_with("No product matches \"xylophone\"."));
}

#[tokio::test]
async fn a_quote_names_its_amount_and_whether_a_lead_must_release_it() {
    let client = shop(Lead::default()).await;
    let quoted = quote(&client, "O-1744", "KG-1031").await;
    assert_eq!(quoted["amount"], "24.90");
    assert_eq!(quoted["needs_lead"], false);
    assert_eq!(quoted["covers"], "line");
    assert!(
        quoted["quote_id"]
            .as_str()
            .is_some_and(|q| q.starts_with("Q-") && q.len() == 12)
    );

    let (order, sku) = delivered_line(true);
    let big = quote(&client, &order.order_id, &sku).await;
    assert_eq!(big["needs_lead"], true);
}

#[tokio::test]
async fn quotes_refuse_lines_the_order_lacks_and_orders_not_received() {
    let client = shop(Lead::default()).await;
    let result = call(
        &client,
        "quote_refund",
        json!({"order_id": "O-1744", "sku": "KG-0001", "reason": "x"}),
    )
    .await;
    let message = tool_error(&result);
    assert!(
        message.starts_with("Order O-1744 has no line for KG-0001. Its lines are KG-1031"),
        "{message}"
    );

    let world = ShopWorld::bundled();
    let shipped = world
        .orders
        .iter()
        .find(|o| o.status == OrderStatus::Shipped)
        .expect("a shipped order");
    let result = call(
        &client,
        "quote_refund",
        json!({"order_id": shipped.order_id, "reason": "late"}),
    )
    .await;
    assert!(tool_error(&result).contains("a refund is possible once it is delivered or returned"));

    let result = call(
        &client,
        "quote_refund",
        json!({"order_id": "O-1744", "reason": "  "}),
    )
    .await;
    assert!(tool_error(&result).starts_with("A refund needs a reason"));
}

#[tokio::test]
async fn a_refund_within_the_limit_is_released_once() {
    let lead = Lead::default();
    let client = shop(lead.clone()).await;
    let quote_id = quote(&client, "O-1744", "KG-1031").await["quote_id"].clone();
    let first = json(&call(&client, "issue_refund", json!({"quote_id": quote_id})).await);
    assert_eq!(first["status"], "released");
    assert_eq!(first["amount"], "24.90");
    let again = json(&call(&client, "issue_refund", json!({"quote_id": quote_id})).await);
    assert_eq!(again["refund_id"], first["refund_id"]);
    assert!(lead.asked().is_empty(), "no lead is asked within the limit");

    let twice = call(
        &client,
        "quote_refund",
        json!({"order_id": "O-1744", "sku": "KG-1031", "reason": "x"}),
    )
    .await;
    assert!(tool_error(&twice).contains("was already refunded by"));
    let status = json(&call(&client, "get_order_status", json!({"order_id": "O-1744"})).await);
    assert_eq!(status["refunds"][0]["refund_id"], first["refund_id"]);
}

#[tokio::test]
async fn an_invented_quote_id_is_refused_and_told_where_quotes_come_from() {
    let client = shop(Lead::default()).await;
    let result = call(&client, "issue_refund", json!({"quote_id": "Q-0000000000"})).await;
    assert!(
        tool_error(&result).starts_with(
            "The shop has no quote Q-0000000000. Quote IDs come only from quote_refund"
        )
    );
}

#[tokio::test]
async fn above_the_limit_the_lead_is_asked_and_an_accept_releases_the_refund() {
    let lead = Lead::answering([accept(json!({"release": true, "note": "photos checked"}))]);
    let client = shop(lead.clone()).await;
    let (order, sku) = delivered_line(true);
    let quoted = quote(&client, &order.order_id, &sku).await;
    let refund = json(
        &call(
            &client,
            "issue_refund",
            json!({"quote_id": quoted["quote_id"]}),
        )
        .await,
    );
    assert_eq!(refund["status"], "released");
    assert_eq!(refund["note"], "photos checked");
    let asked = lead.asked();
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0].fields, ["release", "note"]);
    let amount = quoted["amount"].as_str().expect("amount");
    assert_eq!(
        asked[0].message,
        format!(
            "Release refund {} of EUR {amount} on order {}? It is above the EUR 150.00 refund limit, so a lead must confirm it. This shop is reached without staff identities (stdio), so it cannot check that whoever answers is a lead other than the one who issued it.",
            refund["refund_id"].as_str().expect("refund id"),
            order.order_id
        )
    );
}

#[tokio::test]
async fn a_declined_release_is_a_tool_error_and_the_refund_stays_held() {
    let lead = Lead::answering([decline(), accept(json!({"release": true}))]);
    let client = shop(lead.clone()).await;
    let (order, sku) = delivered_line(true);
    let quote_id = quote(&client, &order.order_id, &sku).await["quote_id"].clone();
    let declined = call(&client, "issue_refund", json!({"quote_id": quote_id})).await;
    assert!(tool_error(&declined).contains("declined to release refund"));
    assert!(tool_error(&declined).contains("the shop still holds it"));
    let held = json(
        &call(
            &client,
            "get_order_status",
            json!({"order_id": order.order_id}),
        )
        .await,
    );
    assert_eq!(held["refunds"][0]["status"], "held");

    // Asking again asks the lead again about the same refund; this time it is released.
    let released = json(&call(&client, "issue_refund", json!({"quote_id": quote_id})).await);
    assert_eq!(released["status"], "released");
    assert_eq!(released["refund_id"], held["refunds"][0]["refund_id"]);
    assert_eq!(lead.asked().len(), 2);
}

#[tokio::test]
async fn a_cancelled_or_unticked_form_releases_nothing() {
    let lead = Lead::answering([cancel(), accept(json!({"release": false}))]);
    let client = shop(lead).await;
    let (order, sku) = delivered_line(true);
    let quote_id = quote(&client, &order.order_id, &sku).await["quote_id"].clone();
    let cancelled = call(&client, "issue_refund", json!({"quote_id": quote_id})).await;
    assert!(tool_error(&cancelled).contains("was closed without an answer"));
    let unticked = call(&client, "issue_refund", json!({"quote_id": quote_id})).await;
    assert!(tool_error(&unticked).contains("did not release refund"));
    let order = json(
        &call(
            &client,
            "get_order_status",
            json!({"order_id": order.order_id}),
        )
        .await,
    );
    assert_eq!(order["refunds"][0]["status"], "held");
}

#[tokio::test]
async fn a_forged_request_state_is_refused() {
    let client = shop(Lead::default()).await;
    let (order, sku) = delivered_line(true);
    let quote_id = quote(&client, &order.order_id, &sku).await["quote_id"]
        .as_str()
        .expect("id")
        .to_owned();
    let mut responses = InputResponses::new();
    responses.insert(
        "lead_release".into(),
        json!({"action": "accept", "content": {"release": true}}),
    );
    let forged = CallToolRequestParams::new("issue_refund")
        .with_arguments(
            json!({"quote_id": quote_id})
                .as_object()
                .expect("object")
                .clone(),
        )
        .with_input_responses(responses)
        .with_request_state("rs1.forged.state");
    match client.call_tool_once(forged).await {
        Err(ServiceError::McpError(error)) => assert_eq!(error.code, ErrorCode::INVALID_PARAMS),
        Ok(CallToolResponse::Complete(result)) => {
            panic!("forged state completed: {}", text(&result))
        }
        other => panic!("unexpected answer to a forged state: {other:?}"),
    }
}

#[tokio::test]
async fn concurrent_issue_refund_calls_on_one_quote_make_one_refund() {
    let store = memory_store(QuoteIds::Random);
    let client = Arc::new(in_process_shop(Arc::clone(&store), Lead::default()).await);
    let (order, sku) = delivered_line(false);
    let quote_id = quote(&client, &order.order_id, &sku).await["quote_id"]
        .as_str()
        .expect("id")
        .to_owned();
    let calls = (0..12).map(|_| {
        let client = Arc::clone(&client);
        let quote_id = quote_id.clone();
        tokio::spawn(async move {
            json(&call(&client, "issue_refund", json!({"quote_id": quote_id})).await)
        })
    });
    let refunds: Vec<Value> = futures_join(calls).await;
    assert!(
        refunds
            .iter()
            .all(|r| r["refund_id"] == refunds[0]["refund_id"])
    );
    assert_eq!(store.refund_count(&quote_id).expect("count"), 1);
}

async fn futures_join<T: Send + 'static>(
    handles: impl Iterator<Item = tokio::task::JoinHandle<T>>,
) -> Vec<T> {
    let mut out = Vec::new();
    for handle in handles.collect::<Vec<_>>() {
        out.push(handle.await.expect("task"));
    }
    out
}

#[tokio::test]
async fn the_policies_are_resources_for_the_assistant_with_the_refund_policy_first_in_priority() {
    let client = shop(Lead::default()).await;
    let listed = client
        .list_all_resources_with_cache_hint()
        .await
        .expect("list resources");
    assert_eq!(listed.items.len(), 6);
    assert_eq!(listed.cache_scope, Some(CacheScope::Public));
    for resource in &listed.items {
        let annotations = resource.annotations.clone().expect("annotations");
        assert_eq!(annotations.audience, Some(vec![Role::Assistant]));
        let expected = if resource.uri == "shop://policies/refund" {
            1.0
        } else {
            0.5
        };
        assert_eq!(annotations.priority, Some(expected), "{}", resource.uri);
        assert_eq!(resource.mime_type.as_deref(), Some("text/markdown"));
    }
    let read = client
        .read_resource(ReadResourceRequestParams::new("shop://policies/refund"))
        .await
        .expect("read the refund policy");
    assert!(read.ttl_ms.is_some_and(|ttl| ttl > 0));
    let text = serde_json::to_string(&read.contents).expect("contents");
    assert!(
        text.contains("150.00"),
        "the refund policy states the limit"
    );

    let missing = client
        .read_resource(ReadResourceRequestParams::new("shop://policies/secret"))
        .await;
    assert!(missing.is_err());
}

#[tokio::test]
async fn the_review_refund_prompt_names_the_order_and_the_steps() {
    let client = shop(Lead::default()).await;
    let prompts = client.list_all_prompts().await.expect("list prompts");
    assert_eq!(
        prompts.iter().map(|p| p.name.as_str()).collect::<Vec<_>>(),
        ["review_refund", "refund_order"]
    );
    let arguments = json!({"order_id": "o1744"})
        .as_object()
        .expect("object")
        .clone();
    let prompt = client
        .get_prompt(GetPromptRequestParams::new("review_refund").with_arguments(arguments))
        .await
        .expect("get the prompt");
    let text = serde_json::to_string(&prompt.messages).expect("messages");
    assert!(
        text.contains("O-1744")
            && text.contains("get_order_status")
            && text.contains("quote_refund")
    );

    let arguments = json!({"order_id": "O-7144"})
        .as_object()
        .expect("object")
        .clone();
    let missing = client
        .get_prompt(GetPromptRequestParams::new("review_refund").with_arguments(arguments))
        .await;
    assert!(missing.is_err());
}

#[tokio::test]
async fn the_refund_order_prompt_asks_for_a_quote_then_its_refund_of_the_chosen_line() {
    let client = shop(Lead::default()).await;
    let ask = |arguments: serde_json::Value| {
        let request = GetPromptRequestParams::new("refund_order")
            .with_arguments(arguments.as_object().expect("object").clone());
        let client = &client;
        async move { client.get_prompt(request).await }
    };
    let (order, sku) = delivered_line(true);
    let whole = ask(json!({"order_id": order.order_id, "sku": ""}))
        .await
        .expect("the whole order");
    let text = serde_json::to_string(&whole.messages).expect("messages");
    assert!(text.contains("the whole order"), "{text}");
    let quote_at = text.find("quote_refund").expect("names the quote tool");
    let issue_at = text.find("issue_refund").expect("names the refund tool");
    assert!(quote_at < issue_at, "quote first, then refund: {text}");
    assert!(text.contains("EUR 150.00"), "names the limit: {text}");

    let line = ask(json!({"order_id": order.order_id, "sku": sku.to_lowercase()}))
        .await
        .expect("one line");
    let text = serde_json::to_string(&line.messages).expect("messages");
    assert!(text.contains(&format!("the line {sku}")), "{text}");

    let error = ask(json!({"order_id": order.order_id, "sku": "KG-9999"}))
        .await
        .expect_err("a line the order does not have");
    assert!(error.to_string().contains("its lines are"), "{error}");
    let error = ask(json!({"order_id": "O-7144"}))
        .await
        .expect_err("an order the shop does not have");
    assert!(error.to_string().contains("O-7144"), "{error}");
}

#[tokio::test]
async fn a_client_on_an_older_revision_is_told_the_refund_waits_for_a_lead() {
    let io = support_desk::serve::in_process(shop_server(memory_store(QuoteIds::Random)));
    let client = Lead::default()
        .serve_with_lifecycle(io, ClientLifecycleMode::Initialize)
        .await
        .expect("connect");
    let (order, sku) = delivered_line(true);
    let quote_id = quote(&client, &order.order_id, &sku).await["quote_id"].clone();
    let result = call(&client, "issue_refund", json!({"quote_id": quote_id})).await;
    assert!(tool_error(&result).contains("needs protocol revision 2026-07-28"));
}

#[tokio::test]
async fn over_stdio_the_binary_serves_the_shop_and_a_restart_keeps_refunds_once_only() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("shop.sqlite3");
    let client = stdio_shop(&db, Some(4217), Lead::default()).await;
    let info = client.peer_info().expect("peer info");
    assert_eq!(info.protocol_version.to_string(), "2026-07-28");
    assert_eq!(
        info.server_info.as_ref().map(|s| s.name.as_str()),
        Some("shop-support")
    );
    assert_eq!(client.list_all_tools().await.expect("tools").len(), 5);
    let quote_id = quote(&client, "O-1744", "KG-1031").await["quote_id"].clone();
    let first = json(&call(&client, "issue_refund", json!({"quote_id": quote_id})).await);
    client.cancel().await.expect("close the first server");

    let client = stdio_shop(&db, Some(4217), Lead::default()).await;
    let again = json(&call(&client, "issue_refund", json!({"quote_id": quote_id})).await);
    assert_eq!(again["refund_id"], first["refund_id"]);
    client.cancel().await.expect("close");

    // The same seed on a fresh database gives the same quote ID: what a replay needs.
    let fresh = stdio_shop(
        &dir.path().join("fresh.sqlite3"),
        Some(4217),
        Lead::default(),
    )
    .await;
    assert_eq!(
        quote(&fresh, "O-1744", "KG-1031").await["quote_id"],
        quote_id
    );
    fresh.cancel().await.expect("close");
}

#[tokio::test]
async fn over_stdio_the_lead_form_round_trips_through_the_child_process() {
    let dir = tempfile::tempdir().expect("temp dir");
    let lead = Lead::answering([accept(json!({"release": true}))]);
    let client = stdio_shop(&dir.path().join("shop.sqlite3"), None, lead.clone()).await;
    let (order, sku) = delivered_line(true);
    let quote_id = quote(&client, &order.order_id, &sku).await["quote_id"].clone();
    let refund = json(&call(&client, "issue_refund", json!({"quote_id": quote_id})).await);
    assert_eq!(refund["status"], "released");
    assert_eq!(lead.asked().len(), 1);
    client.cancel().await.expect("close");
}
