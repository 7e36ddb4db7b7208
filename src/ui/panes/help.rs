//! The `?` screen: every key, read from the keymap, then a legend of every status word and
//! every sign the ticket pane and review mode draw. It scrolls when it is taller than the
//! screen.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use crate::ui::app::{App, Status};
use crate::ui::command_line::VERBS;
use crate::ui::panes::queue::status_style;
use crate::ui::text::wrapped;
use crate::ui::theme;

/// Width of the left column (keys, words, signs).
const KEY_COLUMN: usize = 16;
const WIDTH: u16 = 76;

/// Signs in a ticket's history, live and in review.
const SIGNS: &[(&str, &str)] = &[
    (
        "══",
        "a run of the model began: tools offered, resources attached",
    ),
    (
        "──",
        "one model call: how long it took, the tool list and context sizes",
    ),
    ("→", "the model calls a tool, with its arguments below"),
    (
        "←",
        "what came back: result, tool error, declined, unknown tool or failed",
    ),
    ("✓ / ✗", "a person approved / declined a tool call"),
    ("?", "a server asked a person for input, and the answer"),
    (
        "⚠",
        "a check's finding on a draft, or a ticket that needs a person",
    ),
    ("✉", "the reply was sent, by whom and when"),
    ("⇢", "the ticket was handed over to a person"),
    (
        "✎",
        "an internal note (never sent, never shown to the model)",
    ),
    ("+", "a server's resource was attached to the ticket"),
    ("@", "the ticket was given to a person, or to nobody"),
    ("#", "a tag was put on the ticket, or taken off"),
];

/// Marks in review mode's list of tickets.
const REVIEW_MARKS: &[(&str, &str)] = &[
    ("✗", "the run had an error"),
    ("?", "the run asked a consent question"),
    ("€", "the run touched refunds"),
    ("»", "a person's request (a server prompt) started the run"),
    ("▸", "where the step shown begins, below the run before it"),
];

pub fn render(app: &App, scroll: u16, frame: &mut Frame, area: Rect) {
    let lines = lines(app, usize::from(WIDTH - 2));
    super::scrolled_box(frame, area, WIDTH, "Keys and signs", lines, scroll);
}

/// How many rows the help takes (the most it scrolls).
pub fn rows(app: &App) -> usize {
    lines(app, usize::from(WIDTH - 2)).len()
}

fn lines(app: &App, width: usize) -> Vec<Line<'static>> {
    let mut lines = Vec::new();
    for (key, what) in app.keymap.help_lines() {
        lines.extend(entry(Span::styled(key, theme::key()), what, width));
    }
    lines.push(Line::default());
    lines.push(Line::styled(
        "Commands after : (on the marked tickets, else the selected one)",
        theme::title(),
    ));
    for verb in VERBS {
        let name = match verb.args {
            "" => format!(":{}", verb.name),
            args => format!(":{} {args}", verb.name),
        };
        lines.extend(entry(Span::styled(name, theme::key()), verb.help, width));
    }
    lines.extend(entry(
        Span::styled(":ACTION", theme::key()),
        "any key's action by its name (:work_selected, :solve, :help); Tab completes",
        width,
    ));
    lines.push(Line::default());
    lines.push(Line::styled("Status words in the queue", theme::title()));
    for status in Status::ALL {
        let word = Span::styled(status.label(), status_style(status));
        let mut meaning = status.meaning().to_owned();
        if status.short() != status.label() {
            meaning.push_str(&format!(" (\"{}\" in a narrow queue)", status.short()));
        }
        lines.extend(entry(word, &meaning, width));
    }
    lines.push(Line::default());
    lines.push(Line::styled("Signs in a ticket's history", theme::title()));
    for (sign, what) in SIGNS {
        lines.extend(entry(Span::raw(*sign), what, width));
    }
    lines.push(Line::default());
    lines.push(Line::styled("Marks in review mode's list", theme::title()));
    for (mark, what) in REVIEW_MARKS {
        lines.extend(entry(Span::raw(*mark), what, width));
    }
    lines
}

/// `what` beside its key, word or sign, wrapped under itself.
fn entry(label: Span<'static>, what: &str, width: usize) -> Vec<Line<'static>> {
    let pad = KEY_COLUMN.saturating_sub(label.width());
    let first = Span::styled(
        format!("{}{}  ", " ".repeat(pad), label.content),
        label.style,
    );
    let rest = Span::raw(" ".repeat(KEY_COLUMN + 2));
    wrapped(
        first,
        rest,
        &[(what, ratatui::style::Style::default())],
        width,
    )
}
