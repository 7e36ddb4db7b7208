//! The store's SQL and the rows it reads back, each statement prepared once per connection
//! and kept in rusqlite's statement cache.
//!
//! Reading only: what may be written, and when, is decided in the store itself.

use rusqlite::{Connection, OptionalExtension};

use super::super::data::Order;
use super::model::{Covers, Quote, Refund, RefundStatus, ShopError};
use super::rules;
use crate::money::Cents;

/// How many prepared statements a connection keeps: every statement of the store, with room.
pub(super) const STATEMENT_CACHE: usize = 32;

/// An order and its refunds in one statement, so a lookup takes the read lock once.
const ORDER_WITH_REFUNDS: &str = "
SELECT o.doc, r.seq, r.quote_id, r.order_id, r.sku, r.amount_cents, r.status, r.released_by, r.note
FROM orders o LEFT JOIN refunds r ON r.order_id = o.order_id
WHERE o.order_id = ?1 ORDER BY r.seq";
const ORDER_DOC: &str = "SELECT doc FROM orders WHERE order_id = ?1";
const QUOTE: &str =
    "SELECT quote_id, order_id, sku, amount_cents, reason FROM quotes WHERE quote_id = ?1";
const REFUNDS_OF_ORDER: &str =
    "SELECT seq, quote_id, order_id, sku, amount_cents, status, released_by, note
FROM refunds WHERE order_id = ?1 ORDER BY seq";
const REFUND_BY_QUOTE: &str =
    "SELECT seq, quote_id, order_id, sku, amount_cents, status, released_by, note
FROM refunds WHERE quote_id = ?1";
pub(super) const REFUND_BY_SEQ: &str =
    "SELECT seq, quote_id, order_id, sku, amount_cents, status, released_by, note
FROM refunds WHERE seq = ?1";

pub(super) fn parse_order(doc: &str) -> Result<Order, ShopError> {
    serde_json::from_str(doc).map_err(|e| ShopError::Corrupt(e.to_string()))
}

/// The order `order_id` and the refunds made on it, oldest first.
pub(super) fn order_with_refunds(
    conn: &Connection,
    order_id: &str,
) -> Result<(Order, Vec<Refund>), ShopError> {
    let mut statement = conn.prepare_cached(ORDER_WITH_REFUNDS)?;
    let mut rows = statement.query([order_id])?;
    let Some(first) = rows.next()? else {
        return Err(ShopError::NoOrder(order_id.to_owned()));
    };
    let doc = first
        .get_ref(0)?
        .as_str()
        .map_err(|e| ShopError::Corrupt(format!("order {order_id}: {e}")))?;
    let order = parse_order(doc)?;
    let mut refunds = Vec::new();
    if first.get_ref(1)?.data_type() != rusqlite::types::Type::Null {
        refunds.push(refund_row_at(first, 1)?);
        while let Some(row) = rows.next()? {
            refunds.push(refund_row_at(row, 1)?);
        }
    }
    Ok((order, refunds))
}

pub(super) fn load_order(conn: &Connection, order_id: &str) -> Result<Order, ShopError> {
    let mut statement = conn.prepare_cached(ORDER_DOC)?;
    let doc: Option<String> = statement.query_row([order_id], |r| r.get(0)).optional()?;
    match doc {
        Some(doc) => parse_order(&doc),
        None => Err(ShopError::NoOrder(order_id.to_owned())),
    }
}

pub(super) fn load_quote(conn: &Connection, quote_id: &str) -> Result<Quote, ShopError> {
    let mut statement = conn.prepare_cached(QUOTE)?;
    statement
        .query_row([quote_id], |r| {
            let sku: Option<String> = r.get(2)?;
            Ok(Quote {
                quote_id: r.get(0)?,
                order_id: r.get(1)?,
                covers: if sku.is_some() {
                    Covers::Line
                } else {
                    Covers::Order
                },
                sku,
                amount: Cents(r.get(3)?),
                reason: r.get(4)?,
            })
        })
        .optional()?
        .ok_or_else(|| ShopError::NoQuote(quote_id.to_owned()))
}

/// A refund from eight columns starting at `base`: seq, quote_id, order_id, sku,
/// amount_cents, status, released_by, note.
fn refund_row_at(r: &rusqlite::Row<'_>, base: usize) -> rusqlite::Result<Refund> {
    let status = r.get_ref(base + 5)?;
    Ok(Refund {
        refund_id: rules::refund_id(r.get(base)?),
        quote_id: r.get(base + 1)?,
        order_id: r.get(base + 2)?,
        sku: r.get(base + 3)?,
        amount: Cents(r.get(base + 4)?),
        status: if status.as_str().ok() == Some("released") {
            RefundStatus::Released
        } else {
            RefundStatus::Held
        },
        released_by: r.get(base + 6)?,
        note: r.get(base + 7)?,
    })
}

/// The refund the statement `sql` (one of the `REFUND_*` ones) finds for `value`.
pub(super) fn load_refund(
    conn: &Connection,
    sql: &str,
    value: impl rusqlite::ToSql,
) -> Result<Option<Refund>, ShopError> {
    let mut statement = conn.prepare_cached(sql)?;
    Ok(statement
        .query_row([value], |r| refund_row_at(r, 0))
        .optional()?)
}

pub(super) fn load_refund_by_quote(
    conn: &Connection,
    quote_id: &str,
) -> Result<Option<Refund>, ShopError> {
    load_refund(conn, REFUND_BY_QUOTE, quote_id)
}

pub(super) fn refunds_of(conn: &Connection, order_id: &str) -> Result<Vec<Refund>, ShopError> {
    let mut statement = conn.prepare_cached(REFUNDS_OF_ORDER)?;
    let rows = statement.query_map([order_id], |r| refund_row_at(r, 0))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// A line may be refunded once, and a whole-order refund excludes line refunds (and back).
pub(super) fn refuse_if_refunded(
    conn: &Connection,
    order_id: &str,
    sku: Option<&str>,
    other_than_quote: Option<&str>,
) -> Result<(), ShopError> {
    rules::refuse_clash(refunds_of(conn, order_id)?, order_id, sku, other_than_quote)
}
