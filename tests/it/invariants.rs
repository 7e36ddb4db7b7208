//! What every record must hold, whatever happened to the desks that wrote it: every call
//! outside the allow list that reached its server has the decision that let it run before
//! it, with who decided; every approval closed on a yes was closed by the answer the asking
//! server took. The team, approval and kill tests check them on the records they leave.

use std::collections::BTreeSet;

use support_desk::record::{Event, Outcome};

/// Checks both promises on `events`, in the order they were recorded.
pub fn assert_the_record_keeps_its_promises(events: &[Event], allow: &[String]) {
    let mut decided: BTreeSet<(String, u32, String)> = BTreeSet::new();
    for event in events {
        match event {
            Event::Consent {
                ticket,
                turn,
                tool,
                approved: true,
                by,
                ..
            } => {
                assert!(!by.trim().is_empty(), "a consent with nobody: {event:?}");
                decided.insert((ticket.clone(), *turn, tool.clone()));
            }
            // A call that answered reached its server: a result, or an error it reported.
            Event::Outcome {
                ticket,
                turn,
                tool,
                outcome: Outcome::Result | Outcome::ToolError,
                ..
            } if !allow.contains(tool) => assert!(
                decided.contains(&(ticket.clone(), *turn, tool.clone())),
                "{tool} on {ticket} turn {turn} reached its server with no decision before it"
            ),
            Event::ApprovalAnswered {
                approval,
                action,
                outcome,
                by,
                ..
            } => {
                assert!(!by.trim().is_empty(), "an answer by nobody: {event:?}");
                assert!(
                    action != "accept" || *outcome == Outcome::Result,
                    "approval {approval} closed on a yes the server did not take: {event:?}"
                );
            }
            _ => {}
        }
    }
}
