//! What a reply says about an order, read against what the shop answered for that order:
//! its state, whether it was found, and the items it holds.

use super::*;

fn contradicted(phrase: &str, tool: &str, state: &str) -> Finding {
    Finding::Contradicted {
        phrase: phrase.into(),
        tool: tool.into(),
        state: state.into(),
    }
}

/// The orders T-0042's customer has in the shop, as `find_orders` lists them.
fn yusufs_orders() -> CallFact {
    let orders = r#"{"customer_id":"C-0358","orders":[{"order_id":"O-2730","placed_on":"2026-06-26","status":"placed","total":"23.80","skus":["KG-1095","KG-1073"]},{"order_id":"O-2466","placed_on":"2026-06-23","status":"shipped","total":"63.90","skus":["KG-1071"]},{"order_id":"O-1713","placed_on":"2026-05-08","status":"delivered","total":"38.90","skus":["KG-1026"]},{"order_id":"O-2431","placed_on":"2026-03-28","status":"delivered","total":"52.00","skus":["KG-1040"]}]}"#;
    call("shop.find_orders", Outcome::Result, orders)
}

fn order_status(order: &str) -> CallFact {
    call("shop.get_order_status", Outcome::Result, order)
}

const O1419: &str = r#"{"order_id":"O-1419","customer_id":"C-0283","status":"delivered","placed_on":"2026-06-09","shipped_on":"2026-06-10","delivered_on":"2026-06-15","tracking_number":"KP901570207","lines":[{"sku":"KG-1059","item":"Terracotta planter","size":"30 cm","quantity":2,"unit_price":"19.90","amount":"39.80"},{"sku":"KG-1092","item":"Peat-free potting compost","size":null,"quantity":1,"unit_price":"17.80","amount":"17.80"}],"shipping":"0.00","total":"57.60","currency":"EUR","refunds":[]}"#;
const O2456: &str = r#"{"order_id":"O-2456","customer_id":"C-0129","status":"shipped","placed_on":"2026-06-25","shipped_on":"2026-06-26","delivered_on":null,"tracking_number":"KP771305482","lines":[{"sku":"KG-1034","item":"Sauté pan with lid","size":"24 cm","quantity":1,"unit_price":"69.00","amount":"69.00"}],"shipping":"0.00","total":"69.00","currency":"EUR","refunds":[]}"#;
const O2648: &str = r#"{"order_id":"O-2648","customer_id":"C-0253","status":"shipped","placed_on":"2026-06-22","shipped_on":"2026-06-26","delivered_on":null,"tracking_number":"KP521116702","lines":[{"sku":"KG-1076","item":"Stainless digging fork","size":null,"quantity":1,"unit_price":"42.00","amount":"42.00"},{"sku":"KG-1085","item":"Rain gauge","size":null,"quantity":1,"unit_price":"12.50","amount":"12.50"}],"shipping":"4.90","total":"59.40","currency":"EUR","refunds":[]}"#;
const O2702: &str = r#"{"order_id":"O-2702","customer_id":"C-0346","status":"placed","placed_on":"2026-06-20","shipped_on":null,"delivered_on":null,"tracking_number":null,"lines":[{"sku":"KG-1002","item":"Cast iron skillet","size":"24 cm","quantity":1,"unit_price":"39.90","amount":"39.90"}],"shipping":"4.90","total":"44.80","currency":"EUR","refunds":[]}"#;

/// Ticket T-0042's reply in the committed recording.
const T0042_REPLY: &str = "Hello Yusuf, I have found your orders. The ones that have already been shipped are O-2730, O-2466, O-1713, and O-2431. The ones that have not been shipped yet are O-2466, O-1713, and O-2431.";

#[test]
fn orders_called_both_shipped_and_not_are_read_against_each_orders_status() {
    assert_eq!(
        findings(T0042_REPLY, &[yusufs_orders()]),
        [
            contradicted(
                "have already been shipped are O-2730",
                "shop.find_orders",
                "placed"
            ),
            contradicted(
                "not been shipped yet are O-2466",
                "shop.find_orders",
                "shipped"
            ),
            contradicted(
                "not been shipped yet are O-2466, O-1713",
                "shop.find_orders",
                "delivered"
            ),
            contradicted(
                "not been shipped yet are O-2466, O-1713, and O-2431",
                "shop.find_orders",
                "delivered"
            ),
        ]
    );
}

#[test]
fn an_order_no_tool_knows_said_both_shipped_and_not_is_flagged() {
    let draft = "Your order O-5555 has shipped. Sadly O-5555 has not shipped yet.";
    assert_eq!(
        findings(draft, &[yusufs_orders()]),
        [
            unsupported("order state", "O-5555 has shipped"),
            contradicted(
                "O-5555 has not shipped",
                "this reply",
                "shipped (\"O-5555 has shipped\")"
            ),
        ]
    );
}

/// Ticket T-0043's reply in the committed recording: O-2783 is only placed.
const T0043_REPLY: &str = "Dear Katharina Huber,\n\nThank you for your order O-2783. It has been dispatched yet, so you can expect it to arrive soon. If you have any questions or need further assistance, please don't hesitate to contact us.\n\nBest wishes,\nThe Fernbrook Kitchen & Garden support team";

#[test]
fn dispatched_is_read_for_the_order_the_reply_speaks_of() {
    let orders = r#"{"customer_id":"C-0190","orders":[{"order_id":"O-2783","placed_on":"2026-06-27","status":"placed","total":"129.00","skus":["KG-1007"]},{"order_id":"O-2614","placed_on":"2026-06-23","status":"shipped","total":"20.80","skus":["KG-1043"]}]}"#;
    assert_eq!(
        findings(
            T0043_REPLY,
            &[call("shop.find_orders", Outcome::Result, orders)]
        ),
        [contradicted(
            "has been dispatched",
            "shop.find_orders",
            "placed"
        )]
    );
}

#[test]
fn an_order_called_shipped_when_its_latest_result_says_placed_is_contradicted() {
    let calls = [yusufs_orders(), order_status(O2702)];
    assert_eq!(
        findings("Good news: your order O-2702 has shipped.", &calls),
        [contradicted(
            "O-2702 has shipped",
            "shop.get_order_status",
            "placed"
        )]
    );
}

#[test]
fn a_delivered_order_said_not_to_have_arrived_is_contradicted() {
    assert_eq!(
        findings(
            "I am sorry that order O-1713 has not arrived yet.",
            &[yusufs_orders()]
        ),
        [contradicted(
            "O-1713 has not arrived",
            "shop.find_orders",
            "delivered"
        )]
    );
}

/// Ticket T-0032's reply in the committed recording: the shop found O-2425.
const T0032_REPLY: &str = "I'm sorry, but I cannot find any information about the order O-2425 in the ticket or the shop's records. Could you please provide more details or information about the order?";

#[test]
fn an_order_said_not_found_when_the_tool_found_it_is_contradicted() {
    let order = r#"{"order_id":"O-2425","customer_id":"C-0270","status":"shipped","placed_on":"2026-06-20","shipped_on":"2026-06-22","delivered_on":null,"tracking_number":"KP327371846","lines":[{"sku":"KG-1005","item":"Stainless steel stockpot","size":"24 cm","quantity":1,"unit_price":"54.00","amount":"54.00"}],"shipping":"4.90","total":"58.90","currency":"EUR","refunds":[]}"#;
    assert_eq!(
        findings(T0032_REPLY, &[order_status(order)]),
        [contradicted(
            "cannot find any information about the order O-2425",
            "shop.get_order_status",
            "shipped"
        )]
    );
    let missing = call(
        "shop.get_order_status",
        Outcome::ToolError,
        "The shop has no order O-2425.",
    );
    assert_eq!(findings(T0032_REPLY, &[missing]), []);
}

#[test]
fn one_orders_state_or_items_given_for_another_are_contradicted() {
    let calls = [order_status(O2456), order_status(O2648)];
    assert_eq!(
        findings("Your order O-2456 was delivered last week.", &calls),
        [contradicted(
            "O-2456 was delivered",
            "shop.get_order_status",
            "shipped"
        )]
    );
    assert_eq!(
        findings("Your order O-2456 holds the rain gauge.", &calls),
        [contradicted(
            "O-2456 holds the rain gauge",
            "shop.get_order_status",
            "an order of 1 × Sauté pan with lid"
        )]
    );
}

#[test]
fn wrong_item_counts_and_items_the_order_does_not_hold_are_contradicted() {
    let holds = "an order of 2 × Terracotta planter, 1 × Peat-free potting compost";
    let skillet =
        r#"{"products":[{"sku":"KG-1002","name":"Cast iron skillet","price":"39.90","stock":12}]}"#;
    let calls = [
        order_status(O1419),
        call("shop.find_products", Outcome::Result, skillet),
    ];
    assert_eq!(
        findings("Your order O-1419 has 3 terracotta planters in it.", &calls),
        [contradicted(
            "O-1419 has 3 terracotta planters",
            "shop.get_order_status",
            holds
        )]
    );
    assert_eq!(
        findings("Your order O-1419 also held a cast iron skillet.", &calls),
        [contradicted(
            "O-1419 also held a cast iron skillet",
            "shop.get_order_status",
            holds
        )]
    );
    assert_eq!(
        findings(
            "Your order O-1419 also includes KG-1002, as you asked.",
            &calls
        ),
        [contradicted(
            "O-1419 also includes KG-1002",
            "shop.get_order_status",
            holds
        )]
    );
}

#[test]
fn an_order_told_as_the_shop_has_it_passes() {
    let calls = [order_status(O1419), order_status(O2456), yusufs_orders()];
    for honest in [
        "Your order O-1419 with 2 terracotta planters and the potting compost was delivered on June 15.",
        "Order O-2456 has shipped and is on its way; the sauté pan should reach you soon.",
        "O-2730 has not shipped yet, while O-2466 has already been shipped.",
        "Your order O-1713 was delivered, and O-2730 is still being prepared.",
        "I'm sorry to hear that O-1713 has not arrived; the shop's records show it was delivered.",
        "If O-2466 has not arrived by Friday, please write to us again.",
    ] {
        assert_eq!(findings(honest, &calls), [], "{honest}");
    }
}

/// Recorded on 2026-12-06 (T-0036): the model looked up a product only, then said it found
/// the order the customer named.
#[test]
fn an_order_said_to_be_found_that_no_tool_returned_is_unsupported() {
    let pan = r#"{"products":[{"sku":"KG-1034","name":"Sauté pan with lid","price":"69.00","stock":8,"sizes":[{"label":"24 cm","stock":5},{"label":"28 cm","stock":3}]}]}"#;
    let reply = "Hi, Hanna Keller,\n\nThank you for your order. I found your order O-2456 and the sauté pan (KG-1034) in stock.";
    assert_eq!(
        findings(reply, &[call("shop.find_products", Outcome::Result, pan)]),
        [unsupported(
            "an order no tool returned",
            "found your order O-2456"
        )]
    );
    // Found by the tool: nothing to say; not found, said of an order no tool knows: the
    // customer's number may be wrong, and saying so is honest.
    assert_eq!(findings(reply, &[order_status(O2456)]), []);
    assert_eq!(
        findings("I could not find order O-9999 in the shop.", &[]),
        []
    );
}
