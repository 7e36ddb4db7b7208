//! A recorded draft checked again by today's check. A recording keeps the model's replies as
//! evidence and each draft's findings as the check found them when it was made; once the
//! check has widened (or narrowed), what it finds in the same words may differ. Review,
//! compare and the replay tests show both, so a wider check needs no new recording.

use super::{CallFact, check_reply, strip_handles};
use crate::model::chat::Reply;
use crate::record::{Event, Finding};

/// One run's draft: the words, its findings as recorded, and as the check finds them now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rechecked {
    pub text: String,
    pub recorded: Vec<Finding>,
    pub now: Vec<Finding>,
}

impl Rechecked {
    /// Today's check finds something other than the recording holds.
    pub fn differs(&self) -> bool {
        self.recorded != self.now
    }

    /// Findings today's check adds to the recorded ones.
    pub fn added(&self) -> Vec<&Finding> {
        self.now
            .iter()
            .filter(|f| !self.recorded.contains(f))
            .collect()
    }

    /// Recorded findings today's check no longer makes.
    pub fn dropped(&self) -> Vec<&Finding> {
        self.recorded
            .iter()
            .filter(|f| !self.now.contains(f))
            .collect()
    }
}

/// The run's draft checked again against the run's own calls and the tools it was offered;
/// `None` when the run ended without a draft. `ticket_text` is the customer's subject and
/// body (empty when the ticket is not known), `signature` the desk's sign-off.
pub fn recheck(run: &[&Event], ticket_text: &str, signature: &str) -> Option<Rechecked> {
    let (text, recorded) = run.iter().rev().find_map(|event| match event {
        Event::Draft { text, findings, .. } => Some((text, findings)),
        _ => None,
    })?;
    let tools = run
        .iter()
        .find_map(|event| match event {
            Event::TicketStarted { tools, .. } => Some(tools.clone()),
            _ => None,
        })
        .unwrap_or_default();
    // The draft is recorded with its quote IDs cut; the check reads the model's own words, as
    // it did when the run was made (a sentence a cut ID left empty shows only beside the ID).
    let said = run
        .iter()
        .rev()
        .find_map(|event| match event {
            Event::ModelCall {
                reply: Reply::Words { content },
                ..
            } => Some(content),
            _ => None,
        })
        .filter(|words| strip_handles(words) == *text)
        .unwrap_or(text);
    let checked = check_reply(said, &call_log(run), ticket_text, &tools, signature);
    Some(Rechecked {
        text: text.clone(),
        recorded: recorded.clone(),
        now: checked.findings,
    })
}

/// The calls a run's events hold, each with its outcome (or a lead's answer to it), in the
/// order they ran: what the draft's check read when the run was made.
pub fn call_log(run: &[&Event]) -> Vec<CallFact> {
    let mut facts = Vec::new();
    let mut pending: Option<(u32, &serde_json::Map<String, serde_json::Value>)> = None;
    for event in run {
        match event {
            Event::ToolCall {
                turn, arguments, ..
            } => pending = Some((*turn, arguments)),
            Event::Outcome {
                turn,
                tool,
                outcome,
                text,
                ..
            }
            | Event::ApprovalAnswered {
                turn,
                tool,
                outcome,
                text,
                ..
            } => {
                let arguments = match pending.take() {
                    Some((called, arguments)) if called == *turn => arguments.clone(),
                    _ => serde_json::Map::new(),
                };
                facts.push(CallFact {
                    tool: tool.clone(),
                    turn: *turn,
                    outcome: *outcome,
                    arguments,
                    result: text.clone(),
                });
            }
            _ => {}
        }
    }
    facts
}
