//! The system of record on real SQLite files: quote IDs, once-only refunds across restarts
//! and concurrent callers, the limit and the lead's release.

use std::path::Path;
use std::sync::Arc;

use support_desk::money::Cents;
use support_desk::shop::data::{Order, OrderStatus};
use support_desk::shop::store::{Covers, RefundStatus, ReleaseAnswer, ShopError};
use support_desk::shop::{QuoteIds, REFUND_LIMIT, ShopWorld, SqliteStore};

fn open(path: &Path, ids: QuoteIds) -> SqliteStore {
    SqliteStore::open(path, &ShopWorld::bundled(), ids).expect("open the shop's database")
}

/// A delivered order with a line whose amount is on the given side of the limit.
pub fn delivered_line(above_limit: bool) -> (Order, String) {
    let world = ShopWorld::bundled();
    world
        .orders
        .iter()
        .filter(|o| o.status == OrderStatus::Delivered)
        .find_map(|o| {
            let line = o
                .lines
                .iter()
                .find(|l| (l.amount() > REFUND_LIMIT) == above_limit)?;
            Some((o.clone(), line.sku.clone()))
        })
        .expect("the bundled data has delivered lines on both sides of the limit")
}

fn is_quote_id(id: &str) -> bool {
    id.len() == 12 && id.starts_with("Q-") && id[2..].bytes().all(|b| b.is_ascii_hexdigit())
}

#[test]
fn seeded_quote_ids_repeat_from_a_fresh_database_and_differ_by_seed() {
    let (order, sku) = delivered_line(false);
    let first_ids = |seed| {
        let store = open(Path::new(":memory:"), QuoteIds::Seeded(seed));
        (0..3)
            .map(|_| {
                store
                    .quote(&order.order_id, Some(&sku), "changed my mind")
                    .expect("quote")
                    .quote_id
            })
            .collect::<Vec<_>>()
    };
    let ids = first_ids(4217);
    assert_eq!(ids, first_ids(4217));
    assert_ne!(ids, first_ids(4218));
    assert!(ids.iter().all(|id| is_quote_id(id)), "{ids:?}");
    assert_eq!(
        ids.len(),
        ids.iter().collect::<std::collections::BTreeSet<_>>().len()
    );
}

#[test]
fn a_seeded_quote_id_does_not_depend_on_what_was_quoted_before() {
    let (small, small_sku) = delivered_line(false);
    let (large, large_sku) = delivered_line(true);
    assert_ne!(small.order_id, large.order_id);
    let alone = open(Path::new(":memory:"), QuoteIds::Seeded(4217))
        .quote(&large.order_id, Some(&large_sku), "broken")
        .expect("quote");
    let after_others = open(Path::new(":memory:"), QuoteIds::Seeded(4217));
    for _ in 0..2 {
        after_others
            .quote(&small.order_id, Some(&small_sku), "changed my mind")
            .expect("quote");
    }
    after_others
        .quote(&large.order_id, None, "all of it")
        .expect("quote of the whole order");
    let later = after_others
        .quote(&large.order_id, Some(&large_sku), "broken")
        .expect("quote");
    assert_eq!(later.quote_id, alone.quote_id);
}

#[test]
fn random_quote_ids_do_not_repeat() {
    let (order, sku) = delivered_line(false);
    let ids: Vec<String> = (0..2)
        .map(|_| {
            let store = open(Path::new(":memory:"), QuoteIds::Random);
            store
                .quote(&order.order_id, Some(&sku), "broken")
                .expect("quote")
                .quote_id
        })
        .collect();
    assert!(ids.iter().all(|id| is_quote_id(id)));
    assert_ne!(ids[0], ids[1]);
}

#[test]
fn a_seeded_shop_restarted_on_its_file_goes_on_with_new_quote_ids() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("shop.sqlite3");
    let (order, sku) = delivered_line(false);
    let before = open(&db, QuoteIds::Seeded(7))
        .quote(&order.order_id, Some(&sku), "a")
        .expect("quote");
    let after = open(&db, QuoteIds::Seeded(7))
        .quote(&order.order_id, Some(&sku), "b")
        .expect("quote");
    assert_ne!(before.quote_id, after.quote_id);
    let fresh = open(&dir.path().join("other.sqlite3"), QuoteIds::Seeded(7));
    assert_eq!(
        fresh
            .quote(&order.order_id, Some(&sku), "c")
            .expect("quote")
            .quote_id,
        before.quote_id
    );
}

#[test]
fn a_refund_is_made_once_per_quote_also_after_a_restart() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("shop.sqlite3");
    let (order, sku) = delivered_line(false);
    let quote = open(&db, QuoteIds::Random)
        .quote(&order.order_id, Some(&sku), "arrived chipped")
        .expect("quote");
    let (first, created) = open(&db, QuoteIds::Random)
        .issue(&quote.quote_id, None)
        .expect("issue");
    assert!(created);
    assert_eq!(first.status, RefundStatus::Released);
    assert_eq!(first.amount, order.line(&sku).expect("line").amount());

    let reopened = open(&db, QuoteIds::Random);
    let (again, created) = reopened.issue(&quote.quote_id, None).expect("issue again");
    assert!(!created);
    assert_eq!(again, first);
    assert_eq!(reopened.refund_count(&quote.quote_id).expect("count"), 1);
}

#[test]
fn concurrent_issues_of_one_quote_from_two_connections_make_one_refund() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("shop.sqlite3");
    let (order, sku) = delivered_line(false);
    let quote = open(&db, QuoteIds::Random)
        .quote(&order.order_id, Some(&sku), "wrong colour")
        .expect("quote");
    // Two connections stand for two server processes on one file.
    let stores = [
        Arc::new(open(&db, QuoteIds::Random)),
        Arc::new(open(&db, QuoteIds::Random)),
    ];
    let handles: Vec<_> = (0..16)
        .map(|i| {
            let store = Arc::clone(&stores[i % 2]);
            let quote_id = quote.quote_id.clone();
            std::thread::spawn(move || store.issue(&quote_id, None).expect("issue"))
        })
        .collect();
    let results: Vec<_> = handles
        .into_iter()
        .map(|h| h.join().expect("thread"))
        .collect();
    assert_eq!(results.iter().filter(|(_, created)| *created).count(), 1);
    assert!(results.iter().all(|(refund, _)| refund == &results[0].0));
    assert_eq!(stores[0].refund_count(&quote.quote_id).expect("count"), 1);
}

#[test]
fn above_the_limit_a_refund_is_held_until_a_lead_releases_it() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("shop.sqlite3");
    let (order, sku) = delivered_line(true);
    let store = open(&db, QuoteIds::Random);
    let quote = store
        .quote(&order.order_id, Some(&sku), "motor died")
        .expect("quote");
    assert!(quote.needs_lead());
    let (held, _) = store
        .issue(&quote.quote_id, Some("staff-0007"))
        .expect("issue");
    assert_eq!(held.status, RefundStatus::Held);
    drop(store);

    let store = open(&db, QuoteIds::Random);
    let (still, created) = store.issue(&quote.quote_id, None).expect("issue again");
    assert_eq!((still.status, created), (RefundStatus::Held, false));
    // The two-person rule: not the issuer, and not someone who is not a lead.
    let ask = store.ask(&held.refund_id).expect("a release form");
    let release = |by| {
        store.answer(
            &held.refund_id,
            &ask,
            ReleaseAnswer::Release,
            Some(by),
            None,
        )
    };
    assert_eq!(
        release(("staff-0007", true)).map_err(|e| e.to_string()),
        Err(format!(
            "A lead other than staff-0007 must release refund {}: the one who issued a refund cannot release it too; it stays held.",
            held.refund_id
        ))
    );
    assert_eq!(
        release(("staff-0012", false)).map_err(|e| e.to_string()),
        Err(format!(
            "Only a lead may release refund {}, and staff-0012 is not one: a lead other than staff-0007 must release this refund; it stays held.",
            held.refund_id
        ))
    );
    let (still, _) = store.issue(&quote.quote_id, None).expect("still there");
    assert_eq!(
        still.status,
        RefundStatus::Held,
        "refused releases leave it held"
    );
    let released = store
        .answer(
            &held.refund_id,
            &ask,
            ReleaseAnswer::Release,
            Some(("lead-0002", true)),
            Some("checked the photos"),
        )
        .expect("release");
    assert_eq!(released.status, RefundStatus::Released);
    assert_eq!(released.released_by.as_deref(), Some("lead-0002"));
    // The form is spent: a second answer, even a lead's, is refused and changes nothing.
    assert!(matches!(
        release(("lead-0099", true)),
        Err(ShopError::Answered { by, .. }) if by == "lead-0002"
    ));
    assert_eq!(store.order(&order.order_id).expect("order").1, [released]);
}

#[test]
fn a_declined_form_is_spent_and_a_new_one_can_release() {
    let store = open(Path::new(":memory:"), QuoteIds::Random);
    let (order, sku) = delivered_line(true);
    let quote = store
        .quote(&order.order_id, Some(&sku), "cracked")
        .expect("quote");
    let (held, _) = store
        .issue(&quote.quote_id, Some("staff-0007"))
        .expect("issue");
    let (first, second) = (
        store.ask(&held.refund_id).expect("a form"),
        store.ask(&held.refund_id).expect("another form"),
    );
    let lead = Some(("lead-0002", true));
    let dismissed = store.answer(&held.refund_id, &first, ReleaseAnswer::Dismiss, lead, None);
    assert_eq!(dismissed.expect("dismissed").status, RefundStatus::Held);
    let declined = store.answer(&held.refund_id, &first, ReleaseAnswer::Hold, lead, None);
    assert_eq!(declined.expect("declined").status, RefundStatus::Held);
    // Holding spends every open form of the refund, not only the one answered.
    for spent in [&first, &second] {
        let replayed = store.answer(&held.refund_id, spent, ReleaseAnswer::Release, lead, None);
        assert_eq!(
            replayed.map_err(|e| e.to_string()),
            Err(format!(
                "This release form for refund {} was answered already: lead-0002 declined it, so the shop still holds it. To ask a lead again, call issue_refund again without requestState.",
                held.refund_id
            ))
        );
    }
    let unknown = store.answer(
        &held.refund_id,
        "no-such-form",
        ReleaseAnswer::Release,
        lead,
        None,
    );
    assert!(matches!(unknown, Err(ShopError::NoAsk(_))));
    let fresh = store.ask(&held.refund_id).expect("a fresh form");
    let released = store.answer(&held.refund_id, &fresh, ReleaseAnswer::Release, lead, None);
    assert_eq!(
        released.expect("released").released_by.as_deref(),
        Some("lead-0002")
    );
}

#[test]
fn a_line_is_refunded_once_and_a_whole_order_refund_excludes_its_lines() {
    let store = open(Path::new(":memory:"), QuoteIds::Random);
    let (order, sku) = delivered_line(false);
    let line = store
        .quote(&order.order_id, Some(&sku), "broken")
        .expect("quote");
    let whole_before = store
        .quote(&order.order_id, None, "all of it")
        .expect("whole-order quote");
    assert_eq!(
        (line.covers.clone(), whole_before.covers.clone()),
        (Covers::Line, Covers::Order)
    );
    assert_eq!(whole_before.amount, order.total);
    let (refund, _) = store.issue(&line.quote_id, None).expect("issue the line");

    let again = store
        .quote(&order.order_id, Some(&sku), "broken")
        .expect_err("same line twice");
    assert!(
        matches!(&again, ShopError::AlreadyRefunded { refund_id, .. } if *refund_id == refund.refund_id)
    );
    assert!(matches!(
        store.quote(&order.order_id, None, "all"),
        Err(ShopError::AlreadyRefunded { .. })
    ));
    // A quote made before the line's refund cannot be spent afterwards either.
    assert!(matches!(
        store.issue(&whole_before.quote_id, None),
        Err(ShopError::AlreadyRefunded { .. })
    ));
}

#[test]
fn orders_that_were_not_received_are_not_refunded_and_say_what_to_do() {
    let store = open(Path::new(":memory:"), QuoteIds::Random);
    let world = ShopWorld::bundled();
    for status in [
        OrderStatus::Placed,
        OrderStatus::Shipped,
        OrderStatus::Cancelled,
    ] {
        let order = world
            .orders
            .iter()
            .find(|o| o.status == status)
            .expect("an order of each status");
        let error = store
            .quote(&order.order_id, None, "late")
            .expect_err("not refundable");
        let message = error.to_string();
        assert!(
            message.starts_with(&format!("Order {} is {}", order.order_id, status.as_str())),
            "{message}"
        );
    }
}

#[test]
fn amounts_are_exact_cents() {
    let store = open(Path::new(":memory:"), QuoteIds::Random);
    let (order, sku) = delivered_line(true);
    let quote = store
        .quote(&order.order_id, Some(&sku), "x")
        .expect("quote");
    let line = order.line(&sku).expect("line");
    assert_eq!(
        quote.amount,
        Cents(line.unit_price.0 * i64::from(line.quantity))
    );
}
