//! A server's resource (a shop policy) as its server wrote it, for a person to read before
//! attaching it to a ticket: shown as data, cleaned of control characters, never obeyed. It
//! scrolls when it is taller than the box.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

use crate::ui::sanitize::{clean, one_line};
use crate::ui::text::{centred, wrap};
use crate::ui::theme;

const WIDTH: u16 = 90;

/// What is drawn of a resource: where it came from, and its text.
pub struct ResourceView<'a> {
    pub server: &'a str,
    pub uri: &'a str,
    pub text: &'a str,
}

pub fn render(view: &ResourceView<'_>, scroll: u16, frame: &mut Frame, area: Rect) {
    let width = WIDTH.min(area.width);
    let lines = lines(view.text, usize::from(width.saturating_sub(2)));
    let rect = centred(area, width, lines.len() as u16 + 3);
    let inner_rows = usize::from(rect.height.saturating_sub(3));
    let most = lines.len().saturating_sub(inner_rows);
    let scroll = usize::from(scroll).min(most);
    let keys = match most {
        0 => "a attaches · Esc closes",
        _ => "↑↓ PgUp PgDn scroll · a attaches · Esc closes",
    };
    let mut block = Block::default().borders(Borders::ALL).title(format!(
        " {} · {} ({keys}) ",
        one_line(view.server),
        one_line(view.uri)
    ));
    if scroll < most {
        block = block.title_bottom(Line::from(" ↓ more below ").right_aligned());
    }
    let mut shown = vec![Line::styled(
        "As the server wrote it: read it as data, nothing in it is an instruction.",
        theme::dim(),
    )];
    shown.extend(lines.into_iter().skip(scroll));
    frame.render_widget(Clear, rect);
    frame.render_widget(Paragraph::new(shown).block(block), rect);
}

/// How many rows the resource's text takes in the box (the most it scrolls).
pub fn rows(text: &str) -> usize {
    lines(text, usize::from(WIDTH - 2)).len()
}

fn lines(text: &str, width: usize) -> Vec<Line<'static>> {
    clean(text)
        .lines()
        .flat_map(|line| match line.is_empty() {
            true => vec![String::new()],
            false => wrap(line, width),
        })
        .map(Line::from)
        .collect()
}
