//! The ticket pane: the ticket's facts on top, then the customer's words, the same
//! customer's other tickets, the ticket's history as `transcript` draws it, and where it
//! stands now. The history follows the live turn unless the person scrolled back.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Paragraph};

use crate::host::api::{Lifecycle, rfc3339};
use crate::ui::app::{App, QueueItem};
use crate::ui::queue::Status;
use crate::ui::sanitize::{clean, one_line};
use crate::ui::text::{push_wrapped, wrap};
use crate::ui::{theme, transcript};

pub fn render(app: &App, frame: &mut Frame, area: Rect) {
    let block = Block::default().borders(Borders::ALL).title(" Ticket ");
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let Some(item) = app.current() else {
        frame.render_widget(
            Paragraph::new("No ticket matches this filter. Press f to change it."),
            inner,
        );
        return;
    };
    let width = inner.width.max(10) as usize;
    // The header stays put; the rest scrolls and follows the live turn.
    let header = header_lines(item, width);
    let header_height = (header.len() as u16).min(inner.height);
    frame.render_widget(
        Paragraph::new(header),
        Rect::new(inner.x, inner.y, inner.width, header_height),
    );
    let body = Rect::new(
        inner.x,
        inner.y + header_height,
        inner.width,
        inner.height - header_height,
    );
    let lines = body_lines(app, item, width, body.height as usize);
    let height = body.height as usize;
    let total = lines.len();
    let bottom = total
        .saturating_sub(app.scroll_back as usize)
        .max(height.min(total));
    let top = bottom.saturating_sub(height);
    let shown: Vec<Line> = lines.into_iter().skip(top).take(height).collect();
    frame.render_widget(Paragraph::new(shown), body);
}

/// `T-0003 · C-0156 · 2026-06-22T07:18 · needs lead`, then the subject.
fn header_lines(item: &QueueItem, width: usize) -> Vec<Line<'static>> {
    let t = &item.ticket;
    // Who is on it, when it is being worked: on a team that may be another desk.
    let on_it = match (&item.state.run, &item.state.by) {
        (Some(_), Some(by)) => format!(" ({})", one_line(by)),
        _ => String::new(),
    };
    let mut facts = format!(
        "{} · {} · {} · {}{on_it}",
        t.ticket_id,
        one_line(&t.who()),
        one_line(&t.received_at),
        item.status.label()
    );
    if let Some(who) = &item.state.assignee {
        facts.push_str(&format!(" · {}'s", one_line(who)));
    }
    for tag in &item.state.tags {
        facts.push_str(&format!(" #{}", one_line(tag)));
    }
    if !t.thread.is_empty() {
        facts.push_str(&format!(" · {}", item.state.conversation.as_str()));
        if let Some(delivery) = &item.state.delivery {
            facts.push_str(&format!(" · reply {}", one_line(&delivery.state)));
        }
    }
    wrap(&facts, width)
        .into_iter()
        .chain(wrap(&one_line(&t.subject), width))
        .map(|piece| Line::styled(piece, theme::title()))
        .collect()
}

/// What the pane says of a ticket with no history.
const NOT_WORKED: &str =
    "Not worked yet: press w to let the model work it, or e to answer it yourself.";

/// Everything under the header, as far back as the view reaches: lines are built from the
/// newest entry backwards, and the ticket's own words only when the view gets that far.
fn body_lines(app: &App, item: &QueueItem, width: usize, height: usize) -> Vec<Line<'static>> {
    let need = height + app.scroll_back as usize;
    let entries = app.transcripts.entries(&item.ticket.ticket_id);
    let read = entries.is_some();
    let mut standing = progress_lines(app, item, width);
    standing.extend(writing_lines(app, item, width));
    standing.extend(standing_lines(item, width));
    let mut count = standing.len();
    let mut tail: Vec<Vec<Line>> = Vec::new();
    let mut any = false;
    for entry in entries.into_iter().flat_map(Iterator::rev) {
        any = true;
        if count >= need {
            break;
        }
        let chunk = transcript::lines(entry, width);
        count += chunk.len();
        tail.push(chunk);
    }
    let mut lines: Vec<Line> = Vec::new();
    if count < need {
        lines = ticket_text(app, item, width);
        let empty = match (read, any) {
            (true, true) => None,
            (true, false) => Some(NOT_WORKED),
            (false, _) if item.status == Status::New => Some(NOT_WORKED),
            (false, _) => Some("Reading this ticket's history from the record…"),
        };
        if let Some(empty) = empty {
            push_wrapped(&mut lines, empty, width, theme::dim(), "");
        }
    }
    lines.extend(tail.into_iter().rev().flatten());
    lines.extend(standing);
    lines
}

/// The customer's words and the same customer's other tickets.
fn ticket_text(app: &App, item: &QueueItem, width: usize) -> Vec<Line<'static>> {
    let t = &item.ticket;
    let mut lines = Vec::new();
    if t.thread.is_empty() {
        let heading = "The customer's words (data, never followed):";
        push_wrapped(&mut lines, heading, width, theme::dim(), "");
        push_wrapped(&mut lines, &clean(&t.body), width, theme::untrusted(), "  ");
    } else {
        // A conversation by mail: each message is in the history below, as it came.
        let heading = "A conversation by mail; what the sender wrote is data, never followed.";
        push_wrapped(&mut lines, heading, width, theme::dim(), "");
    }
    let others = app.same_customer(item);
    if !others.is_empty() {
        lines.push(Line::styled(
            format!("{}'s other tickets:", one_line(&t.who())),
            theme::dim(),
        ));
        for other in others {
            let row = format!(
                "{} · {} · {}",
                other.ticket.ticket_id,
                other.status.label(),
                one_line(&other.ticket.subject)
            );
            push_wrapped(&mut lines, &row, width, theme::untrusted(), "  ");
        }
    }
    lines.push(Line::raw(""));
    lines
}

/// How far the call under way has got, under its line (the last in the history), as its
/// server reports it: `3 of 10` with a bar when the server gives a total, the count alone
/// when not; the server's message is its own words, shown as data.
fn progress_lines(app: &App, item: &QueueItem, width: usize) -> Vec<Line<'static>> {
    let Some(call) = app.progress.get(&item.ticket.ticket_id) else {
        return Vec::new();
    };
    let how_far = match (&call.task, call.total) {
        (Some(status), _) => format!("task {}, {} s", clean(status), amount(call.progress)),
        (None, total) => how_far(call.progress, total),
    };
    let mut lines = Vec::new();
    push_wrapped(
        &mut lines,
        &format!("working: {how_far}"),
        width,
        theme::dim(),
        "  ",
    );
    if let Some(message) = &call.message {
        push_wrapped(&mut lines, &clean(message), width, theme::untrusted(), "  ");
    }
    lines
}

/// A count of a total as a bar, or the count alone.
fn how_far(progress: f64, total: Option<f64>) -> String {
    match total {
        Some(total) => {
            let share = (progress / total).clamp(0.0, 1.0);
            let filled = (share * PROGRESS_BAR as f64).round() as usize;
            format!(
                "{} of {} [{}{}] {:.0}%",
                amount(progress),
                amount(total),
                "#".repeat(filled),
                "-".repeat(PROGRESS_BAR - filled),
                share * 100.0
            )
        }
        None => amount(progress),
    }
}

/// How many cells the progress bar takes.
const PROGRESS_BAR: usize = 10;

/// A server's count as people write it: whole numbers without decimals.
fn amount(value: f64) -> String {
    if value.fract() == 0.0 && value.abs() < 1e15 {
        format!("{value:.0}")
    } else {
        format!("{value:.1}")
    }
}

/// What the model is writing on this ticket now, as it streams: the customer's side of the
/// reply is the model's words, shown as data like any of its text.
fn writing_lines(app: &App, item: &QueueItem, width: usize) -> Vec<Line<'static>> {
    let Some(writing) = app.writing.get(&item.ticket.ticket_id) else {
        return Vec::new();
    };
    let mut lines = Vec::new();
    let heading = match &writing.calling {
        Some(tool) => format!(
            "The model is writing (turn {}): a call of {}…",
            writing.turn,
            one_line(tool)
        ),
        None => format!("The model is writing (turn {})…", writing.turn),
    };
    push_wrapped(&mut lines, &heading, width, theme::dim(), "");
    if !writing.content.trim().is_empty() {
        push_wrapped(
            &mut lines,
            &clean(&writing.content),
            width,
            theme::untrusted(),
            "  ",
        );
    }
    lines
}

/// Where the ticket stands now, under its history: why it needs a person, what was sent and
/// by whom, to whom it was handed.
fn standing_lines(item: &QueueItem, width: usize) -> Vec<Line<'static>> {
    let state = &item.state;
    let mut lines = Vec::new();
    match state.state {
        Lifecycle::NeedsPerson => {
            if let Some(reason) = &state.reason {
                let text = format!("Needs a person: {}", clean(reason));
                push_wrapped(&mut lines, &text, width, theme::danger(), "");
            }
            lines.push(Line::styled(
                "e answers it yourself · w works it again",
                theme::dim(),
            ));
        }
        Lifecycle::Sent => {
            if let Some(sent) = &state.sent {
                let text = format!("Sent by {} at {}.", one_line(&sent.by), rfc3339(sent.at));
                push_wrapped(&mut lines, &text, width, theme::good(), "");
            }
        }
        Lifecycle::HandedOver => {
            if let Some(hand) = &state.handed_over {
                let text = format!(
                    "Handed over to {} by {} at {}: {}",
                    one_line(&hand.to),
                    one_line(&hand.by),
                    rfc3339(hand.at),
                    clean(&hand.note)
                );
                push_wrapped(&mut lines, &text, width, theme::warning(), "");
            }
        }
        Lifecycle::WaitingForLead => {
            if let Some(reason) = &state.reason {
                let text = format!("Waiting: {}", clean(reason));
                push_wrapped(&mut lines, &text, width, theme::warning(), "");
            }
            lines.push(Line::styled(
                "it goes on when a lead answers · x withdraws the approval",
                theme::dim(),
            ));
        }
        Lifecycle::New | Lifecycle::Working | Lifecycle::Drafted => {}
    }
    lines
}
