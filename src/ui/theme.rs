//! The desk's few styles, in one place.

use ratatui::style::{Color, Modifier, Style};

pub fn title() -> Style {
    Style::default().add_modifier(Modifier::BOLD)
}

pub fn dim() -> Style {
    Style::default().fg(Color::DarkGray)
}

pub fn warning() -> Style {
    Style::default()
        .fg(Color::Yellow)
        .add_modifier(Modifier::BOLD)
}

pub fn danger() -> Style {
    Style::default().fg(Color::Red).add_modifier(Modifier::BOLD)
}

pub fn good() -> Style {
    Style::default().fg(Color::Green)
}

pub fn selected() -> Style {
    Style::default().add_modifier(Modifier::REVERSED)
}

pub fn key() -> Style {
    Style::default()
        .fg(Color::Cyan)
        .add_modifier(Modifier::BOLD)
}

/// Untrusted text (tickets, tool results, server words) is shown in its own colour so a
/// person can tell it from the desk's own text.
pub fn untrusted() -> Style {
    Style::default().fg(Color::Gray)
}
