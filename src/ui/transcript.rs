//! Drawing transcript entries: one renderer for a ticket's history, used by the live ticket
//! pane and by review mode, so a ticket reads the same while it is worked and afterwards.
//!
//! An entry draws itself at a width. Every string in an entry came from
//! the model, a server, a customer or a person, so all of it is cleaned before it is drawn.

use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

use super::sanitize::{clean, one_line};
use super::text::push_wrapped;
use super::theme;

mod mail;
mod tasks;
use crate::host::api::{Entry, EntryKind, Outcome, rfc3339};

/// Lines of a tool result shown before the rest is folded.
pub const RESULT_LINES: usize = 12;

/// The entry's lines at `width` columns.
pub fn lines(entry: &Entry, width: usize) -> Vec<Line<'static>> {
    let mut out = Vec::new();
    push_entry(&mut out, entry, width.max(10));
    out
}

/// The style of an outcome, live and in review alike.
pub fn outcome_style(outcome: Outcome) -> Style {
    match outcome {
        Outcome::Result => theme::good(),
        Outcome::ToolError | Outcome::Declined => theme::warning(),
        Outcome::UnknownTool | Outcome::Failed => theme::danger(),
    }
}

/// `by X at 2026-12-01T08:09:23Z`, as far as the record knows.
fn who_when(entry: &Entry) -> String {
    match (&entry.by, entry.at) {
        (Some(by), Some(at)) => format!(" · {} · {}", one_line(by), rfc3339(at)),
        (Some(by), None) => format!(" · {}", one_line(by)),
        (None, Some(at)) => format!(" · {}", rfc3339(at)),
        (None, None) => String::new(),
    }
}

fn push_entry(lines: &mut Vec<Line<'static>>, entry: &Entry, width: usize) {
    match &entry.kind {
        EntryKind::RunStarted {
            tools,
            attached,
            request,
        } => run_started(
            lines,
            entry,
            *tools,
            attached.len(),
            request.as_deref(),
            width,
        ),
        EntryKind::ModelCall {
            turn,
            seconds,
            tool_list_chars,
            context_chars,
        } => push_wrapped(
            lines,
            &format!(
                "── model call {turn} · {seconds:.1} s · tool list {tool_list_chars} chars · context {context_chars} chars"
            ),
            width,
            theme::dim(),
            "",
        ),
        EntryKind::Said { words, .. } => {
            lines.push(Line::styled("model said:", theme::title()));
            push_wrapped(lines, &clean(words), width, theme::untrusted(), "  ");
        }
        EntryKind::Unreadable { raw, problem, .. } => unreadable(lines, raw, problem, width),
        EntryKind::Call {
            tool, arguments, ..
        } => call(lines, tool, arguments, width),
        EntryKind::Consent {
            tool,
            approved,
            by,
            unseen,
            ..
        } => consent(lines, tool, *approved, by, unseen, width),
        EntryKind::Input {
            server,
            message,
            action,
            ..
        } => input(lines, server, message, action, width),
        EntryKind::Outcome {
            tool,
            outcome,
            text,
            truncated,
            ..
        } => tool_outcome(lines, tool, *outcome, text, *truncated, width),
        EntryKind::Draft { text, findings } => {
            reply(lines, "Draft reply:".to_owned(), text, findings, width)
        }
        EntryKind::RunEnded {
            model_calls,
            stopped_at_turn_limit,
            error,
        } => run_ended(
            lines,
            *model_calls,
            *stopped_at_turn_limit,
            error.as_deref(),
            width,
        ),
        EntryKind::Edited { .. }
        | EntryKind::Sent { .. }
        | EntryKind::HandedOver { .. }
        | EntryKind::Attached { .. }
        | EntryKind::Noted { .. }
        | EntryKind::Assigned { .. }
        | EntryKind::Tagged { .. }
        | EntryKind::NeedsPerson { .. } => push_person_entry(lines, entry, width),
        EntryKind::AskedLead { .. }
        | EntryKind::LeadAnswered { .. }
        | EntryKind::Withdrawn { .. }
        | EntryKind::FellBack { .. }
        | EntryKind::RunContinued { .. } => push_approval_entry(lines, entry, width),
        EntryKind::TaskStarted { .. } | EntryKind::TaskEnded { .. } => {
            tasks::push_task_entry(lines, entry, width)
        }
        EntryKind::Received { .. } | EntryKind::Delivery { .. } | EntryKind::Solved { .. } => {
            mail::push_mail_entry(lines, entry, width)
        }
    }
}

/// An approval on its ticket: the form that went to the leads, a lead's answer, a
/// withdrawal, the run going on.
fn push_approval_entry(lines: &mut Vec<Line<'static>>, entry: &Entry, width: usize) {
    match &entry.kind {
        EntryKind::AskedLead {
            approval,
            server,
            tool,
            message,
            ..
        } => {
            let heading = format!(
                "  ⏳ {} asks a lead (approval {approval}, {}){}:",
                one_line(server),
                one_line(tool),
                who_when(entry)
            );
            push_wrapped(lines, &heading, width, theme::warning(), "");
            push_wrapped(lines, &clean(message), width, theme::untrusted(), "      ");
            lines.push(Line::raw("    waiting for a lead"));
        }
        EntryKind::LeadAnswered {
            approval,
            by,
            action,
            ..
        } => {
            let text = format!(
                "  lead {} answered approval {approval}: {}",
                one_line(by),
                one_line(action)
            );
            push_wrapped(lines, &text, width, theme::title(), "");
        }
        EntryKind::Withdrawn {
            approval,
            by,
            reason,
        } => {
            let text = format!(
                "approval {approval} withdrawn by {}: {}",
                one_line(by),
                clean(reason)
            );
            push_wrapped(lines, &text, width, theme::warning(), "  ");
        }
        EntryKind::FellBack {
            approval,
            after,
            to,
        } => {
            let text = match to {
                Some(lead) => format!(
                    "approval {approval} passed on to lead {}: no lead answered within {}",
                    one_line(lead),
                    one_line(after)
                ),
                None => format!(
                    "approval {approval} declined by the desk's rule: no lead answered within {}; the ticket is its asker's again",
                    one_line(after)
                ),
            };
            push_wrapped(lines, &text, width, theme::warning(), "  ");
        }
        EntryKind::RunContinued { approval } => {
            lines.push(Line::raw(""));
            let heading = format!(
                "══ run continued from approval {approval}{}",
                who_when(entry)
            );
            push_wrapped(lines, &heading, width, theme::title(), "");
        }
        _ => {}
    }
}

/// What people (or the desk for them) did to the ticket.
fn push_person_entry(lines: &mut Vec<Line<'static>>, entry: &Entry, width: usize) {
    match &entry.kind {
        EntryKind::Edited { by, text, findings } => {
            let heading = format!("Reply edited by {}{}:", one_line(by), at_only(entry));
            reply(lines, heading, text, findings, width)
        }
        EntryKind::Sent {
            by,
            text,
            override_reason,
        } => sent(lines, entry, by, text, override_reason.as_deref(), width),
        EntryKind::HandedOver { by, to, note } => handed_over(lines, entry, by, to, note, width),
        EntryKind::Attached { server, uri, bytes } => push_wrapped(
            lines,
            &format!(
                "+ attached {} from {} ({bytes} bytes){}",
                one_line(uri),
                one_line(server),
                who_when(entry)
            ),
            width,
            theme::dim(),
            "  ",
        ),
        EntryKind::Noted { by, text } => {
            let heading = format!("✎ internal note by {}{}:", one_line(by), at_only(entry));
            push_wrapped(lines, &heading, width, theme::key(), "  ");
            push_wrapped(lines, &clean(text), width, Style::default(), "    ");
        }
        EntryKind::Assigned { by, to } => {
            let to = to.as_deref().map_or("nobody".to_owned(), one_line);
            push_wrapped(
                lines,
                &format!("@ assigned to {to} by {}{}", one_line(by), at_only(entry)),
                width,
                theme::dim(),
                "  ",
            );
        }
        EntryKind::Tagged { by, tag, removed } => {
            let verb = if *removed { "untagged" } else { "tagged" };
            push_wrapped(
                lines,
                &format!(
                    "# {verb} {} by {}{}",
                    one_line(tag),
                    one_line(by),
                    at_only(entry)
                ),
                width,
                theme::dim(),
                "  ",
            );
        }
        EntryKind::NeedsPerson { reason } => push_wrapped(
            lines,
            &format!("⚠ needs a person: {}", clean(reason)),
            width,
            theme::danger(),
            "  ",
        ),
        EntryKind::RunStarted { .. }
        | EntryKind::ModelCall { .. }
        | EntryKind::Said { .. }
        | EntryKind::Unreadable { .. }
        | EntryKind::Call { .. }
        | EntryKind::Consent { .. }
        | EntryKind::Input { .. }
        | EntryKind::Outcome { .. }
        | EntryKind::Draft { .. }
        | EntryKind::RunEnded { .. }
        | EntryKind::AskedLead { .. }
        | EntryKind::LeadAnswered { .. }
        | EntryKind::Withdrawn { .. }
        | EntryKind::FellBack { .. }
        | EntryKind::RunContinued { .. }
        | EntryKind::Received { .. }
        | EntryKind::Delivery { .. }
        | EntryKind::Solved { .. }
        | EntryKind::TaskStarted { .. }
        | EntryKind::TaskEnded { .. } => {}
    }
}

fn unreadable(lines: &mut Vec<Line<'static>>, raw: &str, problem: &str, width: usize) {
    let text = format!("model's answer could not be used: {}", one_line(problem));
    push_wrapped(lines, &text, width, theme::warning(), "");
    push_wrapped(lines, &clean(raw), width, theme::untrusted(), "  ");
}

fn input(lines: &mut Vec<Line<'static>>, server: &str, message: &str, action: &str, width: usize) {
    lines.push(Line::styled(
        format!("  ? {} asked:", one_line(server)),
        theme::warning(),
    ));
    push_wrapped(lines, &clean(message), width, theme::untrusted(), "      ");
    lines.push(Line::raw(format!("    answer: {}", one_line(action))));
}

/// A draft or an edited reply, with the checks' findings under it.
fn reply(
    lines: &mut Vec<Line<'static>>,
    heading: String,
    text: &str,
    findings: &[String],
    width: usize,
) {
    lines.push(Line::raw(""));
    lines.push(Line::styled(heading, theme::title()));
    push_wrapped(lines, &clean(text), width, Style::default(), "  ");
    push_findings(lines, findings, width);
}

fn run_started(
    lines: &mut Vec<Line<'static>>,
    entry: &Entry,
    tools: usize,
    attached: usize,
    request: Option<&str>,
    width: usize,
) {
    lines.push(Line::raw(""));
    let heading = format!(
        "══ run started{} · {tools} tools offered · {attached} attached",
        who_when(entry)
    );
    push_wrapped(lines, &heading, width, theme::title(), "");
    if let Some(request) = request {
        lines.push(Line::styled("a person asked:", theme::title()));
        push_wrapped(lines, &clean(request), width, theme::untrusted(), "  ");
    }
}

fn call(lines: &mut Vec<Line<'static>>, tool: &str, arguments: &[(String, String)], width: usize) {
    lines.push(Line::from(vec![
        Span::styled("→ call ", theme::title()),
        Span::raw(one_line(tool)),
    ]));
    for (name, value) in arguments {
        let text = format!("{} = {}", one_line(name), one_line(value));
        push_wrapped(lines, &text, width, Style::default(), "    ");
    }
}

fn consent(
    lines: &mut Vec<Line<'static>>,
    tool: &str,
    approved: bool,
    by: &str,
    unseen: &[String],
    width: usize,
) {
    let (mark, style) = if approved {
        ("✓ approved", theme::good())
    } else {
        ("✗ declined", theme::warning())
    };
    lines.push(Line::styled(
        format!("  {mark} by {} ({})", one_line(by), one_line(tool)),
        style,
    ));
    if !unseen.is_empty() {
        let unseen: Vec<String> = unseen.iter().map(|u| one_line(u)).collect();
        let text = format!("seen nowhere before: {}", unseen.join(", "));
        push_wrapped(lines, &text, width, theme::warning(), "    ");
    }
}

pub(super) fn tool_outcome(
    lines: &mut Vec<Line<'static>>,
    tool: &str,
    outcome: Outcome,
    text: &str,
    truncated: bool,
    width: usize,
) {
    lines.push(Line::from(vec![
        Span::styled(
            format!("← {} ", outcome.label()),
            outcome_style(outcome).add_modifier(Modifier::BOLD),
        ),
        Span::raw(one_line(tool)),
        Span::styled(
            if truncated { " (cut by the desk)" } else { "" },
            theme::dim(),
        ),
    ]));
    let cleaned = clean(text);
    let all: Vec<&str> = cleaned.lines().collect();
    for line in all.iter().take(RESULT_LINES) {
        push_wrapped(lines, line, width, theme::untrusted(), "    ");
    }
    if all.len() > RESULT_LINES {
        lines.push(Line::styled(
            format!("    … {} more lines folded", all.len() - RESULT_LINES),
            theme::dim(),
        ));
    }
}

/// How a run ended; an error (a run that diverged from its recording, say) is wrapped at
/// the pane's width and shown whole.
fn run_ended(
    lines: &mut Vec<Line<'static>>,
    model_calls: u32,
    stopped_at_turn_limit: bool,
    error: Option<&str>,
    width: usize,
) {
    let (text, style) = match (error, stopped_at_turn_limit) {
        (Some(error), _) => (
            format!("run ended without a draft: {}", clean(error)),
            theme::danger(),
        ),
        (None, true) => (
            format!("run stopped at the limit of {model_calls} model calls: a person must answer"),
            theme::warning(),
        ),
        (None, false) => (
            format!("run ended after {model_calls} model calls"),
            theme::dim(),
        ),
    };
    push_wrapped(lines, &text, width, style, "  ");
}

fn sent(
    lines: &mut Vec<Line<'static>>,
    entry: &Entry,
    by: &str,
    text: &str,
    override_reason: Option<&str>,
    width: usize,
) {
    lines.push(Line::raw(""));
    lines.push(Line::styled(
        format!("✉ Sent by {}{}:", one_line(by), at_only(entry)),
        theme::good().add_modifier(Modifier::BOLD),
    ));
    push_wrapped(lines, &clean(text), width, Style::default(), "  ");
    if let Some(reason) = override_reason {
        let text = format!("sent despite the findings because: {}", clean(reason));
        push_wrapped(lines, &text, width, theme::warning(), "  ");
    }
}

fn handed_over(
    lines: &mut Vec<Line<'static>>,
    entry: &Entry,
    by: &str,
    to: &str,
    note: &str,
    width: usize,
) {
    lines.push(Line::raw(""));
    let heading = format!(
        "⇢ Handed over to {} by {}{}",
        one_line(to),
        one_line(by),
        at_only(entry)
    );
    push_wrapped(lines, &heading, width, theme::warning(), "");
    if !note.trim().is_empty() {
        let text = format!("note: {}", clean(note));
        push_wrapped(lines, &text, width, Style::default(), "  ");
    }
}

fn at_only(entry: &Entry) -> String {
    entry
        .at
        .map(|at| format!(" at {}", rfc3339(at)))
        .unwrap_or_default()
}

fn push_findings(lines: &mut Vec<Line<'static>>, findings: &[String], width: usize) {
    for finding in findings {
        push_wrapped(
            lines,
            &format!("⚠ {}", clean(finding)),
            width,
            theme::danger(),
            "  ",
        );
    }
}

/// The entry's lines with nothing folded: a long tool result in full (review mode's Enter).
pub fn unfolded_lines(entry: &Entry, width: usize) -> Vec<Line<'static>> {
    let mut out = lines(entry, width);
    if let EntryKind::Outcome { text, .. } = &entry.kind {
        let cleaned = clean(text);
        let all: Vec<&str> = cleaned.lines().collect();
        if all.len() > RESULT_LINES {
            // The last line is the fold note; the rest of the result goes in its place.
            out.pop();
            for line in &all[RESULT_LINES..] {
                push_wrapped(&mut out, line, width.max(10), theme::untrusted(), "    ");
            }
        }
    }
    out
}
