//! Damage claims in PostgreSQL. An answer or a cancel first locks the claim's row
//! (`FOR NO KEY UPDATE`), so a second replica waits and then sees what the first wrote; the
//! UPDATE is conditional besides, so a claim is answered once whatever the timing.

use tokio_postgres::{GenericClient, Row};

use super::super::claims::{self, AnswerTaken, Claim, ClaimAnswer, ClaimSchedule, ClaimStage};
use super::super::model::ShopError;
use super::super::rules;
use super::{PgStore, load_order};
use crate::money::Cents;

const CLAIM_COLUMNS: &str =
    "claim_id, order_id, damage, amount_cents, filed_by, created_at_ms, review_ms, settle_ms,
       answer, note, answered_by, answered_at_ms, cancelled_at_ms";

impl PgStore {
    /// Files a damage claim on `order_id` for the order's total (see
    /// [`super::super::Store::file_claim`]).
    pub async fn file_claim(
        &self,
        order_id: &str,
        damage: &str,
        filed_by: Option<&str>,
        schedule: ClaimSchedule,
    ) -> Result<Claim, ShopError> {
        let order_id = rules::order_id(order_id)?;
        let damage = claims::damage(damage)?.to_owned();
        let client = self.pool.get().await?;
        let order = load_order(&*client, &order_id, "").await?;
        let claim = Claim::filed(&order, damage, filed_by, schedule)?;
        client
            .execute(
                "INSERT INTO shop.claims (claim_id, order_id, damage, amount_cents, filed_by, created_at_ms, review_ms, settle_ms)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
                &[
                    &claim.claim_id,
                    &claim.order_id,
                    &claim.damage,
                    &claim.amount.0,
                    &claim.filed_by,
                    &claim.created_at_ms,
                    &claim.schedule.review_ms,
                    &claim.schedule.settle_ms,
                ],
            )
            .await?;
        Ok(claim)
    }

    /// The claim `claim_id`, if the shop has it.
    pub async fn claim(&self, claim_id: &str) -> Result<Option<Claim>, ShopError> {
        let client = self.pool.get().await?;
        load_claim(&*client, claim_id, "").await
    }

    /// Takes a lead's answer once (see [`super::super::Store::answer_claim`]), under the
    /// claim's lock.
    pub async fn answer_claim(
        &self,
        claim_id: &str,
        approve: bool,
        note: Option<&str>,
        by: Option<(&str, bool)>,
        now_ms: i64,
    ) -> Result<Option<AnswerTaken>, ShopError> {
        let mut client = self.pool.get().await?;
        let tx = client.transaction().await?;
        let Some(claim) = load_claim(&tx, claim_id, "FOR NO KEY UPDATE").await? else {
            return Ok(None);
        };
        if !matches!(claim.stage(now_ms), ClaimStage::AwaitingLead { .. }) {
            return Ok(Some(AnswerTaken::NotOutstanding));
        }
        claims::may_answer(claim_id, claim.filed_by.as_deref(), by)?;
        let answer = if approve { "approve" } else { "decline" };
        let stored = tx
            .execute(
                "UPDATE shop.claims SET answer = $2, note = $3, answered_by = $4, answered_at_ms = $5
                 WHERE claim_id = $1 AND answer IS NULL AND cancelled_at_ms IS NULL",
                &[&claim_id, &answer, &note, &by.map(|(id, _)| id), &now_ms],
            )
            .await?;
        tx.commit().await?;
        Ok(Some(match stored {
            1 => AnswerTaken::Stored,
            _ => AnswerTaken::NotOutstanding,
        }))
    }

    /// Cancels a claim that has not settled (see [`super::super::Store::cancel_claim`]),
    /// under the claim's lock.
    pub async fn cancel_claim(
        &self,
        claim_id: &str,
        now_ms: i64,
    ) -> Result<Option<Claim>, ShopError> {
        let mut client = self.pool.get().await?;
        let tx = client.transaction().await?;
        let Some(claim) = load_claim(&tx, claim_id, "FOR NO KEY UPDATE").await? else {
            return Ok(None);
        };
        if claim.stage(now_ms).is_terminal() {
            return Ok(Some(claim));
        }
        tx.execute(
            "UPDATE shop.claims SET cancelled_at_ms = $2 WHERE claim_id = $1 AND cancelled_at_ms IS NULL",
            &[&claim_id, &now_ms],
        )
        .await?;
        let claim = load_claim(&tx, claim_id, "").await?;
        tx.commit().await?;
        Ok(claim)
    }

    /// Every claim on `order_id`, oldest first.
    pub async fn claims_of(&self, order_id: &str) -> Result<Vec<Claim>, ShopError> {
        let order_id = rules::order_id(order_id)?;
        let client = self.pool.get().await?;
        let rows = client
            .query(
                &format!(
                    "SELECT {CLAIM_COLUMNS} FROM shop.claims WHERE order_id = $1 ORDER BY created_at_ms, claim_id"
                ),
                &[&order_id],
            )
            .await?;
        Ok(rows.iter().map(claim_from).collect())
    }
}

/// The claim `claim_id`; `lock` is empty or a row-lock clause.
async fn load_claim(
    client: &impl GenericClient,
    claim_id: &str,
    lock: &str,
) -> Result<Option<Claim>, ShopError> {
    let sql = format!("SELECT {CLAIM_COLUMNS} FROM shop.claims WHERE claim_id = $1 {lock}");
    Ok(client
        .query_opt(&sql, &[&claim_id])
        .await?
        .map(|row| claim_from(&row)))
}

fn claim_from(row: &Row) -> Claim {
    let answer: Option<String> = row.get(8);
    let answered_at_ms: Option<i64> = row.get(11);
    Claim {
        claim_id: row.get(0),
        order_id: row.get(1),
        damage: row.get(2),
        amount: Cents(row.get(3)),
        filed_by: row.get(4),
        created_at_ms: row.get(5),
        schedule: ClaimSchedule {
            review_ms: row.get(6),
            settle_ms: row.get(7),
        },
        answer: match (answer, answered_at_ms) {
            (Some(answer), Some(at_ms)) => Some(ClaimAnswer {
                approve: answer == "approve",
                note: row.get(9),
                by: row.get(10),
                at_ms,
            }),
            _ => None,
        },
        cancelled_at_ms: row.get(12),
    }
}
