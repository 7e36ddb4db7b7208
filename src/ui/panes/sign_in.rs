//! The address a person opens to sign in to a server that asked for it, whole (wrapped, never
//! cut), while the desk waits for the browser to come back.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

use crate::ui::sanitize::one_line;
use crate::ui::text::centred;
use crate::ui::theme;

const WIDTH: u16 = 76;

pub fn render(server: &str, url: &str, frame: &mut Frame, area: Rect) {
    let inner = usize::from(WIDTH.min(area.width).saturating_sub(2)).max(1);
    let server = one_line(server);
    let mut lines = vec![
        Line::from(format!(
            "To sign in to {server}, open this address in your browser:"
        )),
        Line::default(),
    ];
    let url: Vec<char> = one_line(url).chars().collect();
    for chunk in url.chunks(inner) {
        lines.push(Line::from(Span::styled(
            chunk.iter().collect::<String>(),
            theme::key(),
        )));
    }
    lines.push(Line::default());
    lines.push(Line::styled(
        format!("The desk connects {server} when the browser comes back. Esc hides this."),
        theme::dim(),
    ));
    let rect = centred(area, WIDTH, lines.len() as u16 + 2);
    let block = Block::default()
        .borders(Borders::ALL)
        .title(format!(" Sign in to {server} "));
    frame.render_widget(Clear, rect);
    frame.render_widget(Paragraph::new(lines).block(block), rect);
}
