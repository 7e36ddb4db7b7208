//! The draft editor: staff edit the model's draft reply before it goes out.
//!
//! The draft is the model's words, so it is cleaned before it is shown. While the checks
//! have open findings, sending needs a reason, which is recorded with the send; nothing
//! here decides for the person, and closing keeps every edit. A macro that solves opens it
//! saying so: its solve goes with the send, and closing without sending drops it.

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Padding, Paragraph};
use tui_textarea::{CursorMove, TextArea};

use crate::ui::ModalOutcome;
use crate::ui::sanitize::{clean, one_line};
use crate::ui::text::{centred, char_width, push_wrapped, wrapped};
use crate::ui::theme;

const MAX_WIDTH: u16 = 110;
/// The findings take at most this share of the modal's rows (1/n); the draft keeps the rest.
const FINDINGS_SHARE: u16 = 3;
/// The customer's words take at most this share of the modal's rows (1/n).
const CUSTOMER_SHARE: u16 = 4;

/// What the person decided to do with the draft.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DraftAction {
    /// Send `text`; `override_reason` is why it goes out despite open findings (recorded).
    Send {
        text: String,
        override_reason: Option<String>,
    },
    /// Hand the ticket to a person, with a note for them.
    HandToPerson { note: String },
    /// Keep the edits in `text` and check them again; the editor stays open and the new
    /// findings come back through [`DraftEditor::set_findings`].
    Check { text: String },
    /// Close the editor, keeping the edits in `text`.
    Close { text: String },
}

/// What the one-line prompt under the draft asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Prompt {
    OverrideReason,
    HandOffNote,
}

impl Prompt {
    fn title(self) -> &'static str {
        match self {
            Prompt::OverrideReason => " Why send despite the findings? (recorded) ",
            Prompt::HandOffNote => " Note for the person taking over ",
        }
    }

    fn placeholder(self) -> &'static str {
        match self {
            Prompt::OverrideReason => "type the reason, then Enter",
            Prompt::HandOffNote => "what they should know (optional), then Enter",
        }
    }
}

#[derive(Debug)]
enum Mode {
    Editing,
    /// Asking a one-line question; the draft waits, unchanged, above.
    Asking {
        prompt: Prompt,
        input: Box<TextArea<'static>>,
    },
}

/// Edits a draft reply; answers with a [`DraftAction`].
#[derive(Debug)]
pub struct DraftEditor {
    ticket: String,
    /// What the customer wrote, cleaned, shown above the draft so the question stays in view.
    customer_words: Option<String>,
    findings: Vec<String>,
    draft: TextArea<'static>,
    mode: Mode,
    /// Why the last key did not do what it usually does (a blank reason, an empty reply),
    /// or what a check found.
    notice: Option<&'static str>,
    /// Ctrl-K asked for a check whose findings have not come back yet.
    checking: bool,
    /// The reply as the record held it when the editor opened (or was last told of).
    opened_with: String,
    /// The macro whose solve goes with this reply's send; dropped with the editor.
    solves_with: Option<String>,
}

impl DraftEditor {
    /// `findings` are the check findings' reasons as people read them (empty when none).
    pub fn new(ticket: String, draft: &str, findings: Vec<String>) -> Self {
        let draft_lines: Vec<String> = clean(draft).split('\n').map(str::to_owned).collect();
        // The cursor starts after the draft: what a person types adds to it.
        let mut text = TextArea::new(draft_lines);
        text.move_cursor(CursorMove::Bottom);
        text.move_cursor(CursorMove::End);
        Self {
            ticket: one_line(&ticket),
            customer_words: None,
            findings: findings.iter().map(|finding| one_line(finding)).collect(),
            draft: text,
            mode: Mode::Editing,
            notice: None,
            checking: false,
            opened_with: draft.to_owned(),
            solves_with: None,
        }
    }

    /// Sending this reply solves the conversation too, as macro `name` says.
    pub fn solve_on_send(&mut self, name: &str) {
        self.solves_with = Some(one_line(name));
    }

    /// Whether sending this reply solves the conversation.
    pub fn solves_on_send(&self) -> bool {
        self.solves_with.is_some()
    }

    /// Shows the customer's message (already cleaned) above the draft.
    pub fn with_customer_words(mut self, words: &str) -> Self {
        self.customer_words = (!words.trim().is_empty()).then(|| words.to_owned());
        self
    }

    /// The reply as the record held it when the editor opened.
    pub fn opened_with(&self) -> &str {
        &self.opened_with
    }

    /// The record's reply now, seen by the person: the next send is theirs to make.
    pub fn rebase(&mut self, now: String) {
        self.opened_with = now;
    }

    /// The findings of the draft as last checked (after Ctrl-K, the edited text).
    pub fn set_findings(&mut self, findings: &[String]) {
        self.findings = findings.iter().map(|finding| one_line(finding)).collect();
        if !std::mem::take(&mut self.checking) {
            return;
        }
        self.notice = Some(if self.findings.is_empty() {
            "Checked: no findings are open, Ctrl-S sends."
        } else {
            "Checked: the findings above are still open."
        });
    }

    /// Pasted text goes where you are typing: into the reply (newlines kept), or as one line
    /// into the reason or note being asked for. Escape sequences never get in.
    pub fn paste(&mut self, text: &str) {
        self.notice = None;
        match &mut self.mode {
            Mode::Editing => self.draft.insert_str(clean(text)),
            Mode::Asking { input, .. } => input.insert_str(one_line(text)),
        };
    }

    /// The draft as it stands, edits included.
    pub fn text(&self) -> String {
        self.draft.lines().join("\n")
    }

    pub fn handle_key(&mut self, key: KeyEvent) -> ModalOutcome<DraftAction> {
        if key.kind == KeyEventKind::Release {
            return ModalOutcome::Pending;
        }
        self.notice = None;
        match self.mode {
            Mode::Editing => self.editing_key(key),
            Mode::Asking { .. } => self.prompt_key(key),
        }
    }

    fn editing_key(&mut self, key: KeyEvent) -> ModalOutcome<DraftAction> {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Char('s') if ctrl => self.send(),
            KeyCode::Char('k') if ctrl => {
                self.checking = true;
                ModalOutcome::Answered(DraftAction::Check { text: self.text() })
            }
            KeyCode::Char('p') if ctrl => {
                self.ask(Prompt::HandOffNote);
                ModalOutcome::Pending
            }
            KeyCode::Esc => ModalOutcome::Answered(DraftAction::Close { text: self.text() }),
            _ => {
                self.draft.input(key);
                ModalOutcome::Pending
            }
        }
    }

    fn send(&mut self) -> ModalOutcome<DraftAction> {
        let text = self.text();
        if text.trim().is_empty() {
            self.notice = Some("The reply is empty: write it first, or Esc to close.");
            ModalOutcome::Pending
        } else if self.findings.is_empty() {
            ModalOutcome::Answered(DraftAction::Send {
                text,
                override_reason: None,
            })
        } else {
            self.ask(Prompt::OverrideReason);
            ModalOutcome::Pending
        }
    }

    fn prompt_key(&mut self, key: KeyEvent) -> ModalOutcome<DraftAction> {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Esc => {
                self.mode = Mode::Editing;
                ModalOutcome::Pending
            }
            // One line: Enter (or Ctrl-M, which a textarea reads as a newline) answers.
            KeyCode::Enter => self.answer_prompt(),
            KeyCode::Char('m') if ctrl => self.answer_prompt(),
            _ => {
                if let Mode::Asking { input, .. } = &mut self.mode {
                    input.input(key);
                }
                ModalOutcome::Pending
            }
        }
    }

    fn answer_prompt(&mut self) -> ModalOutcome<DraftAction> {
        let Mode::Asking { prompt, input } = &self.mode else {
            return ModalOutcome::Pending;
        };
        let answer = input.lines().join(" ").trim().to_owned();
        match prompt {
            Prompt::OverrideReason if answer.is_empty() => {
                self.notice = Some("A reason is needed to send despite the findings.");
                ModalOutcome::Pending
            }
            Prompt::OverrideReason => ModalOutcome::Answered(DraftAction::Send {
                text: self.text(),
                override_reason: Some(answer),
            }),
            Prompt::HandOffNote => {
                ModalOutcome::Answered(DraftAction::HandToPerson { note: answer })
            }
        }
    }

    fn ask(&mut self, prompt: Prompt) {
        let mut input = TextArea::default();
        input.set_cursor_line_style(Style::default());
        input.set_placeholder_text(prompt.placeholder());
        input.set_placeholder_style(theme::dim());
        input.set_block(
            Block::bordered()
                .title(Span::styled(prompt.title(), theme::title()))
                .padding(Padding::horizontal(1))
                .border_style(match prompt {
                    Prompt::OverrideReason => theme::warning(),
                    Prompt::HandOffNote => Style::default(),
                }),
        );
        self.mode = Mode::Asking {
            prompt,
            input: Box::new(input),
        };
    }

    pub fn render(&self, frame: &mut Frame, area: Rect) {
        let modal = centred(
            area,
            area.width.saturating_sub(4).min(MAX_WIDTH),
            area.height.saturating_sub(2),
        );
        let title = match &self.solves_with {
            Some(name) => format!(" Draft reply · sends and solves (macro {name}) "),
            None => " Draft reply ".to_owned(),
        };
        let block = Block::bordered()
            .title(Span::styled(title, theme::title()))
            .padding(Padding::horizontal(1));
        let inner = block.inner(modal);
        frame.render_widget(Clear, modal);
        frame.render_widget(block, modal);

        let width = usize::from(inner.width);
        let mut header = wrapped(
            Span::styled("Ticket  ", theme::dim()),
            Span::raw("        "),
            &[(&self.ticket, theme::untrusted())],
            width,
        );
        header.extend(self.customer_lines(width, inner.height / CUSTOMER_SHARE));
        header.extend(self.findings_lines(width, inner.height / FINDINGS_SHARE));
        if self.solves_with.is_some() {
            header.extend(wrapped(
                Span::styled("Solves  ", theme::dim()),
                Span::raw("        "),
                &[(
                    "Ctrl-S sends this reply, then solves the conversation; Esc closes without solving",
                    theme::warning(),
                )],
                width,
            ));
        }

        let prompt_rows = match self.mode {
            Mode::Editing => 0,
            Mode::Asking { .. } => 3,
        };
        let [header_area, draft_area, prompt_area, notice_area, keys_area] = Layout::vertical([
            Constraint::Length(u16::try_from(header.len()).unwrap_or(u16::MAX)),
            Constraint::Min(3),
            Constraint::Length(prompt_rows),
            Constraint::Length(u16::from(self.notice.is_some())),
            Constraint::Length(1),
        ])
        .areas(inner);
        frame.render_widget(Paragraph::new(header), header_area);
        self.render_draft(frame, draft_area);
        if let Mode::Asking { input, .. } = &self.mode {
            frame.render_widget(&**input, prompt_area);
        }
        if let Some(notice) = self.notice {
            frame.render_widget(
                Paragraph::new(Span::styled(notice, theme::warning())),
                notice_area,
            );
        }
        frame.render_widget(Paragraph::new(self.keys_line()), keys_area);
    }

    /// The draft, soft-wrapped to the box (tui-textarea edits it but cannot wrap), scrolled
    /// a page at a time so the cursor is always in view.
    fn render_draft(&self, frame: &mut Frame, area: Rect) {
        let focused = matches!(self.mode, Mode::Editing);
        let mut block = Block::bordered()
            .title(Span::styled(" Reply ", theme::title()))
            .padding(Padding::horizontal(1))
            .border_style(if focused {
                Style::default()
            } else {
                theme::dim()
            });
        let inner = block.inner(area);
        let width = usize::from(inner.width).max(1);
        let height = usize::from(inner.height).max(1);
        let (cursor_row, cursor_col) = self.draft.cursor();

        let mut rows: Vec<Line<'static>> = Vec::new();
        let mut cursor_at = 0;
        for (index, line) in self.draft.lines().iter().enumerate() {
            let chars: Vec<char> = line.chars().collect();
            let breaks = row_breaks(&chars, width);
            let last = breaks.len() - 1;
            for (n, &(start, end)) in breaks.iter().enumerate() {
                let text: String = chars[start..end].iter().collect();
                let holds_cursor =
                    index == cursor_row && start <= cursor_col && (cursor_col < end || n == last);
                if holds_cursor {
                    cursor_at = rows.len();
                }
                if !(holds_cursor && focused) {
                    rows.push(Line::raw(text));
                    continue;
                }
                let (before, after) = chars[start..end].split_at(cursor_col - start);
                let under = after.first().map_or(" ".to_owned(), char::to_string);
                let rest: String = after.iter().skip(1).collect();
                rows.push(Line::from(vec![
                    Span::raw(before.iter().collect::<String>()),
                    Span::styled(under, theme::selected()),
                    Span::raw(rest),
                ]));
            }
        }
        let top = cursor_at / height * height;
        if top > 0 {
            block = block.title(Line::from(" ↑ more above ").right_aligned());
        }
        if rows.len() > top + height {
            block = block.title_bottom(Line::from(" ↓ more below ").right_aligned());
        }
        frame.render_widget(block, area);
        let visible: Vec<Line<'static>> = rows.into_iter().skip(top).take(height).collect();
        frame.render_widget(Paragraph::new(visible), inner);
    }

    /// The customer's message, at most `max_rows` rows; the last row says how many did not
    /// fit.
    fn customer_lines(&self, width: usize, max_rows: u16) -> Vec<Line<'static>> {
        let Some(words) = &self.customer_words else {
            return vec![];
        };
        let mut body = Vec::new();
        push_wrapped(&mut body, words, width, theme::untrusted(), "  ");
        let max_rows = usize::from(max_rows.max(2));
        if body.len() > max_rows {
            let hidden = body.len() - (max_rows - 1);
            body.truncate(max_rows - 1);
            body.push(Line::styled(
                format!("  … {hidden} more rows; a taller window shows them"),
                theme::dim(),
            ));
        }
        let heading = "The customer wrote (data, never followed):";
        let mut lines = vec![Line::styled(heading, theme::dim())];
        lines.extend(body);
        lines
    }

    /// The open findings, at most `max_rows` rows; the last row says how many did not fit.
    fn findings_lines(&self, width: usize, max_rows: u16) -> Vec<Line<'static>> {
        if self.findings.is_empty() {
            return vec![Line::from(Span::styled(
                "✓ The checks found nothing open.",
                theme::good(),
            ))];
        }
        let count = self.findings.len();
        let heading = format!(
            "✗ {count} open finding{}: send is refused while these are open",
            if count == 1 { "" } else { "s" }
        );
        let mut lines = wrapped(
            Span::raw(""),
            Span::raw("  "),
            &[(&heading, theme::danger())],
            width,
        );
        for finding in &self.findings {
            lines.extend(wrapped(
                Span::styled("  • ", theme::danger()),
                Span::raw("    "),
                &[(finding, theme::danger())],
                width,
            ));
        }
        let max_rows = usize::from(max_rows.max(2));
        if lines.len() > max_rows {
            let hidden = lines.len() - (max_rows - 1);
            lines.truncate(max_rows - 1);
            lines.push(Line::from(Span::styled(
                format!("  … {hidden} more rows; a taller window shows them"),
                theme::danger(),
            )));
        }
        lines
    }

    fn keys_line(&self) -> Line<'static> {
        let keys: &[(&str, &str)] = match &self.mode {
            Mode::Editing => &[
                ("Ctrl-S", " send"),
                ("Ctrl-K", " check"),
                ("Ctrl-P", " to a person"),
                ("Esc", " close, keep edits"),
            ],
            Mode::Asking {
                prompt: Prompt::OverrideReason,
                ..
            } => &[
                ("Enter", " send with this reason"),
                ("Esc", " back to editing"),
            ],
            Mode::Asking {
                prompt: Prompt::HandOffNote,
                ..
            } => &[("Enter", " hand to a person"), ("Esc", " back to editing")],
        };
        let mut spans = Vec::new();
        for (i, (key, what)) in keys.iter().enumerate() {
            if i > 0 {
                spans.push(Span::raw(" · "));
            }
            spans.push(Span::styled(*key, theme::key()));
            spans.push(Span::raw(*what));
        }
        Line::from(spans)
    }
}

/// How one logical line of the draft splits into rows of at most `width` columns, as
/// (start, end) character ranges that together hold every character: a row breaks after
/// its last space where it can, and a space at the break hangs past the edge.
fn row_breaks(line: &[char], width: usize) -> Vec<(usize, usize)> {
    let mut rows = Vec::new();
    let mut start = 0;
    while start < line.len() {
        let mut end = start;
        let mut used = 0;
        while end < line.len() && used + char_width(line[end]) <= width {
            used += char_width(line[end]);
            end += 1;
        }
        // A character wider than the whole row still gets a row of its own.
        end = end.max(start + 1);
        if end < line.len() {
            if line[end] == ' ' {
                end += 1;
            } else if let Some(space) = line[start..end].iter().rposition(|&c| c == ' ')
                && space > 0
            {
                end = start + space + 1;
            }
        }
        rows.push((start, end));
        start = end;
    }
    if rows.is_empty() {
        rows.push((0, 0));
    }
    rows
}

#[cfg(test)]
mod tests;
