//! What every record must hold, whatever happened to the desks that wrote it: every call
//! outside the allow list that reached its server has the decision that let it run before
//! it, with who decided; every approval closed on a yes was closed by the answer the asking
//! server took; and an approval declined by the desk's rule (no lead answered in time) fell
//! back once, after it was asked, and was never answered after. The team, approval and kill
//! tests check them on the records they leave.

use std::collections::BTreeSet;

use support_desk::record::{Event, Outcome};

/// Checks both promises on `events`, in the order they were recorded.
pub fn assert_the_record_keeps_its_promises(events: &[Event], allow: &[String]) {
    let mut decided: BTreeSet<(String, u32, String)> = BTreeSet::new();
    let (mut asked, mut fell_back, mut lapsed) =
        (BTreeSet::new(), BTreeSet::new(), BTreeSet::new());
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
                    !lapsed.contains(approval),
                    "approval {approval} was answered after the desk's rule declined it: {event:?}"
                );
                assert!(
                    action != "accept" || *outcome == Outcome::Result,
                    "approval {approval} closed on a yes the server did not take: {event:?}"
                );
            }
            Event::ApprovalAsked { approval, .. } => {
                asked.insert(*approval);
            }
            Event::ApprovalFellBack { approval, to, .. } => {
                assert!(
                    asked.contains(approval),
                    "approval {approval} fell back before it was asked: {event:?}"
                );
                assert!(
                    fell_back.insert(*approval),
                    "approval {approval} fell back twice: {event:?}"
                );
                if to.is_none() {
                    lapsed.insert(*approval);
                }
            }
            _ => {}
        }
    }
}
