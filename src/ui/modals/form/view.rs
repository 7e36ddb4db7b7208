//! Drawing the form: who asks, the scrolled body for the current step, and the keys.
//!
//! Drawing only reads the modal. The body is laid out as rows for the width at hand, so the
//! rows that keep the focused field in view can be worked out before anything is drawn.

use std::ops::Range;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Padding};

use super::hints::shown_value;
use super::{Editor, FormModal, INDENT, MAX_WIDTH, NUMBER_WIDTH, SIDE_CHROME, Step};
use crate::host::api::{Field, FieldKind, FormKind};
use crate::ui::sanitize::{clean, one_line};
use crate::ui::text::{self, flow, indent_by, key_lines, wrap_anywhere, wrap_styled as wrap};
use crate::ui::theme;

fn indent(lines: Vec<Line<'static>>) -> Vec<Line<'static>> {
    indent_by(lines, INDENT)
}

impl FormModal {
    /// Draws the modal centred in `area`, over whatever is there.
    pub fn render(&self, frame: &mut Frame, area: Rect) {
        let width = area.width.min(MAX_WIDTH);
        let text_width = width.saturating_sub(SIDE_CHROME) as usize;
        let header = self.header(text_width);
        let footer = self.footer(text_width);
        let body = self.body(text_width);
        // Border, header, body, a rule, footer.
        let chrome = 2 + header.len() + 1 + footer.len();
        let height = (chrome + body.rows.len()).min(area.height as usize) as u16;
        let popup = Rect {
            x: area.x + (area.width - width) / 2,
            y: area.y + (area.height - height) / 2,
            width,
            height,
        };
        let body_height = (height as usize).saturating_sub(chrome);
        let offset = self.offset(&body, body_height);

        let server = one_line(&self.ask.server);
        let title = match &self.heading {
            Some(_) => " The desk asks ".to_owned(),
            None => format!(" Input request from {server} "),
        };
        let title = Line::from(title).style(theme::title());
        let mut block = Block::bordered()
            .title(title)
            .padding(Padding::horizontal(1));
        if offset > 0 {
            block = block.title_top(Line::from(" ↑ more ").right_aligned());
        }
        if offset + body_height < body.rows.len() {
            block = block.title_bottom(Line::from(" ↓ more ").right_aligned());
        }
        let inner = block.inner(popup);
        frame.render_widget(Clear, popup);
        frame.render_widget(block, popup);

        let row = |n: usize| Rect {
            y: inner.y + n as u16,
            height: 1,
            ..inner
        };
        let rows = inner.height as usize;
        for (n, line) in header.iter().enumerate().take(rows) {
            frame.render_widget(line, row(n));
        }
        let visible = body.rows.iter().skip(offset).take(body_height);
        for (n, body_row) in visible.enumerate() {
            let area = row(header.len() + n);
            match body_row {
                Row::Line(line) => frame.render_widget(line, area),
                Row::Input(index) => self.render_input(frame, *index, area),
            }
        }
        let footer_top = rows.saturating_sub(footer.len());
        if footer_top > header.len() {
            frame.render_widget(self.rule(inner.width as usize), row(footer_top - 1));
        }
        for (n, line) in footer.iter().enumerate() {
            if footer_top + n < rows {
                frame.render_widget(line, row(footer_top + n));
            }
        }
    }

    /// The line above the keys; after a refused review it says how many fields need fixing,
    /// since they may be scrolled out of view.
    fn rule(&self, width: usize) -> Line<'static> {
        let fixing = match self.problems.len() {
            _ if !self.refused || self.step != Step::Editing => None,
            0 => None,
            1 => Some(" 1 field needs fixing before review ".to_owned()),
            n => Some(format!(" {n} fields need fixing before review ")),
        };
        let used = fixing.as_deref().map_or(0, text::width) + 1;
        let mut spans = Vec::new();
        if let Some(fixing) = fixing {
            spans.push(Span::styled("─", theme::dim()));
            spans.push(Span::styled(fixing, theme::danger()));
        }
        spans.push(Span::styled(
            "─".repeat(width.saturating_sub(used) + 1),
            theme::dim(),
        ));
        Line::from(spans)
    }

    fn render_input(&self, frame: &mut Frame, index: usize, area: Rect) {
        let indent = INDENT as u16;
        let area = Rect {
            x: area.x + indent,
            width: area.width.saturating_sub(indent),
            ..area
        };
        match self.editors.get(index) {
            Some(Editor::Text(input)) => frame.render_widget(input, area),
            Some(Editor::Number(input)) => {
                let area = Rect {
                    width: area.width.min(NUMBER_WIDTH),
                    ..area
                };
                frame.render_widget(input, area);
            }
            _ => {}
        }
    }

    /// First body row shown: enough to keep the focused field (or the list cursor) in view,
    /// moved by what the person scrolled.
    fn offset(&self, body: &Body, height: usize) -> usize {
        let last = body.rows.len().saturating_sub(height);
        let base = match (&body.focus, self.step) {
            (Some(focus), Step::Editing) => {
                let mut base = focus.rows.end.saturating_sub(height).min(focus.rows.start);
                if let Some(row) = focus.cursor.filter(|&row| row >= base + height) {
                    base = row + 1 - height;
                }
                base as i64
            }
            _ => 0,
        };
        (base + i64::from(self.scroll)).clamp(0, last as i64) as usize
    }

    /// Who asks, from where, for which ticket: always on screen.
    fn header(&self, width: usize) -> Vec<Line<'static>> {
        let server = one_line(&self.ask.server);
        let mut lines = match &self.heading {
            Some(heading) => wrap(&[(&one_line(heading), theme::title())], width),
            None => wrap(
                &[(&server, theme::title()), (" asks:", Style::default())],
                width,
            ),
        };
        let mut from = format!("from {}", one_line(&self.ask.origin));
        if let Some(ticket) = &self.ask.ticket {
            from.push_str(&format!(" · ticket {}", one_line(ticket)));
        }
        if let Some(asked_by) = &self.ask.asked_by {
            from.push_str(&format!(" · {}", one_line(asked_by)));
        }
        lines.extend(wrap(&[(&from, theme::dim())], width).into_iter().take(2));
        lines
    }

    fn footer(&self, width: usize) -> Vec<Line<'static>> {
        let server = one_line(&self.ask.server);
        let send = format!("send these answers to {server}");
        let mut keys: Vec<(&str, &str)> = Vec::new();
        match self.step {
            Step::Editing => {
                keys.push(("Tab/Shift-Tab", "next/previous field"));
                keys.extend(self.field_keys());
                keys.push(("Ctrl-R", "review before sending"));
                keys.push(("PgUp/PgDn", "scroll"));
            }
            Step::Review => {
                keys.push(("Enter/Ctrl-S", &send));
                keys.push(("E/Backspace", "back to editing"));
                keys.push(("↑/↓ PgUp/PgDn", "scroll"));
            }
            Step::Url => {
                keys.push((
                    "Enter/Ctrl-S",
                    "accept: I agree to go there (not that it is done)",
                ));
                keys.push(("↑/↓ PgUp/PgDn", "scroll"));
            }
        }
        if self.heading.is_some() {
            // The desk's own form: the server asked nothing, so closing it tells it nothing.
            keys.push(("Esc", "closes it: nothing is sent"));
        } else {
            keys.push(("Ctrl-D", "declines: the server is told no"));
            keys.push(("Esc", "cancels: the server is told you dismissed it"));
        }
        key_lines(&keys, theme::key(), width)
    }

    fn field_keys(&self) -> Vec<(&'static str, &'static str)> {
        match self.editors.get(self.focus) {
            None => vec![("Enter", "review")],
            Some(Editor::Text(_) | Editor::Number(_)) => vec![("Enter", "next field")],
            Some(Editor::Boolean(_)) => vec![("Space", "yes/no")],
            Some(Editor::Choice(_)) => vec![("←/→ Space", "choose")],
            Some(Editor::Choices { .. }) => vec![("↑/↓", "move"), ("Space", "pick")],
        }
    }

    /// How many rows the body takes at this width.
    pub(super) fn body_rows(&self, width: usize) -> usize {
        self.body(width).rows.len()
    }

    fn body(&self, width: usize) -> Body {
        let mut body = Body::default();
        body.lines(wrap(
            &[(&clean(&self.ask.message), theme::untrusted())],
            width,
        ));
        body.blank();
        match (&self.ask.kind, self.step) {
            (FormKind::Url { url }, _) => self.url_rows(url, width, &mut body),
            (FormKind::Fields(fields), Step::Review) => self.review_rows(fields, width, &mut body),
            (FormKind::Fields(fields), _) => self.edit_rows(fields, width, &mut body),
        }
        body
    }

    fn edit_rows(&self, fields: &[Field], width: usize, body: &mut Body) {
        for (index, (field, editor)) in fields.iter().zip(&self.editors).enumerate() {
            let start = body.rows.len();
            let cursor = self.field_rows(index, field, editor, width, body);
            if index == self.focus {
                let rows = start..body.rows.len();
                body.focus = Some(Focus { rows, cursor });
            }
            body.blank();
        }
        let start = body.rows.len();
        let focused = self.focus == self.editors.len();
        let (marker, style) = if focused {
            ("▸ ", theme::selected())
        } else {
            ("  ", theme::title())
        };
        let mut parts = vec![(marker, theme::key()), ("Review answers ▸", style)];
        let fix = match self.problems.len() {
            1 => "  1 field needs fixing first".to_owned(),
            n => format!("  {n} fields need fixing first"),
        };
        if self.refused && !self.problems.is_empty() {
            parts.push((&fix, theme::danger()));
        }
        body.lines(wrap(&parts, width));
        if focused {
            let rows = start..body.rows.len();
            body.focus = Some(Focus { rows, cursor: None });
        }
    }

    /// One field: title and hint, description, its widget and problems. Returns the row of a
    /// multi-choice cursor.
    fn field_rows(
        &self,
        index: usize,
        field: &Field,
        editor: &Editor,
        width: usize,
        body: &mut Body,
    ) -> Option<usize> {
        let focused = index == self.focus;
        let inner = width.saturating_sub(INDENT);
        let marker = if focused { "▸ " } else { "  " };
        let title = one_line(field.title.as_deref().unwrap_or(&field.name));
        let mut parts = vec![(marker, theme::key()), (&title, theme::title())];
        if field.required {
            parts.push((" · required", theme::warning()));
        }
        let hint = editor.hint(field).map(|hint| format!(" · {hint}"));
        if let Some(hint) = &hint {
            parts.push((hint, theme::dim()));
        }
        body.lines(wrap(&parts, width));
        if let Some(description) = &field.description {
            let description = clean(description);
            body.lines(indent(wrap(&[(&description, theme::dim())], inner)));
        }
        let cursor_row = self.widget_rows(index, field, editor, inner, body);
        let problems = self.problems.iter().filter(|p| p.field == field.name);
        for problem in problems.filter(|_| self.shown[index]) {
            let text = format!("✗ {}", problem.problem);
            body.lines(indent(wrap(&[(&text, theme::danger())], inner)));
        }
        cursor_row
    }

    /// The field's widget: a text input, a yes/no, options to choose. Returns the row of a
    /// multi-choice cursor.
    fn widget_rows(
        &self,
        index: usize,
        field: &Field,
        editor: &Editor,
        inner: usize,
        body: &mut Body,
    ) -> Option<usize> {
        let focused = index == self.focus;
        let chosen = |yes: bool| {
            if focused && yes {
                theme::selected()
            } else {
                theme::title()
            }
        };
        let mut cursor_row = None;
        match (editor, &field.kind) {
            (Editor::Text(_) | Editor::Number(_), _) => body.rows.push(Row::Input(index)),
            (Editor::Boolean(value), _) => {
                let text = match value {
                    Some(true) => "[x] yes",
                    Some(false) => "[ ] no",
                    None => "[ ] not answered yet",
                };
                body.lines(indent(vec![Line::from(Span::styled(text, chosen(true)))]));
            }
            (Editor::Choice(chosen_index), FieldKind::Choice { options, .. }) => {
                let labels: Vec<String> = options.iter().map(|o| one_line(&o.label)).collect();
                let items: Vec<Vec<Span<'static>>> = (labels.iter().enumerate())
                    .map(|(n, label)| {
                        let picked = *chosen_index == Some(n);
                        let mark = if picked { "(•) " } else { "( ) " };
                        vec![Span::styled(format!("{mark}{label}"), chosen(picked))]
                    })
                    .collect();
                body.lines(indent(flow(items, Span::raw("   "), inner)));
            }
            (Editor::Choices { picked, cursor }, FieldKind::Choices { options, .. }) => {
                for (n, (option, picked)) in options.iter().zip(picked).enumerate() {
                    let here = focused && n == *cursor;
                    if here {
                        cursor_row = Some(body.rows.len());
                    }
                    let mark = match (here, picked) {
                        (true, true) => "› [x] ",
                        (true, false) => "› [ ] ",
                        (false, true) => "  [x] ",
                        (false, false) => "  [ ] ",
                    };
                    let label = one_line(&option.label);
                    let lines = wrap(&[(mark, chosen(here)), (&label, chosen(here))], inner);
                    body.lines(indent(lines));
                }
            }
            // An editor is made from its field's kind, so the two always agree.
            (Editor::Choice(_) | Editor::Choices { .. }, _) => {}
        }
        cursor_row
    }

    fn review_rows(&self, fields: &[Field], width: usize, body: &mut Body) {
        let server = one_line(&self.ask.server);
        let heading = format!("This is what {server} will receive:");
        body.lines(wrap(&[(&heading, theme::title())], width));
        let (answers, _) = self.answers();
        for field in fields {
            let title = one_line(field.title.as_deref().unwrap_or(&field.name));
            let name = format!(" ({})", one_line(&field.name));
            let (value, style) = match answers.get(&field.name) {
                Some(value) => (shown_value(field, value), theme::good()),
                None => ("not sent (left empty)".to_owned(), theme::dim()),
            };
            let mut parts = vec![("  ", Style::default()), (&title, theme::title())];
            if field.title.is_some() {
                parts.push((&name, theme::dim()));
            }
            parts.extend([(": ", Style::default()), (&value, style)]);
            body.lines(wrap(&parts, width));
        }
        body.blank();
        let note = "Nothing has been sent yet. Enter sends exactly this; E goes back to change it.";
        body.lines(wrap(&[(note, theme::dim())], width));
    }

    fn url_rows(&self, url: &str, width: usize, body: &mut Body) {
        let server = one_line(&self.ask.server);
        let intro = format!("{server} asks you to go to this address:");
        body.lines(wrap(&[(&intro, theme::title())], width));
        let url = one_line(url);
        let host = host_range(&url);
        let segments = match &host {
            Some(host) => vec![
                (&url[..host.start], theme::untrusted()),
                (&url[host.clone()], host_style()),
                (&url[host.end..], theme::untrusted()),
            ],
            None => vec![(url.as_str(), theme::untrusted())],
        };
        body.lines(indent_by(
            wrap_anywhere(&segments, width.saturating_sub(2)),
            2,
        ));
        match host {
            Some(host) => body.lines(wrap(
                &[
                    ("It leads to ", Style::default()),
                    (&url[host], host_style()),
                    (".", Style::default()),
                ],
                width,
            )),
            None => body.lines(wrap(
                &[(
                    "This address names no host: read it carefully before going there.",
                    theme::warning(),
                )],
                width,
            )),
        }
        body.blank();
        let notes = [
            "The desk will not open it. If you go there, copy it into your browser yourself.",
            "Accepting tells the server you agree to go there; it does not mean you have been.",
        ];
        for note in notes {
            body.lines(wrap(&[(note, Style::default())], width));
        }
    }
}

/// Where a URL really leads: the host after `scheme://` and any `user@`, before a port or
/// path. Browsers read `\` as `/`, so it ends the host too.
pub(super) fn host_range(url: &str) -> Option<Range<usize>> {
    let start = url.find("://")? + 3;
    let rest = &url[start..];
    let authority = &rest[..rest.find(['/', '\\', '?', '#']).unwrap_or(rest.len())];
    let host_start = authority.rfind('@').map_or(0, |at| at + 1);
    let host_port = &authority[host_start..];
    let host_len = if host_port.starts_with('[') {
        host_port.find(']').map_or(host_port.len(), |end| end + 1)
    } else {
        host_port.find(':').unwrap_or(host_port.len())
    };
    let host = start + host_start..start + host_start + host_len;
    (!host.is_empty()).then_some(host)
}

/// The host of a URL stands out from the rest of it.
pub(super) fn host_style() -> Style {
    theme::warning().add_modifier(Modifier::UNDERLINED)
}

/// The scrolled part of the modal, laid out for one width.
#[derive(Default)]
struct Body {
    rows: Vec<Row>,
    focus: Option<Focus>,
}

enum Row {
    Line(Line<'static>),
    /// The text input of the field at this index.
    Input(usize),
}

/// The rows the focused field takes, and its list cursor's row: both are kept in view.
struct Focus {
    rows: Range<usize>,
    cursor: Option<usize>,
}

impl Body {
    fn lines(&mut self, lines: Vec<Line<'static>>) {
        self.rows.extend(lines.into_iter().map(Row::Line));
    }

    fn blank(&mut self) {
        self.rows.push(Row::Line(Line::default()));
    }
}
