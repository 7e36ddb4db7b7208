//! The shop's record in PostgreSQL (`--db postgres://…`), so that Streamable HTTP replicas
//! behind one address share one record.
//!
//! **Isolation: READ COMMITTED with row locks, no retries.** Each write a money rule guards
//! first locks the row the rule is about, and only then reads what the rule needs: a quote and
//! an issue lock their order (`FOR NO KEY UPDATE`), the answer to a release form locks its
//! refund. A second replica's transaction on the same order or refund waits for the first to
//! commit, and its next statement sees what the first wrote (READ COMMITTED reads a fresh
//! snapshot per statement), so the rules run on the same facts as in SQLite's `BEGIN
//! IMMEDIATE`: one refund per quote (the unique index on `refunds.quote_id` stays as the last
//! word), each line once and whole-order exclusion, a form answered once, the two-person rule.
//! Transactions on different orders do not wait for each other. The schema is created and the
//! world loaded once, under a transaction-scoped advisory lock, however many replicas start
//! together.

mod claims;
mod pool;

use std::str::FromStr;

use tokio_postgres::config::Host;
use tokio_postgres::{Config, GenericClient, Row};

use super::model::{Covers, Quote, QuoteIds, Refund, RefundStatus, ShopError};
use super::rules::{self, AskRow, ReleaseAnswer};
use crate::money::Cents;
use crate::shop::data::{Order, ShopWorld};
use pool::Pool;

const SCHEMA: &str = include_str!("postgres/schema.sql");
/// The advisory lock that replicas starting together take turns on ("SHOPSET1").
const SETUP_LOCK: i64 = 0x5348_4f50_5345_5431;

const REFUND_COLUMNS: &str =
    "seq, quote_id, order_id, sku, amount_cents, status, released_by, note";

pub struct PgStore {
    pool: Pool,
    ids: QuoteIds,
}

impl PgStore {
    /// Logs in at `url` (`postgres://user@host:port/database`, the password in the address or
    /// `PGPASSWORD`), creates the shop's schema when it is missing and loads `world` into it
    /// when it holds no orders yet.
    pub async fn connect(url: &str, world: &ShopWorld, ids: QuoteIds) -> Result<Self, ShopError> {
        let mut config = Config::from_str(url).map_err(|e| ShopError::Unreachable {
            at: "the address given".into(),
            detail: e.to_string(),
        })?;
        if config.get_password().is_none()
            && let Ok(password) = std::env::var("PGPASSWORD")
        {
            config.password(password);
        }
        let at = describe(&config);
        let store = Self {
            pool: Pool::new(config, at),
            ids,
        };
        store.set_up(world).await?;
        Ok(store)
    }

    /// `host:port/database`: where the record is, without the password.
    pub fn at(&self) -> &str {
        &self.pool.at
    }

    async fn set_up(&self, world: &ShopWorld) -> Result<(), ShopError> {
        let mut client = self.pool.get().await?;
        let tx = client.transaction().await?;
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&SETUP_LOCK])
            .await?;
        tx.batch_execute(SCHEMA).await?;
        let orders: i64 = tx
            .query_one("SELECT count(*) FROM shop.orders", &[])
            .await?
            .get(0);
        if orders == 0 {
            let customer = tx
                .prepare(
                    "INSERT INTO shop.customers (customer_id, name, email) VALUES ($1, $2, $3)",
                )
                .await?;
            for c in &world.customers {
                tx.execute(&customer, &[&c.customer_id, &c.name, &c.email])
                    .await?;
            }
            let order = tx
                .prepare("INSERT INTO shop.orders (order_id, customer_id, placed_on, status, doc) VALUES ($1, $2, $3, $4, $5)")
                .await?;
            for o in &world.orders {
                let doc = super::order_doc(o)?;
                let status = o.status.as_str();
                tx.execute(
                    &order,
                    &[&o.order_id, &o.customer_id, &o.placed_on, &status, &doc],
                )
                .await?;
            }
            super::seeded(world);
        }
        tx.commit().await?;
        Ok(())
    }

    /// The order as the system of record has it, with the refunds made on it.
    pub async fn order(&self, order_id: &str) -> Result<(Order, Vec<Refund>), ShopError> {
        let order_id = rules::order_id(order_id)?;
        let client = self.pool.get().await?;
        let order = load_order(&*client, &order_id, "").await?;
        Ok((order, refunds_of(&*client, &order_id).await?))
    }

    /// Every order of one customer, newest first.
    pub async fn orders_of(&self, customer_id: &str) -> Result<Vec<Order>, ShopError> {
        let customer_id = rules::customer_id(customer_id)?;
        let client = self.pool.get().await?;
        let known = client
            .query_opt(
                "SELECT 1 FROM shop.customers WHERE customer_id = $1",
                &[&customer_id],
            )
            .await?;
        if known.is_none() {
            return Err(ShopError::NoCustomer(customer_id));
        }
        let rows = client
            .query(
                "SELECT doc FROM shop.orders WHERE customer_id = $1 ORDER BY placed_on DESC, order_id DESC",
                &[&customer_id],
            )
            .await?;
        rows.iter()
            .map(|row| super::queries::parse_order(row.get(0)))
            .collect()
    }

    /// Quotes a refund of one line (`sku`) or of the whole order, without moving money.
    pub async fn quote(
        &self,
        order_id: &str,
        sku: Option<&str>,
        reason: &str,
    ) -> Result<Quote, ShopError> {
        let order_id = rules::order_id(order_id)?;
        let sku = rules::sku_arg(sku)?;
        let mut client = self.pool.get().await?;
        let tx = client.transaction().await?;
        let order = load_order(&tx, &order_id, "FOR NO KEY UPDATE").await?;
        let (covers, amount) = rules::cover(&order, sku.as_deref())?;
        let refunds = refunds_of(&tx, &order_id).await?;
        rules::refuse_clash(refunds, &order_id, sku.as_deref(), None)?;
        let reason = rules::reason(reason)?;
        // Under the order's lock, so two replicas never count the same number.
        let earlier: i64 = tx
            .query_one(
                "SELECT count(*) FROM shop.quotes WHERE order_id = $1 AND sku IS NOT DISTINCT FROM $2",
                &[&order_id, &sku],
            )
            .await?
            .get(0);
        let quote = Quote {
            quote_id: rules::quote_id(self.ids, &order_id, sku.as_deref(), earlier + 1),
            order_id,
            sku,
            covers,
            amount,
            reason: reason.to_owned(),
        };
        tx.execute(
            "INSERT INTO shop.quotes (quote_id, order_id, sku, amount_cents, reason, created_at)
             VALUES ($1, $2, $3, $4, $5, $6)",
            &[
                &quote.quote_id,
                &quote.order_id,
                &quote.sku,
                &quote.amount.0,
                &quote.reason,
                &rules::now(),
            ],
        )
        .await?;
        tx.commit().await?;
        Ok(quote)
    }

    /// The quote behind `quote_id`.
    pub async fn quote_of(&self, quote_id: &str) -> Result<Quote, ShopError> {
        let quote_id = rules::quote_id_arg(quote_id)?;
        let client = self.pool.get().await?;
        load_quote(&*client, &quote_id).await
    }

    /// Makes the refund for a quote, once (see [`super::SqliteStore::issue`]), under its
    /// order's lock.
    pub async fn issue(
        &self,
        quote_id: &str,
        issued_by: Option<&str>,
    ) -> Result<(Refund, bool), ShopError> {
        let quote_id = rules::quote_id_arg(quote_id)?;
        let mut client = self.pool.get().await?;
        let tx = client.transaction().await?;
        let quote = load_quote(&tx, &quote_id).await?;
        load_order(&tx, &quote.order_id, "FOR NO KEY UPDATE").await?;
        let refunds = refunds_of(&tx, &quote.order_id).await?;
        if let Some(existing) = refunds.iter().find(|r| r.quote_id == quote_id) {
            return Ok((existing.clone(), false));
        }
        rules::refuse_clash(
            refunds,
            &quote.order_id,
            quote.sku.as_deref(),
            Some(&quote_id),
        )?;
        let status = if quote.needs_lead() {
            RefundStatus::Held
        } else {
            RefundStatus::Released
        };
        let at = rules::now();
        let released_at = (status == RefundStatus::Released).then_some(at);
        let row = tx
            .query_one(
                &format!(
                    "INSERT INTO shop.refunds (quote_id, order_id, sku, amount_cents, status, issued_by, created_at, released_at)
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING {REFUND_COLUMNS}"
                ),
                &[
                    &quote.quote_id,
                    &quote.order_id,
                    &quote.sku,
                    &quote.amount.0,
                    &status.as_str(),
                    &issued_by,
                    &at,
                    &released_at,
                ],
            )
            .await?;
        let refund = refund_from(&row);
        tx.commit().await?;
        Ok((refund, true))
    }

    /// Opens a release form for the refund `refund_id`; returns the form's ID.
    pub async fn ask(&self, refund_id: &str) -> Result<String, ShopError> {
        let seq = rules::refund_seq(refund_id)?;
        let ask_id = rules::new_ask_id();
        let inserted = self
            .pool
            .get()
            .await?
            .execute(
                "INSERT INTO shop.release_asks (ask_id, refund_seq, asked_at)
                 SELECT $1, seq, $3 FROM shop.refunds WHERE seq = $2",
                &[&ask_id, &seq, &rules::now()],
            )
            .await?;
        match inserted {
            1 => Ok(ask_id),
            _ => Err(ShopError::NoRefund(refund_id.to_owned())),
        }
    }

    /// Answers a release form (see [`super::SqliteStore::answer`]), under its refund's lock.
    pub async fn answer(
        &self,
        refund_id: &str,
        ask_id: &str,
        answer: ReleaseAnswer,
        by: Option<(&str, bool)>,
        note: Option<&str>,
    ) -> Result<Refund, ShopError> {
        let seq = rules::refund_seq(refund_id)?;
        let mut client = self.pool.get().await?;
        let tx = client.transaction().await?;
        let issuer: Option<String> = tx
            .query_opt(
                "SELECT issued_by FROM shop.refunds WHERE seq = $1 FOR NO KEY UPDATE",
                &[&seq],
            )
            .await?
            .and_then(|row| row.get(0));
        let ask = tx
            .query_opt(
                "SELECT refund_seq, answer, answered_by FROM shop.release_asks WHERE ask_id = $1",
                &[&ask_id],
            )
            .await?
            .map(|row| AskRow {
                refund_seq: row.get(0),
                answer: row
                    .get::<_, Option<String>>(1)
                    .map(|answer| (answer, row.get(2))),
            });
        rules::refuse_spent(refund_id, seq, ask)?;
        let by_id = by.map(|(id, _)| id);
        if answer == ReleaseAnswer::Release {
            rules::may_release(refund_id, issuer, by)?;
            tx.execute(
                "UPDATE shop.refunds SET status = 'released', released_by = $2, note = $3, released_at = $4
                 WHERE seq = $1 AND status = 'held'",
                &[&seq, &by_id, &note, &rules::now()],
            )
            .await?;
        }
        if let Some(spent) = answer.spends_as() {
            tx.execute(
                "UPDATE shop.release_asks SET answer = $2, answered_by = $3, answered_at = $4
                 WHERE refund_seq = $1 AND answer IS NULL",
                &[&seq, &spent, &by_id, &rules::now()],
            )
            .await?;
        }
        let row = tx
            .query_opt(
                &format!("SELECT {REFUND_COLUMNS} FROM shop.refunds WHERE seq = $1"),
                &[&seq],
            )
            .await?
            .ok_or_else(|| ShopError::NoRefund(refund_id.to_owned()))?;
        tx.commit().await?;
        Ok(refund_from(&row))
    }

    /// How many refunds exist for a quote (always 0 or 1; tests hold the shop to it).
    pub async fn refund_count(&self, quote_id: &str) -> Result<i64, ShopError> {
        let client = self.pool.get().await?;
        let row = client
            .query_one(
                "SELECT count(*) FROM shop.refunds WHERE quote_id = $1",
                &[&quote_id],
            )
            .await?;
        Ok(row.get(0))
    }
}

/// The order `order_id`; `lock` is empty or a row-lock clause.
async fn load_order(
    client: &impl GenericClient,
    order_id: &str,
    lock: &str,
) -> Result<Order, ShopError> {
    let sql = format!("SELECT doc FROM shop.orders WHERE order_id = $1 {lock}");
    match client.query_opt(&sql, &[&order_id]).await? {
        Some(row) => super::queries::parse_order(row.get(0)),
        None => Err(ShopError::NoOrder(order_id.to_owned())),
    }
}

async fn load_quote(client: &impl GenericClient, quote_id: &str) -> Result<Quote, ShopError> {
    let row = client
        .query_opt(
            "SELECT quote_id, order_id, sku, amount_cents, reason FROM shop.quotes WHERE quote_id = $1",
            &[&quote_id],
        )
        .await?
        .ok_or_else(|| ShopError::NoQuote(quote_id.to_owned()))?;
    let sku: Option<String> = row.get(2);
    Ok(Quote {
        quote_id: row.get(0),
        order_id: row.get(1),
        covers: if sku.is_some() {
            Covers::Line
        } else {
            Covers::Order
        },
        sku,
        amount: Cents(row.get(3)),
        reason: row.get(4),
    })
}

/// The refunds made on `order_id`, oldest first.
async fn refunds_of(client: &impl GenericClient, order_id: &str) -> Result<Vec<Refund>, ShopError> {
    let rows = client
        .query(
            &format!("SELECT {REFUND_COLUMNS} FROM shop.refunds WHERE order_id = $1 ORDER BY seq"),
            &[&order_id],
        )
        .await?;
    Ok(rows.iter().map(refund_from).collect())
}

fn refund_from(row: &Row) -> Refund {
    let status: &str = row.get(5);
    Refund {
        refund_id: rules::refund_id(row.get(0)),
        quote_id: row.get(1),
        order_id: row.get(2),
        sku: row.get(3),
        amount: Cents(row.get(4)),
        status: if status == "released" {
            RefundStatus::Released
        } else {
            RefundStatus::Held
        },
        released_by: row.get(6),
        note: row.get(7),
    }
}

fn describe(config: &Config) -> String {
    let host = match config.get_hosts().first() {
        Some(Host::Tcp(host)) => host.clone(),
        _ => "localhost".to_owned(),
    };
    let port = config.get_ports().first().copied().unwrap_or(5432);
    let db = config
        .get_dbname()
        .or(config.get_user())
        .unwrap_or("postgres");
    format!("{host}:{port}/{db}")
}
