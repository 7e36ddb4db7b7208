//! The money rules both backends apply, as plain functions over what a transaction has read:
//! what a written ID means, what a quote covers, which refunds clash, who may answer a
//! release form, and how quote IDs are made.
//!
//! Nothing here touches a database; each backend reads the rows under its own locks and
//! asks these functions what the rules say.

use sha2::{Digest, Sha256};

use super::model::{Covers, QuoteIds, Refund, ShopError};
use crate::money::Cents;
use crate::shop::data::Order;
use crate::shop::ids;

/// What a release form's answer asks of the store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReleaseAnswer {
    /// Release the refund: pay the customer now (the two-person rule applies).
    Release,
    /// Keep it held: the form was declined or answered no. The form is spent.
    Hold,
    /// The form was closed without an answer: nothing changes and the form stays open.
    Dismiss,
}

impl ReleaseAnswer {
    /// What the form's record says once this answer is taken: `None` leaves it open.
    pub(super) fn spends_as(self) -> Option<&'static str> {
        match self {
            ReleaseAnswer::Release => Some("released"),
            ReleaseAnswer::Hold => Some("declined"),
            ReleaseAnswer::Dismiss => None,
        }
    }
}

/// A release form as the store keeps it: the refund it asks about, and its answer once given.
pub(super) struct AskRow {
    pub refund_seq: i64,
    /// `released` or `declined`, and who gave the answer (when the shop knew).
    pub answer: Option<(String, Option<String>)>,
}

pub(super) fn order_id(written: &str) -> Result<String, ShopError> {
    ids::order_id(written).ok_or_else(|| ShopError::NotAnOrderId(written.to_owned()))
}

pub(super) fn customer_id(written: &str) -> Result<String, ShopError> {
    ids::customer_id(written).ok_or_else(|| ShopError::NotACustomerId(written.to_owned()))
}

pub(super) fn quote_id_arg(written: &str) -> Result<String, ShopError> {
    ids::quote_id(written).ok_or_else(|| ShopError::NotAQuoteId(written.to_owned()))
}

/// An optional SKU as written: blank means the whole order.
pub(super) fn sku_arg(written: Option<&str>) -> Result<Option<String>, ShopError> {
    match written.map(str::trim).filter(|s| !s.is_empty()) {
        Some(s) => Ok(Some(
            ids::sku(s).ok_or_else(|| ShopError::NotASku(s.to_owned()))?,
        )),
        None => Ok(None),
    }
}

/// `R-0012` → 12.
pub(super) fn refund_seq(refund_id: &str) -> Result<i64, ShopError> {
    refund_id
        .trim()
        .strip_prefix("R-")
        .and_then(|n| n.parse().ok())
        .ok_or_else(|| ShopError::NoRefund(refund_id.to_owned()))
}

/// 12 → `R-0012`.
pub(super) fn refund_id(seq: i64) -> String {
    format!("R-{seq:04}")
}

/// What a quote of `sku` (or of the whole order) on `order` covers and comes to.
pub(super) fn cover(order: &Order, sku: Option<&str>) -> Result<(Covers, Cents), ShopError> {
    if !order.status.refundable() {
        return Err(ShopError::NotRefundable {
            order_id: order.order_id.clone(),
            status: order.status,
        });
    }
    let Some(sku) = sku else {
        return Ok((Covers::Order, order.total));
    };
    match order.line(sku) {
        Some(line) => Ok((Covers::Line, line.amount())),
        None => Err(ShopError::NoLine {
            order_id: order.order_id.clone(),
            sku: sku.to_owned(),
            lines: order
                .lines
                .iter()
                .map(|l| l.sku.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        }),
    }
}

/// A reason, trimmed; a refund without one is refused.
pub(super) fn reason(written: &str) -> Result<&str, ShopError> {
    match written.trim() {
        "" => Err(ShopError::NoReason),
        reason => Ok(reason),
    }
}

/// A line may be refunded once, and a whole-order refund excludes line refunds (and back):
/// refused when one of `refunds` (the order's) clashes with a refund of `sku`.
pub(super) fn refuse_clash(
    refunds: Vec<Refund>,
    order_id: &str,
    sku: Option<&str>,
    other_than_quote: Option<&str>,
) -> Result<(), ShopError> {
    let clash = refunds.into_iter().find(|refund| {
        Some(refund.quote_id.as_str()) != other_than_quote
            && (sku.is_none() || refund.sku.is_none() || refund.sku.as_deref() == sku)
    });
    match clash {
        None => Ok(()),
        Some(refund) => Err(ShopError::AlreadyRefunded {
            what: match &refund.sku {
                Some(line) => format!("Order {order_id}'s line {line}"),
                None => format!("Order {order_id}"),
            },
            refund_id: refund.refund_id,
            status: refund.status.as_str(),
        }),
    }
}

/// The ID of the `nth` quote (from 1) of this order line, or of the whole order.
pub(super) fn quote_id(ids: QuoteIds, order_id: &str, sku: Option<&str>, nth: i64) -> String {
    let bytes: [u8; 5] = match ids {
        QuoteIds::Random => rand::random(),
        QuoteIds::Seeded(seed) => {
            let digest = Sha256::new()
                .chain_update(b"support-desk quote id")
                .chain_update(seed.to_le_bytes())
                .chain_update(order_id.as_bytes())
                .chain_update([0])
                .chain_update(sku.unwrap_or("").as_bytes())
                .chain_update([0])
                .chain_update(nth.to_le_bytes())
                .finalize();
            let mut first = [0u8; 5];
            first.copy_from_slice(&digest[..5]);
            first
        }
    };
    format!("Q-{}", hex::encode(bytes))
}

/// A new release form's ID: unguessable, and never handed out twice.
pub(super) fn new_ask_id() -> String {
    hex::encode(rand::random::<[u8; 16]>())
}

/// A release form may be answered once: refused when `ask` is not a form about this refund
/// or has been answered already (a replayed `requestState`).
pub(super) fn refuse_spent(
    refund_id: &str,
    seq: i64,
    ask: Option<AskRow>,
) -> Result<(), ShopError> {
    match ask {
        Some(AskRow {
            refund_seq,
            answer: None,
        }) if refund_seq == seq => Ok(()),
        Some(AskRow {
            refund_seq,
            answer: Some((answer, by)),
        }) if refund_seq == seq => Err(ShopError::Answered {
            refund: refund_id.to_owned(),
            answer,
            by: by.unwrap_or_else(|| "someone".to_owned()),
        }),
        _ => Err(ShopError::NoAsk(refund_id.to_owned())),
    }
}

/// The two-person rule: when the shop knows who answers (`releaser`: their staff ID and
/// whether they are a lead), only a lead who did not issue the refund may release it. Over
/// stdio the shop knows nobody, and cannot apply it.
pub(super) fn may_release(
    refund_id: &str,
    issuer: Option<String>,
    releaser: Option<(&str, bool)>,
) -> Result<(), ShopError> {
    let Some((releaser, lead)) = releaser else {
        return Ok(());
    };
    let issuer = issuer.unwrap_or_else(|| "its issuer".to_owned());
    if !lead {
        return Err(ShopError::NotALead {
            refund: refund_id.to_owned(),
            releaser: releaser.to_owned(),
            issuer,
        });
    }
    if issuer == releaser {
        return Err(ShopError::OwnRefund {
            refund: refund_id.to_owned(),
            issuer,
        });
    }
    Ok(())
}

/// Unix seconds.
pub(super) fn now() -> i64 {
    crate::clock::unix_secs()
}
