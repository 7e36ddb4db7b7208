//! A run that stopped for a lead goes on from the lead's answer: the conversation is built
//! again from the ticket's record (every model reply and every outcome, as the model read
//! them), the lead's answer is the stopped call's outcome, and the model is asked next. The
//! tool is never called again for it: its effect, if any, is the one the lead's desk made.

use super::conversation::{Conversation, Taken};
use crate::host::core::Host;
use crate::model::chat::ToolCall;
use crate::record::Event;
use crate::record::Lifecycle;
use crate::record::store::Stored;
use crate::tickets::Ticket;

/// Where a ticket's next run starts.
pub(in crate::host) enum Continued {
    /// From the beginning.
    Fresh,
    /// From a lead's answer: the conversation so far, and the last turn it holds.
    From {
        conversation: Conversation,
        turn: u32,
    },
    /// Not now, in words for the person (the lead has not answered yet).
    Refused(String),
}

impl Host {
    /// Whether `ticket`'s next run goes on from an answered approval, and from where.
    pub(in crate::host) async fn continued(&self, ticket: &Ticket) -> Continued {
        let id = ticket.ticket_id.as_str();
        let state = match self.record.state(id).await {
            Ok(Some(state)) => state,
            Ok(None) => return Continued::Fresh,
            Err(e) => return Continued::Refused(e.to_string()),
        };
        let Some(approval) = state.approval else {
            return Continued::Fresh;
        };
        if state.state == Lifecycle::WaitingForLead {
            return Continued::Refused(format!(
                "{id} waits for a lead's answer (approval {approval}); it goes on when a lead answers, or withdraw the approval (x) to work it from the start"
            ));
        }
        let events = match self.record.ticket_events(id).await {
            Ok(events) => events,
            Err(e) => return Continued::Refused(e.to_string()),
        };
        let Some(start) = events
            .iter()
            .rposition(|s| matches!(s.event, Event::TicketStarted { .. }))
        else {
            return Continued::Fresh;
        };
        let run = &events[start..];
        let answered = run.iter().any(
            |s| matches!(&s.event, Event::ApprovalAnswered { approval: a, .. } if *a == approval),
        );
        if !answered {
            return Continued::Fresh;
        }
        let request = match &run[0].event {
            Event::TicketStarted { request, .. } => request.clone(),
            _ => None,
        };
        let (mut conversation, _) = self.open_conversation(ticket, request.as_deref()).await;
        let turn = replay_into(&mut conversation, run);
        if let Err(refused) = self
            .report(Event::RunContinued {
                ticket: id.to_owned(),
                approval,
            })
            .await
        {
            return Continued::Refused(refused.to_string());
        }
        Continued::From { conversation, turn }
    }
}

/// Puts a run's recorded replies and outcomes back into `conversation`, as the loop put them
/// there when it ran; the last turn the run had reached.
fn replay_into(conversation: &mut Conversation, run: &[Stored]) -> u32 {
    let mut last_turn = 0;
    let mut pending: Option<(ToolCall, usize, u32)> = None;
    for stored in run {
        match &stored.event {
            Event::ModelCall { turn, reply, .. } => {
                last_turn = *turn;
                // Words that were a draft ended the run; a run that stopped never had any.
                if let Taken::Call { call, dropped } = conversation.take_reply(reply.clone()) {
                    pending = Some((call, dropped, *turn));
                }
            }
            Event::Outcome {
                tool,
                outcome,
                text,
                ..
            }
            | Event::ApprovalAnswered {
                tool,
                outcome,
                text,
                ..
            } => {
                if let Some((call, dropped, turn)) = pending.take() {
                    conversation.push_outcome(&call, turn, (tool, *outcome), text.clone(), dropped);
                }
            }
            _ => {}
        }
    }
    last_turn
}
