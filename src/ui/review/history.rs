//! What the review screen's panes say: a ticket's row in the list, the ticket's text, a
//! step's title, and the run up to a step as `ui::transcript` draws it. Nothing here draws
//! or changes the screen's state.

use ratatui::style::Style;
use ratatui::text::{Line, Span};

use super::plural;
use crate::host::api::{Entry, EntryKind};
use crate::recording::review::ReviewTicket;
use crate::ui::sanitize::{clean, one_line};
use crate::ui::text::push_wrapped;
use crate::ui::{theme, transcript};

/// One row of the ticket list: ID, the three marks (blank when absent), subject.
pub(super) fn ticket_row(ticket: &ReviewTicket) -> Line<'static> {
    let mark = |on: bool, symbol: &'static str, style: Style| {
        if on {
            Span::styled(symbol, style)
        } else {
            Span::raw(" ")
        }
    };
    Line::from(vec![
        Span::raw(one_line(&ticket.ticket)),
        Span::raw(" "),
        mark(ticket.has_error(), "✗", theme::danger()),
        mark(ticket.has_consent(), "?", theme::warning()),
        mark(ticket.touches_refunds(), "€", Style::default()),
        Span::raw(" "),
        // A run with a person's request (a server prompt) is marked before its subject.
        Span::styled(
            if ticket.request().is_some() {
                "» "
            } else {
                ""
            },
            theme::key(),
        ),
        Span::styled(one_line(&ticket.subject), theme::untrusted()),
    ])
}

/// The ticket as the customer wrote it (a person's request for the run is the run's first
/// entry).
pub(super) fn ticket_lines(ticket: &ReviewTicket, width: usize) -> Vec<Line<'static>> {
    let mut lines = vec![];
    if ticket.subject.is_empty() && ticket.body.is_empty() {
        lines.push(Line::styled("not one of the shop's tickets", theme::dim()));
        return lines;
    }
    let title = theme::title().patch(theme::untrusted());
    push_wrapped(&mut lines, &one_line(&ticket.subject), width, title, "");
    push_wrapped(
        &mut lines,
        &format!("customer {}", one_line(&ticket.customer)),
        width,
        theme::dim(),
        "",
    );
    push_wrapped(
        &mut lines,
        &clean(&ticket.body),
        width,
        theme::untrusted(),
        "",
    );
    lines
}

/// ` turn 2 of 4 · 3.5 s `, or ` the end · after 4 turns `.
pub(super) fn step_title(ticket: &ReviewTicket, step: usize) -> String {
    let steps = ticket.steps();
    let turns = steps.len().saturating_sub(1);
    match steps.get(step) {
        Some(current) if current.turn.is_some() => {
            let seconds = current.entries.iter().find_map(|e| match e.kind {
                EntryKind::ModelCall { seconds, .. } => Some(seconds),
                _ => None,
            });
            match seconds {
                Some(seconds) => format!(" turn {} of {turns} · {seconds:.1} s ", step + 1),
                None => format!(" turn {} of {turns} ", step + 1),
            }
        }
        _ => format!(" the end · after {} ", plural(turns, "turn", "turns")),
    }
}

/// A run up to and including `step`, drawn entry by entry as the live ticket pane draws
/// them (long results fold until Enter unfolds them), with a mark where the step begins;
/// and the index of the step's first line.
pub(super) fn history_lines(
    ticket: &ReviewTicket,
    step: usize,
    unfolded: bool,
    width: usize,
) -> (Vec<Line<'static>>, usize) {
    let steps = ticket.steps();
    let last = steps.len().saturating_sub(1);
    let step = step.min(last);
    let draw = |lines: &mut Vec<Line<'static>>, entries: &[&Entry]| {
        for entry in entries {
            if unfolded {
                lines.extend(transcript::unfolded_lines(entry, width));
            } else {
                lines.extend(transcript::lines(entry, width));
            }
        }
    };
    let mut lines: Vec<Line<'static>> = vec![];
    for earlier in &steps[..step] {
        draw(&mut lines, &earlier.entries);
    }
    // The blank line that parts entries would only push the pane's first line down.
    let blank = lines.iter().take_while(|l| l.width() == 0).count();
    lines.drain(..blank);
    let earlier = !lines.is_empty();
    if earlier {
        lines.push(Line::raw(""));
    }
    let start = lines.len();
    if earlier {
        lines.push(Line::styled(
            format!("▸{}", step_title(ticket, step).trim_end()),
            theme::key(),
        ));
    }
    let Some(current) = steps.get(step) else {
        return (lines, start);
    };
    draw(&mut lines, &current.entries);
    if earlier {
        // The step's own parting blank line would only sit under its mark.
        let after_mark = start + 1;
        let blank = lines[after_mark..]
            .iter()
            .take_while(|l| l.width() == 0)
            .count();
        lines.drain(after_mark..after_mark + blank);
    }
    let ended = current
        .entries
        .iter()
        .any(|e| matches!(e.kind, EntryKind::RunEnded { .. }));
    // A ticket a person answered by hand had no run to be cut off.
    let ran = current.entries.iter().any(|e| {
        matches!(
            e.kind,
            EntryKind::RunStarted { .. } | EntryKind::ModelCall { .. }
        )
    });
    if current.turn.is_none() && ran && !ended {
        lines.push(Line::styled(
            "The recording ends before this run finished.",
            theme::warning(),
        ));
    }
    if !earlier {
        let blank = lines.iter().take_while(|l| l.width() == 0).count();
        lines.drain(..blank);
    }
    (lines, start)
}
