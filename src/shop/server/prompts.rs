//! The prompts the shop offers staff (`review_refund`, `refund_order`) and the text each
//! one gives, checked against the order it names.
//!
//! Prompts only describe work; they never quote, issue or release anything.

use rmcp::ErrorData;
use rmcp::model::{
    GetPromptRequestParams, GetPromptResult, Prompt, PromptArgument, PromptMessage, Role,
};

use super::super::{CURRENCY, REFUND_LIMIT, ids};
use super::ShopServer;

impl ShopServer {
    /// The prompt `request` names, filled in for its order.
    pub(super) async fn prompt(
        &self,
        request: GetPromptRequestParams,
    ) -> Result<GetPromptResult, ErrorData> {
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
        let order = match self.store.order(&order_id).await {
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
                .with_description(description),
        )
    }
}

/// The prompts the shop offers staff, with their arguments.
pub(super) fn prompts() -> Vec<Prompt> {
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
