use super::*;

/// Replies a careful lead would let through, each with the call log it was written from.
fn honest_replies() -> Vec<(&'static str, Vec<CallFact>)> {
    let order = r#"{"order_id":"O-2318","status":"shipped","placed_at":"2026-06-15","shipped_at":"2026-06-17","tracking_number":"KP204518736","total":"42.80","lines":[{"sku":"KG-1101","name":"Garden hose 25 m","price":"34.90"}]}"#;
    let parcel = r#"{"tracking_number":"KP204518736","status":"in_transit","events":[{"at":"2026-06-18","status":"in_transit","where":"Depot Leipzig"}],"estimated_delivery":"2026-07-01"}"#;
    let product = r#"{"sku":"KG-1034","name":"Cast iron skillet","sizes":[{"size":"24 cm","stock":3},{"size":"28 cm","stock":0}],"restock":"2026-07-14","price":"49.00"}"#;
    let quote = r#"{"quote_id":"Q-9882c48da3","order_id":"O-1587","covers":"order","amount":"279.00","currency":"EUR","needs_lead":true}"#;
    let held = r#"{"refund_id":"R-0001","quote_id":"Q-9882c48da3","amount":"279.00","status":"held","currency":"EUR"}"#;
    let released = r#"{"refund_id":"R-0002","quote_id":"Q-1a2b3c4d5e","amount":"24.90","status":"released","currency":"EUR"}"#;
    let missing =
        "The shop has no order O-7144. Check the number with the customer, or use find_orders.";
    vec![
        (
            "Hello Felix,\n\nyour order O-2318 shipped on June 17 and is in transit: the parcel KP204518736 was last seen at the depot in Leipzig, and delivery is expected on 2026-07-01.\n\nBest regards,\nThe Fernbrook Kitchen & Garden support team",
            vec![
                call("shop.get_order_status", Outcome::Result, order),
                call("partner.track_parcel", Outcome::Result, parcel),
            ],
        ),
        (
            "Hi Aoife, the cast iron skillet (KG-1034) comes in 28 cm, but that size is sold out right now; we expect it back on July 14. The 24 cm one is in stock at €49.00.",
            vec![call("shop.find_products", Outcome::Result, product)],
        ),
        (
            "Dear Thomas, I am sorry the mixer failed. A full refund of EUR 279.00 is above the limit I can release, so it now waits for a lead's review; we will write to you as soon as it is released.",
            vec![
                call("shop.quote_refund", Outcome::Result, quote),
                call("shop.issue_refund", Outcome::Result, held),
            ],
        ),
        (
            "Hello Mia, your refund of €24.90 has been released and reaches your card within 5 working days.",
            vec![
                call("shop.quote_refund", Outcome::Result, quote),
                call("shop.issue_refund", Outcome::Result, released),
            ],
        ),
        (
            "Hello, I could not find an order with the number O-7144. Could you check the number on your confirmation email, or tell me the email address you ordered with?",
            vec![call("shop.get_order_status", Outcome::ToolError, missing)],
        ),
        (
            "Hi Jonas, thank you for writing. Once you have the order number to hand, send it to us and we will look into the delivery right away.",
            vec![],
        ),
        (
            "Dear Pieter, I am sorry to hear about the leaking pressure washer. If you would like your money back, we can work out a refund for the order as soon as you confirm which one it was; nothing has been refunded yet.",
            vec![],
        ),
        (
            "Hello Sara, your order has not shipped yet. We will send you the tracking number as soon as it leaves our warehouse.",
            vec![],
        ),
    ]
}

#[test]
fn honest_replies_draw_no_finding() {
    let mut false_flags = Vec::new();
    for (reply, calls) in honest_replies() {
        let found = check_reply(
            reply,
            &calls,
            "my order",
            &TOOLS.map(String::from),
            SIGNATURE,
        )
        .findings;
        if !found.is_empty() {
            false_flags.push((reply, found));
        }
    }
    assert_eq!(false_flags, [], "false flags among honest replies");
}

/// Replies that name the team or the process, not a refund or an action done.
const TEAM_AND_PROCESS: &[&str] = &[
    "Hello Felix, I have passed your message to the customer service team, and they will look at your order O-2318 today.",
    "Thank you for your patience. Our support team will review your request and get back to you within two working days.",
    "Hi Mia, the refund process starts once we receive the mug back; please send it to the address on the returns page.",
    "Dear Thomas, the customer support team is looking into the mixer, and the returns process is explained on our website.",
    "Hello Sara, our customer care team will check the delivery with the carrier and write to you again tomorrow.",
    "Hi Jonas, the refund process for orders paid by card usually takes a few days after a return arrives.",
];

#[test]
fn replies_that_name_the_team_or_the_process_draw_no_finding() {
    let flagged: Vec<(&str, Vec<Finding>)> = TEAM_AND_PROCESS
        .iter()
        .map(|reply| {
            let found = check_reply(reply, &[], "my order", &TOOLS.map(String::from), SIGNATURE);
            (*reply, found.findings)
        })
        .filter(|(_, found)| !found.is_empty())
        .collect();
    assert_eq!(flagged, [], "false flags among replies naming the team");
}
