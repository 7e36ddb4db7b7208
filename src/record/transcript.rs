//! A ticket's history as people read it: each recorded event turned into transcript entries
//! of plain text. The live ticket pane and review mode both draw these, so the desk shows a
//! ticket the same way while it is worked and afterwards.
//!
//! This is the only place that reads an event for display; JSON arguments and results are
//! turned into text here (results pretty-printed), so the UI never needs JSON.

use serde_json::{Map, Value};

use crate::model::chat::Reply;
use crate::record::{Event, Finding, Outcome};

mod approvals;
use approvals::approval_kinds;

/// One entry of a ticket's transcript.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// Who acted and when (unix milliseconds), when the record says so (a recording does not).
    pub by: Option<String>,
    pub at: Option<i64>,
    pub kind: EntryKind,
}

#[derive(Debug, Clone, PartialEq)]
pub enum EntryKind {
    /// A run began: how many tools the model was offered, what was attached, and the request
    /// a person added by running a server prompt.
    RunStarted {
        tools: usize,
        attached: Vec<String>,
        request: Option<String>,
    },
    /// The model answered call `turn`.
    ModelCall {
        turn: u32,
        seconds: f64,
        tool_list_chars: usize,
        context_chars: usize,
    },
    /// The model's words (the draft follows as its own entry).
    Said {
        turn: u32,
        words: String,
    },
    /// An answer that could not be used; the host told the model why.
    Unreadable {
        turn: u32,
        raw: String,
        problem: String,
    },
    /// A tool call, with its arguments as `name = JSON value` pairs.
    Call {
        turn: u32,
        tool: String,
        arguments: Vec<(String, String)>,
    },
    Consent {
        turn: u32,
        tool: String,
        approved: bool,
        by: String,
        unseen: Vec<String>,
    },
    /// A server's input request during a call, and how it was answered.
    Input {
        turn: u32,
        server: String,
        message: String,
        action: String,
    },
    Outcome {
        turn: u32,
        tool: String,
        outcome: Outcome,
        /// As the tool sent it, JSON pretty-printed.
        text: String,
        truncated: bool,
    },
    /// The model's last words, checked: the reply as staff would send it.
    Draft {
        text: String,
        findings: Vec<String>,
    },
    RunEnded {
        model_calls: u32,
        stopped_at_turn_limit: bool,
        error: Option<String>,
    },
    Edited {
        by: String,
        text: String,
        findings: Vec<String>,
    },
    Sent {
        by: String,
        text: String,
        override_reason: Option<String>,
    },
    HandedOver {
        by: String,
        to: String,
        note: String,
    },
    Attached {
        server: String,
        uri: String,
        bytes: usize,
    },
    Noted {
        by: String,
        text: String,
    },
    /// Given to someone to answer, or back to nobody.
    Assigned {
        by: String,
        to: Option<String>,
    },
    Tagged {
        by: String,
        tag: String,
        removed: bool,
    },
    NeedsPerson {
        reason: String,
    },
    /// The server runs the call on `turn` as its task.
    TaskStarted {
        turn: u32,
        server: String,
        tool: String,
        task: String,
    },
    /// A task ended at its server: `status`, and what it came to.
    TaskEnded {
        server: String,
        task: String,
        status: String,
        outcome: Outcome,
        text: String,
        truncated: bool,
    },
    /// A lead's form went to the team's leads as `approval`; the run stopped to wait.
    AskedLead {
        turn: u32,
        approval: i64,
        server: String,
        tool: String,
        message: String,
    },
    /// A lead answered `approval` (the call's outcome follows as its own entry).
    LeadAnswered {
        turn: u32,
        approval: i64,
        by: String,
        action: String,
    },
    Withdrawn {
        approval: i64,
        by: String,
        reason: String,
    },
    /// No lead answered in time: passed on to a lead, or declined back to its asker.
    FellBack {
        approval: i64,
        after: String,
        to: Option<String>,
    },
    /// The run went on from a lead's answer.
    RunContinued {
        approval: i64,
    },
    /// A message came in by mail: who wrote it, its new text (the quoted history is not
    /// repeated), what was attached, and why the desk will not give it to a model if so.
    Received {
        from: String,
        subject: String,
        text: String,
        attachments: Vec<String>,
        automatic: Option<String>,
        mark: Option<String>,
        problems: Vec<String>,
    },
    /// The mail server's answer to a reply.
    Delivery {
        message_id: String,
        delivered: bool,
        words: String,
        attempt: u32,
    },
    Solved {
        by: String,
        note: Option<String>,
    },
}

impl EntryKind {
    /// The model call this entry belongs to, for entries inside a run's turns.
    pub fn turn(&self) -> Option<u32> {
        match self {
            EntryKind::ModelCall { turn, .. }
            | EntryKind::Said { turn, .. }
            | EntryKind::Unreadable { turn, .. }
            | EntryKind::Call { turn, .. }
            | EntryKind::Consent { turn, .. }
            | EntryKind::Input { turn, .. }
            | EntryKind::Outcome { turn, .. }
            | EntryKind::AskedLead { turn, .. }
            | EntryKind::LeadAnswered { turn, .. }
            | EntryKind::TaskStarted { turn, .. } => Some(*turn),
            EntryKind::RunStarted { .. }
            | EntryKind::Draft { .. }
            | EntryKind::RunEnded { .. }
            | EntryKind::Edited { .. }
            | EntryKind::Sent { .. }
            | EntryKind::HandedOver { .. }
            | EntryKind::Attached { .. }
            | EntryKind::Noted { .. }
            | EntryKind::Assigned { .. }
            | EntryKind::Tagged { .. }
            | EntryKind::NeedsPerson { .. }
            | EntryKind::Withdrawn { .. }
            | EntryKind::FellBack { .. }
            | EntryKind::RunContinued { .. }
            | EntryKind::Received { .. }
            | EntryKind::Delivery { .. }
            | EntryKind::Solved { .. }
            | EntryKind::TaskEnded { .. } => None,
        }
    }
}

/// The entries one event makes (a model call that answered in words makes two; the manifest
/// none), stamped with who and when when the record knows.
pub fn entries_of(event: &Event, by: Option<&str>, at: Option<i64>) -> Vec<Entry> {
    kinds_of(event)
        .into_iter()
        .map(|kind| Entry {
            by: by.map(str::to_owned),
            at,
            kind,
        })
        .collect()
}

/// Every entry of a sequence of one ticket's events, in order.
pub fn entries<'a>(events: impl IntoIterator<Item = &'a Event>) -> Vec<Entry> {
    events
        .into_iter()
        .flat_map(|event| entries_of(event, None, None))
        .collect()
}

fn kinds_of(event: &Event) -> Vec<EntryKind> {
    match event {
        Event::Manifest(_) => vec![],
        Event::TicketStarted {
            tools,
            attached,
            request,
            ..
        } => vec![EntryKind::RunStarted {
            tools: tools.len(),
            attached: attached.clone(),
            request: request.clone(),
        }],
        Event::ModelCall {
            turn,
            reply,
            seconds,
            tool_list_chars,
            context_chars,
            ..
        } => model_call_kinds(*turn, reply, *seconds, (*tool_list_chars, *context_chars)),
        Event::ToolCall { .. }
        | Event::Consent { .. }
        | Event::InputRequest { .. }
        | Event::Outcome { .. } => call_kinds(event),
        Event::Draft { text, findings, .. } => vec![EntryKind::Draft {
            text: text.clone(),
            findings: reasons(findings),
        }],
        Event::TaskStarted {
            turn,
            server,
            tool,
            task,
            ..
        } => vec![EntryKind::TaskStarted {
            turn: *turn,
            server: server.clone(),
            tool: tool.clone(),
            task: task.clone(),
        }],
        Event::TaskEnded {
            server,
            task,
            status,
            outcome,
            text,
            truncated,
            ..
        } => vec![EntryKind::TaskEnded {
            server: server.clone(),
            task: task.clone(),
            status: status.clone(),
            outcome: *outcome,
            text: text.clone(),
            truncated: *truncated,
        }],
        Event::TicketDone {
            model_calls,
            stopped_at_turn_limit,
            error,
            ..
        } => vec![EntryKind::RunEnded {
            model_calls: *model_calls,
            stopped_at_turn_limit: *stopped_at_turn_limit,
            error: error.clone(),
        }],
        Event::DraftEdited { .. }
        | Event::Sent { .. }
        | Event::HandedOver { .. }
        | Event::Attached { .. }
        | Event::Noted { .. }
        | Event::Assigned { .. }
        | Event::Tagged { .. }
        | Event::NeedsPerson { .. } => people_kinds(event),
        Event::ApprovalAsked { .. }
        | Event::ApprovalAnswered { .. }
        | Event::ApprovalWithdrawn { .. }
        | Event::ApprovalFellBack { .. }
        | Event::RunContinued { .. } => approval_kinds(event),
        Event::MessageReceived { .. }
        | Event::Delivery { .. }
        | Event::Solved { .. }
        | Event::MailboxRead { .. } => mail_kinds(event),
    }
}

/// The conversation's steps: a message in, the mail server's answer, a person's solve.
fn mail_kinds(event: &Event) -> Vec<EntryKind> {
    match event {
        Event::MessageReceived { message, mark, .. } => vec![EntryKind::Received {
            from: message.from.display(),
            subject: message.subject.clone(),
            text: message.text.clone(),
            attachments: message
                .attachments
                .iter()
                .map(|a| format!("{} ({}, {} bytes)", a.name, a.mime_type, a.size))
                .collect(),
            automatic: message.automatic.map(|a| a.as_str().to_owned()),
            mark: mark.clone(),
            problems: message.problems.clone(),
        }],
        Event::Delivery {
            message_id,
            delivered,
            words,
            attempt,
            ..
        } => vec![EntryKind::Delivery {
            message_id: message_id.clone(),
            delivered: *delivered,
            words: words.clone(),
            attempt: *attempt,
        }],
        Event::Solved { by, note, .. } => vec![EntryKind::Solved {
            by: by.clone(),
            note: note.clone(),
        }],
        _ => vec![],
    }
}

/// A tool call and what came of it: the call, a person's consent, a server's questions, the
/// outcome.
fn call_kinds(event: &Event) -> Vec<EntryKind> {
    match event {
        Event::ToolCall {
            turn,
            tool,
            arguments,
            ..
        } => vec![EntryKind::Call {
            turn: *turn,
            tool: tool.clone(),
            arguments: display_arguments(arguments),
        }],
        Event::Consent {
            turn,
            tool,
            unseen,
            approved,
            by,
            rule,
            ..
        } => vec![EntryKind::Consent {
            turn: *turn,
            tool: tool.clone(),
            approved: *approved,
            by: match rule {
                Some(rule) => format!("{by} ({rule})"),
                None => by.clone(),
            },
            unseen: unseen.clone(),
        }],
        Event::InputRequest {
            turn,
            server,
            message,
            action,
            content,
            ..
        } => vec![EntryKind::Input {
            turn: *turn,
            server: server.clone(),
            message: message.clone(),
            action: match content {
                Some(content) => format!("{action} {content}"),
                None => action.clone(),
            },
        }],
        Event::Outcome {
            turn,
            tool,
            outcome,
            text,
            truncated,
            ..
        } => vec![EntryKind::Outcome {
            turn: *turn,
            tool: tool.clone(),
            outcome: *outcome,
            text: pretty(text),
            truncated: *truncated,
        }],
        Event::Manifest(_)
        | Event::TicketStarted { .. }
        | Event::ModelCall { .. }
        | Event::Draft { .. }
        | Event::TicketDone { .. }
        | Event::DraftEdited { .. }
        | Event::Sent { .. }
        | Event::HandedOver { .. }
        | Event::Attached { .. }
        | Event::Noted { .. }
        | Event::Assigned { .. }
        | Event::Tagged { .. }
        | Event::NeedsPerson { .. }
        | Event::ApprovalAsked { .. }
        | Event::ApprovalAnswered { .. }
        | Event::ApprovalWithdrawn { .. }
        | Event::ApprovalFellBack { .. }
        | Event::RunContinued { .. }
        | Event::MessageReceived { .. }
        | Event::Delivery { .. }
        | Event::MailboxRead { .. }
        | Event::Solved { .. }
        | Event::TaskStarted { .. }
        | Event::TaskEnded { .. } => vec![],
    }
}

/// What a person (or the desk for them) did to a ticket, as entries.
fn people_kinds(event: &Event) -> Vec<EntryKind> {
    match event {
        Event::DraftEdited {
            by, text, findings, ..
        } => vec![EntryKind::Edited {
            by: by.clone(),
            text: text.clone(),
            findings: reasons(findings),
        }],
        Event::Sent {
            by,
            text,
            override_reason,
            ..
        } => vec![EntryKind::Sent {
            by: by.clone(),
            text: text.clone(),
            override_reason: override_reason.clone(),
        }],
        Event::HandedOver { by, to, note, .. } => vec![EntryKind::HandedOver {
            by: by.clone(),
            to: to.clone(),
            note: note.clone(),
        }],
        Event::Attached {
            server, uri, bytes, ..
        } => vec![EntryKind::Attached {
            server: server.clone(),
            uri: uri.clone(),
            bytes: *bytes,
        }],
        Event::Noted { by, text, .. } => vec![EntryKind::Noted {
            by: by.clone(),
            text: text.clone(),
        }],
        Event::Assigned { by, to, .. } => vec![EntryKind::Assigned {
            by: by.clone(),
            to: to.clone(),
        }],
        Event::Tagged {
            by, tag, removed, ..
        } => vec![EntryKind::Tagged {
            by: by.clone(),
            tag: tag.clone(),
            removed: *removed,
        }],
        Event::NeedsPerson { reason, .. } => vec![EntryKind::NeedsPerson {
            reason: reason.clone(),
        }],
        Event::Manifest(_)
        | Event::TicketStarted { .. }
        | Event::ModelCall { .. }
        | Event::ToolCall { .. }
        | Event::Consent { .. }
        | Event::InputRequest { .. }
        | Event::Outcome { .. }
        | Event::Draft { .. }
        | Event::TicketDone { .. }
        | Event::ApprovalAsked { .. }
        | Event::ApprovalAnswered { .. }
        | Event::ApprovalWithdrawn { .. }
        | Event::ApprovalFellBack { .. }
        | Event::RunContinued { .. }
        | Event::MessageReceived { .. }
        | Event::Delivery { .. }
        | Event::MailboxRead { .. }
        | Event::Solved { .. }
        | Event::TaskStarted { .. }
        | Event::TaskEnded { .. } => vec![],
    }
}

/// A model call's header, and what it said besides a call or the draft.
fn model_call_kinds(
    turn: u32,
    reply: &Reply,
    seconds: f64,
    (tool_list_chars, context_chars): (usize, usize),
) -> Vec<EntryKind> {
    let mut kinds = vec![EntryKind::ModelCall {
        turn,
        seconds,
        tool_list_chars,
        context_chars,
    }];
    match reply {
        Reply::Words { content } if content.trim().is_empty() => {
            kinds.push(EntryKind::Unreadable {
                turn,
                raw: content.clone(),
                problem: "the answer was empty".to_owned(),
            })
        }
        // Words are the draft: its own entry follows, checked and with handles stripped, so
        // they are not shown twice.
        Reply::Words { .. } => {}
        Reply::Malformed { raw, problem } => kinds.push(EntryKind::Unreadable {
            turn,
            raw: raw.clone(),
            problem: problem.clone(),
        }),
        Reply::Call { content, .. } if !content.trim().is_empty() => kinds.push(EntryKind::Said {
            turn,
            words: content.clone(),
        }),
        Reply::Call { .. } => {}
    }
    kinds
}

fn reasons(findings: &[Finding]) -> Vec<String> {
    findings.iter().map(Finding::reason).collect()
}

/// Arguments as `name = value` pairs, values as JSON text, in the order the model sent them.
pub fn display_arguments(arguments: &Map<String, Value>) -> Vec<(String, String)> {
    arguments
        .iter()
        .map(|(k, v)| (k.clone(), v.to_string()))
        .collect()
}

/// JSON results pretty-printed for people; anything else as it came. The model gets the
/// text exactly as the tool sent it.
pub fn pretty(text: &str) -> String {
    match serde_json::from_str::<Value>(text) {
        Ok(value @ (Value::Object(_) | Value::Array(_))) => {
            serde_json::to_string_pretty(&value).unwrap_or_else(|_| text.to_owned())
        }
        _ => text.to_owned(),
    }
}
