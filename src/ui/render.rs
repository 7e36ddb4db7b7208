//! Drawing the desk. Everything here only reads the `App`.

use ratatui::Frame;
use ratatui::layout::{Constraint, Direction, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, List, ListItem, ListState, Paragraph, Wrap};

use super::app::{App, Modal, Picker, PickerKind, QueueItem, Status, queue_offset};
use super::sanitize::{clean, one_line};
use super::text::{centred, push_wrapped, wrap};
use super::theme;
use super::transcript;
use crate::host::api::{Lifecycle, rfc3339};

pub fn render(app: &App, frame: &mut Frame) {
    let area = frame.area();
    if let Some(review) = &app.review {
        review.render(frame, area);
        return;
    }
    let rows = Layout::default()
        .direction(Direction::Vertical)
        .constraints([
            Constraint::Length(1),
            Constraint::Min(5),
            Constraint::Length(1),
        ])
        .split(area);
    render_status(app, frame, rows[0]);
    let queue_width = if area.width >= 120 { 46 } else { 34 };
    let panes = Layout::default()
        .direction(Direction::Horizontal)
        .constraints([Constraint::Length(queue_width), Constraint::Min(20)])
        .split(rows[1]);
    render_queue(app, frame, panes[0]);
    render_ticket(app, frame, panes[1]);
    render_footer(app, frame, rows[2]);
    if let Some(modal) = &app.modal {
        match modal {
            Modal::Consent(view, _) => view.render(frame, area),
            Modal::Form(view, _) | Modal::PromptArgs(view, _) => view.render(frame, area),
            Modal::Draft(editor, _) => editor.render(frame, area),
            Modal::Note(input, _) => input.render(frame, area),
            Modal::Picker(picker) => render_picker(app, picker, frame, area),
            Modal::Help => render_help(frame, area),
        }
    }
}

/// The queue pane's rectangle for a frame of this size (for mouse clicks).
pub fn queue_area(area: Rect) -> Rect {
    let queue_width = if area.width >= 120 { 46 } else { 34 };
    Rect::new(
        area.x,
        area.y + 1,
        queue_width.min(area.width),
        area.height.saturating_sub(2),
    )
}

fn render_status(app: &App, frame: &mut Frame, area: Rect) {
    let mut spans = vec![
        Span::styled(" Support Desk ", theme::title()),
        Span::raw("│ "),
    ];
    for server in &app.servers {
        let text = match &server.error {
            Some(_) => format!("{} down ", one_line(&server.prefix)),
            None => format!(
                "{} {} {}t ",
                one_line(&server.prefix),
                server.revision.as_deref().unwrap_or("?"),
                server.tools.len()
            ),
        };
        let style = if server.error.is_some() {
            theme::danger()
        } else {
            Style::default()
        };
        spans.push(Span::styled(text, style));
    }
    if let Some(item) = app.current() {
        spans.push(Span::raw(format!(
            "│ {} model calls {} ",
            item.ticket.ticket_id, item.state.model_calls
        )));
    }
    spans.push(Span::raw("│ "));
    spans.push(Span::styled(one_line(&app.model), theme::dim()));
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}

fn status_style(status: Status) -> Style {
    match status {
        Status::New => theme::dim(),
        Status::Working => Style::default(),
        Status::NeedsConsent | Status::NeedsLead => theme::warning(),
        Status::Drafted => theme::good(),
        Status::NeedsPerson => theme::danger(),
        Status::HandedOver | Status::Sent => theme::dim(),
    }
}

fn render_queue(app: &App, frame: &mut Frame, area: Rect) {
    // Only the rows that fit are built: a queue of 10,000 costs what a screenful does.
    let count = app.visible_count();
    let rows = area.height.saturating_sub(2) as usize;
    let offset = queue_offset(app.selected, rows);
    let items: Vec<ListItem> = (offset..(offset + rows).min(count))
        .filter_map(|n| app.visible_at(n))
        .map(|i| {
            let item = &app.items[i];
            ListItem::new(Line::from(vec![
                Span::raw(format!("{} ", item.ticket.ticket_id)),
                Span::styled(
                    format!("{:<13}", item.status.label()),
                    status_style(item.status),
                ),
                Span::raw(format!(" {} ", item.ticket.customer_id)),
                Span::styled(one_line(&item.ticket.subject), theme::untrusted()),
            ]))
        })
        .collect();
    let progress = match app.queue_run {
        Some((done, total)) if done < total => format!(" · run {done}/{total}"),
        Some((_, total)) => format!(" · run done {total}"),
        None => String::new(),
    };
    let title = format!(
        " Queue ({}) {}/{}{} ",
        app.filter.label(),
        count,
        app.items.len(),
        progress
    );
    let list = List::new(items)
        .block(Block::default().borders(Borders::ALL).title(title))
        .highlight_style(theme::selected());
    let mut state =
        ListState::default().with_selected((count > 0).then_some(app.selected - offset));
    frame.render_stateful_widget(list, area, &mut state);
}

fn render_ticket(app: &App, frame: &mut Frame, area: Rect) {
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
    let t = &item.ticket;
    // The header stays put; the rest scrolls and follows the live turn.
    let mut header: Vec<Line> = Vec::new();
    let facts = format!(
        "{} · {} · {} · {}",
        t.ticket_id,
        t.customer_id,
        one_line(&t.received_at),
        item.status.label()
    );
    for piece in wrap(&facts, width) {
        header.push(Line::styled(piece, theme::title()));
    }
    for piece in wrap(&one_line(&t.subject), width) {
        header.push(Line::styled(piece, theme::title()));
    }
    let header_height = (header.len() as u16).min(inner.height);
    // Lines are built from the newest entry backwards, only as far as the view reaches.
    let need = (inner.height - header_height) as usize + app.scroll_back as usize;
    let entries = app
        .transcripts
        .get(&t.ticket_id)
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    let mut tail: Vec<Vec<Line>> = Vec::new();
    let mut count = 0;
    let standing = standing_lines(item, width);
    count += standing.len();
    for entry in entries.iter().rev() {
        if count >= need {
            break;
        }
        let chunk = transcript::lines(entry, width);
        count += chunk.len();
        tail.push(chunk);
    }
    let mut lines: Vec<Line> = Vec::new();
    if count < need {
        lines.push(Line::styled(
            "The customer's words (data, never followed):",
            theme::dim(),
        ));
        push_wrapped(&mut lines, &clean(&t.body), width, theme::untrusted(), "  ");
        let others = app.same_customer(item);
        if !others.is_empty() {
            lines.push(Line::styled(
                format!("{}'s other tickets:", one_line(&t.customer_id)),
                theme::dim(),
            ));
            for other in others {
                push_wrapped(
                    &mut lines,
                    &format!(
                        "{} · {} · {}",
                        other.ticket.ticket_id,
                        other.status.label(),
                        one_line(&other.ticket.subject)
                    ),
                    width,
                    theme::untrusted(),
                    "  ",
                );
            }
        }
        lines.push(Line::raw(""));
        if entries.is_empty() {
            lines.push(Line::styled(
                "Not worked yet: press w to let the model work it, or e to answer it yourself.",
                theme::dim(),
            ));
        }
    }
    lines.extend(tail.into_iter().rev().flatten());
    lines.extend(standing);

    let body = Rect::new(
        inner.x,
        inner.y + header_height,
        inner.width,
        inner.height - header_height,
    );
    frame.render_widget(
        Paragraph::new(header),
        Rect::new(inner.x, inner.y, inner.width, header_height),
    );
    let height = body.height as usize;
    let total = lines.len();
    let bottom = total
        .saturating_sub(app.scroll_back as usize)
        .max(height.min(total));
    let top = bottom.saturating_sub(height);
    let shown: Vec<Line> = lines.into_iter().skip(top).take(height).collect();
    frame.render_widget(Paragraph::new(shown), body);
}

/// Where the ticket stands now, under its history: why it needs a person, what was sent and
/// by whom, to whom it was handed.
fn standing_lines(item: &QueueItem, width: usize) -> Vec<Line<'static>> {
    let state = &item.state;
    let mut lines = Vec::new();
    match state.state {
        Lifecycle::NeedsPerson => {
            if let Some(reason) = &state.reason {
                push_wrapped(
                    &mut lines,
                    &format!("Needs a person: {}", clean(reason)),
                    width,
                    theme::danger(),
                    "",
                );
            }
            lines.push(Line::styled(
                "e answers it yourself · w works it again",
                theme::dim(),
            ));
        }
        Lifecycle::Sent => {
            if let Some(sent) = &state.sent {
                push_wrapped(
                    &mut lines,
                    &format!("Sent by {} at {}.", one_line(&sent.by), rfc3339(sent.at)),
                    width,
                    theme::good(),
                    "",
                );
            }
        }
        Lifecycle::HandedOver => {
            if let Some(hand) = &state.handed_over {
                push_wrapped(
                    &mut lines,
                    &format!(
                        "Handed over to {} by {} at {}: {}",
                        one_line(&hand.to),
                        one_line(&hand.by),
                        rfc3339(hand.at),
                        clean(&hand.note)
                    ),
                    width,
                    theme::warning(),
                    "",
                );
            }
        }
        Lifecycle::New | Lifecycle::Working | Lifecycle::Drafted => {}
    }
    lines
}

fn render_footer(app: &App, frame: &mut Frame, area: Rect) {
    let waiting = app.waiting.len();
    let mut spans = Vec::new();
    if waiting > 0 {
        spans.push(Span::styled(
            format!(" {waiting} question(s) waiting (a) "),
            theme::warning(),
        ));
    }
    match &app.message {
        Some(message) => spans.push(Span::raw(format!(" {}", one_line(message)))),
        None => spans.push(Span::styled(
            " ↑↓ ticket · w work · W work new · Enter open · e reply · n note · f filter · v review · ? help · q quit",
            theme::dim(),
        )),
    }
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}

pub const KEYS: [(&str, &str); 20] = [
    ("↑/↓ or j/k", "pick a ticket"),
    ("w", "work the selected ticket (again)"),
    ("W", "work every new ticket"),
    ("Enter", "open the ticket's question or reply, or work it"),
    ("a", "answer the next waiting question"),
    ("e", "write, edit, send or hand over the reply"),
    (
        "n",
        "add an internal note (never sent, never shown to the model)",
    ),
    ("f", "filter: all / needs me / needs a person"),
    ("p", "run a server's prompt for this ticket"),
    ("r", "attach a server's resource to this ticket"),
    ("PgUp/PgDn", "scroll the ticket; End follows the live turn"),
    ("mouse", "click a ticket; wheel scrolls"),
    (
        "Ctrl-B",
        "in a question: leave it for later (it stays queued)",
    ),
    ("y / n", "in a consent question: approve / decline"),
    ("Esc", "in a consent question: decline and close"),
    ("Ctrl-D / Esc", "in a server's form: decline / cancel"),
    (
        "Ctrl-K",
        "in the draft: check your edit against the call log",
    ),
    ("v", "review this desk's record or a recording (q returns)"),
    ("?", "this help"),
    ("q or Ctrl-C", "quit (servers are stopped)"),
];

fn render_help(frame: &mut Frame, area: Rect) {
    let rect = centred(area, 72, KEYS.len() as u16 + 4);
    frame.render_widget(Clear, rect);
    let lines: Vec<Line> = KEYS
        .iter()
        .map(|(key, what)| {
            Line::from(vec![
                Span::styled(format!("{key:>14}  "), theme::key()),
                Span::raw(*what),
            ])
        })
        .collect();
    let help = Paragraph::new(lines)
        .block(
            Block::default()
                .borders(Borders::ALL)
                .title(" Keys (Esc closes) "),
        )
        .wrap(Wrap { trim: false });
    frame.render_widget(help, rect);
}

fn render_picker(app: &App, picker: &Picker, frame: &mut Frame, area: Rect) {
    let (title, rows): (&str, Vec<String>) = match picker.kind {
        PickerKind::Prompts => (
            " Prompts: run one for this ticket (Enter · Esc closes) ",
            app.prompts
                .iter()
                .map(|p| format!("{}  {}", one_line(&p.name), one_line(&p.description)))
                .collect(),
        ),
        PickerKind::Reviews => (
            " Review: open one (Enter · Esc closes) ",
            app.review_choices()
                .into_iter()
                .map(|(label, _, _)| one_line(&label))
                .collect(),
        ),
        PickerKind::Resources => (
            " Resources: attach one to this ticket (Enter · Esc closes) ",
            app.resources
                .iter()
                .map(|r| {
                    let size = r.size.map(|s| format!(" {s} bytes")).unwrap_or_default();
                    format!(
                        "{} {}  {}{}",
                        one_line(&r.server),
                        one_line(&r.uri),
                        one_line(&r.title),
                        size
                    )
                })
                .collect(),
        ),
    };
    let rect = centred(
        area,
        area.width.saturating_sub(8).max(40),
        (rows.len() as u16 + 2).clamp(4, 16),
    );
    frame.render_widget(Clear, rect);
    let empty = rows.is_empty();
    let items: Vec<ListItem> = if empty {
        vec![ListItem::new("(none offered by the connected servers)")]
    } else {
        rows.into_iter().map(ListItem::new).collect()
    };
    let list = List::new(items)
        .block(Block::default().borders(Borders::ALL).title(title))
        .highlight_style(theme::selected());
    let mut state = ListState::default().with_selected((!empty).then_some(picker.selected));
    frame.render_stateful_widget(list, rect, &mut state);
}
