//! `shop-support`: the shop's MCP server.
//!
//! Tools for orders, products and refunds; the six policies as resources; the
//! `review_refund` and `refund_order` prompts for staff. A refund above the limit is held,
//! and `issue_refund` asks a lead to release it through an input request (MRTR) whose
//! `requestState` is sealed and bound to the quote, because it comes back from the client
//! and must not be trusted.

use std::sync::Arc;
use std::time::Duration;

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::{InputResponses, RequestState};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    Annotations, BooleanSchema, CacheScope, CallToolResponse, CallToolResult, ClientCapabilities,
    ContentBlock, ElicitRequest, ElicitRequestParams, ElicitResult, ElicitationAction,
    ElicitationSchema, GetPromptRequestParams, GetPromptResponse, GetPromptResult, Implementation,
    InputRequest, InputRequests, InputRequiredResult, ListPromptsResult, ListResourcesResult,
    ListToolsResult, PaginatedRequestParams, PrimitiveSchemaDefinition, Prompt, PromptArgument,
    PromptMessage, ProtocolVersion, ReadResourceRequestParams, ReadResourceResponse,
    ReadResourceResult, RequestStateCodec, Resource, ResourceContents, Role, SealOptions,
    ServerCapabilities, ServerConfig, StringSchema,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, tool, tool_handler, tool_router};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::catalog::{self, Lookup};
use super::data::{Order, Product, ShopWorld};
use super::store::{Refund, RefundStatus, ShopError, Store};
use super::{CURRENCY, REFUND_LIMIT, ids};

pub const SERVER_NAME: &str = "shop-support";

/// The key of the lead's form in an `issue_refund` input request.
pub const RELEASE_REQUEST: &str = "lead_release";

/// Clients may cache the tool list this long (it changes only with a new server build).
const TOOL_LIST_TTL_MS: u64 = 5 * 60 * 1000;
/// Clients may cache the policies this long.
const POLICY_TTL_MS: u64 = 60 * 60 * 1000;
/// A lead has this long to answer a release form before the sealed state expires.
const RELEASE_STATE_TTL: Duration = Duration::from_secs(15 * 60);
/// Longest note a lead may leave on a release.
const NOTE_MAX_CHARS: u32 = 500;

/// Who is calling, when the transport knows it (HTTP puts the staff ID here).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StaffId(pub String);

#[derive(Clone)]
pub struct ShopServer {
    world: Arc<ShopWorld>,
    store: Arc<Store>,
    codec: Arc<RequestStateCodec>,
    tool_router: ToolRouter<Self>,
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

/// What is sealed into `requestState` while a lead decides.
#[derive(Debug, Serialize, Deserialize)]
struct ReleaseState {
    refund_id: String,
}

fn text_result(value: &impl Serialize) -> CallToolResult {
    match serde_json::to_string(value) {
        Ok(text) => CallToolResult::success(vec![ContentBlock::text(text)]),
        Err(e) => tool_error(format!(
            "the shop could not write its answer ({e}); report it"
        )),
    }
}

fn tool_error(message: impl Into<String>) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(message.into())])
}

fn shop_error(error: ShopError) -> CallToolResult {
    if matches!(error, ShopError::Database(_) | ShopError::Corrupt(_)) {
        tracing::error!(%error, "shop store failed");
    }
    tool_error(error.to_string())
}

#[tool_router]
impl ShopServer {
    /// A server over `world`'s policies and products and `store`'s orders and refunds.
    /// `state_key` signs the lead forms' `requestState`; replicas must share it.
    pub fn new(
        world: Arc<ShopWorld>,
        store: Arc<Store>,
        state_key: &[u8],
    ) -> Result<Self, ErrorData> {
        let codec = RequestStateCodec::try_new(state_key.to_vec()).map_err(|e| {
            ErrorData::internal_error(format!("request-state key refused: {e}"), None)
        })?;
        Ok(Self {
            world,
            store,
            codec: Arc::new(codec),
            tool_router: Self::tool_router(),
        })
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
        match self.store.order(&args.order_id) {
            Ok((order, refunds)) => text_result(&self.order_view(&order, &refunds)),
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
        match self.store.orders_of(&args.customer_id) {
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
                "No product matches \"{query}\". Try one or two words of the product's name, or its SKU."
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
            return self.finish_release(&args, &sealed, responses, staff.as_deref());
        }
        let (refund, _) = match self.store.issue(&args.quote_id, staff.as_deref()) {
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
        let sealed = self
            .codec
            .seal_json_with(
                &ReleaseState {
                    refund_id: refund.refund_id.clone(),
                },
                &SealOptions::new()
                    .associated_data(release_binding(&refund.quote_id).as_bytes())
                    .ttl(RELEASE_STATE_TTL),
            )
            .map_err(|e| {
                ErrorData::internal_error(format!("cannot seal request state: {e}"), None)
            })?;
        let form = ElicitRequest::new(ElicitRequestParams::FormElicitationParams {
            meta: None,
            message: format!(
                "Release refund {} of {CURRENCY} {} on order {}? It is above the {CURRENCY} {REFUND_LIMIT} refund limit, so a lead must confirm it.",
                refund.refund_id, refund.amount, refund.order_id
            ),
            requested_schema: release_form()?,
        });
        let requests =
            InputRequests::from([(RELEASE_REQUEST.to_owned(), InputRequest::Elicitation(form))]);
        Ok(InputRequiredResult::new(Some(requests), Some(sealed)).into())
    }
}

impl ShopServer {
    /// The second round of `issue_refund`: the lead has answered the release form.
    fn finish_release(
        &self,
        args: &IssueArgs,
        sealed: &str,
        responses: Option<rmcp::model::InputResponses>,
        staff: Option<&str>,
    ) -> Result<CallToolResponse, ErrorData> {
        let quote_id = ids::quote_id(&args.quote_id)
            .ok_or_else(|| ErrorData::invalid_params("invalid or expired requestState", None))?;
        // Any failure to open is one answer to the client; the detail is for our log.
        let state: ReleaseState = self
            .codec
            .open_json_with(sealed, release_binding(&quote_id).as_bytes())
            .map_err(|e| {
                tracing::warn!(error = %e, %quote_id, "refused a requestState");
                ErrorData::invalid_params(
                    "invalid or expired requestState; call issue_refund again without it",
                    None,
                )
            })?;
        let answer: ElicitResult = responses
            .as_ref()
            .and_then(|r| r.get(RELEASE_REQUEST))
            .cloned()
            .ok_or_else(|| {
                ErrorData::invalid_params(
                    format!("missing the {RELEASE_REQUEST} input response"),
                    None,
                )
            })
            .and_then(|v| {
                serde_json::from_value(v)
                    .map_err(|e| ErrorData::invalid_params(e.to_string(), None))
            })?;
        let refund_id = state.refund_id;
        let result = match answer.action {
            ElicitationAction::Accept => {
                let content = answer.content.unwrap_or_default();
                let release = content.get("release").and_then(|v| v.as_bool());
                let note = content
                    .get("note")
                    .and_then(|v| v.as_str())
                    .map(str::trim)
                    .filter(|n| !n.is_empty());
                match (release, note) {
                    (None, _) => {
                        return Err(ErrorData::invalid_params(
                            "the release form needs a yes or no in 'release'",
                            None,
                        ));
                    }
                    (Some(_), Some(note)) if note.chars().count() > NOTE_MAX_CHARS as usize => {
                        return Err(ErrorData::invalid_params(
                            format!("the note is longer than {NOTE_MAX_CHARS} characters"),
                            None,
                        ));
                    }
                    (Some(true), note) => match self.store.release(&refund_id, staff, note) {
                        Ok(refund) => refund_result(&refund),
                        Err(e) => shop_error(e),
                    },
                    (Some(false), _) => tool_error(format!(
                        "The lead did not release refund {refund_id}, so the shop still holds it. Tell the customer the refund awaits a lead's review; do not say it was paid."
                    )),
                }
            }
            ElicitationAction::Decline => tool_error(format!(
                "The lead declined to release refund {refund_id}, so the shop still holds it. Tell the customer the refund awaits a lead's review; do not say it was paid."
            )),
            // Cancel, and anything a later revision adds: a dismissed form is never a yes.
            _ => tool_error(format!(
                "The release form for refund {refund_id} was closed without an answer, so the shop still holds it. Nothing was paid."
            )),
        };
        Ok(result.into())
    }

    fn order_view(&self, order: &Order, refunds: &[Refund]) -> serde_json::Value {
        json!({
            "order_id": order.order_id,
            "customer_id": order.customer_id,
            "status": order.status,
            "placed_on": order.placed_on,
            "shipped_on": order.shipped_on,
            "delivered_on": order.delivered_on,
            "returned_on": order.returned_on,
            "cancelled_on": order.cancelled_on,
            "tracking_number": order.tracking_number,
            "lines": order.lines.iter().map(|line| json!({
                "sku": line.sku,
                "item": self.world.product(&line.sku).map(|p| p.name.as_str()),
                "size": line.size,
                "quantity": line.quantity,
                "unit_price": line.unit_price,
                "amount": line.amount(),
            })).collect::<Vec<_>>(),
            "shipping": order.shipping,
            "total": order.total,
            "currency": CURRENCY,
            "refunds": refunds.iter().map(|r| json!({
                "refund_id": r.refund_id,
                "sku": r.sku,
                "amount": r.amount,
                "status": r.status,
            })).collect::<Vec<_>>(),
        })
    }
}

fn product_view(product: &Product) -> serde_json::Value {
    json!({
        "sku": product.sku,
        "name": product.name,
        "category": product.category,
        "price": product.price,
        "currency": CURRENCY,
        "stock": product.stock,
        "sizes": product.sizes,
        "restock_on": product.restock_on,
    })
}

fn refund_result(refund: &Refund) -> CallToolResult {
    let message = match refund.status {
        RefundStatus::Released => format!(
            "Refund {} of {CURRENCY} {} is released; the money reaches the original payment method within 5 working days.",
            refund.refund_id, refund.amount
        ),
        RefundStatus::Held => format!(
            "Refund {} of {CURRENCY} {} is held until a lead releases it; nothing has been paid yet.",
            refund.refund_id, refund.amount
        ),
    };
    let mut value = serde_json::to_value(refund).unwrap_or_default();
    if let Some(map) = value.as_object_mut() {
        map.insert("currency".into(), CURRENCY.into());
        map.insert("message".into(), message.into());
    }
    text_result(&value)
}

/// What a release form's sealed state is bound to: this tool and this quote.
fn release_binding(quote_id: &str) -> String {
    format!("shop-support|issue_refund|{quote_id}")
}

fn release_form() -> Result<ElicitationSchema, ErrorData> {
    let note = StringSchema::new()
        .title("Note for the record")
        .description("Optional: why you release or hold this refund.")
        .with_length(0, NOTE_MAX_CHARS)
        .map_err(|e| ErrorData::internal_error(e, None))?;
    let release = BooleanSchema::new()
        .title("Release the refund")
        .description("Yes pays the customer now; no keeps the refund held.");
    let mut schema = ElicitationSchema::new(
        [
            (
                "release".to_owned(),
                PrimitiveSchemaDefinition::Boolean(release),
            ),
            ("note".to_owned(), PrimitiveSchemaDefinition::String(note)),
        ]
        .into(),
    )
    .with_required(vec!["release".to_owned()])
    .with_description("A refund above the limit waits for a lead.");
    schema.property_order = Some(vec!["release".to_owned(), "note".to_owned()]);
    Ok(schema)
}

fn staff_of(ctx: &RequestContext<RoleServer>) -> Option<String> {
    ctx.extensions
        .get::<axum::http::request::Parts>()
        .and_then(|parts| parts.extensions.get::<StaffId>())
        .map(|staff| staff.0.clone())
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
        let argument = |name: &str| {
            request
                .arguments
                .as_ref()
                .and_then(|a| a.get(name))
                .and_then(|v| v.as_str())
                .map(str::trim)
                .unwrap_or_default()
                .to_owned()
        };
        let prompt = request.name.as_str();
        let offered: Vec<String> = prompts().into_iter().map(|p| p.name).collect();
        if !offered.iter().any(|name| name == prompt) {
            let offered = offered.join(", ");
            return Err(ErrorData::invalid_params(
                format!("the shop has no prompt {prompt}; it offers {offered}"),
                None,
            ));
        }
        let written = argument("order_id");
        let order_id = ids::order_id(&written).ok_or_else(|| {
            ErrorData::invalid_params(
                format!(
                    "{prompt} needs an order_id (O- followed by four digits), got \"{written}\""
                ),
                None,
            )
        })?;
        let order = match self.store.order(&order_id) {
            Ok((order, _)) => order,
            Err(e) => return Err(ErrorData::invalid_params(e.to_string(), None)),
        };
        let (text, description) = if prompt == "review_refund" {
            let text = format!(
                "Review the refund request for order {order_id}. Look the order up with get_order_status, \
                 read the refund policy (shop://policies/refund), and quote the refund with quote_refund. \
                 Say whether the order can be refunded, for how much, and whether the amount is above the \
                 {CURRENCY} {REFUND_LIMIT} limit, where a lead must release it. Do not issue the refund."
            );
            (text, format!("Refund review for order {order_id}"))
        } else {
            let written = argument("sku");
            let what = if written.is_empty() {
                "the whole order (leave sku out)".to_owned()
            } else {
                let sku = ids::sku(&written)
                    .filter(|sku| order.line(sku).is_some())
                    .ok_or_else(|| {
                        let lines: Vec<&str> = order.lines.iter().map(|l| l.sku.as_str()).collect();
                        ErrorData::invalid_params(
                            format!(
                                "order {order_id} has no line \"{written}\"; its lines are {}",
                                lines.join(", ")
                            ),
                            None,
                        )
                    })?;
                format!("the line {sku} (sku \"{sku}\")")
            };
            let text = format!(
                "We have decided to refund order {order_id} for this customer: {what}. First call \
                 quote_refund with order_id \"{order_id}\" and the customer's reason. Then call \
                 issue_refund with the quote_id that quote_refund returned. A refund above the \
                 {CURRENCY} {REFUND_LIMIT} limit is held until a lead releases it: then tell the customer it \
                 is waiting for a lead, not that it is paid."
            );
            (text, format!("Refund of order {order_id}"))
        };
        Ok(
            GetPromptResult::new(vec![PromptMessage::new_text(Role::User, text)])
                .with_description(description)
                .into(),
        )
    }
}

/// The prompts the shop offers staff, with their arguments.
fn prompts() -> Vec<Prompt> {
    let review = Prompt::new(
        "review_refund",
        Some("Review a customer's refund request for one order against the refund policy."),
        Some(vec![
            PromptArgument::new("order_id")
                .with_title("Order")
                .with_description("The order to review: O- followed by four digits.")
                .with_required(true),
        ]),
    )
    .with_title("Review a refund");
    let refund = Prompt::new(
        "refund_order",
        Some(
            "Refund a customer's order, or one line of it, as a person on the team decided: \
             quote it, then issue the quoted refund. Above the refund limit a lead releases it.",
        ),
        Some(vec![
            PromptArgument::new("order_id")
                .with_title("Order")
                .with_description("The order to refund: O- followed by four digits.")
                .with_required(true),
            PromptArgument::new("sku")
                .with_title("Line")
                .with_description(
                    "The SKU of the one line to refund; leave empty for the whole order.",
                )
                .with_required(false),
        ]),
    )
    .with_title("Refund an order");
    vec![review, refund]
}
