//! The lead's form: a server asks a person for input (elicitation), through the host.
//!
//! The person always sees which server asks: its prefix heads every step. Fields are edited
//! in place and checked with the host's own [`validate`]; nothing is sent before a read-only
//! review of exactly what will go. Decline ("no", Ctrl-D) and cancel ("not now", Esc) are
//! distinct at every step and cannot be typed by accident; Enter inside a field only moves
//! on. A URL request shows the whole address with its host marked; the desk never opens it.

use std::collections::BTreeMap;
use std::ops::Range;

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Padding};
use tui_textarea::{CursorMove, TextArea};

use crate::host::api::{Field, FieldKind, FieldValue, FormAnswer, FormAsk, FormKind, TextFormat};
use crate::host::form::{FieldProblem, defaults, validate};
use crate::ui::ModalOutcome;
use crate::ui::sanitize::{clean, one_line};
use crate::ui::theme;

/// The narrowest screen the desk supports. Key handling cannot see the screen, so it bounds
/// scrolling by the layout at this width; drawing clamps to the real one.
const SMALLEST_WIDTH: u16 = 80;
const MAX_WIDTH: u16 = 100;
/// Columns around the text: the border and one column of padding on each side.
const SIDE_CHROME: u16 = 4;
/// Fields' rows below their title are indented this far.
const INDENT: usize = 4;
/// A number is short: its input is no wider than this.
const NUMBER_WIDTH: u16 = 24;
const PAGE_ROWS: i32 = 8;

/// A server's form (or URL request) and the person's answers so far.
#[derive(Debug)]
pub struct FormModal {
    ask: FormAsk,
    /// One per field, in the form's order.
    editors: Vec<Editor>,
    /// Index of the focused field; `editors.len()` is the "Review answers" line.
    focus: usize,
    step: Step,
    /// Every problem of the current answers, in field order.
    problems: Vec<FieldProblem>,
    /// Per field: typed into since it was last left (its problems show once it is left).
    edited: Vec<bool>,
    /// Per field: its problems are on screen.
    shown: Vec<bool>,
    /// The last attempt to review was refused; the review line says why.
    refused: bool,
    /// Rows scrolled by the person: on top of what the focus needs while editing, from the
    /// top in the review and URL steps.
    scroll: i32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    Editing,
    Review,
    Url,
}

/// The editing state of one field.
#[derive(Debug)]
enum Editor {
    Text(TextArea<'static>),
    /// Number and integer fields: the text as typed, parsed when answers are collected.
    Number(TextArea<'static>),
    Boolean(Option<bool>),
    /// The index of the chosen option.
    Choice(Option<usize>),
    /// Which options are picked, and the option under the field's own cursor.
    Choices {
        picked: Vec<bool>,
        cursor: usize,
    },
}

impl FormModal {
    /// Fields start at their defaults.
    pub fn new(ask: FormAsk) -> Self {
        let (editors, step) = match &ask.kind {
            FormKind::Fields(fields) => {
                let start = defaults(fields);
                let editor = |field: &Field| Editor::new(field, start.get(&field.name));
                (fields.iter().map(editor).collect(), Step::Editing)
            }
            FormKind::Url { .. } => (Vec::new(), Step::Url),
        };
        let count = editors.len();
        let mut modal = Self {
            ask,
            editors,
            focus: 0,
            step,
            problems: Vec::new(),
            edited: vec![false; count],
            shown: vec![false; count],
            refused: false,
            scroll: 0,
        };
        modal.restyle();
        modal.check();
        modal
    }

    pub fn ask(&self) -> &FormAsk {
        &self.ask
    }

    pub fn handle_key(&mut self, key: KeyEvent) -> ModalOutcome<FormAnswer> {
        if key.kind == KeyEventKind::Release {
            return ModalOutcome::Pending;
        }
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            // Esc cancels: a dismissed form must never read as "continue without the info".
            KeyCode::Esc => return ModalOutcome::Answered(FormAnswer::Cancel),
            KeyCode::Char('d' | 'D') if ctrl => return ModalOutcome::Answered(FormAnswer::Decline),
            _ => {}
        }
        if let Some(rows) = scroll_rows(key) {
            if self.step != Step::Editing || matches!(key.code, KeyCode::PageUp | KeyCode::PageDown)
            {
                self.scroll_by(rows);
                return ModalOutcome::Pending;
            }
        }
        let send = key.code == KeyCode::Enter || (ctrl && key.code == KeyCode::Char('s'));
        match self.step {
            Step::Url if send => ModalOutcome::Answered(FormAnswer::Accept(BTreeMap::new())),
            Step::Review if send => {
                self.check();
                if self.problems.is_empty() {
                    ModalOutcome::Answered(FormAnswer::Accept(self.answers().0))
                } else {
                    self.back_to_editing();
                    ModalOutcome::Pending
                }
            }
            Step::Review => {
                if matches!(key.code, KeyCode::Char('e' | 'E') | KeyCode::Backspace) {
                    self.back_to_editing();
                }
                ModalOutcome::Pending
            }
            Step::Url => ModalOutcome::Pending,
            Step::Editing => {
                self.edit(key, ctrl);
                ModalOutcome::Pending
            }
        }
    }

    fn edit(&mut self, key: KeyEvent, ctrl: bool) {
        let on_review_line = self.focus == self.editors.len();
        match key.code {
            KeyCode::Char('r' | 's') if ctrl => self.review(),
            KeyCode::Enter if on_review_line => self.review(),
            KeyCode::Tab | KeyCode::Enter => self.move_focus(1),
            KeyCode::BackTab => self.move_focus(-1),
            KeyCode::Up if !self.move_in_list(-1) => {
                self.move_focus(-1);
                if let Some(Editor::Choices { picked, cursor }) = self.editors.get_mut(self.focus) {
                    *cursor = picked.len().saturating_sub(1);
                }
            }
            KeyCode::Down if !self.move_in_list(1) => self.move_focus(1),
            KeyCode::Up | KeyCode::Down => {}
            _ => self.edit_focused(key),
        }
    }

    fn edit_focused(&mut self, key: KeyEvent) {
        let FormKind::Fields(fields) = &self.ask.kind else {
            return;
        };
        let (Some(field), Some(editor)) =
            (fields.get(self.focus), self.editors.get_mut(self.focus))
        else {
            return;
        };
        match editor.key(field, key) {
            Edit::Nothing => return,
            Edit::Typed => self.edited[self.focus] = true,
            Edit::Picked => self.shown[self.focus] = true,
        }
        self.check();
    }

    /// Moves the cursor inside a focused multi-choice list; false at its ends (and elsewhere).
    fn move_in_list(&mut self, delta: isize) -> bool {
        let Some(Editor::Choices { picked, cursor }) = self.editors.get_mut(self.focus) else {
            return false;
        };
        match cursor.checked_add_signed(delta) {
            Some(next) if next < picked.len() => {
                *cursor = next;
                self.scroll = 0;
                true
            }
            _ => false,
        }
    }

    fn move_focus(&mut self, delta: isize) {
        if let Some(edited) = self.edited.get_mut(self.focus) {
            self.shown[self.focus] |= std::mem::take(edited);
        }
        let stops = self.editors.len() + 1;
        self.focus = (self.focus + stops).saturating_add_signed(delta) % stops;
        if let Some(Editor::Choices { cursor, .. }) = self.editors.get_mut(self.focus) {
            *cursor = 0;
        }
        self.scroll = 0;
        self.restyle();
    }

    /// Goes to the review step, or stays with every problem shown and the first one focused.
    fn review(&mut self) {
        self.check();
        if self.problems.is_empty() {
            self.step = Step::Review;
            self.refused = false;
            self.scroll = 0;
            return;
        }
        self.refused = true;
        self.shown.fill(true);
        self.edited.fill(false);
        let fields = fields_of(&self.ask);
        let first = self.problems.first().map(|problem| &problem.field);
        if let Some(index) = fields.iter().position(|field| Some(&field.name) == first) {
            self.focus = index;
        }
        self.scroll = 0;
        self.restyle();
    }

    fn back_to_editing(&mut self) {
        self.step = Step::Editing;
        self.scroll = 0;
        self.check();
        if !self.problems.is_empty() {
            self.review();
        }
    }

    fn scroll_by(&mut self, rows: i32) {
        // Bounded by the content at the narrowest width, where it is tallest.
        let width = (SMALLEST_WIDTH - SIDE_CHROME) as usize;
        let bound = self.body(width).rows.len() as i32;
        let floor = if self.step == Step::Editing {
            -bound
        } else {
            0
        };
        self.scroll = (self.scroll + rows).clamp(floor, bound);
    }

    /// Only the focused input shows a cursor.
    fn restyle(&mut self) {
        for (index, editor) in self.editors.iter_mut().enumerate() {
            if let Editor::Text(input) | Editor::Number(input) = editor {
                let cursor = if index == self.focus {
                    Style::default().add_modifier(Modifier::REVERSED)
                } else {
                    Style::default()
                };
                input.set_cursor_style(cursor);
            }
        }
    }

    /// The answer map as it would be sent, and the numbers that do not parse.
    fn answers(&self) -> (BTreeMap<String, FieldValue>, Vec<FieldProblem>) {
        let mut answers = BTreeMap::new();
        let mut unparsed = Vec::new();
        for (field, editor) in fields_of(&self.ask).iter().zip(&self.editors) {
            match editor.value(field) {
                Ok(Some(value)) => {
                    answers.insert(field.name.clone(), value);
                }
                Ok(None) => {}
                Err(problem) => unparsed.push(FieldProblem {
                    field: field.name.clone(),
                    problem: problem.to_owned(),
                }),
            }
        }
        (answers, unparsed)
    }

    fn check(&mut self) {
        let fields = fields_of(&self.ask);
        let (answers, mut problems) = self.answers();
        let checked = validate(fields, &answers).err().unwrap_or_default();
        let unparsed = |problem: &FieldProblem| problems.iter().any(|p| p.field == problem.field);
        let checked: Vec<FieldProblem> = checked.into_iter().filter(|p| !unparsed(p)).collect();
        problems.extend(checked);
        let order = |problem: &FieldProblem| {
            let index = fields.iter().position(|field| field.name == problem.field);
            index.unwrap_or(fields.len())
        };
        problems.sort_by_key(order);
        self.problems = problems;
    }

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
        let title = Line::from(format!(" Input request from {server} ")).style(theme::title());
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
        let used = fixing.as_deref().map_or(0, text_width) + 1;
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
        let mut lines = wrap(
            &[(&server, theme::title()), (" asks:", Style::default())],
            width,
        );
        let mut from = format!("from {}", one_line(&self.ask.origin));
        if let Some(ticket) = &self.ask.ticket {
            from.push_str(&format!(" · ticket {}", one_line(ticket)));
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
        keys.push(("Ctrl-D", "declines: the server is told no"));
        keys.push(("Esc", "cancels: the server is told you dismissed it"));
        key_lines(&keys, width)
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
                body.lines(indent(flow(items, "   ", inner)));
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
        let problems = self.problems.iter().filter(|p| p.field == field.name);
        for problem in problems.filter(|_| self.shown[index]) {
            let text = format!("✗ {}", problem.problem);
            body.lines(indent(wrap(&[(&text, theme::danger())], inner)));
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
        let mut wrapper = Wrapper::new(width.saturating_sub(2));
        for (text, style) in segments {
            wrapper.chars(text, style);
        }
        body.lines(indent_by(wrapper.finish(), 2));
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

impl Editor {
    fn new(field: &Field, start: Option<&FieldValue>) -> Self {
        match (&field.kind, start) {
            (FieldKind::Text { .. }, Some(FieldValue::Text(text))) => {
                Self::Text(input(one_line(text)))
            }
            (FieldKind::Text { .. }, _) => Self::Text(input(String::new())),
            (FieldKind::Number { .. }, Some(FieldValue::Number(n))) => {
                Self::Number(input(n.to_string()))
            }
            (FieldKind::Integer { .. }, Some(FieldValue::Integer(n))) => {
                Self::Number(input(n.to_string()))
            }
            (FieldKind::Number { .. } | FieldKind::Integer { .. }, _) => {
                Self::Number(input(String::new()))
            }
            (FieldKind::Boolean { .. }, Some(FieldValue::Boolean(yes))) => {
                Self::Boolean(Some(*yes))
            }
            (FieldKind::Boolean { .. }, _) => Self::Boolean(None),
            (FieldKind::Choice { options, .. }, start) => {
                let value = match start {
                    Some(FieldValue::Choice(value)) => Some(value),
                    _ => None,
                };
                Self::Choice(options.iter().position(|o| Some(&o.value) == value))
            }
            (FieldKind::Choices { options, .. }, start) => {
                let values = match start {
                    Some(FieldValue::Choices(values)) => values.as_slice(),
                    _ => &[],
                };
                let picked = options.iter().map(|o| values.contains(&o.value)).collect();
                Self::Choices { picked, cursor: 0 }
            }
        }
    }

    fn key(&mut self, field: &Field, key: KeyEvent) -> Edit {
        let plain = !key
            .modifiers
            .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT);
        let clear = matches!(key.code, KeyCode::Backspace | KeyCode::Delete);
        match self {
            // A field is one line: nothing that would start a second one reaches it.
            Self::Text(_) | Self::Number(_) if starts_a_line(key) => Edit::Nothing,
            Self::Text(input) => typed(input.input(key)),
            Self::Number(input) => match key.code {
                KeyCode::Char(c) if plain && !number_char(&field.kind, c) => Edit::Nothing,
                _ => typed(input.input(key)),
            },
            Self::Boolean(value) => {
                *value = match key.code {
                    KeyCode::Char(' ') | KeyCode::Left | KeyCode::Right => {
                        Some(*value != Some(true))
                    }
                    KeyCode::Char('y' | 'Y') => Some(true),
                    KeyCode::Char('n' | 'N') => Some(false),
                    _ if clear => None,
                    _ => return Edit::Nothing,
                };
                Edit::Picked
            }
            Self::Choice(chosen) => {
                let FieldKind::Choice { options, .. } = &field.kind else {
                    return Edit::Nothing;
                };
                let count = options.len();
                if count == 0 {
                    return Edit::Nothing;
                }
                *chosen = match (key.code, *chosen) {
                    (KeyCode::Char(' ') | KeyCode::Right, None) => Some(0),
                    (KeyCode::Char(' ') | KeyCode::Right, Some(n)) => Some((n + 1) % count),
                    (KeyCode::Left, None) => Some(count - 1),
                    (KeyCode::Left, Some(n)) => Some((n + count - 1) % count),
                    _ if clear => None,
                    _ => return Edit::Nothing,
                };
                Edit::Picked
            }
            Self::Choices { picked, cursor } => match (key.code, picked.get_mut(*cursor)) {
                (KeyCode::Char(' '), Some(pick)) => {
                    *pick = !*pick;
                    Edit::Picked
                }
                _ => Edit::Nothing,
            },
        }
    }

    /// The value to send: `None` leaves the field out; `Err` is a number that does not parse.
    fn value(&self, field: &Field) -> Result<Option<FieldValue>, &'static str> {
        let value = match (self, &field.kind) {
            (Self::Text(input), _) => {
                let text = input.lines().concat();
                (!text.trim().is_empty()).then_some(FieldValue::Text(text))
            }
            (Self::Number(input), kind) => {
                let text = input.lines().concat();
                let text = text.trim();
                if text.is_empty() {
                    None
                } else if let FieldKind::Integer { .. } = kind {
                    let integer = text
                        .parse()
                        .map_err(|_| "must be a whole number, like 12")?;
                    Some(FieldValue::Integer(integer))
                } else {
                    let number = text.parse::<f64>().ok().filter(|n| n.is_finite());
                    Some(FieldValue::Number(
                        number.ok_or("must be a number, like 12.5")?,
                    ))
                }
            }
            (Self::Boolean(value), _) => value.map(FieldValue::Boolean),
            (Self::Choice(chosen), FieldKind::Choice { options, .. }) => chosen
                .and_then(|n| options.get(n))
                .map(|option| FieldValue::Choice(option.value.clone())),
            (Self::Choices { picked, .. }, FieldKind::Choices { options, .. }) => {
                let pairs = options.iter().zip(picked);
                let values: Vec<String> = pairs
                    .filter(|(_, picked)| **picked)
                    .map(|(option, _)| option.value.clone())
                    .collect();
                // Nothing picked leaves an optional field out rather than sending an empty list.
                (field.required || !values.is_empty()).then_some(FieldValue::Choices(values))
            }
            (Self::Choice(_) | Self::Choices { .. }, _) => None,
        };
        Ok(value)
    }

    /// What the field accepts, in words (dim, under the widget).
    fn hint(&self, field: &Field) -> Option<String> {
        match &field.kind {
            FieldKind::Text {
                min_length,
                max_length,
                format,
                ..
            } => {
                let typed = match self {
                    Self::Text(input) => input.lines().concat().chars().count(),
                    _ => 0,
                };
                let min_length = min_length.filter(|&min| min > 0);
                let length = match (min_length, max_length) {
                    (Some(min), Some(max)) => {
                        Some(format!("{min} to {max} characters ({typed} so far)"))
                    }
                    (None, Some(max)) => Some(format!("at most {max} characters ({typed} so far)")),
                    (Some(min), None) => Some(format!("at least {min} characters")),
                    (None, None) => None,
                };
                let format = format.map(|format| match format {
                    TextFormat::Email => "an email address like name@example.com".to_owned(),
                    TextFormat::Uri => "a web address like https://example.com".to_owned(),
                    TextFormat::Date => "a date like 2026-03-31".to_owned(),
                    TextFormat::DateTime => "a date and time like 2026-03-31T14:30:00Z".to_owned(),
                });
                let parts: Vec<String> = format.into_iter().chain(length).collect();
                (!parts.is_empty()).then(|| parts.join(" · "))
            }
            FieldKind::Number {
                minimum, maximum, ..
            } => Some(format!("a number{}", bounds(*minimum, *maximum))),
            FieldKind::Integer {
                minimum, maximum, ..
            } => Some(format!("a whole number{}", bounds(*minimum, *maximum))),
            FieldKind::Boolean { .. } | FieldKind::Choice { .. } => None,
            FieldKind::Choices {
                min_items,
                max_items,
                ..
            } => {
                let picked = match self {
                    Self::Choices { picked, .. } => picked.iter().filter(|p| **p).count(),
                    _ => 0,
                };
                let range = match (min_items, max_items) {
                    (Some(min), Some(max)) if min == max => format!("pick {min}"),
                    (Some(min), Some(max)) => format!("pick {min} to {max}"),
                    (Some(min), None) => format!("pick at least {min}"),
                    (None, Some(max)) => format!("pick at most {max}"),
                    (None, None) => "pick any".to_owned(),
                };
                Some(format!("{range} ({picked} picked)"))
            }
        }
    }
}

enum Edit {
    Nothing,
    /// Text changed: its problems show once the person leaves the field.
    Typed,
    /// A pick changed: its problems show at once.
    Picked,
}

fn typed(changed: bool) -> Edit {
    if changed { Edit::Typed } else { Edit::Nothing }
}

fn starts_a_line(key: KeyEvent) -> bool {
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    matches!(key.code, KeyCode::Enter | KeyCode::Char('\n' | '\r'))
        || (ctrl && matches!(key.code, KeyCode::Char('m' | 'j')))
}

fn number_char(kind: &FieldKind, c: char) -> bool {
    let decimal = matches!(kind, FieldKind::Number { .. }) && c == '.';
    c.is_ascii_digit() || c == '-' || decimal
}

fn input(text: String) -> TextArea<'static> {
    let mut input = TextArea::new(vec![text]);
    input.move_cursor(CursorMove::End);
    input.set_cursor_line_style(Style::default());
    input.set_style(Style::default().add_modifier(Modifier::UNDERLINED));
    input.set_placeholder_text("(empty)");
    input.set_placeholder_style(theme::dim().add_modifier(Modifier::UNDERLINED));
    input
}

fn bounds<T: std::fmt::Display>(minimum: Option<T>, maximum: Option<T>) -> String {
    match (minimum, maximum) {
        (Some(min), Some(max)) => format!(" between {min} and {max}"),
        (Some(min), None) => format!(", at least {min}"),
        (None, Some(max)) => format!(", at most {max}"),
        (None, None) => String::new(),
    }
}

/// A value as the review shows it: what is sent, with an option's label beside its value.
fn shown_value(field: &Field, value: &FieldValue) -> String {
    let label = |value: &str| {
        let options = match &field.kind {
            FieldKind::Choice { options, .. } | FieldKind::Choices { options, .. } => {
                options.as_slice()
            }
            _ => &[],
        };
        let option = options.iter().find(|option| option.value == value);
        match option.map(|option| one_line(&option.label)) {
            Some(label) if label != value => format!("{label} ({})", one_line(value)),
            _ => one_line(value),
        }
    };
    match value {
        FieldValue::Text(text) => format!("\"{}\"", one_line(text)),
        FieldValue::Number(n) => n.to_string(),
        FieldValue::Integer(n) => n.to_string(),
        FieldValue::Boolean(true) => "yes".to_owned(),
        FieldValue::Boolean(false) => "no".to_owned(),
        FieldValue::Choice(value) => label(value),
        FieldValue::Choices(values) if values.is_empty() => "none picked".to_owned(),
        FieldValue::Choices(values) => {
            let labels: Vec<String> = values.iter().map(|value| label(value)).collect();
            labels.join(", ")
        }
    }
}

/// Where a URL really leads: the host after `scheme://` and any `user@`, before a port or
/// path. Browsers read `\` as `/`, so it ends the host too.
fn host_range(url: &str) -> Option<Range<usize>> {
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
fn host_style() -> Style {
    theme::warning().add_modifier(Modifier::UNDERLINED)
}

fn scroll_rows(key: KeyEvent) -> Option<i32> {
    match key.code {
        KeyCode::Up => Some(-1),
        KeyCode::Down => Some(1),
        KeyCode::PageUp => Some(-PAGE_ROWS),
        KeyCode::PageDown => Some(PAGE_ROWS),
        _ => None,
    }
}

fn fields_of(ask: &FormAsk) -> &[Field] {
    match &ask.kind {
        FormKind::Fields(fields) => fields,
        FormKind::Url { .. } => &[],
    }
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

/// The footer: `key what` items, as many to a line as fit.
fn key_lines(keys: &[(&str, &str)], width: usize) -> Vec<Line<'static>> {
    let items = keys
        .iter()
        .map(|(key, what)| {
            vec![
                Span::styled(key.to_string(), theme::key()),
                Span::raw(format!(" {what}")),
            ]
        })
        .collect();
    flow(items, " · ", width)
}

/// Lays out items (kept whole) left to right, as many to a line as fit.
fn flow(items: Vec<Vec<Span<'static>>>, separator: &str, width: usize) -> Vec<Line<'static>> {
    let mut lines: Vec<Line<'static>> = Vec::new();
    let mut line: Vec<Span<'static>> = Vec::new();
    let mut used = 0;
    for item in items {
        let item_width: usize = item.iter().map(Span::width).sum();
        let gap = text_width(separator);
        if used > 0 && used + gap + item_width > width {
            lines.push(Line::from(std::mem::take(&mut line)));
            used = 0;
        }
        if used > 0 {
            line.push(Span::styled(separator.to_owned(), theme::dim()));
            used += gap;
        }
        used += item_width;
        line.extend(item);
    }
    if !line.is_empty() {
        lines.push(Line::from(line));
    }
    lines
}

fn indent(lines: Vec<Line<'static>>) -> Vec<Line<'static>> {
    indent_by(lines, INDENT)
}

fn indent_by(lines: Vec<Line<'static>>, columns: usize) -> Vec<Line<'static>> {
    let with_margin = |mut line: Line<'static>| {
        line.spans.insert(0, Span::raw(" ".repeat(columns)));
        line
    };
    lines.into_iter().map(with_margin).collect()
}

fn text_width(text: &str) -> usize {
    Span::raw(text).width()
}

/// Styled text broken into lines of at most `width` columns: at spaces where it can be, inside
/// a word too long for a line, and at every newline.
fn wrap(parts: &[(&str, Style)], width: usize) -> Vec<Line<'static>> {
    let mut wrapper = Wrapper::new(width);
    for (text, style) in parts {
        wrapper.words(text, *style);
    }
    wrapper.finish()
}

struct Wrapper {
    width: usize,
    lines: Vec<Line<'static>>,
    spans: Vec<Span<'static>>,
    used: usize,
    /// The current line began where a long line was broken (its leading spaces go).
    soft: bool,
}

impl Wrapper {
    fn new(width: usize) -> Self {
        Self {
            width: width.max(1),
            lines: Vec::new(),
            spans: Vec::new(),
            used: 0,
            soft: false,
        }
    }

    fn push(&mut self, text: &str, style: Style) {
        self.used += text_width(text);
        match self.spans.last_mut() {
            Some(last) if last.style == style => last.content.to_mut().push_str(text),
            _ => self.spans.push(Span::styled(text.to_owned(), style)),
        }
    }

    fn end_line(&mut self, soft: bool) {
        self.lines.push(Line::from(std::mem::take(&mut self.spans)));
        self.used = 0;
        self.soft = soft;
    }

    fn words(&mut self, text: &str, style: Style) {
        for (n, paragraph) in text.split('\n').enumerate() {
            if n > 0 {
                self.end_line(false);
            }
            for word in paragraph.split_inclusive(' ') {
                let word_width = text_width(word.trim_end_matches(' '));
                if self.used > 0 && self.used + word_width > self.width {
                    self.end_line(true);
                }
                if self.used == 0 && self.soft && word.trim().is_empty() {
                    continue;
                }
                if word_width > self.width {
                    self.chars(word, style);
                } else {
                    self.push(word, style);
                }
            }
        }
    }

    /// Breaks anywhere: for text that must be shown whole, such as a URL.
    fn chars(&mut self, text: &str, style: Style) {
        let mut buffer = [0; 4];
        for c in text.chars() {
            let c = c.encode_utf8(&mut buffer);
            if self.used > 0 && self.used + text_width(c) > self.width {
                self.end_line(true);
            }
            self.push(c, style);
        }
    }

    fn finish(mut self) -> Vec<Line<'static>> {
        if !self.spans.is_empty() || self.lines.is_empty() {
            self.end_line(false);
        }
        self.lines
    }
}

#[cfg(test)]
mod tests;
