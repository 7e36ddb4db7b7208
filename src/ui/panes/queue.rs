//! The queue pane: one row per ticket the filter shows (id, status, customer, subject),
//! only the rows that fit. A narrow pane shows each status in its short form so the subject
//! keeps room to be read.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, List, ListItem, ListState};

use crate::host::api::Due;
use crate::ui::app::{App, QueueItem, Status, queue_offset};
use crate::ui::sanitize::one_line;
use crate::ui::theme;

/// Columns before the subject with the whole status word: `T-0001 needs consent C-0112 `.
const FIXED_COLUMNS: usize = 7 + 14 + 7;
/// Below this many columns for the subject, the status column shrinks to its short form.
const SUBJECT_ROOM: usize = 16;

/// How wide the queue pane is on a terminal `width` columns wide: half of a narrow one, and
/// no more than its rows need on a wide one.
pub fn width(width: u16) -> u16 {
    (width / 2).clamp(34, 46).min(width)
}

pub fn status_style(status: Status) -> Style {
    match status {
        Status::New => theme::dim(),
        Status::Working => Style::default(),
        Status::NeedsConsent | Status::NeedsLead | Status::WaitingForLead => theme::warning(),
        Status::Drafted => theme::good(),
        Status::NeedsPerson => theme::danger(),
        Status::HandedOver | Status::Sent => theme::dim(),
    }
}

pub fn render(app: &App, frame: &mut Frame, area: Rect) {
    // Only the rows that fit are built: a queue of 10,000 costs what a screenful does.
    let count = app.visible_count();
    let rows = area.height.saturating_sub(2) as usize;
    let offset = queue_offset(app.selected, rows);
    let inner_width = usize::from(area.width.saturating_sub(2));
    let short = inner_width.saturating_sub(FIXED_COLUMNS) < SUBJECT_ROOM;
    let items: Vec<ListItem> = (offset..(offset + rows).min(count))
        .filter_map(|n| app.visible_at(n))
        .map(|i| ListItem::new(row(app, &app.items[i], short)))
        .collect();
    let list = List::new(items)
        .block(
            Block::default()
                .borders(Borders::ALL)
                .title(title(app, count)),
        )
        .highlight_style(theme::selected());
    let mut state =
        ListState::default().with_selected((count > 0).then_some(app.selected - offset));
    frame.render_stateful_widget(list, area, &mut state);
}

fn row(app: &App, item: &QueueItem, short: bool) -> Line<'static> {
    let status = if short {
        format!("{:<7}", item.status.short())
    } else {
        format!("{:<13}", item.status.label())
    };
    // A marked ticket: its id followed by `*` where the space is.
    let id = if app.marked.contains(&item.ticket.ticket_id) {
        Span::styled(format!("{}*", item.ticket.ticket_id), theme::key())
    } else {
        Span::raw(format!("{} ", item.ticket.ticket_id))
    };
    let mut spans = vec![id, Span::styled(status, status_style(item.status))];
    // With [sla]: when its answer is due, or how late it is.
    if let (Some(at), Some(warn)) = (item.due_at, app.warn_within()) {
        let now = app.now();
        let due = Due::of(at, now, warn);
        let style = match due {
            Due::Late(_) => theme::danger(),
            Due::Soon(_) => theme::warning(),
            Due::At(_) => theme::dim(),
        };
        spans.push(Span::styled(format!(" {:<11}", due.words(now)), style));
    } else if app.sla.is_some() {
        spans.push(Span::raw(format!(" {:<11}", "")));
    }
    // A conversation by mail goes on after a reply: where it stands.
    if !item.ticket.thread.is_empty() {
        spans.push(Span::styled(
            format!(" {:<7}", item.state.conversation.as_str()),
            theme::dim(),
        ));
    }
    // Whose it is, when it is someone's: `me` for the person at this desk.
    match item.state.assignee.as_deref() {
        Some(who) if who == app.staff => spans.push(Span::styled(" @me", theme::key())),
        Some(who) => spans.push(Span::styled(format!(" @{}", one_line(who)), theme::dim())),
        None => {}
    }
    spans.push(Span::raw(format!(" {} ", one_line(&item.ticket.who()))));
    spans.push(Span::styled(
        one_line(&item.ticket.subject),
        theme::untrusted(),
    ));
    Line::from(spans)
}

/// ` Queue (all) 48/48 · 3 marked · run 3/47 `.
fn title(app: &App, count: usize) -> String {
    let progress = match app.queue_run {
        Some((done, total)) if done < total => format!(" · run {done}/{total}"),
        Some((_, total)) => format!(" · run done {total}"),
        None => String::new(),
    };
    let marked = match app.marked.len() {
        0 => String::new(),
        n => format!(" · {n} marked"),
    };
    format!(
        " Queue ({}) {}/{}{marked}{} ",
        app.filter.label(&app.views),
        count,
        app.items.len(),
        progress
    )
}
