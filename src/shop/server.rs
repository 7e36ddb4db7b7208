//! `shop-support`: the shop's MCP server.
//!
//! Tools for orders, products and refunds; the six policies as resources; the
//! `review_refund` and `refund_order` prompts for staff. A refund above the limit is held,
//! and `issue_refund` asks a lead to release it through an input request (MRTR) whose
//! `requestState` is sealed and bound to the quote, because it comes back from the client
//! and must not be trusted. With claims on ([`ShopServer::with_claims`]), the
//! `file_damage_claim` tool answers with a task (`claims.rs`) that `tasks/*` follow.

use std::sync::Arc;

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::{InputResponses, RequestState};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    Annotations, CacheScope, CallToolResponse, CallToolResult, CancelTaskParams,
    ClientCapabilities, GetPromptRequestParams, GetPromptResponse, GetTaskParams, GetTaskResult,
    Implementation, ListPromptsResult, ListResourcesResult, ListToolsResult,
    PaginatedRequestParams, ProtocolVersion, ReadResourceRequestParams, ReadResourceResponse,
    ReadResourceResult, RequestStateCodec, Resource, ResourceContents, Role, ServerCapabilities,
    ServerConfig, UpdateTaskParams,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, tool, tool_handler, tool_router};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::catalog::{self, Lookup};
use super::data::ShopWorld;
use super::store::{RefundStatus, Store};
use super::{CURRENCY, REFUND_LIMIT, ids};

mod claims;
mod lead_form;
mod prompts;
mod release;
mod views;

pub use claims::{CLAIM_APPROVAL_REQUEST, ClaimArgs, ClaimTimes};
use prompts::prompts;
use views::{OrderView, product_view, refund_result, shop_error, text_result, tool_error};

pub const SERVER_NAME: &str = "shop-support";

/// The key of the lead's form in an `issue_refund` input request.
pub const RELEASE_REQUEST: &str = "lead_release";

/// Clients may cache the tool list this long (it changes only with a new server build).
const TOOL_LIST_TTL_MS: u64 = 5 * 60 * 1000;
/// Clients may cache the policies this long.
const POLICY_TTL_MS: u64 = 60 * 60 * 1000;

/// Who is calling, when the transport knows it (HTTP puts the staff ID here).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StaffId {
    pub id: String,
    /// A lead may release another person's held refund.
    pub lead: bool,
}

#[derive(Clone)]
pub struct ShopServer {
    world: Arc<ShopWorld>,
    store: Store,
    codec: Arc<RequestStateCodec>,
    tool_router: ToolRouter<Self>,
    /// Damage claims are offered only when set (`serve shop --claims`): a new tool changes
    /// what a model sees.
    claims: Option<ClaimTimes>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct OrderArgs {
    /// The order number as the customer or an earlier tool result gave it: "O-" followed by
    /// four digits. Never make one up.
    pub order_id: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct CustomerArgs {
    /// The customer ID from the ticket: "C-" followed by four digits.
    pub customer_id: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ProductArgs {
    /// A SKU ("KG-" followed by four digits) or a few words of the product's name.
    pub query: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct QuoteArgs {
    /// The order to refund: "O-" followed by four digits, from the ticket or a tool result.
    pub order_id: String,
    /// The SKU of the one order line to refund. Leave it out to quote the whole order.
    /// Only SKUs that appear on the order are accepted.
    #[serde(default)]
    pub sku: Option<String>,
    /// Why the customer wants the money back, in a few words.
    pub reason: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct IssueArgs {
    /// The quote_id that quote_refund returned for this refund. Quote IDs cannot be guessed.
    pub quote_id: String,
}

#[tool_router]
impl ShopServer {
    /// A server over `world`'s policies and products and `store`'s orders and refunds.
    /// `state_key` signs the lead forms' `requestState`; replicas must share it.
    pub fn new(
        world: Arc<ShopWorld>,
        store: impl Into<Store>,
        state_key: &[u8],
    ) -> Result<Self, ErrorData> {
        let codec = RequestStateCodec::try_new(state_key.to_vec()).map_err(|e| {
            ErrorData::internal_error(format!("request-state key refused: {e}"), None)
        })?;
        Ok(Self {
            world,
            store: store.into(),
            codec: Arc::new(codec),
            tool_router: Self::tool_router(),
            claims: None,
        })
    }

    /// The same shop offering `file_damage_claim`, whose claims spend `times` with the
    /// carrier.
    pub fn with_claims(mut self, times: ClaimTimes) -> Self {
        if self.claims.is_none() {
            self.tool_router.merge(Self::claims_router());
        }
        self.claims = Some(times);
        self
    }

    #[tool(
        title = "Order status",
        description = "Look up one order: its status (placed, shipped, delivered, returned, cancelled), dates, lines, total, tracking number and any refunds made on it.",
        annotations(
            read_only_hint = true,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn get_order_status(&self, Parameters(args): Parameters<OrderArgs>) -> CallToolResult {
        match self.store.order(&args.order_id).await {
            Ok((order, refunds)) => text_result(&OrderView::new(&self.world, &order, &refunds)),
            Err(e) => shop_error(e),
        }
    }

    #[tool(
        title = "Customer's orders",
        description = "List every order of one customer, newest first, with date, status, total and SKUs. Use it when the customer gives no order number or a wrong one.",
        annotations(
            read_only_hint = true,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn find_orders(&self, Parameters(args): Parameters<CustomerArgs>) -> CallToolResult {
        match self.store.orders_of(&args.customer_id).await {
            Ok(orders) => text_result(&json!({
                "customer_id": ids::customer_id(&args.customer_id),
                "orders": orders.iter().map(|o| json!({
                    "order_id": o.order_id,
                    "placed_on": o.placed_on,
                    "status": o.status,
                    "total": o.total,
                    "skus": o.lines.iter().map(|l| l.sku.as_str()).collect::<Vec<_>>(),
                })).collect::<Vec<_>>(),
            })),
            Err(e) => shop_error(e),
        }
    }

    #[tool(
        title = "Product lookup",
        description = "Find products by SKU or by words of their name: price, sizes with the stock of each, total stock and, when out of stock, the restock date.",
        annotations(
            read_only_hint = true,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn find_products(&self, Parameters(args): Parameters<ProductArgs>) -> CallToolResult {
        let query = args.query.trim();
        match catalog::look_up(&self.world, query) {
            Lookup::Sku(product) => text_result(&json!({ "products": [product_view(product)] })),
            Lookup::UnknownSku(sku) => tool_error(format!(
                "The shop has no product {sku}. Check the SKU with the customer, or search by the product's name."
            )),
            Lookup::Words(found) if found.is_empty() => tool_error(format!(
                "No product matches \"{}\". Try one or two words of the product's name, or its SKU.",
                views::quoted(query)
            )),
            Lookup::Words(found) => text_result(&json!({
                "products": found.into_iter().map(product_view).collect::<Vec<_>>(),
            })),
        }
    }

    #[tool(
        title = "Quote a refund",
        description = "Work out what a refund would be, without refunding anything: one order line (give its sku) or the whole order including shipping (leave sku out). Only delivered or returned orders can be refunded. Returns a quote_id for issue_refund, and says whether the amount is above the refund limit, where a lead must release it.",
        annotations(
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn quote_refund(&self, Parameters(args): Parameters<QuoteArgs>) -> CallToolResult {
        match self
            .store
            .quote(&args.order_id, args.sku.as_deref(), &args.reason)
            .await
        {
            Ok(quote) => {
                let item = quote
                    .sku
                    .as_deref()
                    .and_then(|sku| self.world.product(sku))
                    .map(|p| p.name.clone());
                let needs_lead = quote.needs_lead();
                text_result(&json!({
                    "quote_id": quote.quote_id,
                    "order_id": quote.order_id,
                    "sku": quote.sku,
                    "item": item,
                    "covers": quote.covers,
                    "amount": quote.amount,
                    "currency": CURRENCY,
                    "needs_lead": needs_lead,
                    "note": if needs_lead {
                        format!("Above the {CURRENCY} {REFUND_LIMIT} limit: issue_refund will hold it until a lead releases it.")
                    } else {
                        "Within the limit: issue_refund releases it at once.".to_owned()
                    },
                }))
            }
            Err(e) => shop_error(e),
        }
    }

    #[tool(
        title = "Issue a refund",
        description = "Refund a quote from quote_refund: money goes back to the customer's original payment method. Each quote is refunded once; calling again returns the same refund. Above the refund limit the refund is held and a lead is asked to release it.",
        annotations(
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = true,
            open_world_hint = true
        )
    )]
    async fn issue_refund(
        &self,
        Parameters(args): Parameters<IssueArgs>,
        RequestState(state): RequestState,
        InputResponses(responses): InputResponses,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let staff = staff_of(&ctx);
        if let Some(sealed) = state {
            return self
                .finish_release(&args, &sealed, responses, staff.as_ref())
                .await;
        }
        let issuer = staff.as_ref().map(|s| s.id.as_str());
        let (refund, _) = match self.store.issue(&args.quote_id, issuer).await {
            Ok(issued) => issued,
            Err(e) => return Ok(shop_error(e).into()),
        };
        if refund.status == RefundStatus::Released {
            return Ok(refund_result(&refund).into());
        }
        // Held: only a lead can release it, through a form the client shows.
        if !ctx
            .protocol_version()
            .is_some_and(|v| v >= ProtocolVersion::V_2026_07_28)
        {
            return Ok(tool_error(format!(
                "Refund {} of {CURRENCY} {} on order {} is above the {CURRENCY} {REFUND_LIMIT} limit, so the shop holds it until a lead releases it. This client cannot show the lead's form (it needs protocol revision 2026-07-28); tell the customer the refund awaits a lead.",
                refund.refund_id, refund.amount, refund.order_id
            ))
            .into());
        }
        let can_ask = ctx
            .client_capabilities()
            .and_then(|c| c.elicitation)
            .is_some_and(|e| e.form.is_some() || e.url.is_none());
        if !can_ask {
            return Err(ErrorData::missing_required_client_capability(
                ClientCapabilities::builder().enable_elicitation().build(),
            ));
        }
        self.ask_lead(&refund, staff.is_some()).await
    }
}

fn staff_of(ctx: &RequestContext<RoleServer>) -> Option<StaffId> {
    ctx.extensions
        .get::<axum::http::request::Parts>()
        .and_then(|parts| parts.extensions.get::<StaffId>())
        .cloned()
}

fn policy_priority(name: &str) -> f32 {
    if name == "refund" { 1.0 } else { 0.5 }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for ShopServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_prompts()
                .enable_resources()
                // Always: without claims every task ID is unknown, which is the truth.
                .enable_tasks()
                .build(),
        )
        .with_server_info(Implementation::new(SERVER_NAME, env!("CARGO_PKG_VERSION")))
        .with_instructions(
            "The shop's back office: orders, products and refunds. Amounts are euros, written with two decimals. \
             A refund starts with quote_refund; issue_refund takes the quote_id it returns.",
        )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tool_router.list_all())
            .with_ttl_ms(TOOL_LIST_TTL_MS)
            .with_cache_scope(CacheScope::Public))
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let resources = self
            .world
            .policies
            .iter()
            .map(|policy| {
                Resource::new(policy.uri(), format!("{}-policy", policy.name))
                    .with_title(policy.title.clone())
                    .with_description(format!(
                        "The shop's {} policy.",
                        policy.name.replace('-', " ")
                    ))
                    .with_mime_type("text/markdown")
                    .with_size(policy.text.len() as u64)
                    .with_annotations(
                        Annotations::default()
                            .with_audience(vec![Role::Assistant])
                            .with_priority(policy_priority(policy.name)),
                    )
            })
            .collect();
        Ok(ListResourcesResult::with_all_items(resources)
            .with_ttl_ms(POLICY_TTL_MS)
            .with_cache_scope(CacheScope::Public))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let policy = self
            .world
            .policies
            .iter()
            .find(|p| p.uri() == request.uri)
            .ok_or_else(|| {
                ErrorData::resource_not_found(
                    format!(
                        "the shop has no resource {}; its policies are listed by resources/list",
                        request.uri
                    ),
                    None,
                )
            })?;
        Ok(ReadResourceResult::new(vec![
            ResourceContents::text(policy.text.clone(), request.uri)
                .with_mime_type("text/markdown"),
        ])
        .with_ttl_ms(POLICY_TTL_MS)
        .with_cache_scope(CacheScope::Public)
        .into())
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        Ok(ListPromptsResult::with_all_items(prompts())
            .with_ttl_ms(TOOL_LIST_TTL_MS)
            .with_cache_scope(CacheScope::Public))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        // Boxed: the prompt awaits the store, whose future (PostgreSQL's among its backends)
        // runs to kilobytes. rmcp's future for a request holds the largest of its handlers'
        // futures inline and is moved several times as it is spawned, for every request.
        Ok(Box::pin(self.prompt(request)).await?.into())
    }

    // The task requests are boxed for the same reason as get_prompt.
    async fn get_task(
        &self,
        request: GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        Box::pin(self.claim_task(&request.task_id, &context)).await
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        Box::pin(self.update_claim_task(&request.task_id, &request.input_responses, &context)).await
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        Box::pin(self.cancel_claim_task(&request.task_id)).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The size of the future `handler` returns, without calling it.
    fn future_size<'a, S: 'a, A, B, F: 'a>(_handler: impl Fn(&'a S, A, B) -> F) -> usize {
        std::mem::size_of::<F>()
    }

    #[test]
    fn a_prompt_does_not_make_every_request_carry_the_stores_future() {
        // rmcp's future for any request holds the largest of the handlers' futures inline;
        // a prompt that awaited the store unboxed made it 3.6 KiB on its own.
        let prompt = future_size(
            |server: &ShopServer, request: GetPromptRequestParams, context| {
                server.get_prompt(request, context)
            },
        );
        assert!(prompt <= 1024, "get_prompt's future is {prompt} bytes");
    }
}
