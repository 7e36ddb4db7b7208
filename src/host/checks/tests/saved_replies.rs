//! A saved reply's fixed text is checked like any reply: a snippet cannot promise what no tool
//! did, and a variable it could not fill is a placeholder the check flags.

use super::*;
use crate::replies::{Values, fill};
use crate::tickets::Ticket;

fn ticket() -> Ticket {
    Ticket {
        ticket_id: "T-0004".into(),
        customer_id: "C-0173".into(),
        customer_name: Some("Mira Okafor".into()),
        subject: "parcel not come".into(),
        ..Ticket::default()
    }
}

fn filled(text: &str, ticket: &Ticket) -> String {
    fill(
        text,
        &Values {
            ticket,
            me: "dana",
            results: &[],
        },
    )
}

#[test]
fn a_saved_reply_that_promises_a_refund_no_tool_made_is_flagged() {
    let ticket = ticket();
    let text = filled(
        "Dear {customer.name}, your refund has been issued and will reach your card in 3 days.",
        &ticket,
    );
    let quoted = format!("{} {}", ticket.subject, ticket.body);
    let checked = check_reply(&text, &[], &quoted, &[], "The support team");
    assert!(
        checked
            .findings
            .iter()
            .any(|f| matches!(f, Finding::RefundPromisedWithoutRefund { .. })),
        "{:?}",
        checked.findings
    );
}

#[test]
fn a_variable_with_no_value_is_a_placeholder_the_check_flags() {
    let text = filled("Your order {result.order_id} is on its way.", &ticket());
    let checked = check_reply(&text, &[], "", &[], "The support team");
    assert!(
        checked
            .findings
            .iter()
            .any(|f| matches!(f, Finding::NotForCustomer { .. })),
        "{:?}",
        checked.findings
    );
}
