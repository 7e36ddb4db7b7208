//! The draft check's own tests: each finding, and replies that must draw none.

use serde_json::json;

use super::*;

mod honest;
mod linear;
mod orders;
mod readings;
mod saved_replies;

fn call(tool: &str, outcome: Outcome, result: &str) -> CallFact {
    let (tool, result) = (tool.to_owned(), result.to_owned());
    CallFact {
        tool,
        turn: 1,
        outcome,
        arguments: serde_json::Map::new(),
        result,
    }
}

fn quote(amount: &str) -> CallFact {
    let result = json!({"quote_id": "Q-1a2b3c4d5e", "order_id": "O-1873", "amount": amount, "currency": "EUR"});
    call("shop.quote_refund", Outcome::Result, &result.to_string())
}

fn refund(status: &str, amount: &str) -> CallFact {
    let result =
        json!({"refund_id": "R-0001", "order_id": "O-1873", "amount": amount, "status": status});
    call("shop.issue_refund", Outcome::Result, &result.to_string())
}

const TOOLS: [&str; 3] = [
    "shop.quote_refund",
    "shop.issue_refund",
    "partner.track_parcel",
];

const SIGNATURE: &str = "The Fernbrook Kitchen & Garden support team";

fn findings(draft: &str, calls: &[CallFact]) -> Vec<Finding> {
    check_reply(
        draft,
        calls,
        "The mug arrived broken, I paid 24,90€. Can I get a refund?",
        &TOOLS.map(String::from),
        SIGNATURE,
    )
    .findings
}

fn unsupported(kind: &str, words: &str) -> Finding {
    Finding::Unsupported {
        kind: kind.into(),
        words: words.into(),
    }
}

fn not_for_customer(kind: &str, words: &str) -> Finding {
    Finding::NotForCustomer {
        kind: kind.into(),
        words: words.into(),
    }
}

fn promised(phrase: &str) -> Finding {
    Finding::RefundPromisedWithoutRefund {
        phrase: phrase.into(),
    }
}

/// Ticket T-0048's reply in the chapter's queue run: no refund ran, and no tool said 161.96.
const T0048_REPLY: &str = "I've checked your order O-1864, which was delivered on May 17, 2026. Since it's a returned order, a refund is eligible. The total amount of $161.96 will be refunded to the original payment method. This refund is within the policy limit and will be processed immediately. You should see the refund within 5 working days.";

#[test]
fn the_chapters_reply_promises_a_refund_and_an_amount_no_tool_returned() {
    let order = r#"{"order_id": "O-1864", "status": "returned", "total": "161.95"}"#;
    let calls = [call("shop.get_order_status", Outcome::Result, order)];
    let missing = Finding::AmountNotFromTool {
        amount: "161.96".into(),
    };
    assert_eq!(
        findings(T0048_REPLY, &calls),
        [
            promised("total amount of $161.96 will be refunded"),
            missing,
            unsupported("date", "May 17"),
            unsupported("order state", "delivered"),
        ]
    );
}

#[test]
fn a_refund_promised_with_no_issue_refund_call_is_flagged() {
    let draft = "Your refund of €24.90 has been issued.";
    assert_eq!(
        findings(draft, &[quote("24.90")]),
        [promised("refund of €24.90 has been issued")]
    );
}

#[test]
fn the_same_reply_after_a_released_refund_passes_with_its_quote_id_stripped() {
    let calls = [quote("24.90"), refund("released", "24.90")];
    let checked = check_reply(
        "Your refund of €24.90 (quote Q-1a2b3c4d5e) has been issued.",
        &calls,
        "",
        &[],
        SIGNATURE,
    );
    let text = "Your refund of €24.90 (quote) has been issued.".to_owned();
    assert_eq!(
        checked,
        Checked {
            text,
            findings: vec![]
        }
    );
}

#[test]
fn a_held_refund_described_as_paid_is_flagged() {
    let calls = [quote("180.00"), refund("held", "180.00")];
    let phrase = "refund of EUR 180.00 has been paid";
    let held = Finding::HeldRefundCalledDone {
        phrase: phrase.into(),
    };
    assert_eq!(
        findings(
            "Good news: your refund of EUR 180.00 has been paid.",
            &calls
        ),
        [promised(phrase), held]
    );
}

#[test]
fn a_refund_the_lead_declined_is_held_not_done() {
    let error = "The lead declined to release refund R-0002, so the shop still holds it. Tell the customer the refund awaits a lead's review; do not say it was paid.";
    let calls = [
        quote("180.00"),
        call("shop.issue_refund", Outcome::ToolError, error),
    ];
    let held = Finding::HeldRefundCalledDone {
        phrase: "released the refund".into(),
    };
    assert_eq!(
        findings("I have released the refund to your card.", &calls),
        [promised("released the refund"), held]
    );
}

#[test]
fn a_held_refund_told_honestly_passes() {
    let calls = [quote("180.00"), refund("held", "180.00")];
    let draft =
        "Your refund of €180.00 awaits a lead's review. We will write again once it is released.";
    assert_eq!(findings(draft, &calls), []);
}

/// Each line: a reply's sentence that says a refund exists and waits | the phrase found.
const PENDING: &str = "
    The refund will be held until a support lead releases it. | The refund will be held
    Your refund of EUR 180.00 is waiting for a lead to approve it. | Your refund of EUR 180.00 is waiting
    Your refund awaits a lead's review. | Your refund awaits
    The refund is now pending with our team. | The refund is now pending
    Your refund is on hold until a lead has looked at it. | Your refund is on hold
    Your refund has been escalated to a lead. | Your refund has been escalated
    Your refund of €180.00 will be paid once a lead releases it. | Your refund of €180.00 will be paid once";

/// A refund said to wait for a lead when only a quote ran (T-0020 of the 2026-12-06
/// recording) is a refund that does not exist; once the shop holds one, the same words are
/// the truth.
#[test]
fn a_refund_said_to_wait_is_flagged_unless_the_shop_holds_one() {
    let quoted = [quote("180.00")];
    let held = [quote("180.00"), refund("held", "180.00")];
    let declined = [
        quote("180.00"),
        call("shop.issue_refund", Outcome::Declined, ""),
    ];
    for line in PENDING.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let (text, phrase) = line.split_once(" | ").expect("each line is text | phrase");
        assert_eq!(findings(text, &quoted), [promised(phrase)], "{text}");
        assert_eq!(findings(text, &declined), [promised(phrase)], "{text}");
        assert_eq!(findings(text, &held), [], "{text}");
    }
    // Policy, a condition, a question, a negation and the customer's own words wait for nothing.
    for text in [
        "Refunds above the limit are held until a lead releases them.",
        "If you return it, your refund would be held until a lead releases it.",
        "Is my refund on hold? That was your question: so far only a quote of EUR 180.00 was made.",
        "Your refund is not pending: no refund has been made yet.",
        "You asked whether the refund is waiting for a lead.",
        "A refund of this size needs a lead's approval before it can be issued.",
    ] {
        assert_eq!(findings(text, &quoted), [], "{text}");
    }
}

#[test]
fn a_declined_refund_claimed_as_released_is_a_promise_of_a_failed_call() {
    let calls = [
        quote("24.90"),
        call("shop.issue_refund", Outcome::Declined, ""),
    ];
    let failed = Finding::PromiseOfFailedCall {
        tool: "shop.issue_refund".into(),
        phrase: "released the refund".into(),
    };
    assert_eq!(
        findings("I have released the refund of €24.90.", &calls),
        [promised("released the refund"), failed]
    );
}

#[test]
fn a_declined_cancellation_claimed_as_done_is_flagged() {
    let calls = [call("shop.cancel_order", Outcome::Declined, "")];
    let failed = Finding::PromiseOfFailedCall {
        tool: "shop.cancel_order".into(),
        phrase: "I've cancelled your order".into(),
    };
    assert_eq!(
        findings("I've cancelled your order O-1873 as you asked.", &calls),
        [failed]
    );
}

#[test]
fn a_cancellation_claimed_with_no_call_at_all_names_the_missing_tool() {
    let failed = Finding::PromiseOfFailedCall {
        tool: "cancel_order".into(),
        phrase: "order O-1873 has been cancelled".into(),
    };
    assert_eq!(
        findings("Your order O-1873 has been cancelled.", &[]),
        [failed]
    );
}

#[test]
fn an_order_the_shop_reports_cancelled_may_be_called_cancelled() {
    let order = r#"{"order_id": "O-1873", "status": "cancelled", "cancelled_at": "2026-05-03"}"#;
    let calls = [call("shop.get_order_status", Outcome::Result, order)];
    assert_eq!(
        findings(
            "Your order O-1873 was cancelled on May 3 and never charged.",
            &calls
        ),
        []
    );
}

#[test]
fn a_quoted_refund_stated_conditionally_passes() {
    let draft = "The refund would be €24.90 for the mug. Shall I go ahead?";
    assert_eq!(findings(draft, &[quote("24.90")]), []);
}

#[test]
fn an_invented_amount_is_flagged_once() {
    let draft = "A refund would come to €30.00, or EUR 30 with shipping.";
    assert_eq!(
        findings(draft, &[quote("24.90")]),
        [Finding::AmountNotFromTool {
            amount: "30.00".into()
        }]
    );
}

#[test]
fn amounts_from_any_tool_result_pass_and_the_customers_own_do_not() {
    let error = "Refund R-0003 of EUR 180.00 is above the EUR 150.00 limit, so the shop holds it until a lead releases it.";
    let calls = [
        call("shop.issue_refund", Outcome::ToolError, error),
        call("x.price", Outcome::Result, r#"{"price": 12.5}"#),
    ];
    let draft = "Refunds above €150 wait for a lead, and €180.00 is above it. The refund for the lid would be 12.50.";
    assert_eq!(findings(draft, &calls), []);
    let theirs = "You paid 24,90 € for the mug.";
    assert_eq!(
        findings(theirs, &calls),
        [Finding::AmountNotFromTool {
            amount: "24.90".into()
        }]
    );
}

#[test]
fn money_is_read_in_every_way_it_is_written() {
    let text = "€24.90, EUR 25.00, 26.00 EUR, 27,00 €, $161.96, 28.50 euros, €150, USD1,234.56, a refund of 12.50 and the total 9.99.";
    let cents: Vec<i64> = amounts_in_reply(text).into_iter().map(|c| c.0).collect();
    assert_eq!(
        cents,
        [
            2490, 2500, 2600, 2700, 16196, 2850, 150_00, 1234_56, 1250, 999
        ]
    );
}

#[test]
fn dates_times_ids_phone_numbers_and_percentages_are_not_amounts() {
    let text = "Order O-1873 (SKU KG-1031, 2 items) shipped on 17.05.2026 at 14:30 with tracking FX-48213377 \
        and #1873; call +49 30 1234567. You get 10% off; the refund was booked on 12.05 and reaches you in 5 working days, by 2026.";
    assert_eq!(amounts_in_reply(text), []);
}

/// Each line: a reply's sentence | the phrase that promises a refund.
const PROMISES: &str = "
    The refund amount is EUR 91.50, and it will be released within the limit. | refund amount is EUR 91.50, and it will be released
    The total amount of $161.96 will be refunded to your card. | total amount of $161.96 will be refunded
    We have refunded the mug to your card. | have refunded
    I’ve refunded €24.90 to your original payment method. | I’ve refunded
    Your refund has been processed. | refund has been processed
    Good news, the refund was approved today! | refund was approved
    You'll receive a full refund within 5 working days. | You'll receive a full refund
    Your refund is on its way! | refund is on its way
    We'll refund the shipping cost as well. | We'll refund
    I have processed your refund for order O-1873. | processed your refund
    You will have your money back within 5 working days. | You will have your money
    A refund of EUR 24.90 will reach your card soon. | refund of EUR 24.90 will reach
    I have released the refund, and you should see it soon. | released the refund
    Your refund of €24.90 has been issued, so there is no need to send anything back. | refund of €24.90 has been issued
    Don’t worry: your refund is being processed. | refund is being processed
    The shop will reimburse you for the postage. | will reimburse
    Your refund will be €24.90. | refund will be €24.90
    We're refunding the whole order. | We're refunding
    The money will be credited to your card, and if you have any questions, just reply. | money will be credited
    Thanks for waiting. Your refund is approved. | refund is approved";

#[test]
fn refund_promises_are_found_in_many_phrasings() {
    for line in PROMISES.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let (text, phrase) = line.split_once(" | ").expect("each line is text | phrase");
        assert_eq!(promises_refund(text).as_deref(), Some(phrase), "{text}");
    }
}

/// Each line: a reply's sentence that must not read as a refund promise.
const NOT_PROMISES: &str = r#"
    A refund would be €24.90.
    The refund would come to €24.90 for the mug.
    Your refund of €180.00 will be paid once a lead releases it.
    The refund is waiting for a lead to approve it.
    Unfortunately we cannot refund an order that has not been delivered.
    If you'd like a refund, reply to this email and we will start one.
    You asked: can I get a refund?
    Your refund awaits a lead's review.
    We have not refunded anything yet.
    You wrote "please confirm the refund has been issued" and I checked the order.
    > The refund has been issued, right
    Your refund is held until a lead releases it; nothing has been paid yet.
    Has the refund been processed?
    We could refund the shipping if the parcel doesn't arrive by Friday.
    No refund has been issued for this order.
    I have sent you a refund quote for €24.90.
    Your refund will be issued after a manager approves it.
    You asked for a refund for the mug that was returned last week.
    Your refund request is pending.
    Refunds above €150.00 need a lead's approval.
    Your parcel will be returned to the depot.
    The refund amount is EUR 91.50, and it will be released once a lead approves it.
    The refund would be EUR 91.50, and it will be sent back to your card if you go ahead."#;

#[test]
fn conditional_negative_and_questioning_text_promises_nothing() {
    for text in NOT_PROMISES
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
    {
        assert_eq!(promises_refund(text), None, "{text}");
    }
}

/// Each line: a reply | the same reply with its quote IDs stripped.
const HANDLES: &str = "
    your quote (Q-1a2b3c4d5e) is ready | your quote is ready
    Quote Q-1A2B3C4D5E covers the mug. | Quote covers the mug.
    The refund (€24.90, Q-1a2b3c4d5e) awaits a lead. | The refund (€24.90) awaits a lead.
    The refund (Q-1a2b3c4d5e, €24.90) awaits a lead. | The refund (€24.90) awaits a lead.
    Your quote, Q-1a2b3c4d5e, covers the mug. | Your quote covers the mug.
    Your quote is Q-1a2b3c4d5e. | Your quote is.
    quote_id: Q-1a2b3c4d5e, amount €24.90 | amount €24.90
    Quotes Q-1a2b3c4d5e and q-abcdef0123 are ready. | Quotes and are ready.
    Q-12345 is short, Q-1a2b3c4d5e6 long, SQ-1a2b3c4d5e and Q-1a2b3c4d5g no quote. | Q-12345 is short, Q-1a2b3c4d5e6 long, SQ-1a2b3c4d5e and Q-1a2b3c4d5g no quote.";

#[test]
fn quote_ids_are_stripped_wherever_they_stand_and_look_alikes_stay() {
    for line in HANDLES.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let (text, stripped) = line
            .split_once(" | ")
            .expect("each line is text | stripped");
        assert_eq!(strip_handles(text), stripped, "{text}");
    }
    assert_eq!(
        strip_handles("Thanks!\nQ-1a2b3c4d5e: your quote\nBye"),
        "Thanks!\nyour quote\nBye"
    );
}

#[test]
fn odd_text_is_checked_without_panicking() {
    let odd = [
        "",
        " ",
        "€",
        "€.",
        "1.",
        ",5",
        "Q-",
        "q-1a2b3c4d5",
        "'s",
        "n't",
        "“",
        "> ",
        "\n\n?",
        "ü€1,0.0,00 Q-ABCDEF0123",
    ];
    for text in odd {
        let _ = check_reply(
            text,
            &[call("shop.issue_refund", Outcome::Failed, text)],
            text,
            &[text.to_owned()],
            text,
        );
    }
}

#[test]
fn findings_serialise_by_check_name_and_give_a_reason() {
    let finding = Finding::AmountNotFromTool {
        amount: "161.96".into(),
    };
    let expected = json!({"check": "amount_not_from_tool", "amount": "161.96"});
    assert_eq!(serde_json::to_value(&finding).ok(), Some(expected));
    let reason = "The reply states EUR 161.96, which no tool result of this ticket contains (the customer's own figures do not count); check the amount against the order or the quote.";
    assert_eq!(finding.reason(), reason);
}

/// The claims of money a careful lead reads as a refund, when no refund ran in the ticket.
const UNBACKED_MONEY: &str = "
    Confirmed: the €420 has been sent back to your card. | €420 has been sent
    Refund approved: €420. | Refund approved
    Your refund is complete and you will see it in 3-5 days. | refund is complete
    Good news, the €420 refund went through. | refund went through
    Hello Anna, the held refund for O-2044 is released. | refund for O-2044 is released
    We sent €24.90 to your card this morning. | sent €24.90
    The $35.00 is on its way to your account. | $35.00 is on its way";

#[test]
fn money_claimed_in_any_wording_is_flagged_without_a_refund() {
    for line in UNBACKED_MONEY
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
    {
        let (text, phrase) = line.split_once(" | ").expect("text | phrase");
        let found = findings(text, &[]);
        assert_eq!(found.first(), Some(&promised(phrase)), "{text}: {found:?}");
    }
}

#[test]
fn facts_no_tool_supports_are_flagged_with_their_words() {
    let shipped = r#"{"order_id": "O-1477", "status": "shipped", "shipped_at": "2026-06-26", "tracking_number": "KP204518736"}"#;
    let calls = [call("shop.get_order_status", Outcome::Result, shipped)];
    assert_eq!(
        findings(
            "Your replacement shipped today with tracking KP123456789.",
            &[]
        ),
        [
            unsupported("tracking number", "KP123456789"),
            unsupported("order state", "shipped")
        ]
    );
    assert_eq!(
        findings("Your order O-1477 was delivered yesterday.", &calls),
        [unsupported("order state", "delivered")]
    );
    assert_eq!(
        findings("It left our warehouse on June 20th.", &calls),
        [unsupported("date", "June 20th")]
    );
    let honest =
        "Your order O-1477 shipped on June 26 (2026-06-26) with tracking number KP204518736.";
    assert_eq!(findings(honest, &calls), []);
}

#[test]
fn text_not_for_a_customer_is_flagged() {
    let cases = [
        ("Best regards,\n[Your Name]", "a placeholder", "[Your Name]"),
        (
            "Dear {name}, your order is fine.",
            "a placeholder",
            "{name}",
        ),
        (
            "Please call the `shop__issue_refund` function with your quote.",
            "a tool name",
            "shop__issue_refund",
        ),
        (
            "{\"order_id\": \"O-1587\", \"status\": \"delivered\"}",
            "JSON",
            "{\"order_id\": \"O-1587\", \"status\": \"delivered\"}",
        ),
        (
            "Here you go <tool_response tool=\"x\">ok</tool_response>",
            "the host's markup",
            "<tool_response",
        ),
        (
            "```\nDear Felix, your order is on its way to you.\n```",
            "a code block",
            "```",
        ),
        (
            "The customer is asking about the status of their order O-2318, which we are checking.",
            "words about the customer instead of to them",
            "the customer",
        ),
        // Recorded on 2026-12-06 (T-0014): a list of orders in bold.
        (
            "Hi Elif, here is a summary:\n- **Order 1**: Placed on **2026-06-27**, shipped",
            "markdown",
            "**",
        ),
        ("Your order `O-2318` is on its way.", "markdown", "`"),
        (
            "## Your orders\nO-2318 is on its way.",
            "markdown",
            "## Your orders",
        ),
        // Recorded on 2026-12-06 (T-0015): the quote ID cut, its sentence says nothing.
        (
            "Hello Hugo,\nThe quote ID for this refund is Q-c532f33765. The total is EUR 188.00.",
            "a sentence left empty where a quote ID was cut",
            "The quote ID for this refund is.",
        ),
    ];
    for (text, kind, words) in cases {
        let found = findings(text, &[]);
        assert!(
            found.contains(&not_for_customer(kind, words)),
            "{text}: {found:?}"
        );
    }
}

#[test]
fn a_refusal_an_empty_reply_and_an_echo_are_flagged() {
    assert_eq!(
        findings("I'm sorry, but I can't assist with that.", &[]),
        [Finding::NoAnswer {
            words: "I'm sorry, but I can't assist with that.".into()
        }]
    );
    assert_eq!(
        findings("  ", &[]),
        [Finding::NoAnswer {
            words: String::new()
        }]
    );
    for unanswered in [
        "The Fernbrook Kitchen & Garden support team",
        "```\nThe Fernbrook Kitchen & Garden support team\n```",
        "Dear Felix Wagner,\n\nBest regards,\nThe Fernbrook Kitchen & Garden support team",
    ] {
        assert_eq!(
            findings(unanswered, &[])
                .iter()
                .filter(|f| matches!(f, Finding::NoAnswer { .. }))
                .count(),
            1,
            "{unanswered}"
        );
    }
    let not_enough = "I'm sorry, but I don't have enough information to help you with your order.";
    assert_eq!(
        findings(not_enough, &[]),
        [Finding::NoAnswer {
            words: not_enough.into()
        }]
    );
    let ticket = "hi, i ordered a garden hose and a trowel about a week ago, order 2318. still nothing here and i havent seen any email from you";
    let echo = check_reply(
        "Hi, I ordered a garden hose and a trowel about a week ago, order 2318. Still nothing here.",
        &[],
        ticket,
        &[],
        SIGNATURE,
    );
    assert!(
        matches!(echo.findings.as_slice(), [Finding::Echo { percent }] if *percent >= 60),
        "{:?}",
        echo.findings
    );
}

#[test]
fn a_refusal_after_letters_whose_lower_case_is_longer_is_still_found() {
    let text = "İİİİ İstanbul. I'm sorry, but I can't assist with that.";
    assert_eq!(
        findings(text, &[]),
        [Finding::NoAnswer {
            words: "I'm sorry, but I can't assist with that.".into()
        }]
    );
}

#[test]
fn a_date_written_with_of_is_named_as_written() {
    assert_eq!(
        findings("Your parcel left our warehouse on the 20th of June.", &[]),
        [unsupported("date", "20th of June")]
    );
}
