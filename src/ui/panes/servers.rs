//! The `i` screen: each server the desk is configured for, where it runs, its revision and
//! tools (or why it is down, or that it asks for a sign-in), and what it says of itself (its
//! instructions), quoted as the server's own words: shown to people as data, never given to
//! the model and never obeyed. It scrolls when it is taller than the box.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};

use crate::host::api::ServerSummary;
use crate::ui::sanitize::{clean, one_line};
use crate::ui::text::wrapped;
use crate::ui::theme;

const WIDTH: u16 = 90;
/// The mark before each line a server wrote.
const QUOTE: &str = "  │ ";

pub fn render(servers: &[ServerSummary], scroll: u16, frame: &mut Frame, area: Rect) {
    let width = WIDTH.min(area.width);
    let lines = lines(servers, usize::from(width.saturating_sub(2)));
    super::scrolled_box(frame, area, width, "Servers", lines, scroll);
}

/// How many rows the screen takes for `servers` (the most it scrolls).
pub fn rows(servers: &[ServerSummary]) -> usize {
    lines(servers, usize::from(WIDTH - 2)).len()
}

fn lines(servers: &[ServerSummary], width: usize) -> Vec<Line<'static>> {
    let mut lines = Vec::new();
    if servers.is_empty() {
        lines.push(Line::styled(
            "No server is configured: the desk's config names them under [servers.NAME].",
            theme::dim(),
        ));
    }
    for (i, server) in servers.iter().enumerate() {
        if i > 0 {
            lines.push(Line::default());
        }
        lines.extend(wrapped(
            Span::raw(""),
            Span::raw("  "),
            &[
                (&one_line(&server.prefix), theme::title()),
                ("  ", Style::default()),
                (&one_line(&server.origin), theme::untrusted()),
            ],
            width,
        ));
        let state = state_line(server);
        lines.extend(wrapped(
            Span::raw("  "),
            Span::raw("  "),
            &[(&state, state_style(server))],
            width,
        ));
        if let Some(instructions) = &server.instructions {
            lines.extend(said(instructions, width));
        }
    }
    lines
}

/// `shop-support · 2026-07-28 · 5 tools: find_orders, …`, or why it is not there.
fn state_line(server: &ServerSummary) -> String {
    if let Some(command) = &server.sign_in {
        return format!(
            "asks for a sign-in: L signs in (or `{}`)",
            one_line(command)
        );
    }
    if let Some(error) = &server.error {
        return format!("down: {}", one_line(error));
    }
    let mut parts = Vec::new();
    if let Some(name) = &server.name {
        parts.push(one_line(name));
    }
    if let Some(revision) = &server.revision {
        parts.push(one_line(revision));
    }
    let tools: Vec<String> = server.tools.iter().map(|t| one_line(t)).collect();
    parts.push(match tools.len() {
        0 => "no tools".to_owned(),
        1 => format!("1 tool: {}", tools[0]),
        n => format!("{n} tools: {}", tools.join(", ")),
    });
    parts.join(" · ")
}

fn state_style(server: &ServerSummary) -> Style {
    match (&server.sign_in, &server.error) {
        (Some(_), _) => theme::warning(),
        (None, Some(_)) => theme::danger(),
        (None, None) => Style::default(),
    }
}

/// The server's instructions under a label saying whose words they are, each of its lines
/// quoted and wrapped under its mark.
fn said(instructions: &str, width: usize) -> Vec<Line<'static>> {
    let mut lines = wrapped(
        Span::raw("  "),
        Span::raw("  "),
        &[(
            "The server says (its instructions, as it wrote them; never given to the model):",
            theme::dim(),
        )],
        width,
    );
    for line in clean(instructions).lines() {
        lines.extend(wrapped(
            Span::styled(QUOTE, theme::dim()),
            Span::styled(QUOTE, theme::dim()),
            &[(line, theme::untrusted())],
            width,
        ));
    }
    lines
}
