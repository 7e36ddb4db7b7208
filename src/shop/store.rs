//! The shop's system of record: orders, refund quotes and refunds in one SQLite file.
//!
//! Every rule about money is enforced here, inside a write transaction, so it holds for
//! concurrent calls in one process and for several server processes on the same file:
//! a refund is made at most once per quote, each order line is refunded at most once, and a
//! refund above [`REFUND_LIMIT`](super::REFUND_LIMIT) stays held until a lead releases it.

use std::path::Path;
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};
use serde::Serialize;
use sha2::{Digest, Sha256};

use super::data::{Order, OrderStatus, ShopWorld};
use super::{REFUND_LIMIT, ids};
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
    fn as_str(self) -> &'static str {
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
    #[error("the shop's database failed ({0}); try again, and report it if it keeps failing")]
    Database(#[from] rusqlite::Error),
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

pub struct Store {
    conn: Mutex<Connection>,
    ids: QuoteIds,
}

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS customers (
    customer_id TEXT PRIMARY KEY,
    name        TEXT NOT NULL,
    email       TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS orders (
    order_id    TEXT PRIMARY KEY,
    customer_id TEXT NOT NULL REFERENCES customers(customer_id),
    placed_on   TEXT NOT NULL,
    status      TEXT NOT NULL,
    doc         TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS orders_by_customer ON orders(customer_id);
CREATE TABLE IF NOT EXISTS quotes (
    seq          INTEGER PRIMARY KEY,
    quote_id     TEXT NOT NULL UNIQUE,
    order_id     TEXT NOT NULL REFERENCES orders(order_id),
    sku          TEXT,
    amount_cents INTEGER NOT NULL,
    reason       TEXT NOT NULL,
    created_at   INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS refunds (
    seq          INTEGER PRIMARY KEY,
    quote_id     TEXT NOT NULL UNIQUE REFERENCES quotes(quote_id),
    order_id     TEXT NOT NULL REFERENCES orders(order_id),
    sku          TEXT,
    amount_cents INTEGER NOT NULL,
    status       TEXT NOT NULL CHECK (status IN ('held', 'released')),
    issued_by    TEXT,
    released_by  TEXT,
    note         TEXT,
    created_at   INTEGER NOT NULL,
    released_at  INTEGER
);
";

impl Store {
    /// Opens (or creates) the database at `path`, or an in-memory one for `":memory:"`, and
    /// seeds it from `world` when it holds no orders yet.
    pub fn open(path: &Path, world: &ShopWorld, ids: QuoteIds) -> Result<Self, ShopError> {
        let conn = if path.as_os_str() == ":memory:" {
            Connection::open_in_memory()?
        } else {
            Connection::open(path)?
        };
        // Several server processes may share one file (HTTP replicas, a restarted server).
        conn.busy_timeout(Duration::from_secs(5))?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
        conn.execute_batch(SCHEMA)?;
        let store = Self {
            conn: Mutex::new(conn),
            ids,
        };
        store.seed(world)?;
        Ok(store)
    }

    fn seed(&self, world: &ShopWorld) -> Result<(), ShopError> {
        self.write(|tx| {
            let orders: i64 = tx.query_row("SELECT count(*) FROM orders", [], |r| r.get(0))?;
            if orders > 0 {
                return Ok(());
            }
            for c in &world.customers {
                tx.execute(
                    "INSERT INTO customers (customer_id, name, email) VALUES (?1, ?2, ?3)",
                    params![c.customer_id, c.name, c.email],
                )?;
            }
            for o in &world.orders {
                let doc = serde_json::to_string(o).map_err(|e| ShopError::Corrupt(e.to_string()))?;
                tx.execute(
                    "INSERT INTO orders (order_id, customer_id, placed_on, status, doc) VALUES (?1, ?2, ?3, ?4, ?5)",
                    params![o.order_id, o.customer_id, o.placed_on, o.status.as_str(), doc],
                )?;
            }
            tracing::info!(
                customers = world.customers.len(),
                orders = world.orders.len(),
                "seeded the shop's database"
            );
            Ok(())
        })
    }

    /// Runs `work` in an immediate (write-locking) transaction and commits it if it succeeds.
    fn write<T>(
        &self,
        work: impl FnOnce(&rusqlite::Transaction<'_>) -> Result<T, ShopError>,
    ) -> Result<T, ShopError> {
        let mut conn = self
            .conn
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let value = work(&tx)?;
        tx.commit()?;
        Ok(value)
    }

    fn read<T>(
        &self,
        work: impl FnOnce(&Connection) -> Result<T, ShopError>,
    ) -> Result<T, ShopError> {
        let conn = self
            .conn
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        work(&conn)
    }

    /// The order as the system of record has it, with the refunds made on it.
    pub fn order(&self, order_id: &str) -> Result<(Order, Vec<Refund>), ShopError> {
        let order_id =
            ids::order_id(order_id).ok_or_else(|| ShopError::NotAnOrderId(order_id.to_owned()))?;
        self.read(|conn| {
            let order = load_order(conn, &order_id)?;
            let refunds = refunds_of(conn, &order_id)?;
            Ok((order, refunds))
        })
    }

    /// Every order of one customer, newest first.
    pub fn orders_of(&self, customer_id: &str) -> Result<Vec<Order>, ShopError> {
        let customer_id = ids::customer_id(customer_id)
            .ok_or_else(|| ShopError::NotACustomerId(customer_id.to_owned()))?;
        self.read(|conn| {
            let known: Option<String> = conn
                .query_row(
                    "SELECT customer_id FROM customers WHERE customer_id = ?1",
                    [&customer_id],
                    |r| r.get(0),
                )
                .optional()?;
            if known.is_none() {
                return Err(ShopError::NoCustomer(customer_id));
            }
            let mut statement = conn.prepare(
                "SELECT doc FROM orders WHERE customer_id = ?1 ORDER BY placed_on DESC, order_id DESC",
            )?;
            let docs = statement.query_map([&customer_id], |r| r.get::<_, String>(0))?;
            docs.map(|doc| parse_order(&doc?)).collect()
        })
    }

    /// Quotes a refund of one line (`sku`) or of the whole order, without moving money.
    pub fn quote(
        &self,
        order_id: &str,
        sku: Option<&str>,
        reason: &str,
    ) -> Result<Quote, ShopError> {
        let order_id =
            ids::order_id(order_id).ok_or_else(|| ShopError::NotAnOrderId(order_id.to_owned()))?;
        let sku = match sku.map(str::trim).filter(|s| !s.is_empty()) {
            Some(s) => Some(ids::sku(s).ok_or_else(|| ShopError::NotASku(s.to_owned()))?),
            None => None,
        };
        let reason = reason.trim();
        self.write(|tx| {
            let order = load_order(tx, &order_id)?;
            if !order.status.refundable() {
                return Err(ShopError::NotRefundable {
                    order_id,
                    status: order.status,
                });
            }
            let (covers, amount) = match &sku {
                Some(sku) => match order.line(sku) {
                    Some(line) => (Covers::Line, line.amount()),
                    None => {
                        return Err(ShopError::NoLine {
                            order_id,
                            sku: sku.clone(),
                            lines: order.lines.iter().map(|l| l.sku.as_str()).collect::<Vec<_>>().join(", "),
                        });
                    }
                },
                None => (Covers::Order, order.total),
            };
            refuse_if_refunded(tx, &order_id, sku.as_deref(), None)?;
            if reason.is_empty() {
                return Err(ShopError::NoReason);
            }
            let seq: i64 = tx.query_row("SELECT coalesce(max(seq), 0) + 1 FROM quotes", [], |r| r.get(0))?;
            let earlier: i64 = tx.query_row(
                "SELECT count(*) FROM quotes WHERE order_id = ?1 AND sku IS ?2",
                params![order_id, sku],
                |r| r.get(0),
            )?;
            let quote = Quote {
                quote_id: self.quote_id(&order_id, sku.as_deref(), earlier + 1),
                order_id,
                sku,
                covers,
                amount,
                reason: reason.to_owned(),
            };
            tx.execute(
                "INSERT INTO quotes (seq, quote_id, order_id, sku, amount_cents, reason, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                params![seq, quote.quote_id, quote.order_id, quote.sku, quote.amount.0, quote.reason, now()],
            )?;
            Ok(quote)
        })
    }

    /// `nth` counts the quotes of this order line (or whole order), from 1.
    fn quote_id(&self, order_id: &str, sku: Option<&str>, nth: i64) -> String {
        let bytes: [u8; 5] = match self.ids {
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

    /// The quote behind `quote_id`.
    pub fn quote_of(&self, quote_id: &str) -> Result<Quote, ShopError> {
        let quote_id =
            ids::quote_id(quote_id).ok_or_else(|| ShopError::NotAQuoteId(quote_id.to_owned()))?;
        self.read(|conn| load_quote(conn, &quote_id))
    }

    /// Makes the refund for a quote, once: a second call with the same quote returns the
    /// refund the first one made. Up to the limit the refund is released at once; above it,
    /// it is held for a lead. Returns the refund and whether this call created it.
    pub fn issue(
        &self,
        quote_id: &str,
        issued_by: Option<&str>,
    ) -> Result<(Refund, bool), ShopError> {
        let quote_id =
            ids::quote_id(quote_id).ok_or_else(|| ShopError::NotAQuoteId(quote_id.to_owned()))?;
        self.write(|tx| {
            let quote = load_quote(tx, &quote_id)?;
            if let Some(existing) = load_refund_by_quote(tx, &quote_id)? {
                return Ok((existing, false));
            }
            refuse_if_refunded(tx, &quote.order_id, quote.sku.as_deref(), Some(&quote_id))?;
            let status = if quote.needs_lead() { RefundStatus::Held } else { RefundStatus::Released };
            let at = now();
            tx.execute(
                "INSERT INTO refunds (quote_id, order_id, sku, amount_cents, status, issued_by, created_at, released_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                params![
                    quote.quote_id,
                    quote.order_id,
                    quote.sku,
                    quote.amount.0,
                    status.as_str(),
                    issued_by,
                    at,
                    (status == RefundStatus::Released).then_some(at),
                ],
            )?;
            let refund = load_refund_by_quote(tx, &quote_id)?
                .ok_or_else(|| ShopError::Corrupt(format!("refund for {quote_id} vanished")))?;
            Ok((refund, true))
        })
    }

    /// A lead releases a held refund. Releasing one already released changes nothing.
    pub fn release(
        &self,
        refund_id: &str,
        released_by: Option<&str>,
        note: Option<&str>,
    ) -> Result<Refund, ShopError> {
        let seq = refund_seq(refund_id).ok_or_else(|| ShopError::NoRefund(refund_id.to_owned()))?;
        self.write(|tx| {
            tx.execute(
                "UPDATE refunds SET status = 'released', released_by = ?2, note = ?3, released_at = ?4
                 WHERE seq = ?1 AND status = 'held'",
                params![seq, released_by, note, now()],
            )?;
            load_refund(tx, "seq = ?1", seq)?.ok_or_else(|| ShopError::NoRefund(refund_id.to_owned()))
        })
    }

    /// How many refunds exist for a quote (always 0 or 1; tests hold the shop to it).
    pub fn refund_count(&self, quote_id: &str) -> Result<i64, ShopError> {
        self.read(|conn| {
            Ok(conn.query_row(
                "SELECT count(*) FROM refunds WHERE quote_id = ?1",
                [quote_id],
                |r| r.get(0),
            )?)
        })
    }
}

fn now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

fn parse_order(doc: &str) -> Result<Order, ShopError> {
    serde_json::from_str(doc).map_err(|e| ShopError::Corrupt(e.to_string()))
}

fn load_order(conn: &Connection, order_id: &str) -> Result<Order, ShopError> {
    let doc: Option<String> = conn
        .query_row(
            "SELECT doc FROM orders WHERE order_id = ?1",
            [order_id],
            |r| r.get(0),
        )
        .optional()?;
    match doc {
        Some(doc) => parse_order(&doc),
        None => Err(ShopError::NoOrder(order_id.to_owned())),
    }
}

fn load_quote(conn: &Connection, quote_id: &str) -> Result<Quote, ShopError> {
    conn.query_row(
        "SELECT quote_id, order_id, sku, amount_cents, reason FROM quotes WHERE quote_id = ?1",
        [quote_id],
        |r| {
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
        },
    )
    .optional()?
    .ok_or_else(|| ShopError::NoQuote(quote_id.to_owned()))
}

const REFUND_COLUMNS: &str =
    "seq, quote_id, order_id, sku, amount_cents, status, released_by, note";

fn refund_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Refund> {
    let status: String = r.get(5)?;
    Ok(Refund {
        refund_id: format!("R-{:04}", r.get::<_, i64>(0)?),
        quote_id: r.get(1)?,
        order_id: r.get(2)?,
        sku: r.get(3)?,
        amount: Cents(r.get(4)?),
        status: if status == "released" {
            RefundStatus::Released
        } else {
            RefundStatus::Held
        },
        released_by: r.get(6)?,
        note: r.get(7)?,
    })
}

fn load_refund(
    conn: &Connection,
    filter: &str,
    value: impl rusqlite::ToSql,
) -> Result<Option<Refund>, ShopError> {
    let sql = format!("SELECT {REFUND_COLUMNS} FROM refunds WHERE {filter}");
    Ok(conn.query_row(&sql, [value], refund_row).optional()?)
}

fn load_refund_by_quote(conn: &Connection, quote_id: &str) -> Result<Option<Refund>, ShopError> {
    load_refund(conn, "quote_id = ?1", quote_id)
}

fn refunds_of(conn: &Connection, order_id: &str) -> Result<Vec<Refund>, ShopError> {
    let sql = format!("SELECT {REFUND_COLUMNS} FROM refunds WHERE order_id = ?1 ORDER BY seq");
    let mut statement = conn.prepare(&sql)?;
    let rows = statement.query_map([order_id], refund_row)?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// A line may be refunded once, and a whole-order refund excludes line refunds (and back).
fn refuse_if_refunded(
    conn: &Connection,
    order_id: &str,
    sku: Option<&str>,
    other_than_quote: Option<&str>,
) -> Result<(), ShopError> {
    let clash = refunds_of(conn, order_id)?.into_iter().find(|refund| {
        Some(refund.quote_id.as_str()) != other_than_quote
            && (sku.is_none() || refund.sku.is_none() || refund.sku.as_deref() == sku)
    });
    match clash {
        None => Ok(()),
        Some(refund) => Err(ShopError::AlreadyRefunded {
            what: match (&refund.sku, sku) {
                (Some(line), _) => format!("Order {order_id}'s line {line}"),
                (None, _) => format!("Order {order_id}"),
            },
            refund_id: refund.refund_id,
            status: refund.status.as_str(),
        }),
    }
}

/// `R-0012` → 12.
fn refund_seq(refund_id: &str) -> Option<i64> {
    refund_id.trim().strip_prefix("R-")?.parse().ok()
}
