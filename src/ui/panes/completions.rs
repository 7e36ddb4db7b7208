//! What Tab offers on the command line, above the footer: each name with its help, as many
//! as fit.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

use crate::ui::app::App;
use crate::ui::sanitize::one_line;
use crate::ui::theme;

/// The most completions shown at once.
const MOST: usize = 12;

/// Draws the offered completions in a box standing on the footer row `footer`.
pub fn render(app: &App, frame: &mut Frame, footer: Rect) {
    let Some(line) = &app.command_line else {
        return;
    };
    if line.offered.is_empty() {
        return;
    }
    let room = usize::from(footer.y.saturating_sub(1)).min(MOST + 2);
    let shown = line.offered.len().min(room.saturating_sub(2));
    let name_width = line
        .offered
        .iter()
        .map(|c| c.word.chars().count())
        .max()
        .unwrap_or(0);
    let mut lines: Vec<Line> = line.offered[..shown]
        .iter()
        .map(|c| {
            Line::from(vec![
                Span::styled(format!(" {:<name_width$}", one_line(&c.word)), theme::key()),
                Span::styled(format!("  {}", one_line(&c.help)), theme::dim()),
            ])
        })
        .collect();
    let more = line.offered.len() - shown;
    if more > 0
        && let Some(last) = lines.last_mut()
    {
        *last = Line::styled(format!(" … {more} more: type on to narrow"), theme::dim());
    }
    let height = (lines.len() + 2) as u16;
    let rect = Rect::new(
        footer.x,
        footer.y.saturating_sub(height),
        footer.width,
        height.min(footer.y),
    );
    frame.render_widget(Clear, rect);
    frame.render_widget(
        Paragraph::new(lines).block(
            Block::default()
                .borders(Borders::ALL)
                .title(" Tab completes "),
        ),
        rect,
    );
}
