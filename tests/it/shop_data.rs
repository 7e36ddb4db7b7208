//! The shop's world holds together: every reference resolves, amounts add up to the cent,
//! dates run forwards, and the tickets are what the queue needs. The only IDs that do not
//! resolve are the deliberately wrong ones a ticket lists in `wrong_ids`.

use std::collections::{BTreeMap, BTreeSet};

use regex::Regex;
use support_desk::money::Cents;
use support_desk::partner::Parcels;
use support_desk::partner::data::ParcelStatus;
use support_desk::shop::data::OrderStatus;
use support_desk::shop::{REFUND_LIMIT, ShopWorld};
use support_desk::tickets::Ticket;

fn world() -> ShopWorld {
    ShopWorld::bundled()
}

fn has_shape(id: &str, prefix: &str, digits: usize) -> bool {
    id.strip_prefix(prefix)
        .is_some_and(|rest| rest.len() == digits && rest.bytes().all(|b| b.is_ascii_digit()))
}

#[test]
fn the_files_on_disk_are_the_world_that_is_bundled() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/shop");
    let from_disk = ShopWorld::from_dir(&dir).expect("read assets/shop");
    let bundled = world();
    assert_eq!(from_disk.products, bundled.products);
    let tickets = dir.join("tickets.json");
    let from_disk_tickets =
        support_desk::tickets::load(&tickets.to_string_lossy()).expect("tickets.json");
    // The bundled queue adds each customer's name and address from customers.json, for the
    // greeting and a reply by mail.
    let bundled_tickets = support_desk::tickets::bundled();
    let without_names: Vec<_> = bundled_tickets
        .iter()
        .cloned()
        .map(|mut t| {
            t.customer_name = None;
            t.from = None;
            t
        })
        .collect();
    assert_eq!(from_disk_tickets, without_names);
    assert!(
        bundled_tickets.iter().all(|t| t.customer_name.is_some()
            && t.from.as_ref().is_some_and(|f| f.address.contains('@')))
    );
    assert_eq!(from_disk.policies, bundled.policies);
}

#[test]
fn products_have_unique_skus_prices_and_consistent_stock() {
    let world = world();
    assert_eq!(world.products.len(), 64);
    let skus: BTreeSet<&str> = world.products.iter().map(|p| p.sku.as_str()).collect();
    assert_eq!(skus.len(), 64, "SKUs are unique");
    for p in &world.products {
        assert!(has_shape(&p.sku, "KG-", 4), "{}", p.sku);
        assert!(p.price > Cents(0), "{} has a price", p.sku);
        if !p.sizes.is_empty() {
            assert_eq!(
                p.stock,
                p.sizes.iter().map(|s| s.stock).sum::<u32>(),
                "{} stock is its sizes' sum",
                p.sku
            );
        }
        let something_out = p.stock == 0 || p.sizes.iter().any(|s| s.stock == 0);
        assert!(
            p.restock_on.is_none() || something_out,
            "{} has a restock date but nothing is out",
            p.sku
        );
    }
    assert!(
        world
            .products
            .iter()
            .filter(|p| !p.sizes.is_empty())
            .count()
            >= 10
    );
    assert!(world.products.iter().filter(|p| p.stock == 0).count() >= 6);
    assert!(
        world
            .products
            .iter()
            .filter(|p| p.price > REFUND_LIMIT)
            .count()
            >= 3
    );
    assert_eq!(
        world.product("KG-1031").map(|p| p.price),
        Some(Cents(24_90))
    );
}

#[test]
fn customers_are_unique_and_use_example_domains() {
    let world = world();
    assert!(world.customers.len() >= 40);
    let ids: BTreeSet<&str> = world
        .customers
        .iter()
        .map(|c| c.customer_id.as_str())
        .collect();
    assert_eq!(ids.len(), world.customers.len());
    for c in &world.customers {
        assert!(has_shape(&c.customer_id, "C-", 4), "{}", c.customer_id);
        let domain = c.email.rsplit('@').next().unwrap_or_default();
        assert!(
            domain.starts_with("example."),
            "{} uses a real-looking domain",
            c.email
        );
    }
    assert!(world.customer("C-0129").is_some());
}

#[test]
fn orders_reference_real_customers_and_products_and_add_up() {
    let world = world();
    assert!(world.orders.len() >= 150);
    let ids: BTreeSet<&str> = world.orders.iter().map(|o| o.order_id.as_str()).collect();
    assert_eq!(ids.len(), world.orders.len(), "order IDs are unique");
    for o in &world.orders {
        assert!(has_shape(&o.order_id, "O-", 4), "{}", o.order_id);
        assert!(
            world.customer(&o.customer_id).is_some(),
            "{} names an unknown customer",
            o.order_id
        );
        assert!(!o.lines.is_empty(), "{} has lines", o.order_id);
        for line in &o.lines {
            let product = world
                .product(&line.sku)
                .unwrap_or_else(|| panic!("{} sells unknown {}", o.order_id, line.sku));
            assert_eq!(
                line.unit_price, product.price,
                "{} {} is at the list price",
                o.order_id, line.sku
            );
            assert!(line.quantity > 0);
            match &line.size {
                Some(size) => assert!(
                    product.sizes.iter().any(|s| &s.label == size),
                    "{} size {size}",
                    o.order_id
                ),
                None => assert!(
                    product.sizes.is_empty(),
                    "{} {} needs a size",
                    o.order_id,
                    line.sku
                ),
            }
        }
        let goods: Cents = o.lines.iter().map(|l| l.amount()).sum();
        let shipping = if goods < Cents(60_00) {
            Cents(4_90)
        } else {
            Cents(0)
        };
        assert_eq!(o.shipping, shipping, "{} shipping", o.order_id);
        assert_eq!(o.total, goods + o.shipping, "{} total", o.order_id);
    }
    assert!(
        world.orders.iter().all(|o| o.order_id != "O-7144"),
        "O-7144 is a ticket's deliberate mistake"
    );
    for status in OrderStatus::ALL {
        assert!(
            world.orders.iter().any(|o| o.status == status),
            "some order is {}",
            status.as_str()
        );
    }
    let customers_with_orders: BTreeMap<&str, usize> =
        world.orders.iter().fold(BTreeMap::new(), |mut m, o| {
            *m.entry(o.customer_id.as_str()).or_default() += 1;
            m
        });
    assert!(
        world
            .customers
            .iter()
            .all(|c| customers_with_orders.get(c.customer_id.as_str()) >= Some(&2))
    );
}

#[test]
fn order_dates_follow_the_status_and_run_forwards() {
    use OrderStatus::*;
    for o in &world().orders {
        let expect = |present: bool, date: &Option<String>, what: &str| {
            assert_eq!(
                date.is_some(),
                present,
                "{} {} {what}",
                o.order_id,
                o.status.as_str()
            );
        };
        expect(
            matches!(o.status, Shipped | Delivered | Returned),
            &o.shipped_on,
            "shipped_on",
        );
        expect(
            matches!(o.status, Delivered | Returned),
            &o.delivered_on,
            "delivered_on",
        );
        expect(o.status == Returned, &o.returned_on, "returned_on");
        expect(o.status == Cancelled, &o.cancelled_on, "cancelled_on");
        expect(o.status.dispatched(), &o.tracking_number, "tracking_number");
        let dates: Vec<&str> = [
            &o.shipped_on,
            &o.delivered_on,
            &o.returned_on,
            &o.cancelled_on,
        ]
        .into_iter()
        .flatten()
        .map(String::as_str)
        .collect();
        let mut previous = o.placed_on.as_str();
        for date in dates {
            assert!(
                date >= previous,
                "{}: {date} comes before {previous}",
                o.order_id
            );
            previous = date;
        }
        assert!(o.placed_on.as_str() >= "2026-03-01" && o.placed_on.as_str() <= "2026-06-30");
    }
}

#[test]
fn every_dispatched_order_has_its_parcel_and_no_other_parcels_exist() {
    let world = world();
    let parcels = Parcels::bundled();
    let dispatched: Vec<_> = world
        .orders
        .iter()
        .filter(|o| o.status.dispatched())
        .collect();
    assert_eq!(parcels.len(), dispatched.len());
    for o in dispatched {
        let number = o
            .tracking_number
            .as_deref()
            .expect("dispatched orders carry a number");
        assert!(has_shape(number, "KP", 9), "{number}");
        let parcel = parcels
            .get(number)
            .unwrap_or_else(|| panic!("{} has no parcel {number}", o.order_id));
        assert_eq!(parcel.order_id, o.order_id);
        let consistent = match o.status {
            OrderStatus::Delivered => parcel.status == ParcelStatus::Delivered,
            OrderStatus::Returned => matches!(
                parcel.status,
                ParcelStatus::Delivered | ParcelStatus::ReturnedToSender
            ),
            _ => !matches!(
                parcel.status,
                ParcelStatus::Delivered | ParcelStatus::ReturnedToSender
            ),
        };
        assert!(
            consistent,
            "{} is {} but its parcel is {:?}",
            o.order_id,
            o.status.as_str(),
            parcel.status
        );
        assert!(!parcel.events.is_empty());
        assert!(
            parcel.events.windows(2).all(|w| w[0].at <= w[1].at),
            "{number} events run forwards"
        );
    }
}

#[test]
fn the_queue_has_48_tickets_tagged_as_the_rules_say() {
    let ids: Vec<String> = support_desk::tickets::bundled()
        .iter()
        .map(|t| t.ticket_id.clone())
        .collect();
    let expected: Vec<String> = (1..=48).map(|n| format!("T-{n:04}")).collect();
    assert_eq!(ids, expected);
    let labels = support_desk::evaluation::bundled();
    let labelled: Vec<&str> = labels.iter().map(|l| l.ticket_id.as_str()).collect();
    assert_eq!(labelled, ids, "one label for each ticket, in order");
    let count = |tool: &str| labels.iter().filter(|l| l.expected_tool == tool).count();
    assert!(count("issue_refund") >= 7);
    assert!(count("quote_refund") >= 9);
    for tool in [
        "track_parcel",
        "find_products",
        "get_order_status",
        "find_orders",
    ] {
        assert!(count(tool) >= 3, "several tickets need {tool}");
    }
    let tools = [
        "issue_refund",
        "quote_refund",
        "track_parcel",
        "find_products",
        "get_order_status",
        "find_orders",
    ];
    assert!(
        labels
            .iter()
            .all(|l| tools.contains(&l.expected_tool.as_str()))
    );
    assert_eq!(labels.iter().filter(|l| l.injected).count(), 6);
    assert!(
        support_desk::tickets::bundled()
            .windows(2)
            .all(|w| w[0].received_at <= w[1].received_at)
    );
}

#[test]
fn tickets_belong_to_their_customers_and_refund_tickets_are_about_received_orders() {
    let world = world();
    let mut above_limit = 0;
    for t in &support_desk::tickets::bundled() {
        let l = crate::support::label(&t.ticket_id);
        assert!(
            world.customer(&t.customer_id).is_some(),
            "{} customer",
            t.ticket_id
        );
        if let Some(order_id) = &l.order_id {
            let order = world.orders.iter().find(|o| &o.order_id == order_id);
            let order =
                order.unwrap_or_else(|| panic!("{} is about unknown {order_id}", t.ticket_id));
            assert_eq!(
                order.customer_id, t.customer_id,
                "{} is about another customer's order",
                t.ticket_id
            );
            if l.expected_tool.ends_with("_refund") {
                assert!(
                    order.status.refundable(),
                    "{} asks for a refund on a {} order",
                    t.ticket_id,
                    order.status.as_str()
                );
                if order.total > REFUND_LIMIT {
                    above_limit += 1;
                }
            }
        } else {
            assert!(
                !l.expected_tool.ends_with("_refund"),
                "{} is a refund ticket without an order",
                t.ticket_id
            );
        }
    }
    assert!(above_limit >= 3, "some refunds are above the limit");
    let t9 = crate::support::label("T-0009");
    assert_eq!(
        (t9.order_id.as_deref(), t9.wrong_ids.as_slice()),
        (Some("O-1744"), ["O-7144".to_owned()].as_slice())
    );
}

/// Every ID a ticket mentions, in any of the forms customers write, normalised.
fn ids_in(ticket: &Ticket) -> BTreeSet<String> {
    let text = format!("{}\n{}", ticket.subject, ticket.body);
    let patterns = [
        (
            r"(?i)\b(?:o-?|#|order\s*(?:no\.?|number|nr\.?)?\s*#?\s*)(\d{4})\b",
            "O-",
        ),
        (r"(?i)\bkg[\s-]?(\d{4})\b", "KG-"),
        (r"(?i)\bc-(\d{4})\b", "C-"),
        (r"(?i)\bkp\s?(\d{3}\s?\d{3}\s?\d{3})\b", "KP"),
    ];
    let mut found = BTreeSet::new();
    for (pattern, prefix) in patterns {
        let re = Regex::new(pattern).expect("pattern");
        for capture in re.captures_iter(&text) {
            found.insert(format!(
                "{prefix}{}",
                capture[1].replace(char::is_whitespace, "")
            ));
        }
    }
    found
}

#[test]
fn every_id_a_ticket_mentions_resolves_unless_it_is_marked_wrong() {
    let world = world();
    let parcels = Parcels::bundled();
    let mut tickets_with_wrong_ids = 0;
    for t in &support_desk::tickets::bundled() {
        let wrong_ids = crate::support::label(&t.ticket_id).wrong_ids;
        let own_orders: Vec<_> = world
            .orders
            .iter()
            .filter(|o| o.customer_id == t.customer_id)
            .collect();
        for id in ids_in(t) {
            let resolves = if id.starts_with("O-") {
                own_orders.iter().any(|o| o.order_id == id)
            } else if id.starts_with("KG-") {
                world.product(&id).is_some()
            } else if id.starts_with("C-") {
                id == t.customer_id
            } else {
                own_orders
                    .iter()
                    .any(|o| o.tracking_number.as_deref() == Some(id.as_str()))
            };
            let marked = wrong_ids.contains(&id);
            assert!(
                resolves != marked,
                "{}: {id} resolves={resolves} but marked wrong={marked}",
                t.ticket_id
            );
        }
        for wrong in &wrong_ids {
            let exists = world.orders.iter().any(|o| &o.order_id == wrong)
                || world.product(wrong).is_some()
                || parcels.get(wrong).is_some();
            assert!(!exists, "{}: the wrong ID {wrong} exists", t.ticket_id);
        }
        tickets_with_wrong_ids += usize::from(!wrong_ids.is_empty());
    }
    assert!(tickets_with_wrong_ids >= 5);
}

#[test]
fn the_six_policies_are_there_and_the_refund_policy_states_the_limit() {
    let world = world();
    let names: Vec<&str> = world.policies.iter().map(|p| p.name).collect();
    assert_eq!(
        names,
        [
            "refund",
            "returns",
            "shipping",
            "stock",
            "escalation",
            "data-handling"
        ]
    );
    assert!(
        world
            .policies
            .iter()
            .all(|p| p.text.starts_with("# ") && p.text.len() > 400)
    );
    assert!(
        world
            .policy("refund")
            .expect("refund policy")
            .text
            .contains("150.00")
    );
}
