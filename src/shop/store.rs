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
use sha2::{Digest, Sha256};

use super::data::{Order, ShopWorld};
use super::ids;

mod model;
mod queries;

pub use model::{Covers, Quote, QuoteIds, Refund, RefundStatus, ShopError};
use queries::{
    REFUND_BY_SEQ, load_order, load_quote, load_refund, load_refund_by_quote, parse_order,
    refuse_if_refunded,
};

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
CREATE INDEX IF NOT EXISTS refunds_by_order ON refunds(order_id, seq);
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
        conn.set_prepared_statement_cache_capacity(queries::STATEMENT_CACHE);
        let store = Self {
            conn: Mutex::new(conn),
            ids,
        };
        store.seed(world)?;
        Ok(store)
    }

    fn seed(&self, world: &ShopWorld) -> Result<(), ShopError> {
        self.write(|tx| {
            let orders: i64 = tx.prepare_cached("SELECT count(*) FROM orders")?.query_row([], |r| r.get(0))?;
            if orders > 0 {
                return Ok(());
            }
            for c in &world.customers {
                tx.prepare_cached("INSERT INTO customers (customer_id, name, email) VALUES (?1, ?2, ?3)")?.execute(params![c.customer_id, c.name, c.email],
                )?;
            }
            for o in &world.orders {
                let doc = serde_json::to_string(o).map_err(|e| ShopError::Corrupt(e.to_string()))?;
                tx.prepare_cached("INSERT INTO orders (order_id, customer_id, placed_on, status, doc) VALUES (?1, ?2, ?3, ?4, ?5)")?.execute(params![o.order_id, o.customer_id, o.placed_on, o.status.as_str(), doc],
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
        self.read(|conn| queries::order_with_refunds(conn, &order_id))
    }

    /// Every order of one customer, newest first.
    pub fn orders_of(&self, customer_id: &str) -> Result<Vec<Order>, ShopError> {
        let customer_id = ids::customer_id(customer_id)
            .ok_or_else(|| ShopError::NotACustomerId(customer_id.to_owned()))?;
        self.read(|conn| {
            let known: Option<String> = conn
                .prepare_cached("SELECT customer_id FROM customers WHERE customer_id = ?1")?
                .query_row(
                    [&customer_id],
                    |r| r.get(0),
                )
                .optional()?;
            if known.is_none() {
                return Err(ShopError::NoCustomer(customer_id));
            }
            let mut statement = conn.prepare_cached(
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
            let seq: i64 = tx.prepare_cached("SELECT coalesce(max(seq), 0) + 1 FROM quotes")?.query_row([], |r| r.get(0))?;
            let earlier: i64 = tx.prepare_cached("SELECT count(*) FROM quotes WHERE order_id = ?1 AND sku IS ?2")?.query_row(params![order_id, sku],
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
            tx.prepare_cached("INSERT INTO quotes (seq, quote_id, order_id, sku, amount_cents, reason, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)")?.execute(params![seq, quote.quote_id, quote.order_id, quote.sku, quote.amount.0, quote.reason, now()],
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
            tx.prepare_cached("INSERT INTO refunds (quote_id, order_id, sku, amount_cents, status, issued_by, created_at, released_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)")?.execute(params![
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

    /// A lead releases a held refund. Releasing one already released changes nothing. The
    /// two-person rule holds here, in the same transaction: when the shop knows who answers
    /// (`releaser`: their staff ID and whether they are a lead), only a lead who did not issue
    /// the refund may release it. Over stdio the shop knows nobody, and cannot apply it.
    pub fn release(
        &self,
        refund_id: &str,
        releaser: Option<(&str, bool)>,
        note: Option<&str>,
    ) -> Result<Refund, ShopError> {
        let seq = refund_seq(refund_id).ok_or_else(|| ShopError::NoRefund(refund_id.to_owned()))?;
        let released_by = releaser.map(|(id, _)| id);
        self.write(|tx| {
            if let Some((releaser, lead)) = releaser {
                let issuer: Option<String> = tx
                    .prepare_cached("SELECT issued_by FROM refunds WHERE seq = ?1")?
                    .query_row([seq], |r| r.get(0))
                    .optional()?
                    .flatten();
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
            }
            tx.prepare_cached("UPDATE refunds SET status = 'released', released_by = ?2, note = ?3, released_at = ?4
                 WHERE seq = ?1 AND status = 'held'")?.execute(params![seq, released_by, note, now()],
            )?;
            load_refund(tx, REFUND_BY_SEQ, seq)?.ok_or_else(|| ShopError::NoRefund(refund_id.to_owned()))
        })
    }

    /// How many refunds exist for a quote (always 0 or 1; tests hold the shop to it).
    pub fn refund_count(&self, quote_id: &str) -> Result<i64, ShopError> {
        self.read(|conn| {
            Ok(conn
                .prepare_cached("SELECT count(*) FROM refunds WHERE quote_id = ?1")?
                .query_row([quote_id], |r| r.get(0))?)
        })
    }
}

fn now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

/// `R-0012` → 12.
fn refund_seq(refund_id: &str) -> Option<i64> {
    refund_id.trim().strip_prefix("R-")?.parse().ok()
}
