//! An approval's entries on its ticket.

use super::*;

/// An approval's life on its ticket: asked, answered (with the call's outcome), withdrawn,
/// and the run going on from it.
pub(super) fn approval_kinds(event: &Event) -> Vec<EntryKind> {
    match event {
        Event::ApprovalAsked {
            turn,
            approval,
            server,
            tool,
            message,
            ..
        } => vec![EntryKind::AskedLead {
            turn: *turn,
            approval: *approval,
            server: server.clone(),
            tool: tool.clone(),
            message: message.clone(),
        }],
        Event::ApprovalAnswered {
            turn,
            approval,
            by,
            tool,
            action,
            content,
            outcome,
            text,
            truncated,
            ..
        } => vec![
            EntryKind::LeadAnswered {
                turn: *turn,
                approval: *approval,
                by: by.clone(),
                action: match content {
                    Some(content) => format!("{action} {content}"),
                    None => action.clone(),
                },
            },
            EntryKind::Outcome {
                turn: *turn,
                tool: tool.clone(),
                outcome: *outcome,
                text: pretty(text),
                truncated: *truncated,
            },
        ],
        Event::ApprovalWithdrawn {
            approval,
            by,
            reason,
            ..
        } => vec![EntryKind::Withdrawn {
            approval: *approval,
            by: by.clone(),
            reason: reason.clone(),
        }],
        Event::ApprovalFellBack {
            approval,
            after,
            to,
            ..
        } => vec![EntryKind::FellBack {
            approval: *approval,
            after: after.clone(),
            to: to.clone(),
        }],
        Event::RunContinued { approval, .. } => vec![EntryKind::RunContinued {
            approval: *approval,
        }],
        _ => vec![],
    }
}
