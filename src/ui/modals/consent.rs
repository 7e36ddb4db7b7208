//! The consent modal: a person decides whether one tool call may happen.
//!
//! It shows everything the decision rests on: the server and where it runs, the tool, what
//! its annotations claim (the server's word, not facts), why the host asks, every argument,
//! each value seen nowhere before, and a changed definition with its diff. Only `y`
//! approves; Enter never does, so a habitual Enter cannot turn into a refund.

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{
    Block, Clear, Padding, Paragraph, Scrollbar, ScrollbarOrientation, ScrollbarState,
};

use crate::host::api::{ConsentAsk, ToolHints, TrustScope};
use crate::ui::ModalOutcome;
use crate::ui::sanitize::{clean, one_line};
use crate::ui::text::{centred, wrapped};
use crate::ui::theme;

/// The smallest screen the desk supports (columns, rows). Key handling cannot see the
/// screen, so it bounds scrolling by the layout on this one; drawing clamps to the real one.
const SMALLEST_SCREEN: (u16, u16) = (80, 24);
const MAX_WIDTH: u16 = 100;
/// Columns around the text: the border and one column of padding on each side.
const SIDE_CHROME: u16 = 4;
/// Rows around the text: the border, a blank row and the key line.
const ROW_CHROME: u16 = 4;
/// Labels ("Server", "Tool", …) take this many columns; their values line up after them.
const LABEL_WIDTH: usize = 8;

/// A person's answer on the card: yes or no, and with a yes whether to trust the tool from
/// now on (only offered for a tool on the desk's read-only list).
pub type Choice = (bool, Option<TrustScope>);

mod provenance;

/// Asks whether one tool call may happen; answers `true` for approve, `false` for decline.
#[derive(Debug, Clone)]
pub struct ConsentModal {
    ask: ConsentAsk,
    ticket: String,
    /// First content row shown.
    scroll: u16,
}

impl ConsentModal {
    /// `ticket` is a one-line description of the ticket the call is for (id, customer,
    /// subject), already known to the UI.
    pub fn new(ask: ConsentAsk, ticket: String) -> Self {
        Self {
            ask,
            ticket,
            scroll: 0,
        }
    }

    pub fn ask(&self) -> &ConsentAsk {
        &self.ask
    }

    /// `Answered((true, _))` approves, `Answered((false, None))` declines; `s` and `a` approve
    /// and trust a read-only tool for the session or always.
    pub fn handle_key(&mut self, key: KeyEvent) -> ModalOutcome<Choice> {
        if key.kind == KeyEventKind::Release {
            return ModalOutcome::Pending;
        }
        let pressed = key.kind == KeyEventKind::Press;
        let plain = !key
            .modifiers
            .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT);
        let page = smallest_body_height().saturating_sub(2).max(1);
        match key.code {
            KeyCode::Char('y' | 'Y') if plain && pressed => ModalOutcome::Answered((true, None)),
            KeyCode::Char('n' | 'N') if plain && pressed => ModalOutcome::Answered((false, None)),
            KeyCode::Char('s') if plain && pressed && self.ask.trustable => {
                ModalOutcome::Answered((true, Some(TrustScope::Session)))
            }
            KeyCode::Char('a') if plain && pressed && self.ask.trustable => {
                ModalOutcome::Answered((true, Some(TrustScope::Always)))
            }
            // Esc closes the question as a no: silence is never a yes.
            KeyCode::Esc if pressed => ModalOutcome::Answered((false, None)),
            KeyCode::Up => self.scroll_to(self.scroll.saturating_sub(1)),
            KeyCode::Down => self.scroll_to(self.scroll.saturating_add(1)),
            KeyCode::PageUp => self.scroll_to(self.scroll.saturating_sub(page)),
            KeyCode::PageDown => self.scroll_to(self.scroll.saturating_add(page)),
            KeyCode::Home => self.scroll_to(0),
            KeyCode::End => self.scroll_to(u16::MAX),
            // Enter (and everything else) does nothing: only `y` approves.
            _ => ModalOutcome::Pending,
        }
    }

    pub fn render(&self, frame: &mut Frame, area: Rect) {
        let width = modal_width(area.width);
        let lines = self.lines(usize::from(width.saturating_sub(SIDE_CHROME)));
        let height = count(lines.len())
            .saturating_add(ROW_CHROME)
            .min(area.height.saturating_sub(2));
        let modal = centred(area, width, height);

        let border = if self.ask.changed_definition.is_some() {
            theme::danger()
        } else if !self.ask.unseen.is_empty() {
            theme::warning()
        } else {
            Style::default()
        };
        let max_scroll = count(lines.len()).saturating_sub(body_height(height));
        let scroll = self.scroll.min(max_scroll);
        let mut block = Block::bordered()
            .title(Span::styled(" Allow this tool call? ", theme::title()))
            .border_style(border)
            .padding(Padding::horizontal(1));
        if scroll < max_scroll {
            block = block.title_bottom(Line::from(" ↓ more below ").right_aligned());
        }
        let inner = block.inner(modal);
        frame.render_widget(Clear, modal);
        frame.render_widget(block, modal);

        let [body, _, footer] = Layout::vertical([
            Constraint::Min(0),
            Constraint::Length(1),
            Constraint::Length(1),
        ])
        .areas(inner);
        frame.render_widget(Paragraph::new(lines).scroll((scroll, 0)), body);
        frame.render_widget(
            Paragraph::new(keys_line(max_scroll > 0, self.ask.trustable)),
            footer,
        );

        if max_scroll > 0 {
            let mut state = ScrollbarState::new(usize::from(max_scroll) + 1)
                .position(usize::from(scroll))
                .viewport_content_length(usize::from(body.height));
            frame.render_stateful_widget(
                Scrollbar::new(ScrollbarOrientation::VerticalRight)
                    .begin_symbol(None)
                    .end_symbol(None),
                // On the right border, beside the rows that scroll.
                Rect {
                    x: modal.right().saturating_sub(1),
                    width: 1,
                    ..body
                },
                &mut state,
            );
        }
    }

    fn scroll_to(&mut self, row: u16) -> ModalOutcome<Choice> {
        self.scroll = row.min(self.max_scroll_on_smallest_screen());
        ModalOutcome::Pending
    }

    fn max_scroll_on_smallest_screen(&self) -> u16 {
        let width = modal_width(SMALLEST_SCREEN.0).saturating_sub(SIDE_CHROME);
        count(self.lines(usize::from(width)).len()).saturating_sub(smallest_body_height())
    }

    /// Everything the modal says, laid out in rows of at most `width` columns.
    fn lines(&self, width: usize) -> Vec<Line<'static>> {
        let ask = &self.ask;
        let indent = " ".repeat(LABEL_WIDTH);
        let label = |text: &str| Span::styled(format!("{text:<LABEL_WIDTH$}"), theme::dim());
        let rest = || Span::raw(indent.clone());
        let mut lines = Vec::new();

        let (server, origin) = (one_line(&ask.server), one_line(&ask.origin));
        lines.extend(wrapped(
            label("Server"),
            rest(),
            &[
                (&server, theme::title()),
                ("  ", Style::default()),
                (&origin, theme::dim()),
            ],
            width,
        ));

        let tool = one_line(&ask.tool);
        let title = ask.hints.title.as_deref().map(one_line);
        let mut tool_segments = vec![(tool.as_str(), theme::title())];
        if let Some(title) = &title {
            tool_segments.push(("  ", Style::default()));
            tool_segments.push((title, theme::untrusted()));
        }
        lines.extend(wrapped(label("Tool"), rest(), &tool_segments, width));

        let ticket = one_line(&self.ticket);
        lines.extend(wrapped(
            label("Ticket"),
            rest(),
            &[(&ticket, theme::untrusted())],
            width,
        ));

        lines.extend(self.claims_lines(width));
        lines.extend(self.warning_lines(width));
        lines.extend(self.argument_lines(width));
        lines.extend(provenance::lines(ask, width));
        lines
    }

    /// What the tool's annotations claim, and why the host asks.
    fn claims_lines(&self, width: usize) -> Vec<Line<'static>> {
        let ask = &self.ask;
        let indent = " ".repeat(LABEL_WIDTH);
        let label = |text: &str| Span::styled(format!("{text:<LABEL_WIDTH$}"), theme::dim());
        let rest = || Span::raw(indent.clone());
        let mut lines = Vec::new();
        let claims = claims(&ask.hints);
        let mut claim_segments = Vec::new();
        for (i, (claim, style)) in claims.iter().enumerate() {
            if i > 0 {
                claim_segments.push((" · ", theme::dim()));
            }
            claim_segments.push((*claim, *style));
        }
        lines.extend(wrapped(label("Claims"), rest(), &claim_segments, width));
        lines.extend(wrapped(
            rest(),
            rest(),
            &[(
                "(what the server says of its tool; the desk cannot check it)",
                theme::dim(),
            )],
            width,
        ));

        let reason = clean(&ask.reason);
        lines.extend(wrapped(
            label("Why"),
            rest(),
            &[(&reason, Style::default())],
            width,
        ));

        lines
    }

    /// Each value seen nowhere before, and a changed definition with its diff.
    fn warning_lines(&self, width: usize) -> Vec<Line<'static>> {
        let ask = &self.ask;
        let mut lines = Vec::new();
        for unseen in &ask.unseen {
            let (argument, value) = (one_line(&unseen.argument), one_line(&unseen.value));
            lines.push(Line::default());
            lines.extend(wrapped(
                Span::styled("⚠ ", theme::warning()),
                Span::raw("  "),
                &[
                    (&argument, theme::warning()),
                    (" ", theme::warning()),
                    (&value, theme::warning()),
                    (
                        " appears neither in the ticket nor in any earlier tool result",
                        theme::warning(),
                    ),
                ],
                width,
            ));
        }

        if let Some(diff) = &ask.changed_definition {
            lines.push(Line::default());
            let heading = if diff.contains("+ now:") {
                "✗ Definition changed since it was pinned"
            } else {
                "✗ Its description gives the model instructions (kept from the model until approved)"
            };
            lines.push(Line::from(Span::styled(heading, theme::danger())));
            for row in clean(diff).lines() {
                lines.extend(diff_row(row, width));
            }
        }

        lines
    }

    /// Every argument, its value lined up after its name.
    fn argument_lines(&self, width: usize) -> Vec<Line<'static>> {
        let ask = &self.ask;
        let label = |text: &str| Span::styled(format!("{text:<LABEL_WIDTH$}"), theme::dim());
        let mut lines = Vec::new();
        lines.push(Line::default());
        if ask.arguments.is_empty() {
            lines.push(Line::from(vec![
                label("Args"),
                Span::styled("none", theme::dim()),
            ]));
        } else {
            lines.push(Line::from(Span::styled(
                format!("Arguments ({})", ask.arguments.len()),
                theme::dim(),
            )));
        }
        for (name, value) in &ask.arguments {
            let (name, value) = (one_line(name), clean(value));
            let name_width = Span::raw(name.as_str()).width();
            // Values line up after `name = ` unless the name is too long to leave them room.
            let hang = if name_width + 5 <= width / 2 {
                name_width + 5
            } else {
                4
            };
            lines.extend(wrapped(
                Span::raw("  "),
                Span::raw(" ".repeat(hang)),
                &[
                    (&name, theme::title()),
                    (" = ", theme::dim()),
                    (&value, theme::untrusted()),
                ],
                width,
            ));
        }
        lines
    }
}

/// What the tool's annotations claim, each with its style; unstated hints are left out.
fn claims(hints: &ToolHints) -> Vec<(&'static str, Style)> {
    let plain = Style::default();
    let mut claims = Vec::new();
    match hints.read_only {
        Some(true) => claims.push(("read-only", plain)),
        Some(false) => claims.push(("not read-only", plain)),
        None => {}
    }
    match hints.destructive {
        Some(true) => claims.push(("destructive", theme::danger())),
        Some(false) => claims.push(("not destructive", plain)),
        None => {}
    }
    match hints.idempotent {
        Some(true) => claims.push(("idempotent", plain)),
        Some(false) => claims.push(("not idempotent", plain)),
        None => {}
    }
    match hints.open_world {
        Some(true) => claims.push(("open world", plain)),
        Some(false) => claims.push(("closed world", plain)),
        None => {}
    }
    if claims.is_empty() {
        claims.push(("no annotations", theme::dim()));
    }
    claims
}

/// One row of a changed definition's diff, indented under its heading; `- was:` rows red
/// and `+ now:` rows green, as in any diff, with their text lined up after the marker.
fn diff_row(row: &str, width: usize) -> Vec<Line<'static>> {
    let (marker, text, style) = if let Some(text) = row.strip_prefix("  - was:") {
        ("  - was:", text, theme::removed())
    } else if let Some(text) = row.strip_prefix("  + now:") {
        ("  + now:", text, theme::added())
    } else {
        ("", row, theme::untrusted())
    };
    let prefix = format!("  {marker}");
    let hang = Span::raw(prefix.as_str()).width() + 1;
    wrapped(
        Span::styled(prefix, style),
        Span::raw(" ".repeat(hang)),
        &[(text, style)],
        width,
    )
}

fn keys_line(scrolls: bool, trustable: bool) -> Line<'static> {
    let mut spans = vec![
        Span::styled("y", theme::key()),
        Span::raw(" approve · "),
        Span::styled("n", theme::key()),
        Span::raw(" decline · "),
        Span::styled("Esc", theme::key()),
    ];
    if trustable {
        // Narrower, to leave room for trust on the smallest screen.
        spans.extend([
            Span::raw(" decline · "),
            Span::styled("s", theme::key()),
            Span::raw("/"),
            Span::styled("a", theme::key()),
            Span::raw(" trust (session/always)"),
        ]);
    } else {
        spans.push(Span::raw(" decline and close"));
    }
    if scrolls {
        spans.extend([
            Span::raw(" · "),
            Span::styled("↑↓ PgUp PgDn", theme::key()),
            Span::raw(" scroll"),
        ]);
    }
    Line::from(spans)
}

fn modal_width(screen_width: u16) -> u16 {
    screen_width.saturating_sub(4).min(MAX_WIDTH)
}

/// Rows of content a modal `height` rows tall shows at once.
fn body_height(height: u16) -> u16 {
    height.saturating_sub(ROW_CHROME)
}

fn smallest_body_height() -> u16 {
    body_height(SMALLEST_SCREEN.1.saturating_sub(2))
}

fn count(rows: usize) -> u16 {
    u16::try_from(rows).unwrap_or(u16::MAX)
}

#[cfg(test)]
mod tests;
