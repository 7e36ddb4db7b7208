//! The shop's record in one SQLite file: the default backend, one connection behind a mutex,
//! its statements cached.
//!
//! Every write runs in a `BEGIN IMMEDIATE` transaction, so the rules hold for concurrent calls
//! in one process and for several server processes on the same file (they take turns on the
//! file's write lock, waiting up to 5 s).

mod claims;

use std::path::Path;
use std::sync::Mutex;
use std::time::Duration;

use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};

use super::model::{Quote, QuoteIds, Refund, RefundStatus, ShopError};
use super::queries::{
    self, REFUND_BY_SEQ, load_order, load_quote, load_refund, load_refund_by_quote, parse_order,
    refuse_if_refunded,
};
use super::rules::{self, AskRow, ReleaseAnswer};
use crate::shop::data::{Order, ShopWorld};

pub struct SqliteStore {
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
CREATE TABLE IF NOT EXISTS release_asks (
    ask_id      TEXT PRIMARY KEY,
    refund_seq  INTEGER NOT NULL REFERENCES refunds(seq),
    asked_at    INTEGER NOT NULL,
    answer      TEXT CHECK (answer IN ('released', 'declined')),
    answered_by TEXT,
    answered_at INTEGER
);
CREATE INDEX IF NOT EXISTS release_asks_by_refund ON release_asks(refund_seq);
CREATE TABLE IF NOT EXISTS claims (
    claim_id        TEXT PRIMARY KEY,
    order_id        TEXT NOT NULL REFERENCES orders(order_id),
    damage          TEXT NOT NULL,
    amount_cents    INTEGER NOT NULL,
    filed_by        TEXT,
    created_at_ms   INTEGER NOT NULL,
    review_ms       INTEGER NOT NULL,
    settle_ms       INTEGER NOT NULL,
    answer          TEXT CHECK (answer IN ('approve', 'decline')),
    note            TEXT,
    answered_by     TEXT,
    answered_at_ms  INTEGER,
    cancelled_at_ms INTEGER
);
CREATE INDEX IF NOT EXISTS claims_by_order ON claims(order_id, created_at_ms);
";

impl SqliteStore {
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
        prepare_file(&conn)?;
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
            let orders: i64 = tx
                .prepare_cached("SELECT count(*) FROM orders")?
                .query_row([], |r| r.get(0))?;
            if orders > 0 {
                return Ok(());
            }
            let mut customer = tx.prepare_cached(
                "INSERT INTO customers (customer_id, name, email) VALUES (?1, ?2, ?3)",
            )?;
            for c in &world.customers {
                customer.execute(params![c.customer_id, c.name, c.email])?;
            }
            let mut order = tx.prepare_cached(
                "INSERT INTO orders (order_id, customer_id, placed_on, status, doc) VALUES (?1, ?2, ?3, ?4, ?5)",
            )?;
            for o in &world.orders {
                let doc = super::order_doc(o)?;
                order.execute(params![o.order_id, o.customer_id, o.placed_on, o.status.as_str(), doc])?;
            }
            super::seeded(world);
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
        let order_id = rules::order_id(order_id)?;
        self.read(|conn| queries::order_with_refunds(conn, &order_id))
    }

    /// Every order of one customer, newest first.
    pub fn orders_of(&self, customer_id: &str) -> Result<Vec<Order>, ShopError> {
        let customer_id = rules::customer_id(customer_id)?;
        self.read(|conn| {
            let known: Option<String> = conn
                .prepare_cached("SELECT customer_id FROM customers WHERE customer_id = ?1")?
                .query_row([&customer_id], |r| r.get(0))
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
        let order_id = rules::order_id(order_id)?;
        let sku = rules::sku_arg(sku)?;
        self.write(|tx| {
            let order = load_order(tx, &order_id)?;
            let (covers, amount) = rules::cover(&order, sku.as_deref())?;
            refuse_if_refunded(tx, &order_id, sku.as_deref(), None)?;
            let reason = rules::reason(reason)?;
            let seq: i64 = tx
                .prepare_cached("SELECT coalesce(max(seq), 0) + 1 FROM quotes")?
                .query_row([], |r| r.get(0))?;
            let earlier: i64 = tx
                .prepare_cached("SELECT count(*) FROM quotes WHERE order_id = ?1 AND sku IS ?2")?
                .query_row(params![order_id, sku], |r| r.get(0))?;
            let quote = Quote {
                quote_id: rules::quote_id(self.ids, &order_id, sku.as_deref(), earlier + 1),
                order_id,
                sku,
                covers,
                amount,
                reason: reason.to_owned(),
            };
            tx.prepare_cached(
                "INSERT INTO quotes (seq, quote_id, order_id, sku, amount_cents, reason, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            )?
            .execute(params![
                seq,
                quote.quote_id,
                quote.order_id,
                quote.sku,
                quote.amount.0,
                quote.reason,
                rules::now()
            ])?;
            Ok(quote)
        })
    }

    /// The quote behind `quote_id`.
    pub fn quote_of(&self, quote_id: &str) -> Result<Quote, ShopError> {
        let quote_id = rules::quote_id_arg(quote_id)?;
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
        let quote_id = rules::quote_id_arg(quote_id)?;
        self.write(|tx| {
            let quote = load_quote(tx, &quote_id)?;
            if let Some(existing) = load_refund_by_quote(tx, &quote_id)? {
                return Ok((existing, false));
            }
            refuse_if_refunded(tx, &quote.order_id, quote.sku.as_deref(), Some(&quote_id))?;
            let status = if quote.needs_lead() {
                RefundStatus::Held
            } else {
                RefundStatus::Released
            };
            let at = rules::now();
            tx.prepare_cached(
                "INSERT INTO refunds (quote_id, order_id, sku, amount_cents, status, issued_by, created_at, released_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            )?
            .execute(params![
                quote.quote_id,
                quote.order_id,
                quote.sku,
                quote.amount.0,
                status.as_str(),
                issued_by,
                at,
                (status == RefundStatus::Released).then_some(at),
            ])?;
            let refund = load_refund_by_quote(tx, &quote_id)?
                .ok_or_else(|| ShopError::Corrupt(format!("refund for {quote_id} vanished")))?;
            Ok((refund, true))
        })
    }

    /// Opens a release form for the held refund `refund_id`; returns the form's ID, which
    /// its answer must carry back.
    pub fn ask(&self, refund_id: &str) -> Result<String, ShopError> {
        let seq = rules::refund_seq(refund_id)?;
        let ask_id = rules::new_ask_id();
        self.write(|tx| {
            tx.prepare_cached(
                "INSERT INTO release_asks (ask_id, refund_seq, asked_at)
                 SELECT ?1, seq, ?3 FROM refunds WHERE seq = ?2",
            )?
            .execute(params![ask_id, seq, rules::now()])
            .map_err(ShopError::from)
        })
        .and_then(|inserted| match inserted {
            1 => Ok(ask_id),
            _ => Err(ShopError::NoRefund(refund_id.to_owned())),
        })
    }

    /// Answers the release form `ask_id` of the refund `refund_id`, in one transaction: a
    /// form is answered once (a replay is refused), and [`ReleaseAnswer::Release`] keeps the
    /// two-person rule ([`rules::may_release`]); a refusal leaves the refund held and the
    /// form open. Releasing or holding spends every open form of the refund.
    pub fn answer(
        &self,
        refund_id: &str,
        ask_id: &str,
        answer: ReleaseAnswer,
        by: Option<(&str, bool)>,
        note: Option<&str>,
    ) -> Result<Refund, ShopError> {
        let seq = rules::refund_seq(refund_id)?;
        self.write(|tx| {
            let ask = tx
                .prepare_cached("SELECT refund_seq, answer, answered_by FROM release_asks WHERE ask_id = ?1")?
                .query_row([ask_id], |r| {
                    let answer: Option<String> = r.get(1)?;
                    Ok(AskRow {
                        refund_seq: r.get(0)?,
                        answer: answer.map(|a| (a, r.get(2).ok().flatten())),
                    })
                })
                .optional()?;
            rules::refuse_spent(refund_id, seq, ask)?;
            if answer == ReleaseAnswer::Release {
                let issuer: Option<String> = tx
                    .prepare_cached("SELECT issued_by FROM refunds WHERE seq = ?1")?
                    .query_row([seq], |r| r.get(0))
                    .optional()?
                    .flatten();
                rules::may_release(refund_id, issuer, by)?;
                tx.prepare_cached(
                    "UPDATE refunds SET status = 'released', released_by = ?2, note = ?3, released_at = ?4
                     WHERE seq = ?1 AND status = 'held'",
                )?
                .execute(params![seq, by.map(|(id, _)| id), note, rules::now()])?;
            }
            if let Some(spent) = answer.spends_as() {
                tx.prepare_cached(
                    "UPDATE release_asks SET answer = ?2, answered_by = ?3, answered_at = ?4
                     WHERE refund_seq = ?1 AND answer IS NULL",
                )?
                .execute(params![seq, spent, by.map(|(id, _)| id), rules::now()])?;
            }
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

/// WAL, foreign keys and the schema on a file other replicas may be opening at the same
/// moment. Switching a new file to WAL can find it busy without SQLite waiting for the other
/// opener (its busy timeout does not cover that lock), so a busy file is tried again for as
/// long as the timeout would have waited.
fn prepare_file(conn: &Connection) -> Result<(), rusqlite::Error> {
    let started = std::time::Instant::now();
    loop {
        let prepared = conn
            .pragma_update(None, "journal_mode", "WAL")
            .and_then(|()| conn.pragma_update(None, "foreign_keys", "ON"))
            .and_then(|()| conn.execute_batch(SCHEMA));
        match prepared {
            Err(rusqlite::Error::SqliteFailure(e, _))
                if matches!(
                    e.code,
                    rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked
                ) && started.elapsed() < Duration::from_secs(5) =>
            {
                std::thread::sleep(Duration::from_millis(20));
            }
            other => return other,
        }
    }
}
