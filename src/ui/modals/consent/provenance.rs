//! Where a call's values came from, and what the earlier result behind a handle said: the
//! rows of the consent card that let a person check a refund against its quote.

use ratatui::text::{Line, Span};

use super::LABEL_WIDTH;
use crate::host::api::{ArgSource, ConsentAsk};
use crate::ui::sanitize::{clean, one_line};
use crate::ui::text::wrapped;
use crate::ui::theme;

/// "Where from" rows, one per checked argument, then one row per handle's backing result.
pub(super) fn lines(ask: &ConsentAsk, width: usize) -> Vec<Line<'static>> {
    let mut lines = Vec::new();
    if ask.provenance.is_empty() && ask.backing.is_empty() {
        return lines;
    }
    lines.push(Line::default());
    lines.push(Line::from(Span::styled(
        "Where each value came from",
        theme::dim(),
    )));
    for traced in &ask.provenance {
        let style = match traced.source {
            ArgSource::ToolResult { .. } => theme::dim(),
            ArgSource::Customer => theme::untrusted(),
            ArgSource::Nowhere => theme::warning(),
        };
        let (argument, value) = (one_line(&traced.argument), one_line(&traced.value));
        let source = traced.source.describe();
        lines.extend(wrapped(
            Span::raw("  "),
            Span::raw(" ".repeat(LABEL_WIDTH)),
            &[
                (&argument, theme::title()),
                (" ", theme::dim()),
                (&value, theme::untrusted()),
                ("  ", theme::dim()),
                (&source, style),
            ],
            width,
        ));
    }
    for backing in &ask.backing {
        let heading = format!(
            "What {} (turn {}) said for this {}:",
            one_line(&backing.tool),
            backing.turn,
            one_line(&backing.argument)
        );
        lines.push(Line::default());
        lines.extend(wrapped(
            Span::raw(""),
            Span::raw("  "),
            &[(&heading, theme::dim())],
            width,
        ));
        // Keys line up after the longest, two spaces before each value, so a long key never
        // runs into its value (`order_id  O-1587`).
        let keys: Vec<String> = backing.said.iter().map(|(key, _)| one_line(key)).collect();
        let key_width = keys
            .iter()
            .map(|key| key.chars().count())
            .max()
            .unwrap_or(0);
        let key_width = key_width.clamp(LABEL_WIDTH, MAX_KEY_WIDTH);
        for (key, (_, value)) in keys.iter().zip(&backing.said) {
            let value = clean(value);
            lines.extend(wrapped(
                Span::raw("  "),
                Span::raw(" ".repeat(key_width + 4)),
                &[
                    (&format!("{key:<key_width$}  "), theme::dim()),
                    (&value, theme::untrusted()),
                ],
                width,
            ));
        }
    }
    lines
}

/// The widest a key of a result may push its values to the right.
const MAX_KEY_WIDTH: usize = 24;
