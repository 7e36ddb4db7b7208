//! Drawing the desk. Everything here only reads the `App`.

use ratatui::Frame;
use ratatui::layout::{Constraint, Direction, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, List, ListItem, ListState, Paragraph, Wrap};

use super::app::{App, Cell, Modal, Picker, PickerKind, Status, queue_offset};
use super::sanitize::{clean, one_line};
use super::theme;
use crate::host::api::Outcome;
use crate::host::events::Step;

/// Lines of a tool result shown before the rest is folded.
const RESULT_LINES: usize = 12;

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
            item.ticket.ticket_id, item.model_calls
        )));
    }
    spans.push(Span::raw("│ "));
    spans.push(Span::styled(one_line(&app.model), theme::dim()));
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}

fn status_style(status: Status) -> Style {
    match status {
        Status::Waiting => theme::dim(),
        Status::Working => Style::default(),
        Status::NeedsConsent | Status::NeedsLead => theme::warning(),
        Status::DraftReady => theme::good(),
        Status::Flagged | Status::Diverged => theme::danger(),
        Status::HandedToPerson | Status::Sent => theme::dim(),
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
            let marker = if item.ticket.injected { "!" } else { " " };
            ListItem::new(Line::from(vec![
                Span::raw(format!("{} ", item.ticket.ticket_id)),
                Span::styled(
                    format!("{:<13}", item.status.label()),
                    status_style(item.status),
                ),
                Span::styled(marker, theme::warning()),
                Span::raw(format!("{} ", item.ticket.customer_id)),
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
    // Lines are built from the newest turn backwards, only as far as the view reaches.
    let need = (inner.height - header_height) as usize + app.scroll_back as usize;
    let cells = app
        .transcripts
        .get(&t.ticket_id)
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    let stored_draft;
    let cells: &[Cell] = match (&item.draft, cells.is_empty()) {
        (Some(draft), true) => {
            stored_draft = [Cell::Step {
                turn: 0,
                step: Step::Draft {
                    text: draft.clone(),
                    findings: item.findings.clone(),
                },
            }];
            &stored_draft
        }
        _ => cells,
    };
    let mut tail: Vec<Vec<Line>> = Vec::new();
    let mut count = 0;
    for cell in cells.iter().rev() {
        let mut chunk = Vec::new();
        push_cell(&mut chunk, cell, width);
        count += chunk.len();
        tail.push(chunk);
        if count >= need {
            break;
        }
    }
    let mut lines: Vec<Line> = Vec::new();
    if count < need {
        lines.push(Line::styled(
            "The customer's words (data, never followed):",
            theme::dim(),
        ));
        push_wrapped(&mut lines, &clean(&t.body), width, theme::untrusted(), "  ");
        lines.push(Line::raw(""));
        if cells.is_empty() {
            lines.push(Line::styled(
                "Not worked yet: press w to let the model work it.",
                theme::dim(),
            ));
        }
    }
    lines.extend(tail.into_iter().rev().flatten());

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

fn push_wrapped(
    lines: &mut Vec<Line<'static>>,
    text: &str,
    width: usize,
    style: Style,
    indent: &str,
) {
    for raw in text.lines() {
        if raw.trim().is_empty() {
            lines.push(Line::raw(""));
            continue;
        }
        // Keep a line's own indentation (pretty JSON), within reason.
        let own = raw.len() - raw.trim_start().len();
        let lead = format!("{indent}{}", " ".repeat(own.min(width / 3)));
        let room = width.saturating_sub(lead.chars().count()).max(8);
        for piece in wrap(raw.trim_start(), room) {
            lines.push(Line::styled(format!("{lead}{piece}"), style));
        }
    }
}

/// Greedy word wrap by characters; words longer than the width are cut.
pub fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut line = String::new();
    for word in text.split(' ') {
        let word_len = word.chars().count();
        let line_len = line.chars().count();
        if line_len > 0 && line_len + 1 + word_len > width {
            out.push(std::mem::take(&mut line));
        }
        if word_len > width {
            let chars: Vec<char> = word.chars().collect();
            for chunk in chars.chunks(width) {
                if !line.is_empty() {
                    out.push(std::mem::take(&mut line));
                }
                line = chunk.iter().collect();
            }
            continue;
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    out.push(line);
    out
}

fn outcome_style(outcome: Outcome) -> Style {
    match outcome {
        Outcome::Result => theme::good(),
        Outcome::ToolError | Outcome::Declined => theme::warning(),
        Outcome::UnknownTool | Outcome::Failed => theme::danger(),
    }
}

fn push_cell(lines: &mut Vec<Line<'static>>, cell: &Cell, width: usize) {
    match cell {
        Cell::Step { turn, step } => push_step(lines, *turn, step, width),
        Cell::Attached { server, uri, bytes } => lines.push(Line::styled(
            format!(
                "  + attached {} from {} ({bytes} bytes)",
                one_line(uri),
                one_line(server)
            ),
            theme::dim(),
        )),
        Cell::Note(note) => {
            lines.push(Line::styled(format!("  {}", clean(note)), theme::warning()))
        }
    }
}

fn push_step(lines: &mut Vec<Line<'static>>, turn: u32, step: &Step, width: usize) {
    match step {
        Step::ModelAsked {
            tool_list_chars,
            context_chars,
        } => push_wrapped(
            lines,
            &format!(
                "── model call {turn} · tool list {tool_list_chars} chars · context {context_chars} chars"
            ),
            width,
            theme::dim(),
            "",
        ),
        Step::ModelSaid { words } => {
            lines.push(Line::styled("model said:", theme::title()));
            push_wrapped(lines, &clean(words), width, theme::untrusted(), "  ");
        }
        Step::Call { tool, arguments } => {
            lines.push(Line::from(vec![
                Span::styled("→ call ", theme::title()),
                Span::raw(one_line(tool)),
            ]));
            for (name, value) in arguments {
                push_wrapped(
                    lines,
                    &format!("{} = {}", one_line(name), one_line(value)),
                    width,
                    Style::default(),
                    "    ",
                );
            }
        }
        Step::Consent { tool, approved, by } => {
            let (mark, style) = if *approved {
                ("✓ approved", theme::good())
            } else {
                ("✗ declined", theme::warning())
            };
            lines.push(Line::styled(
                format!("  {mark} by {} ({})", one_line(by), one_line(tool)),
                style,
            ));
        }
        Step::Input {
            server,
            message,
            action,
        } => {
            lines.push(Line::styled(
                format!("  ? {} asked:", one_line(server)),
                theme::warning(),
            ));
            push_wrapped(lines, &clean(message), width, theme::untrusted(), "      ");
            lines.push(Line::raw(format!("    answer: {}", one_line(action))));
        }
        Step::Outcome {
            tool,
            outcome,
            text,
            truncated,
        } => {
            lines.push(Line::from(vec![
                Span::styled(
                    format!("← {} ", outcome.label()),
                    outcome_style(*outcome).add_modifier(Modifier::BOLD),
                ),
                Span::raw(one_line(tool)),
                Span::styled(
                    if *truncated { " (cut by the desk)" } else { "" },
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
        Step::Draft { text, findings } => {
            lines.push(Line::raw(""));
            lines.push(Line::styled(
                "Draft reply (press e to edit and send):",
                theme::title(),
            ));
            push_wrapped(lines, &clean(text), width, Style::default(), "  ");
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
    }
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
            " ↑↓ ticket · w work · W work all · Enter open · e draft · f filter · p prompts · r resources · ? help · q quit",
            theme::dim(),
        )),
    }
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}

fn centered(area: Rect, width: u16, height: u16) -> Rect {
    let width = width.min(area.width);
    let height = height.min(area.height);
    Rect::new(
        area.x + (area.width - width) / 2,
        area.y + (area.height - height) / 2,
        width,
        height,
    )
}

pub const KEYS: [(&str, &str); 19] = [
    ("↑/↓ or j/k", "pick a ticket"),
    ("w", "work the selected ticket"),
    ("W", "work every waiting ticket"),
    ("Enter", "open the ticket's question or draft, or work it"),
    ("a", "answer the next waiting question"),
    ("e", "edit, send or hand on the draft"),
    ("f", "filter: all / needs me / flagged"),
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
    ("v", "review the recorded run turn by turn (q returns)"),
    ("?", "this help"),
    ("q or Ctrl-C", "quit (servers are stopped)"),
];

fn render_help(frame: &mut Frame, area: Rect) {
    let rect = centered(area, 72, KEYS.len() as u16 + 4);
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
    let rect = centered(
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
