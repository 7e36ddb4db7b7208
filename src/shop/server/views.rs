//! How the shop's answers read: each tool result serialised once, straight from the store's
//! types into the text the model reads.
//!
//! Formatting only; nothing here reads the store or decides anything about money.

use rmcp::model::{CallToolResult, ContentBlock};
use serde::Serialize;
use serde_json::json;

use super::super::CURRENCY;
use super::super::data::{Order, OrderLine, OrderStatus, Product, ShopWorld};
use super::super::store::{Refund, RefundStatus, ShopError};
use crate::money::Cents;

pub(super) fn text_result(value: &impl Serialize) -> CallToolResult {
    match serde_json::to_string(value) {
        Ok(text) => CallToolResult::success(vec![ContentBlock::text(text)]),
        Err(e) => tool_error(format!(
            "the shop could not write its answer ({e}); report it"
        )),
    }
}

pub(super) fn tool_error(message: impl Into<String>) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(message.into())])
}

pub(super) fn shop_error(error: ShopError) -> CallToolResult {
    if matches!(
        error,
        ShopError::Database(_)
            | ShopError::Postgres(_)
            | ShopError::Unreachable { .. }
            | ShopError::Corrupt(_)
    ) {
        tracing::error!(%error, "shop store failed");
    }
    tool_error(echo_short(error).to_string())
}

/// How much of a caller's bad argument an error quotes back.
const ECHO_CHARS: usize = 40;

/// At most a short prefix of what the caller wrote, with its length when cut: an error about
/// a three-megabyte "order number" need not repeat it.
pub(super) fn quoted(text: &str) -> String {
    crate::text::cut(text, ECHO_CHARS)
}

/// The error with every argument it echoes cut to a short prefix.
fn echo_short(error: ShopError) -> ShopError {
    use ShopError as E;
    match error {
        E::NotAnOrderId(s) => E::NotAnOrderId(quoted(&s)),
        E::NoOrder(s) => E::NoOrder(quoted(&s)),
        E::NotACustomerId(s) => E::NotACustomerId(quoted(&s)),
        E::NoCustomer(s) => E::NoCustomer(quoted(&s)),
        E::NotASku(s) => E::NotASku(quoted(&s)),
        E::NotAQuoteId(s) => E::NotAQuoteId(quoted(&s)),
        E::NoQuote(s) => E::NoQuote(quoted(&s)),
        E::NoRefund(s) => E::NoRefund(quoted(&s)),
        other => other,
    }
}

/// `get_order_status`'s answer. Field order and nulls are the wire format: keep them.
#[derive(Serialize)]
pub(super) struct OrderView<'a> {
    order_id: &'a str,
    customer_id: &'a str,
    status: OrderStatus,
    placed_on: &'a str,
    shipped_on: Option<&'a str>,
    delivered_on: Option<&'a str>,
    returned_on: Option<&'a str>,
    cancelled_on: Option<&'a str>,
    tracking_number: Option<&'a str>,
    lines: Vec<LineView<'a>>,
    shipping: Cents,
    total: Cents,
    currency: &'static str,
    refunds: Vec<RefundView<'a>>,
}

#[derive(Serialize)]
struct LineView<'a> {
    sku: &'a str,
    item: Option<&'a str>,
    size: Option<&'a str>,
    quantity: u32,
    unit_price: Cents,
    amount: Cents,
}

#[derive(Serialize)]
struct RefundView<'a> {
    refund_id: &'a str,
    sku: Option<&'a str>,
    amount: Cents,
    status: RefundStatus,
}

impl<'a> OrderView<'a> {
    pub(super) fn new(world: &'a ShopWorld, order: &'a Order, refunds: &'a [Refund]) -> Self {
        let line = |line: &'a OrderLine| LineView {
            sku: &line.sku,
            item: world.product(&line.sku).map(|p| p.name.as_str()),
            size: line.size.as_deref(),
            quantity: line.quantity,
            unit_price: line.unit_price,
            amount: line.amount(),
        };
        let refund = |r: &'a Refund| RefundView {
            refund_id: &r.refund_id,
            sku: r.sku.as_deref(),
            amount: r.amount,
            status: r.status,
        };
        Self {
            order_id: &order.order_id,
            customer_id: &order.customer_id,
            status: order.status,
            placed_on: &order.placed_on,
            shipped_on: order.shipped_on.as_deref(),
            delivered_on: order.delivered_on.as_deref(),
            returned_on: order.returned_on.as_deref(),
            cancelled_on: order.cancelled_on.as_deref(),
            tracking_number: order.tracking_number.as_deref(),
            lines: order.lines.iter().map(line).collect(),
            shipping: order.shipping,
            total: order.total,
            currency: CURRENCY,
            refunds: refunds.iter().map(refund).collect(),
        }
    }
}

pub(super) fn product_view(product: &Product) -> serde_json::Value {
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

pub(super) fn refund_result(refund: &Refund) -> CallToolResult {
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
