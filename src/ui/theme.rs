//! The desk's few styles, in one place, in the palette this desk draws with: colours for a
//! dark terminal (the default) or a light one, or none at all (`NO_COLOR`, for terminals and
//! people that want none: emphasis stays as bold and reverse).

use std::cell::Cell;

use ratatui::style::{Color, Modifier, Style};

/// Which colours the styles use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Palette {
    #[default]
    Dark,
    Light,
    NoColor,
}

thread_local! {
    /// The palette of the thread that draws (the desk draws on one).
    static PALETTE: Cell<Palette> = const { Cell::new(Palette::Dark) };
}

/// Draws with `palette` on this thread from now on.
pub fn set(palette: Palette) {
    PALETTE.with(|p| p.set(palette));
}

/// The palette for a `[theme]` preset, or none when `NO_COLOR` is set to anything.
pub fn chosen(light: bool, no_color: Option<std::ffi::OsString>) -> Palette {
    match (no_color.is_some_and(|v| !v.is_empty()), light) {
        (true, _) => Palette::NoColor,
        (false, true) => Palette::Light,
        (false, false) => Palette::Dark,
    }
}

/// `dark` on a dark terminal, `light` on a light one; no colour at all under `NO_COLOR`.
fn fg(style: Style, dark: Color, light: Color) -> Style {
    match PALETTE.with(Cell::get) {
        Palette::Dark => style.fg(dark),
        Palette::Light => style.fg(light),
        Palette::NoColor => style,
    }
}

pub fn title() -> Style {
    Style::default().add_modifier(Modifier::BOLD)
}

pub fn dim() -> Style {
    fg(Style::default(), Color::DarkGray, Color::Gray)
}

pub fn warning() -> Style {
    fg(
        Style::default().add_modifier(Modifier::BOLD),
        Color::Yellow,
        Color::Magenta,
    )
}

pub fn danger() -> Style {
    fg(
        Style::default().add_modifier(Modifier::BOLD),
        Color::Red,
        Color::Red,
    )
}

pub fn good() -> Style {
    fg(Style::default(), Color::Green, Color::Green)
}

pub fn selected() -> Style {
    Style::default().add_modifier(Modifier::REVERSED)
}

pub fn key() -> Style {
    fg(
        Style::default().add_modifier(Modifier::BOLD),
        Color::Cyan,
        Color::Blue,
    )
}

/// Untrusted text (tickets, tool results, server words) is shown in its own colour so a
/// person can tell it from the desk's own text.
pub fn untrusted() -> Style {
    fg(Style::default(), Color::Gray, Color::DarkGray)
}

/// A diff's removed lines.
pub fn removed() -> Style {
    fg(Style::default(), Color::Red, Color::Red)
}

/// A diff's added lines.
pub fn added() -> Style {
    fg(Style::default(), Color::Green, Color::Green)
}
