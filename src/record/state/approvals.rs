//! How an approval moves a ticket: asked, answered, withdrawn, fallen back, continued from.

use super::{Lifecycle, TicketState};
use crate::record::Event;

impl TicketState {
    /// An approval's step: asked (the run stops there), answered (the ticket waits for a
    /// run to continue from it), withdrawn, or continued from.
    pub(super) fn approval_moved(&mut self, event: &Event) {
        match event {
            Event::ApprovalAsked {
                approval,
                server,
                tool,
                ..
            } => {
                self.state = Lifecycle::WaitingForLead;
                self.reason = Some(format!(
                    "waiting for a lead to answer {server} about {tool} (approval {approval})"
                ));
                self.approval = Some(*approval);
                self.run = None;
            }
            Event::ApprovalAnswered {
                approval,
                by,
                action,
                tool,
                ..
            } => {
                let answered = match action.as_str() {
                    "accept" => "accepted",
                    "decline" => "declined",
                    _ => "closed",
                };
                self.state = Lifecycle::NeedsPerson;
                self.reason = Some(format!(
                    "{by} {answered} approval {approval} ({tool}); work the ticket again to go on from the answer"
                ));
                self.approval = Some(*approval);
            }
            Event::ApprovalWithdrawn {
                approval,
                by,
                reason,
                ..
            } => {
                self.state = Lifecycle::NeedsPerson;
                self.reason = Some(format!("{by} withdrew approval {approval}: {reason}"));
                self.approval = None;
            }
            Event::ApprovalFellBack {
                approval,
                after,
                to: Some(lead),
                ..
            } => {
                self.reason = Some(format!(
                    "waiting for {lead} to answer approval {approval}: no lead answered within {after}, so it went to them"
                ));
            }
            Event::ApprovalFellBack {
                approval,
                after,
                to: None,
                ..
            } => {
                self.state = Lifecycle::NeedsPerson;
                self.reason = Some(format!(
                    "approval {approval} was declined by the desk's rule: no lead answered within {after}; nothing was released: answer the customer, or work the ticket again to ask anew"
                ));
                self.approval = None;
            }
            Event::RunContinued { .. } => {
                let model_calls = self.model_calls;
                self.start_run();
                self.model_calls = model_calls;
                if let Some(run) = &mut self.run {
                    run.model_calls = model_calls;
                }
                self.approval = None;
            }
            _ => {}
        }
    }
}
