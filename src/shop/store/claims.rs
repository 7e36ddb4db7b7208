//! Damage claims with the carrier: what the record keeps of each, and where a claim stands.
//!
//! A claim's row holds everything that happened to it (when it was filed and on which
//! schedule, the lead's answer, a cancel); where it stands is worked out from that row and
//! the clock each time it is read ([`Claim::stage`]), so no process owns a claim and a shop
//! restarted on the same record goes on with every claim exactly where it was. Each backend
//! writes an answer or a cancel with one conditional UPDATE, so a race cannot answer twice.

use sha2::{Digest, Sha256};

use super::super::REFUND_LIMIT;
use super::super::data::{Order, OrderStatus};
use super::Store;
use super::model::ShopError;
use crate::money::Cents;

/// How long a new claim spends with the carrier, fixed for the claim when it is filed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClaimSchedule {
    /// From filing until the carrier has reviewed it.
    pub review_ms: i64,
    /// From the lead's answer (or the end of review, when none is needed) until it settles.
    pub settle_ms: i64,
}

/// A lead's answer to a claim above the refund limit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimAnswer {
    /// Yes files the claim with the carrier; no withdraws it.
    pub approve: bool,
    pub note: Option<String>,
    /// The lead's staff ID, when the shop knew who answered.
    pub by: Option<String>,
    pub at_ms: i64,
}

/// A claim as the record keeps it. Times are unix milliseconds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claim {
    pub claim_id: String,
    pub order_id: String,
    pub damage: String,
    /// The order's total: what the claim asks the carrier for.
    pub amount: Cents,
    /// Who filed it, when the transport knew (a staff ID over HTTP).
    pub filed_by: Option<String>,
    pub created_at_ms: i64,
    pub schedule: ClaimSchedule,
    pub answer: Option<ClaimAnswer>,
    pub cancelled_at_ms: Option<i64>,
}

/// How a settled claim ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClaimOutcome {
    /// The carrier accepted the claim.
    Accepted,
    /// A lead declined to file it, so it was withdrawn.
    Withdrawn,
}

impl ClaimOutcome {
    pub fn as_str(self) -> &'static str {
        match self {
            ClaimOutcome::Accepted => "accepted",
            ClaimOutcome::Withdrawn => "withdrawn",
        }
    }
}

/// Where a claim stands at one moment; `since_ms` is when it got there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClaimStage {
    /// The carrier is reviewing the claim.
    Reviewing {
        since_ms: i64,
    },
    /// Above the refund limit: a lead must confirm it before it goes further.
    AwaitingLead {
        since_ms: i64,
    },
    /// The carrier is settling the claim.
    Settling {
        since_ms: i64,
    },
    Settled {
        since_ms: i64,
        outcome: ClaimOutcome,
    },
    Cancelled {
        since_ms: i64,
    },
}

impl ClaimStage {
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            ClaimStage::Settled { .. } | ClaimStage::Cancelled { .. }
        )
    }

    pub fn since_ms(self) -> i64 {
        match self {
            ClaimStage::Reviewing { since_ms }
            | ClaimStage::AwaitingLead { since_ms }
            | ClaimStage::Settling { since_ms }
            | ClaimStage::Settled { since_ms, .. }
            | ClaimStage::Cancelled { since_ms } => since_ms,
        }
    }
}

impl Claim {
    /// A new claim on `order`, filed now: refused for an order that never shipped.
    pub(super) fn filed(
        order: &Order,
        damage: String,
        filed_by: Option<&str>,
        schedule: ClaimSchedule,
    ) -> Result<Self, ShopError> {
        refuse_unshipped(order)?;
        Ok(Self {
            claim_id: new_claim_id(),
            order_id: order.order_id.clone(),
            damage,
            amount: order.total,
            filed_by: filed_by.map(str::to_owned),
            created_at_ms: now_ms(),
            schedule,
            answer: None,
            cancelled_at_ms: None,
        })
    }

    /// A claim above the refund limit waits for a lead after review.
    pub fn needs_lead(&self) -> bool {
        self.amount > REFUND_LIMIT
    }

    /// Where the claim stands at `now_ms`. A cancel counts only if the claim had not settled
    /// when it came (the store records none after that, and this holds even if it had).
    pub fn stage(&self, now_ms: i64) -> ClaimStage {
        match self.cancelled_at_ms {
            Some(at) if !self.uncancelled_stage(at).is_terminal() => {
                ClaimStage::Cancelled { since_ms: at }
            }
            _ => self.uncancelled_stage(now_ms),
        }
    }

    fn uncancelled_stage(&self, now_ms: i64) -> ClaimStage {
        let reviewed_at = self.created_at_ms.saturating_add(self.schedule.review_ms);
        if now_ms < reviewed_at {
            return ClaimStage::Reviewing {
                since_ms: self.created_at_ms,
            };
        }
        let (settling_from, outcome) = match (&self.answer, self.needs_lead()) {
            (_, false) => (reviewed_at, ClaimOutcome::Accepted),
            (None, true) => {
                return ClaimStage::AwaitingLead {
                    since_ms: reviewed_at,
                };
            }
            (Some(answer), true) => (
                answer.at_ms.max(reviewed_at),
                if answer.approve {
                    ClaimOutcome::Accepted
                } else {
                    ClaimOutcome::Withdrawn
                },
            ),
        };
        let settled_at = settling_from.saturating_add(self.schedule.settle_ms);
        if now_ms < settled_at {
            ClaimStage::Settling {
                since_ms: settling_from,
            }
        } else {
            ClaimStage::Settled {
                since_ms: settled_at,
                outcome,
            }
        }
    }

    /// The carrier's reference for an accepted claim: the same on every read.
    pub fn carrier_reference(&self) -> String {
        let digest = Sha256::new()
            .chain_update(b"support-desk carrier reference")
            .chain_update(self.claim_id.as_bytes())
            .finalize();
        format!("CR-{}", hex::encode_upper(&digest[..5]))
    }
}

/// What came of a lead's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AnswerTaken {
    /// This answer is the claim's answer.
    Stored,
    /// The claim was not waiting for one (answered already, cancelled, still in review, or
    /// below the limit): nothing changed.
    NotOutstanding,
}

/// A new claim's ID: `claim-` and 128 random bits in hex, unguessable.
pub(super) fn new_claim_id() -> String {
    format!("claim-{}", hex::encode(rand::random::<[u8; 16]>()))
}

/// Whether `written` has the shape of a claim ID (lowercase, as the shop hands them out).
pub(super) fn is_claim_id(written: &str) -> bool {
    written.strip_prefix("claim-").is_some_and(|hex| {
        hex.len() == 32 && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    })
}

/// What was damaged, trimmed; a claim without it is refused.
pub(super) fn damage(written: &str) -> Result<&str, ShopError> {
    match written.trim() {
        "" => Err(ShopError::NoDamage),
        damage => Ok(damage),
    }
}

/// Only a parcel that left the shop can have arrived damaged.
pub(super) fn refuse_unshipped(order: &Order) -> Result<(), ShopError> {
    match order.status {
        OrderStatus::Shipped | OrderStatus::Delivered | OrderStatus::Returned => Ok(()),
        status @ (OrderStatus::Placed | OrderStatus::Cancelled) => Err(ShopError::NeverShipped {
            order_id: order.order_id.clone(),
            status,
        }),
    }
}

/// The two-person rule for claims: when the shop knows who answers (their staff ID and
/// whether they are a lead), only a lead who did not file the claim may answer it. Over stdio
/// the shop knows nobody, and cannot apply it.
pub(super) fn may_answer(
    claim_id: &str,
    filer: Option<&str>,
    answerer: Option<(&str, bool)>,
) -> Result<(), ShopError> {
    let Some((answerer, lead)) = answerer else {
        return Ok(());
    };
    let filer = filer.unwrap_or("whoever filed it").to_owned();
    if !lead {
        return Err(ShopError::ClaimNotALead {
            claim: claim_id.to_owned(),
            answerer: answerer.to_owned(),
            filer,
        });
    }
    if filer == answerer {
        return Err(ShopError::OwnClaim {
            claim: claim_id.to_owned(),
            filer,
        });
    }
    Ok(())
}

/// Now, in unix milliseconds: the clock every claim is read against.
pub fn now_ms() -> i64 {
    crate::clock::unix_ms()
}

impl Store {
    /// Files a damage claim on `order_id` for its total, on `schedule`; refused for an
    /// unknown order or one that was never shipped.
    pub async fn file_claim(
        &self,
        order_id: &str,
        damage: &str,
        filed_by: Option<&str>,
        schedule: ClaimSchedule,
    ) -> Result<Claim, ShopError> {
        match self {
            Store::Sqlite(s) => s.file_claim(order_id, damage, filed_by, schedule),
            Store::Postgres(p) => p.file_claim(order_id, damage, filed_by, schedule).await,
        }
    }

    /// The claim `claim_id`, or `None` when the shop has none by that ID.
    pub async fn claim(&self, claim_id: &str) -> Result<Option<Claim>, ShopError> {
        if !is_claim_id(claim_id) {
            return Ok(None);
        }
        match self {
            Store::Sqlite(s) => s.claim(claim_id),
            Store::Postgres(p) => p.claim(claim_id).await,
        }
    }

    /// Takes a lead's answer once, while the claim waits for it at `now_ms`, keeping the
    /// two-person rule when `by` is known. `None` when the shop has no such claim.
    pub async fn answer_claim(
        &self,
        claim_id: &str,
        approve: bool,
        note: Option<&str>,
        by: Option<(&str, bool)>,
        now_ms: i64,
    ) -> Result<Option<AnswerTaken>, ShopError> {
        if !is_claim_id(claim_id) {
            return Ok(None);
        }
        match self {
            Store::Sqlite(s) => s.answer_claim(claim_id, approve, note, by, now_ms),
            Store::Postgres(p) => p.answer_claim(claim_id, approve, note, by, now_ms).await,
        }
    }

    /// Cancels the claim if it has not settled at `now_ms`; a settled or cancelled claim
    /// stays as it is. Returns the claim as it now stands, or `None` for an unknown ID.
    pub async fn cancel_claim(
        &self,
        claim_id: &str,
        now_ms: i64,
    ) -> Result<Option<Claim>, ShopError> {
        if !is_claim_id(claim_id) {
            return Ok(None);
        }
        match self {
            Store::Sqlite(s) => s.cancel_claim(claim_id, now_ms),
            Store::Postgres(p) => p.cancel_claim(claim_id, now_ms).await,
        }
    }

    /// Every claim on `order_id`, oldest first.
    pub async fn claims_of(&self, order_id: &str) -> Result<Vec<Claim>, ShopError> {
        match self {
            Store::Sqlite(s) => s.claims_of(order_id),
            Store::Postgres(p) => p.claims_of(order_id).await,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCHEDULE: ClaimSchedule = ClaimSchedule {
        review_ms: 1_000,
        settle_ms: 500,
    };

    fn claim(amount: i64) -> Claim {
        Claim {
            claim_id: "claim-00112233445566778899aabbccddeeff".to_owned(),
            order_id: "O-1001".to_owned(),
            damage: "cracked lid".to_owned(),
            amount: Cents(amount),
            filed_by: None,
            created_at_ms: 10_000,
            schedule: SCHEDULE,
            answer: None,
            cancelled_at_ms: None,
        }
    }

    fn answered(mut claim: Claim, approve: bool, at_ms: i64) -> Claim {
        claim.answer = Some(ClaimAnswer {
            approve,
            note: None,
            by: None,
            at_ms,
        });
        claim
    }

    #[test]
    fn a_claim_within_the_limit_is_reviewed_settled_and_accepted_without_a_lead() {
        let small = claim(REFUND_LIMIT.0);
        assert_eq!(
            small.stage(10_999),
            ClaimStage::Reviewing { since_ms: 10_000 }
        );
        assert_eq!(
            small.stage(11_000),
            ClaimStage::Settling { since_ms: 11_000 }
        );
        assert_eq!(
            small.stage(11_500),
            ClaimStage::Settled {
                since_ms: 11_500,
                outcome: ClaimOutcome::Accepted
            }
        );
    }

    #[test]
    fn a_claim_above_the_limit_waits_for_a_lead_and_settles_from_the_answer() {
        let large = claim(REFUND_LIMIT.0 + 1);
        assert_eq!(
            large.stage(50_000),
            ClaimStage::AwaitingLead { since_ms: 11_000 }
        );
        let approved = answered(large.clone(), true, 20_000);
        assert_eq!(
            approved.stage(20_499),
            ClaimStage::Settling { since_ms: 20_000 }
        );
        assert_eq!(
            approved.stage(20_500),
            ClaimStage::Settled {
                since_ms: 20_500,
                outcome: ClaimOutcome::Accepted
            }
        );
        let declined = answered(large, false, 20_000);
        assert_eq!(
            declined.stage(30_000),
            ClaimStage::Settled {
                since_ms: 20_500,
                outcome: ClaimOutcome::Withdrawn
            }
        );
    }

    #[test]
    fn a_cancel_counts_only_before_the_claim_settled() {
        let mut early = claim(100);
        early.cancelled_at_ms = Some(10_500);
        assert_eq!(
            early.stage(99_000),
            ClaimStage::Cancelled { since_ms: 10_500 }
        );
        let mut late = claim(100);
        late.cancelled_at_ms = Some(11_600);
        assert_eq!(
            late.stage(99_000),
            ClaimStage::Settled {
                since_ms: 11_500,
                outcome: ClaimOutcome::Accepted
            }
        );
    }

    #[test]
    fn claim_ids_are_long_random_and_recognised_by_shape() {
        let (a, b) = (new_claim_id(), new_claim_id());
        assert_ne!(a, b);
        assert!(is_claim_id(&a) && is_claim_id(&b), "{a} {b}");
        for not in [
            "claim-",
            "claim-XYZ",
            "R-0001",
            &a.to_uppercase(),
            &a[..a.len() - 1],
        ] {
            assert!(!is_claim_id(not), "{not}");
        }
    }

    #[test]
    fn only_a_lead_who_did_not_file_the_claim_may_answer_it_when_the_shop_knows_who() {
        let id = "claim-1";
        assert!(may_answer(id, Some("ana"), None).is_ok());
        assert!(may_answer(id, Some("ana"), Some(("lee", true))).is_ok());
        assert!(matches!(
            may_answer(id, Some("ana"), Some(("bo", false))),
            Err(ShopError::ClaimNotALead { .. })
        ));
        assert!(matches!(
            may_answer(id, Some("lee"), Some(("lee", true))),
            Err(ShopError::OwnClaim { .. })
        ));
    }
}
