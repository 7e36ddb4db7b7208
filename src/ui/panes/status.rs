//! The status bar: the desk's name; for a lead, the team's open approvals first (how many,
//! how long the oldest has waited, which were passed to them), where a narrow terminal keeps
//! them; each server with its revision and how many tools it offers (or that it asks for a
//! sign-in, with the key, or that it is down); on a team who you are and whether you are a
//! lead; the selected ticket's model calls; and the model.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::host::api::ServerSummary;
use crate::ui::app::App;
use crate::ui::sanitize::one_line;
use crate::ui::theme;

pub fn render(app: &App, frame: &mut Frame, area: Rect) {
    let mut spans = vec![Span::styled(" Support Desk ", theme::title())];
    if app.lead == Some(true) && !app.approvals.is_empty() {
        spans.push(Span::styled(approvals_text(app), theme::warning()));
    }
    for server in &app.servers {
        spans.push(Span::raw("│ "));
        let style = if server.error.is_some() {
            theme::danger()
        } else {
            Style::default()
        };
        spans.push(Span::styled(server_text(server), style));
    }
    if let Some(lead) = app.lead {
        let role = if lead { "lead" } else { "staff" };
        spans.push(Span::raw("│ "));
        spans.push(Span::styled(
            format!("you: {} ({role}) ", one_line(&app.staff)),
            theme::title(),
        ));
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

/// `1 approval open (A), waiting 12m`, with the oldest's wait, and which were passed to
/// this lead because no lead answered them in time.
fn approvals_text(app: &App) -> String {
    let open = match app.approvals.len() {
        1 => "1 approval".to_owned(),
        n => format!("{n} approvals"),
    };
    let oldest = app.approvals.iter().map(|a| a.asked_at).min().unwrap_or(0);
    let waited = u64::try_from((app.now() - oldest) / 1000).unwrap_or(0);
    let mut text = format!(
        "│ {open} open (A), waiting {} ",
        crate::report::span(waited)
    );
    let passed: Vec<String> = app
        .approvals
        .iter()
        .filter(|a| a.passed_to.as_deref() == Some(app.staff.as_str()))
        .map(|a| a.id.to_string())
        .collect();
    if !passed.is_empty() {
        text.push_str(&format!("· yours: {} ", passed.join(", ")));
    }
    text
}

/// `shop 2026-07-28 · 5 tools`, `shop: sign in (L)`, or `shop down`.
fn server_text(server: &ServerSummary) -> String {
    let prefix = one_line(&server.prefix);
    if server.sign_in.is_some() {
        return format!("{prefix}: sign in (L) ");
    }
    if server.error.is_some() {
        return format!("{prefix} down ");
    }
    let tools = match server.tools.len() {
        1 => "1 tool".to_owned(),
        n => format!("{n} tools"),
    };
    match &server.revision {
        Some(revision) => format!("{prefix} {} · {tools} ", one_line(revision)),
        None => format!("{prefix} · {tools} "),
    }
}
