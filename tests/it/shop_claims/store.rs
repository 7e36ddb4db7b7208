//! A claim's record on both backends: an answer is taken once however many arrive together,
//! a cancel only before the claim settles, and the claim reads the same from a second
//! connection (another process, a restarted shop).

use std::path::Path;

use support_desk::shop::store::{AnswerTaken, ClaimSchedule, ClaimStage, claim_clock_ms};
use support_desk::shop::{QuoteIds, ShopWorld, Store};

use super::{large_order, small_order};
use crate::pg_cluster;

/// Reviewed at once, and settling for a minute after the answer.
const WAITING: ClaimSchedule = ClaimSchedule {
    review_ms: 0,
    settle_ms: 60_000,
};

async fn open(db: &str) -> Store {
    Store::open(Path::new(db), &ShopWorld::bundled(), QuoteIds::Random)
        .await
        .expect("open the record")
}

/// Sixteen answers to one claim at once over two connections: one is taken.
async fn a_claim_is_answered_once(stores: [Store; 2]) {
    let order = large_order();
    let claim = stores[0]
        .file_claim(&order.order_id, "bent frame", Some("lead-0002"), WAITING)
        .await
        .expect("file");
    assert_eq!(claim.amount, order.total);
    let answers: Vec<_> = (0..16)
        .map(|i| {
            let store = stores[i % 2].clone();
            let id = claim.claim_id.clone();
            let by = format!("lead-01{i:02}");
            tokio::spawn(async move {
                store
                    .answer_claim(&id, i % 3 != 0, None, Some((&by, true)), claim_clock_ms())
                    .await
                    .expect("answer")
            })
        })
        .collect();
    let mut stored = 0;
    for answer in answers {
        if answer.await.expect("join") == Some(AnswerTaken::Stored) {
            stored += 1;
        }
    }
    assert_eq!(stored, 1);
    let again = stores[1]
        .claim(&claim.claim_id)
        .await
        .expect("read")
        .expect("the claim");
    assert!(again.answer.is_some());
    assert!(matches!(
        again.stage(claim_clock_ms()),
        ClaimStage::Settling { .. }
    ));
    assert_eq!(
        stores[1]
            .claims_of(&order.order_id)
            .await
            .expect("claims")
            .len(),
        1
    );
}

/// A cancel stops a claim in review; a settled claim is not cancelled.
async fn a_cancel_counts_only_before_the_claim_settles(store: Store) {
    let order = small_order();
    let reviewing = ClaimSchedule {
        review_ms: 60_000,
        settle_ms: 0,
    };
    let claim = store
        .file_claim(&order.order_id, "wet box", None, reviewing)
        .await
        .expect("file");
    let now = claim_clock_ms();
    let cancelled = store
        .cancel_claim(&claim.claim_id, now)
        .await
        .expect("cancel")
        .expect("the claim");
    assert_eq!(
        cancelled.stage(now + 120_000),
        ClaimStage::Cancelled { since_ms: now }
    );
    let settled = store
        .file_claim(
            &order.order_id,
            "wet box",
            None,
            ClaimSchedule {
                review_ms: 0,
                settle_ms: 0,
            },
        )
        .await
        .expect("file");
    let after = store
        .cancel_claim(&settled.claim_id, claim_clock_ms())
        .await
        .expect("cancel")
        .expect("the claim");
    assert_eq!(after.cancelled_at_ms, None);
    assert!(
        store
            .cancel_claim("claim-0", 0)
            .await
            .expect("cancel")
            .is_none()
    );
}

#[tokio::test]
async fn on_sqlite_a_claim_is_answered_once_across_two_connections() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("shop.sqlite3").display().to_string();
    a_claim_is_answered_once([open(&db).await, open(&db).await]).await;
    a_cancel_counts_only_before_the_claim_settles(open(&db).await).await;
}

#[tokio::test]
async fn on_postgres_a_claim_is_answered_once_across_two_connections() {
    let Some(pg) = pg_cluster::start().await else {
        return;
    };
    let url = pg.admin_uri(true);
    let stores = [open(&url).await, open(&url).await];
    a_claim_is_answered_once(stores).await;
    a_cancel_counts_only_before_the_claim_settles(open(&url).await).await;
}
