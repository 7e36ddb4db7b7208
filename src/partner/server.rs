//! The partner's one tool, `track_parcel`.

use std::sync::Arc;

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CacheScope, CallToolResult, ContentBlock, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, tool, tool_handler, tool_router};
use schemars::JsonSchema;
use serde::Deserialize;

use super::data::{Parcels, tracking_number};

pub const SERVER_NAME: &str = "partner-tracking";

/// The partner's carrier, as customers know it.
pub const CARRIER: &str = "Kestrel Parcel";

const TOOL_LIST_TTL_MS: u64 = 5 * 60 * 1000;

#[derive(Clone)]
pub struct PartnerServer {
    parcels: Arc<Parcels>,
    tool_router: ToolRouter<Self>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct TrackArgs {
    /// The parcel's tracking number exactly as the customer or the shop's order gave it:
    /// "KP" followed by nine digits. Never make one up.
    pub tracking_number: String,
}

#[tool_router]
impl PartnerServer {
    pub fn new(parcels: Arc<Parcels>) -> Self {
        Self {
            parcels,
            tool_router: Self::tool_router(),
        }
    }

    #[tool(
        title = "Track a parcel",
        description = "Where a Kestrel Parcel shipment is: its status, estimated delivery and every scan so far. Answers only parcels Kestrel carries.",
        annotations(
            read_only_hint = true,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = true
        )
    )]
    async fn track_parcel(&self, Parameters(args): Parameters<TrackArgs>) -> CallToolResult {
        let written = args.tracking_number.trim();
        let Some(number) = tracking_number(written) else {
            return CallToolResult::error(vec![ContentBlock::text(format!(
                "\"{written}\" is not a {CARRIER} tracking number; those are KP followed by nine digits. Check it with the customer or on the shop's order."
            ))]);
        };
        match self.parcels.get(&number) {
            Some(parcel) => match serde_json::to_string(&serde_json::json!({
                "tracking_number": parcel.tracking_number,
                "carrier": CARRIER,
                "status": parcel.status,
                "estimated_delivery": parcel.estimated_delivery,
                "events": parcel.events,
            })) {
                Ok(text) => CallToolResult::success(vec![ContentBlock::text(text)]),
                Err(e) => CallToolResult::error(vec![ContentBlock::text(format!(
                    "tracking answer failed: {e}"
                ))]),
            },
            None => CallToolResult::error(vec![ContentBlock::text(format!(
                "{CARRIER} has no parcel {number}. Check the number with the customer; the shop's order record shows the tracking number it was given."
            ))]),
        }
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for PartnerServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new(SERVER_NAME, env!("CARGO_PKG_VERSION")))
            .with_instructions("Kestrel Parcel's tracking service for the shops it delivers for.")
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
}
