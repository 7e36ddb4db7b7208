//! A run that stopped for a lead goes on from the lead's answer: the conversation is built
//! again from the ticket's record (every model reply and every outcome, as the model read
//! them), the lead's answer is the stopped call's outcome, and the model is asked next. The
//! tool is never called again for it: its effect, if any, is the one the lead's desk made.

use super::conversation::{Conversation, Taken};
use crate::host::checks::CallFact;
use crate::host::core::Host;
use crate::model::chat::ToolCall;
use crate::record::event::PERSON_TURN;
use crate::record::store::Stored;
use crate::record::{Event, Lifecycle};
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

/// The calls a run made with their outcomes, as the record holds them: a lead's answer to a
/// call that waited for one is that call's outcome. Put back together as the run put them
/// into its conversation, so a person's send is checked against the same log as the run's
/// draft was.
pub(in crate::host) fn call_log(run: &[Stored]) -> Vec<CallFact> {
    let mut conversation = Conversation::default();
    replay_into(&mut conversation, run);
    conversation.facts
}

/// The calls people made themselves among `events`, each with its outcome (a lead's answer
/// to one included): facts for the checks, made by no model turn.
pub(in crate::host) fn person_calls(events: &[Stored]) -> Vec<CallFact> {
    let mut facts = Vec::new();
    let mut pending = None;
    for stored in events {
        note_person_call(&stored.event, &mut pending, &mut facts);
    }
    facts
}

/// Keeps a person's call (`ToolCall` on [`PERSON_TURN`]) until its outcome comes, then adds
/// both as a fact; whether `event` was a person's call's.
fn note_person_call(
    event: &Event,
    pending: &mut Option<(String, serde_json::Map<String, serde_json::Value>)>,
    facts: &mut Vec<CallFact>,
) -> bool {
    match event {
        Event::ToolCall {
            turn: PERSON_TURN,
            tool,
            arguments,
            ..
        } => *pending = Some((tool.clone(), arguments.clone())),
        Event::Outcome {
            turn: PERSON_TURN,
            outcome,
            text,
            ..
        }
        | Event::ApprovalAnswered {
            turn: PERSON_TURN,
            outcome,
            text,
            ..
        } => {
            if let Some((tool, arguments)) = pending.take() {
                facts.push(CallFact {
                    tool,
                    turn: PERSON_TURN,
                    outcome: *outcome,
                    arguments,
                    result: text.clone(),
                });
            }
        }
        _ => return false,
    }
    true
}

/// Puts a run's recorded replies and outcomes back into `conversation`, as the loop put them
/// there when it ran; the last turn the run had reached. A person's own calls among them
/// join the call log.
fn replay_into(conversation: &mut Conversation, run: &[Stored]) -> u32 {
    let mut last_turn = 0;
    let mut pending: Option<(ToolCall, usize, u32)> = None;
    let mut person = None;
    for stored in run {
        if note_person_call(&stored.event, &mut person, &mut conversation.facts) {
            continue;
        }
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

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::host::checks::check_reply;
    use crate::model::chat::Reply;
    use crate::record::Outcome;

    fn stored(event: Event) -> Stored {
        let (seq, at, by) = (0, 0, "ana".to_owned());
        Stored { seq, at, by, event }
    }

    fn asks(turn: u32, tool: &str, arguments: serde_json::Value) -> [Stored; 2] {
        let arguments = arguments.as_object().cloned().unwrap_or_default();
        let call = ToolCall {
            id: format!("call-{turn}"),
            name: tool.to_owned(),
            arguments: arguments.clone(),
        };
        let model_call = Event::ModelCall {
            ticket: "T-0003".into(),
            turn,
            messages_hash: format!("hash-{turn}"),
            reply: Reply::Call {
                call,
                content: String::new(),
                dropped: 0,
            },
            seconds: 1.0,
            first_visible_seconds: None,
            tool_list_chars: 0,
            context_chars: 0,
            prompt: None,
        };
        let tool_call = Event::ToolCall {
            ticket: "T-0003".into(),
            turn,
            tool: tool.to_owned(),
            arguments,
        };
        [stored(model_call), stored(tool_call)]
    }

    /// T-0003's refund: quoted, issued and held for a lead, released by the lead's answer.
    fn released_by_a_lead() -> Vec<Stored> {
        let mut run = vec![stored(Event::TicketStarted {
            ticket: "T-0003".into(),
            tools: vec![],
            attached: vec![],
            request: None,
        })];
        run.extend(asks(1, "shop.quote_refund", json!({"order_id": "O-1587"})));
        run.push(stored(Event::Outcome {
            ticket: "T-0003".into(),
            turn: 1,
            tool: "shop.quote_refund".into(),
            outcome: Outcome::Result,
            text: r#"{"quote_id":"Q-1","amount":"279.00","currency":"EUR"}"#.into(),
            truncated: false,
        }));
        run.extend(asks(2, "shop.issue_refund", json!({"quote_id": "Q-1"})));
        run.push(stored(Event::ApprovalAnswered {
            ticket: "T-0003".into(),
            turn: 2,
            approval: 7,
            by: "lee".into(),
            tool: "shop.issue_refund".into(),
            action: "accept".into(),
            content: Some(r#"{"release":true}"#.into()),
            outcome: Outcome::Result,
            text: r#"{"refund_id":"R-1","status":"released","amount":"279.00","currency":"EUR"}"#
                .into(),
            truncated: false,
        }));
        run
    }

    #[test]
    fn a_leads_answer_is_the_outcome_of_the_call_that_waited_for_it() {
        let log = call_log(&released_by_a_lead());
        let tools: Vec<(&str, u32, Outcome)> = log
            .iter()
            .map(|fact| (fact.tool.as_str(), fact.turn, fact.outcome))
            .collect();
        assert_eq!(
            tools,
            [
                ("shop.quote_refund", 1, Outcome::Result),
                ("shop.issue_refund", 2, Outcome::Result)
            ]
        );
        assert_eq!(log[1].arguments.get("quote_id"), Some(&json!("Q-1")));
        assert!(log[1].result.contains("released"), "{:?}", log[1].result);
    }

    #[test]
    fn a_reply_sent_after_a_leads_release_is_checked_with_the_release() {
        let log = call_log(&released_by_a_lead());
        let reply =
            "Your refund of EUR 279.00 has been released and will reach your card in a few days.";
        let checked = check_reply(reply, &log, "mixer broken, refund please", &[], "");
        assert_eq!(checked.findings, vec![], "{reply}");
    }
}
