//! Damage claims in the SQLite file. Each write runs in the store's `BEGIN IMMEDIATE`
//! transaction, and an answer or a cancel is one conditional UPDATE besides, so two processes
//! on one file never answer a claim twice.

use rusqlite::{Connection, OptionalExtension, Row, params};

use super::super::claims::{self, AnswerTaken, Claim, ClaimAnswer, ClaimSchedule, ClaimStage};
use super::super::model::ShopError;
use super::super::queries::load_order;
use super::super::rules;
use super::SqliteStore;
use crate::money::Cents;

const CLAIM: &str = "SELECT claim_id, order_id, damage, amount_cents, filed_by, created_at_ms, review_ms, settle_ms,
       answer, note, answered_by, answered_at_ms, cancelled_at_ms
FROM claims WHERE claim_id = ?1";
const CLAIMS_OF_ORDER: &str = "SELECT claim_id, order_id, damage, amount_cents, filed_by, created_at_ms, review_ms, settle_ms,
       answer, note, answered_by, answered_at_ms, cancelled_at_ms
FROM claims WHERE order_id = ?1 ORDER BY created_at_ms, claim_id";

impl SqliteStore {
    /// Files a damage claim on `order_id` for the order's total (see
    /// [`super::super::Store::file_claim`]).
    pub fn file_claim(
        &self,
        order_id: &str,
        damage: &str,
        filed_by: Option<&str>,
        schedule: ClaimSchedule,
    ) -> Result<Claim, ShopError> {
        let order_id = rules::order_id(order_id)?;
        let damage = claims::damage(damage)?.to_owned();
        self.write(|tx| {
            let order = load_order(tx, &order_id)?;
            let claim = Claim::filed(&order, damage, filed_by, schedule)?;
            tx.prepare_cached(
                "INSERT INTO claims (claim_id, order_id, damage, amount_cents, filed_by, created_at_ms, review_ms, settle_ms)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            )?
            .execute(params![
                claim.claim_id,
                claim.order_id,
                claim.damage,
                claim.amount.0,
                claim.filed_by,
                claim.created_at_ms,
                claim.schedule.review_ms,
                claim.schedule.settle_ms,
            ])?;
            Ok(claim)
        })
    }

    /// The claim `claim_id`, if the shop has it.
    pub fn claim(&self, claim_id: &str) -> Result<Option<Claim>, ShopError> {
        self.read(|conn| load_claim(conn, claim_id))
    }

    /// Takes a lead's answer once (see [`super::super::Store::answer_claim`]).
    pub fn answer_claim(
        &self,
        claim_id: &str,
        approve: bool,
        note: Option<&str>,
        by: Option<(&str, bool)>,
        now_ms: i64,
    ) -> Result<Option<AnswerTaken>, ShopError> {
        self.write(|tx| {
            let Some(claim) = load_claim(tx, claim_id)? else {
                return Ok(None);
            };
            if !matches!(claim.stage(now_ms), ClaimStage::AwaitingLead { .. }) {
                return Ok(Some(AnswerTaken::NotOutstanding));
            }
            claims::may_answer(claim_id, claim.filed_by.as_deref(), by)?;
            let stored = tx
                .prepare_cached(
                    "UPDATE claims SET answer = ?2, note = ?3, answered_by = ?4, answered_at_ms = ?5
                     WHERE claim_id = ?1 AND answer IS NULL AND cancelled_at_ms IS NULL",
                )?
                .execute(params![
                    claim_id,
                    if approve { "approve" } else { "decline" },
                    note,
                    by.map(|(id, _)| id),
                    now_ms
                ])?;
            Ok(Some(match stored {
                1 => AnswerTaken::Stored,
                _ => AnswerTaken::NotOutstanding,
            }))
        })
    }

    /// Cancels a claim that has not settled (see [`super::super::Store::cancel_claim`]).
    pub fn cancel_claim(&self, claim_id: &str, now_ms: i64) -> Result<Option<Claim>, ShopError> {
        self.write(|tx| {
            let Some(claim) = load_claim(tx, claim_id)? else {
                return Ok(None);
            };
            if claim.stage(now_ms).is_terminal() {
                return Ok(Some(claim));
            }
            tx.prepare_cached(
                "UPDATE claims SET cancelled_at_ms = ?2 WHERE claim_id = ?1 AND cancelled_at_ms IS NULL",
            )?
            .execute(params![claim_id, now_ms])?;
            load_claim(tx, claim_id)
        })
    }

    /// Every claim on `order_id`, oldest first.
    pub fn claims_of(&self, order_id: &str) -> Result<Vec<Claim>, ShopError> {
        let order_id = rules::order_id(order_id)?;
        self.read(|conn| {
            let mut statement = conn.prepare_cached(CLAIMS_OF_ORDER)?;
            let rows = statement.query_map([&order_id], claim_from)?;
            Ok(rows.collect::<Result<_, _>>()?)
        })
    }
}

fn load_claim(conn: &Connection, claim_id: &str) -> Result<Option<Claim>, ShopError> {
    Ok(conn
        .prepare_cached(CLAIM)?
        .query_row([claim_id], claim_from)
        .optional()?)
}

fn claim_from(row: &Row<'_>) -> rusqlite::Result<Claim> {
    let answer: Option<String> = row.get(8)?;
    let answered_at_ms: Option<i64> = row.get(11)?;
    Ok(Claim {
        claim_id: row.get(0)?,
        order_id: row.get(1)?,
        damage: row.get(2)?,
        amount: Cents(row.get(3)?),
        filed_by: row.get(4)?,
        created_at_ms: row.get(5)?,
        schedule: ClaimSchedule {
            review_ms: row.get(6)?,
            settle_ms: row.get(7)?,
        },
        answer: match (answer, answered_at_ms) {
            (Some(answer), Some(at_ms)) => Some(ClaimAnswer {
                approve: answer == "approve",
                note: row.get(9)?,
                by: row.get(10)?,
                at_ms,
            }),
            _ => None,
        },
        cancelled_at_ms: row.get(12)?,
    })
}
