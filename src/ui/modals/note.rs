//! An internal note on a ticket: a few lines for the team, kept in the desk's record, never
//! sent to the customer and never shown to the model.

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Padding, Paragraph};
use tui_textarea::TextArea;

use crate::ui::ModalOutcome;
use crate::ui::sanitize::{clean, one_line};
use crate::ui::text::centred;
use crate::ui::theme;

/// Writes a note; answers with its text (Ctrl-S), or `None` (Esc).
#[derive(Debug)]
pub struct NoteInput {
    title: &'static str,
    ticket: String,
    text: TextArea<'static>,
    notice: Option<&'static str>,
    /// An empty answer is an answer (a solve without a note).
    optional: bool,
}

impl NoteInput {
    pub fn new(ticket: String) -> Self {
        let mut text = TextArea::default();
        text.set_placeholder_text("what the team should know about this ticket");
        text.set_placeholder_style(theme::dim());
        Self {
            title: " Internal note (never sent, never shown to the model) ",
            ticket: one_line(&ticket),
            text,
            notice: None,
            optional: false,
        }
    }

    /// The same input, taking an empty text as an answer too.
    pub fn optional(mut self, placeholder: &'static str) -> Self {
        self.optional = true;
        self.text.set_placeholder_text(placeholder);
        self
    }

    /// The same input, asking under another title.
    pub fn titled(mut self, title: &'static str) -> Self {
        self.title = title;
        self
    }

    pub fn paste(&mut self, text: &str) {
        self.text.insert_str(clean(text));
    }

    pub fn handle_key(&mut self, key: KeyEvent) -> ModalOutcome<Option<String>> {
        if key.kind == KeyEventKind::Release {
            return ModalOutcome::Pending;
        }
        self.notice = None;
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Esc => ModalOutcome::Answered(None),
            KeyCode::Char('s') if ctrl => {
                let text = self.text.lines().join("\n").trim().to_owned();
                if text.is_empty() && !self.optional {
                    self.notice = Some("The note is empty: write it first, or Esc to close.");
                    ModalOutcome::Pending
                } else {
                    ModalOutcome::Answered(Some(text))
                }
            }
            _ => {
                self.text.input(key);
                ModalOutcome::Pending
            }
        }
    }

    pub fn render(&self, frame: &mut Frame, area: Rect) {
        let modal = centred(area, area.width.saturating_sub(8).min(90), 12);
        let block = Block::bordered()
            .title(Span::styled(self.title, theme::title()))
            .padding(Padding::horizontal(1));
        let inner = block.inner(modal);
        frame.render_widget(Clear, modal);
        frame.render_widget(block, modal);
        let header = Line::from(vec![
            Span::styled("Ticket  ", theme::dim()),
            Span::styled(self.ticket.clone(), theme::untrusted()),
        ]);
        frame.render_widget(
            Paragraph::new(header),
            Rect::new(inner.x, inner.y, inner.width, 1),
        );
        let body = Rect::new(
            inner.x,
            inner.y + 2,
            inner.width,
            inner.height.saturating_sub(3),
        );
        frame.render_widget(&self.text, body);
        let footer = match self.notice {
            Some(notice) => Line::styled(notice, theme::warning()),
            None => Line::styled(
                "Ctrl-S keeps the note · Esc closes without it",
                theme::dim(),
            ),
        };
        frame.render_widget(
            Paragraph::new(footer),
            Rect::new(
                inner.x,
                inner.y + inner.height.saturating_sub(1),
                inner.width,
                1,
            ),
        );
    }
}
