//! What the shop's store hands out and refuses with: quotes, refunds and the shop's errors.
//!
//! Plain data and messages only; this module never touches the database.

use serde::Serialize;

use super::super::REFUND_LIMIT;
use super::super::data::OrderStatus;
use crate::money::Cents;

/// How quote IDs are made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QuoteIds {
    /// Unguessable: what a shop in production must use.
    Random,
    /// Derived from the seed, the order, the line and how many quotes that line had before,
    /// so that a recorded run replays against a fresh database with the same IDs, whatever
    /// other tickets were worked first. For replays and tests only: anyone who knows the seed
    /// can work the IDs out.
    Seeded(u64),
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Covers {
    /// One order line: its quantity times its unit price.
    Line,
    /// The whole order, shipping included.
    Order,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Quote {
    pub quote_id: String,
    pub order_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sku: Option<String>,
    pub covers: Covers,
    pub amount: Cents,
    pub reason: String,
}

impl Quote {
    pub fn needs_lead(&self) -> bool {
        self.amount > REFUND_LIMIT
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RefundStatus {
    /// Waiting for a lead; no money has moved.
    Held,
    /// Sent to the customer's original payment method.
    Released,
}

impl RefundStatus {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            RefundStatus::Held => "held",
            RefundStatus::Released => "released",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Refund {
    pub refund_id: String,
    pub quote_id: String,
    pub order_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sku: Option<String>,
    pub amount: Cents,
    pub status: RefundStatus,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub released_by: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// Why the shop refused. Each message says what happened and what to do next, because the
/// model reads it as a tool error and a person may read it in the desk.
#[derive(Debug, thiserror::Error)]
pub enum ShopError {
    #[error(
        "'{0}' is not an order number; the shop's order numbers are O- followed by four digits."
    )]
    NotAnOrderId(String),
    #[error(
        "The shop has no order {0}. Check the number with the customer, or use find_orders to list their orders."
    )]
    NoOrder(String),
    #[error(
        "'{0}' is not a customer ID; customer IDs are C- followed by four digits, as on the ticket."
    )]
    NotACustomerId(String),
    #[error("The shop has no customer {0}. Take the customer ID from the ticket.")]
    NoCustomer(String),
    #[error("'{0}' is not a SKU; the shop's SKUs are KG- followed by four digits.")]
    NotASku(String),
    #[error(
        "Order {order_id} is {}, so there is nothing to refund yet. {}",
        status.as_str(),
        not_refundable_advice(*status)
    )]
    NotRefundable {
        order_id: String,
        status: OrderStatus,
    },
    #[error(
        "Order {order_id} has no line for {sku}. Its lines are {lines}. Quote one of those, or leave sku out to quote the whole order."
    )]
    NoLine {
        order_id: String,
        sku: String,
        lines: String,
    },
    #[error(
        "{what} was already refunded by {refund_id} ({status}). Each line is refunded once; tell the customer about that refund instead."
    )]
    AlreadyRefunded {
        what: String,
        refund_id: String,
        status: &'static str,
    },
    #[error("A refund needs a reason: say in a few words why the customer wants their money back.")]
    NoReason,
    #[error(
        "'{0}' is not a quote ID. Quote IDs come only from quote_refund; call it first and pass the quote_id it returns."
    )]
    NotAQuoteId(String),
    #[error(
        "The shop has no quote {0}. Quote IDs come only from quote_refund; call it for this order and use the quote_id it returns."
    )]
    NoQuote(String),
    #[error("The shop has no refund {0}.")]
    NoRefund(String),
    /// The two-person rule: a held refund is released by a lead who did not issue it.
    #[error(
        "Only a lead may release refund {refund}, and {releaser} is not one: a lead other than {issuer} must release this refund; it stays held."
    )]
    NotALead {
        refund: String,
        releaser: String,
        issuer: String,
    },
    #[error(
        "A lead other than {issuer} must release refund {refund}: the one who issued a refund cannot release it too; it stays held."
    )]
    OwnRefund { refund: String, issuer: String },
    /// A replayed `requestState`: its form has had its answer.
    #[error(
        "This release form for refund {refund} was answered already: {by} {answer} it, {}",
        answered_advice(answer)
    )]
    Answered {
        refund: String,
        answer: String,
        by: String,
    },
    #[error(
        "The shop has no open release form for refund {0} with this requestState. Call issue_refund again without requestState for a fresh form."
    )]
    NoAsk(String),
    #[error("A damage claim needs the damage: say in a few words what arrived damaged.")]
    NoDamage,
    #[error(
        "Order {order_id} is {}: it was never shipped, so no parcel of it can have arrived damaged and nothing was filed. Check the order number with the customer.",
        status.as_str()
    )]
    NeverShipped {
        order_id: String,
        status: OrderStatus,
    },
    /// The two-person rule for claims: a large claim is confirmed by a lead who did not file it.
    #[error(
        "Only a lead may answer claim {claim}, and {answerer} is not one: a lead other than {filer} must confirm or decline it; it still waits."
    )]
    ClaimNotALead {
        claim: String,
        answerer: String,
        filer: String,
    },
    #[error(
        "A lead other than {filer} must answer claim {claim}: the one who filed a claim cannot confirm it too; it still waits."
    )]
    OwnClaim { claim: String, filer: String },
    #[error("the shop's database failed ({0}); try again, and report it if it keeps failing")]
    Database(#[from] rusqlite::Error),
    #[error(
        "the shop's database failed ({}); try again, and report it if it keeps failing",
        pg_detail(.0)
    )]
    Postgres(#[from] tokio_postgres::Error),
    #[error(
        "cannot reach or log in to the shop's PostgreSQL at {at} ({detail}); check the address, the password (in the address or PGPASSWORD) and that the server runs"
    )]
    Unreachable { at: String, detail: String },
    #[error("the shop's database holds a record it cannot read ({0}); report it")]
    Corrupt(String),
}

fn not_refundable_advice(status: OrderStatus) -> &'static str {
    match status {
        OrderStatus::Placed => {
            "It has not been dispatched: it can be cancelled instead, and payment is only taken at dispatch."
        }
        OrderStatus::Shipped => {
            "It is on its way: a refund is possible once it is delivered or returned. Its tracking number shows where it is."
        }
        OrderStatus::Cancelled => "A cancelled order was never charged.",
        OrderStatus::Delivered | OrderStatus::Returned => "",
    }
}

fn answered_advice(answer: &str) -> &'static str {
    if answer == "released" {
        "and nothing is paid twice. Call issue_refund again without requestState to see the refund as it stands."
    } else {
        "so the shop still holds it. To ask a lead again, call issue_refund again without requestState."
    }
}

/// The server's own words: tokio-postgres shows only "db error" otherwise.
pub(crate) fn pg_detail(error: &tokio_postgres::Error) -> String {
    match (error.as_db_error(), std::error::Error::source(error)) {
        (Some(db), _) => db.message().to_owned(),
        (None, Some(cause)) => format!("{error}: {cause}"),
        (None, None) => error.to_string(),
    }
}
