//! The desk's panes (status, queue, ticket, footer) and its own screens (help, picker, the
//! `T` trust screen, the `i` servers screen, a resource being read, sign-in), one file each. Each
//! draws one rectangle from the `App` it is given and changes nothing.

pub mod completions;
pub mod footer;
pub mod help;
pub mod picker;
pub mod queue;
pub mod resource;
pub mod servers;
pub mod sign_in;
pub mod status;
pub mod ticket;
pub mod trust;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

/// A screen of `lines` in a box `width` wide, centred in `area` and scrolled `scroll` rows (no
/// further than its last row shows), titled `name` with the keys it takes; it says when more
/// is below.
pub(crate) fn scrolled_box(
    frame: &mut Frame,
    area: Rect,
    width: u16,
    name: &str,
    lines: Vec<Line<'static>>,
    scroll: u16,
) {
    let rect = crate::ui::text::centred(area, width, lines.len() as u16 + 2);
    let most = lines
        .len()
        .saturating_sub(usize::from(rect.height.saturating_sub(2)));
    let scroll = usize::from(scroll).min(most);
    let keys = match most {
        0 => "Esc closes",
        _ => "↑↓ PgUp PgDn scroll · Esc closes",
    };
    let mut block = Block::default()
        .borders(Borders::ALL)
        .title(format!(" {name} ({keys}) "));
    if scroll < most {
        block = block.title_bottom(Line::from(" ↓ more below ").right_aligned());
    }
    frame.render_widget(Clear, rect);
    let shown: Vec<Line> = lines.into_iter().skip(scroll).collect();
    frame.render_widget(Paragraph::new(shown).block(block), rect);
}
