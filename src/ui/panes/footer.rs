//! The footer: how many questions wait (and how many of them were put back), the search
//! being typed or stepped through, the desk's last message, or else the main keys.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::ui::app::App;
use crate::ui::sanitize::one_line;
use crate::ui::theme;

const KEYS: &str = " ↑↓ ticket · w work · W work new · Enter open · e reply · n note · / find · f filter · v review · ? help · q quit";

pub fn render(app: &App, frame: &mut Frame, area: Rect) {
    let mut spans = Vec::new();
    if let Some(waiting) = waiting(app) {
        spans.push(Span::styled(waiting, theme::warning()));
    }
    if let Some(due) = due(app) {
        spans.push(Span::styled(due, theme::danger()));
    }
    if let Some(line) = &app.command_line {
        spans.push(Span::styled(
            format!(" :{}▏", one_line(&line.text)),
            theme::key(),
        ));
        spans.push(Span::styled(
            "  Tab completes · Enter runs · Esc closes",
            theme::dim(),
        ));
    } else if let Some(search) = &app.search {
        let query = one_line(&search.query);
        if search.typing {
            spans.push(Span::styled(format!(" /{query}▏"), theme::key()));
            spans.push(Span::styled("  Enter finds · Esc cancels", theme::dim()));
        } else {
            let found = app.found().iter().filter(|&&f| f).count();
            spans.push(Span::styled(format!(" /{query}"), theme::key()));
            spans.push(Span::styled(
                format!("  {found} found · n next · N previous · Esc ends the search"),
                theme::dim(),
            ));
        }
    } else {
        match &app.message {
            Some(message) => spans.push(Span::raw(format!(" {}", one_line(message)))),
            None => spans.push(Span::styled(KEYS, theme::dim())),
        }
    }
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}

/// ` 2 late, 1 due within 1h `, when any is.
fn due(app: &App) -> Option<String> {
    let (late, soon) = app.due_counts()?;
    let window = app.warn_within().map_or(0, |w| w.as_secs() / 60);
    let within = match window {
        m if m % 60 == 0 => format!("{}h", m / 60),
        m => format!("{m}m"),
    };
    match (late, soon) {
        (0, 0) => None,
        (late, 0) => Some(format!(" {late} late ")),
        (0, soon) => Some(format!(" {soon} due within {within} ")),
        (late, soon) => Some(format!(" {late} late, {soon} due within {within} ")),
    }
}

/// ` 2 questions waiting, 1 put back (a) `.
fn waiting(app: &App) -> Option<String> {
    let count = app.waiting.len();
    let questions = match count {
        0 => return None,
        1 => "1 question waiting".to_owned(),
        n => format!("{n} questions waiting"),
    };
    Some(match app.waiting.put_back_count() {
        0 => format!(" {questions} (a) "),
        put_back if put_back == count && count == 1 => format!(" {questions}, put back (a) "),
        put_back => format!(" {questions}, {put_back} put back (a) "),
    })
}
