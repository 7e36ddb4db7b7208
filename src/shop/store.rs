//! The shop's system of record: orders, refund quotes and refunds, on one of two backends.
//!
//! Every rule about money is enforced by the backend, inside a write transaction, so it holds
//! for concurrent calls in one process and for several server processes on one record: a
//! refund is made at most once per quote, each order line is refunded at most once (a
//! whole-order refund excludes line refunds, and back), a refund above
//! [`REFUND_LIMIT`](super::REFUND_LIMIT) stays held until a lead releases it, and each release
//! form is answered once. Damage claims with the carrier ([`claims`]) live in the same
//! record. The rules themselves are plain functions ([`rules`]) both backends
//! call on what they read.
//!
//! [`Store`] is what the shop's server holds: SQLite ([`SqliteStore`], the default; its calls
//! are synchronous and run in place, as quick as the file) or PostgreSQL ([`PgStore`], for
//! replicas on several machines; its calls are awaited).

use std::path::Path;
use std::sync::Arc;

use super::data::{Order, ShopWorld};

mod claims;
mod model;
mod postgres;
mod queries;
mod rules;
mod sqlite;

pub use claims::{
    AnswerTaken, Claim, ClaimAnswer, ClaimOutcome, ClaimSchedule, ClaimStage,
    now_ms as claim_clock_ms,
};
pub use model::{Covers, Quote, QuoteIds, Refund, RefundStatus, ShopError};
pub use postgres::PgStore;
pub use rules::ReleaseAnswer;
pub use sqlite::SqliteStore;

/// The shop's record on either backend; cloning shares it.
#[derive(Clone)]
pub enum Store {
    Sqlite(Arc<SqliteStore>),
    Postgres(Arc<PgStore>),
}

impl From<Arc<SqliteStore>> for Store {
    fn from(store: Arc<SqliteStore>) -> Self {
        Store::Sqlite(store)
    }
}

impl From<Arc<PgStore>> for Store {
    fn from(store: Arc<PgStore>) -> Self {
        Store::Postgres(store)
    }
}

/// Whether `db` names a PostgreSQL database rather than a SQLite file.
pub fn is_postgres(db: &str) -> bool {
    db.starts_with("postgres://") || db.starts_with("postgresql://")
}

impl Store {
    /// The record `db` names: a `postgres://` address, or a SQLite file (or `:memory:`).
    pub async fn open(db: &Path, world: &ShopWorld, ids: QuoteIds) -> Result<Self, ShopError> {
        match db.to_str().filter(|db| is_postgres(db)) {
            Some(url) => Ok(Arc::new(PgStore::connect(url, world, ids).await?).into()),
            None => Ok(Arc::new(SqliteStore::open(db, world, ids)?).into()),
        }
    }

    /// Where the record is, for logs: the file, or `host:port/database`.
    pub fn at(&self, db: &Path) -> String {
        match self {
            Store::Sqlite(_) => db.display().to_string(),
            Store::Postgres(pg) => format!("postgres {}", pg.at()),
        }
    }

    /// The order as the system of record has it, with the refunds made on it.
    pub async fn order(&self, order_id: &str) -> Result<(Order, Vec<Refund>), ShopError> {
        match self {
            Store::Sqlite(s) => s.order(order_id),
            Store::Postgres(p) => p.order(order_id).await,
        }
    }

    /// Every order of one customer, newest first.
    pub async fn orders_of(&self, customer_id: &str) -> Result<Vec<Order>, ShopError> {
        match self {
            Store::Sqlite(s) => s.orders_of(customer_id),
            Store::Postgres(p) => p.orders_of(customer_id).await,
        }
    }

    /// Quotes a refund of one line (`sku`) or of the whole order, without moving money.
    pub async fn quote(
        &self,
        order_id: &str,
        sku: Option<&str>,
        reason: &str,
    ) -> Result<Quote, ShopError> {
        match self {
            Store::Sqlite(s) => s.quote(order_id, sku, reason),
            Store::Postgres(p) => p.quote(order_id, sku, reason).await,
        }
    }

    /// Makes the refund for a quote, once; held above the limit. Returns the refund and
    /// whether this call created it.
    pub async fn issue(
        &self,
        quote_id: &str,
        issued_by: Option<&str>,
    ) -> Result<(Refund, bool), ShopError> {
        match self {
            Store::Sqlite(s) => s.issue(quote_id, issued_by),
            Store::Postgres(p) => p.issue(quote_id, issued_by).await,
        }
    }

    /// Opens a release form for a held refund; returns the form's ID.
    pub async fn ask(&self, refund_id: &str) -> Result<String, ShopError> {
        match self {
            Store::Sqlite(s) => s.ask(refund_id),
            Store::Postgres(p) => p.ask(refund_id).await,
        }
    }

    /// Answers a release form once, keeping the two-person rule when `by` is known.
    pub async fn answer(
        &self,
        refund_id: &str,
        ask_id: &str,
        answer: ReleaseAnswer,
        by: Option<(&str, bool)>,
        note: Option<&str>,
    ) -> Result<Refund, ShopError> {
        match self {
            Store::Sqlite(s) => s.answer(refund_id, ask_id, answer, by, note),
            Store::Postgres(p) => p.answer(refund_id, ask_id, answer, by, note).await,
        }
    }

    /// How many refunds exist for a quote (always 0 or 1).
    pub async fn refund_count(&self, quote_id: &str) -> Result<i64, ShopError> {
        match self {
            Store::Sqlite(s) => s.refund_count(quote_id),
            Store::Postgres(p) => p.refund_count(quote_id).await,
        }
    }
}

/// An order as the record keeps it: the world's JSON.
fn order_doc(order: &Order) -> Result<String, ShopError> {
    serde_json::to_string(order).map_err(|e| ShopError::Corrupt(e.to_string()))
}

fn seeded(world: &ShopWorld) {
    tracing::info!(
        customers = world.customers.len(),
        orders = world.orders.len(),
        "seeded the shop's database"
    );
}
