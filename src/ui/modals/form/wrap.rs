//! Text laid out in lines of a given width, for rows that must be counted before drawing.

use ratatui::style::Style;
use ratatui::text::{Line, Span};

use super::INDENT;
use crate::ui::theme;

/// The footer: `key what` items, as many to a line as fit.
pub(super) fn key_lines(keys: &[(&str, &str)], width: usize) -> Vec<Line<'static>> {
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
pub(super) fn flow(
    items: Vec<Vec<Span<'static>>>,
    separator: &str,
    width: usize,
) -> Vec<Line<'static>> {
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

pub(super) fn indent(lines: Vec<Line<'static>>) -> Vec<Line<'static>> {
    indent_by(lines, INDENT)
}

pub(super) fn indent_by(lines: Vec<Line<'static>>, columns: usize) -> Vec<Line<'static>> {
    let with_margin = |mut line: Line<'static>| {
        line.spans.insert(0, Span::raw(" ".repeat(columns)));
        line
    };
    lines.into_iter().map(with_margin).collect()
}

pub(super) fn text_width(text: &str) -> usize {
    Span::raw(text).width()
}

/// Styled text broken into lines of at most `width` columns: at spaces where it can be, inside
/// a word too long for a line, and at every newline.
pub(super) fn wrap(parts: &[(&str, Style)], width: usize) -> Vec<Line<'static>> {
    let mut wrapper = Wrapper::new(width);
    for (text, style) in parts {
        wrapper.words(text, *style);
    }
    wrapper.finish()
}

pub(super) struct Wrapper {
    width: usize,
    lines: Vec<Line<'static>>,
    spans: Vec<Span<'static>>,
    used: usize,
    /// The current line began where a long line was broken (its leading spaces go).
    soft: bool,
}

impl Wrapper {
    pub(super) fn new(width: usize) -> Self {
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
    pub(super) fn chars(&mut self, text: &str, style: Style) {
        let mut buffer = [0; 4];
        for c in text.chars() {
            let c = c.encode_utf8(&mut buffer);
            if self.used > 0 && self.used + text_width(c) > self.width {
                self.end_line(true);
            }
            self.push(c, style);
        }
    }

    pub(super) fn finish(mut self) -> Vec<Line<'static>> {
        if !self.spans.is_empty() || self.lines.is_empty() {
            self.end_line(false);
        }
        self.lines
    }
}
