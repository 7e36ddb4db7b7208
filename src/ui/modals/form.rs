//! The lead's form: a server asks a person for input (elicitation), through the host.
//!
//! The person always sees which server asks: its prefix heads every step. Fields are edited
//! in place and checked with the host's own [`validate`]; nothing is sent before a read-only
//! review of exactly what will go. Decline ("no", Ctrl-D) and cancel ("not now", Esc) are
//! distinct at every step and cannot be typed by accident; Enter inside a field only moves
//! on. A URL request shows the whole address with its host marked; the desk never opens it.

use std::collections::BTreeMap;

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use ratatui::style::{Modifier, Style};
use tui_textarea::{CursorMove, TextArea};

use crate::host::api::{Field, FieldKind, FieldValue, FormAnswer, FormAsk, FormKind};
use crate::host::api::{FieldProblem, defaults, parse_number, validate};
use crate::ui::ModalOutcome;
use crate::ui::sanitize::one_line;
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
    /// The desk's own question in place of "<server> asks:", for a form the desk made.
    heading: Option<String>,
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
            heading: None,
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

    /// A form of the desk's own (a prompt's arguments) is headed by the desk's question,
    /// not by "<server> asks:": the server asked nothing.
    pub fn with_heading(mut self, heading: String) -> Self {
        self.heading = Some(heading);
        self
    }

    /// The question this modal answers.
    pub fn ask(&self) -> &FormAsk {
        &self.ask
    }

    /// Pasted text goes into the focused text or number field as one line; a number field
    /// keeps only the characters it would let you type.
    pub fn paste(&mut self, text: &str) {
        let FormKind::Fields(fields) = &self.ask.kind else {
            return;
        };
        let (Some(field), Some(editor), Step::Editing) = (
            fields.get(self.focus),
            self.editors.get_mut(self.focus),
            self.step,
        ) else {
            return;
        };
        let line = one_line(text);
        let changed = match editor {
            Editor::Text(input) => input.insert_str(line),
            Editor::Number(input) => {
                let kept: String = line
                    .chars()
                    .filter(|c| number_char(&field.kind, *c))
                    .collect();
                input.insert_str(kept)
            }
            Editor::Boolean(_) | Editor::Choice(_) | Editor::Choices { .. } => false,
        };
        if changed {
            self.edited[self.focus] = true;
            self.check();
        }
    }

    /// Esc cancels and Ctrl-D declines at every step; Enter sends only from the review (or
    /// accepts a URL request).
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
        let scrolls =
            self.step != Step::Editing || matches!(key.code, KeyCode::PageUp | KeyCode::PageDown);
        if let Some(rows) = scroll_rows(key).filter(|_| scrolls) {
            self.scroll_by(rows);
            return ModalOutcome::Pending;
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
        let bound = self.body_rows(width) as i32;
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
}

impl Editor {
    fn new(field: &Field, start: Option<&FieldValue>) -> Self {
        match (&field.kind, start) {
            // A default is shown, so it is cleaned; what is sent is what was shown.
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
                } else {
                    Some(parse_number(kind, text)?)
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

mod hints;
mod view;

#[cfg(test)]
mod tests;
