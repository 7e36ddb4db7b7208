//! Text laid out for the terminal: wrapping by display width, flowing items along a line,
//! and centring a box. Every pane and modal lays text out through here, so a wide character
//! counts as the two columns it takes on screen everywhere.
//!
//! Nothing here cleans text: callers pass what `sanitize` has already made safe to draw.

use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

/// Columns `text` takes on screen.
pub fn width(text: &str) -> usize {
    UnicodeWidthStr::width(text)
}

/// Columns one character takes on screen (control characters take none).
pub fn char_width(c: char) -> usize {
    UnicodeWidthChar::width(c).unwrap_or(0)
}

/// A `width` × `height` rectangle in the middle of `area` (never larger than it).
pub fn centred(area: Rect, width: u16, height: u16) -> Rect {
    let (width, height) = (width.min(area.width), height.min(area.height));
    Rect {
        x: area.x + (area.width - width) / 2,
        y: area.y + (area.height - height) / 2,
        width,
        height,
    }
}

/// Plain text in rows of at most `width` columns (see [`wrapped`] for where rows break).
pub fn wrap(text: &str, width: usize) -> Vec<String> {
    wrapped(
        Span::raw(""),
        Span::raw(""),
        &[(text, Style::default())],
        width,
    )
    .into_iter()
    .map(|line| line.spans.iter().map(|s| s.content.as_ref()).collect())
    .collect()
}

/// Each line of `text` wrapped at `width` after `indent`, keeping a line's own indentation
/// (pretty JSON) within reason.
pub fn push_wrapped(
    lines: &mut Vec<Line<'static>>,
    text: &str,
    width: usize,
    style: Style,
    indent: &str,
) {
    for raw in text.lines() {
        if raw.trim().is_empty() {
            lines.push(Line::raw(""));
            continue;
        }
        let own = raw.len() - raw.trim_start().len();
        let lead = format!("{indent}{}", " ".repeat(own.min(width / 3)));
        let room = width.saturating_sub(self::width(&lead)).max(8);
        for piece in wrap(raw.trim_start(), room) {
            lines.push(Line::styled(format!("{lead}{piece}"), style));
        }
    }
}

/// Styled text in rows of at most `width` columns, with no margin (see [`wrapped`]).
pub fn wrap_styled(parts: &[(&str, Style)], width: usize) -> Vec<Line<'static>> {
    wrapped(Span::raw(""), Span::raw(""), parts, width)
}

/// `segments` (text, style) laid out in rows of at most `width` columns, breaking at spaces
/// where it can and inside a word where it must. The first row starts with `first`, every
/// other row with `rest`; a newline in a segment starts a new row.
pub fn wrapped(
    first: Span<'static>,
    rest: Span<'static>,
    segments: &[(&str, Style)],
    width: usize,
) -> Vec<Line<'static>> {
    let cells: Vec<(char, Style)> = segments
        .iter()
        .flat_map(|(text, style)| text.chars().map(move |c| (c, *style)))
        .collect();
    let first_width = width.saturating_sub(first.width()).max(1);
    let rest_width = width.saturating_sub(rest.width()).max(1);
    wrap_cells(&cells, first_width, rest_width)
        .into_iter()
        .enumerate()
        .map(|(i, row)| {
            let prefix = if i == 0 { first.clone() } else { rest.clone() };
            styled_row(prefix, &row)
        })
        .collect()
}

/// Styled text broken anywhere, never at spaces only: for text that must be shown whole and
/// unchanged, such as a URL.
pub fn wrap_anywhere(parts: &[(&str, Style)], width: usize) -> Vec<Line<'static>> {
    let width = width.max(1);
    let mut rows: Vec<Vec<(char, Style)>> = vec![Vec::new()];
    let mut used = 0;
    for (text, style) in parts {
        for c in text.chars() {
            let w = char_width(c);
            if used > 0 && used + w > width {
                rows.push(Vec::new());
                used = 0;
            }
            if let Some(row) = rows.last_mut() {
                row.push((c, *style));
            }
            used += w;
        }
    }
    rows.iter()
        .map(|row| styled_row(Span::raw(""), row))
        .collect()
}

fn wrap_cells(
    cells: &[(char, Style)],
    first_width: usize,
    rest_width: usize,
) -> Vec<Vec<(char, Style)>> {
    let mut rows: Vec<Vec<(char, Style)>> = Vec::new();
    let mut row: Vec<(char, Style)> = Vec::new();
    let mut row_width = 0;
    let limit = |rows: &Vec<Vec<(char, Style)>>| {
        if rows.is_empty() {
            first_width
        } else {
            rest_width
        }
    };
    let mut start = 0;
    while start < cells.len() {
        let c = cells[start].0;
        if c == '\n' {
            rows.push(std::mem::take(&mut row));
            row_width = 0;
            start += 1;
            continue;
        }
        // The next token: a run of spaces, or a word.
        let spaces = c == ' ';
        let end = cells[start..]
            .iter()
            .position(|&(d, _)| d == '\n' || (d == ' ') != spaces)
            .map_or(cells.len(), |offset| start + offset);
        let token = &cells[start..end];
        start = end;
        let token_width: usize = token.iter().map(|&(c, _)| char_width(c)).sum();
        if row_width + token_width <= limit(&rows) {
            row.extend_from_slice(token);
            row_width += token_width;
        } else if spaces {
            // The row breaks here; the spaces go with the break.
            rows.push(std::mem::take(&mut row));
            row_width = 0;
        } else if token_width <= rest_width && !row.is_empty() {
            while row.last().is_some_and(|&(c, _)| c == ' ') {
                row.pop();
            }
            rows.push(std::mem::take(&mut row));
            row.extend_from_slice(token);
            row_width = token_width;
        } else {
            for &cell in token {
                let w = char_width(cell.0);
                if row_width + w > limit(&rows) && !row.is_empty() {
                    rows.push(std::mem::take(&mut row));
                    row_width = 0;
                }
                row.push(cell);
                row_width += w;
            }
        }
    }
    rows.push(row);
    rows
}

/// A row of styled characters as a line of spans, one span per run of one style.
fn styled_row(prefix: Span<'static>, row: &[(char, Style)]) -> Line<'static> {
    let mut spans = vec![prefix];
    let mut run = String::new();
    let mut run_style = None;
    for &(c, style) in row {
        if let Some(previous) = run_style
            && previous != style
        {
            spans.push(Span::styled(std::mem::take(&mut run), previous));
        }
        run_style = Some(style);
        run.push(c);
    }
    if let Some(style) = run_style {
        spans.push(Span::styled(run, style));
    }
    Line::from(spans)
}

/// Items (kept whole where they fit) laid out left to right, as many to a line as fit, with
/// `separator` between them; an item wider than a line is wrapped on lines of its own.
pub fn flow(
    items: Vec<Vec<Span<'static>>>,
    separator: Span<'static>,
    width: usize,
) -> Vec<Line<'static>> {
    let width = width.max(1);
    let gap = separator.width();
    let mut lines: Vec<Line<'static>> = Vec::new();
    let mut line: Vec<Span<'static>> = Vec::new();
    let mut used = 0;
    for item in items {
        let item_width: usize = item.iter().map(Span::width).sum();
        if used > 0 && used + gap + item_width > width {
            lines.push(Line::from(std::mem::take(&mut line)));
            used = 0;
        }
        if item_width > width {
            let parts: Vec<(&str, Style)> =
                item.iter().map(|s| (s.content.as_ref(), s.style)).collect();
            lines.extend(wrap_styled(&parts, width));
            continue;
        }
        if used > 0 {
            line.push(separator.clone());
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

/// `key what` items flowed as many to a line as fit, for a modal's key line.
pub fn key_lines(keys: &[(&str, &str)], key_style: Style, width: usize) -> Vec<Line<'static>> {
    let items = keys
        .iter()
        .map(|(key, what)| {
            vec![
                Span::styled(key.to_string(), key_style),
                Span::raw(format!(" {what}")),
            ]
        })
        .collect();
    flow(items, Span::styled(" · ", super::theme::dim()), width)
}

/// `lines`, each moved right by `columns`.
pub fn indent_by(lines: Vec<Line<'static>>, columns: usize) -> Vec<Line<'static>> {
    let with_margin = |mut line: Line<'static>| {
        line.spans.insert(0, Span::raw(" ".repeat(columns)));
        line
    };
    lines.into_iter().map(with_margin).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wide_characters_count_as_the_two_columns_they_take() {
        let rows = wrap("配送 が 遅れて います", 6);
        assert_eq!(rows, ["配送", "が", "遅れて", "います"]);
        assert!(rows.iter().all(|row| width(row) <= 6));
    }

    #[test]
    fn a_word_longer_than_the_row_is_cut_and_nothing_is_lost() {
        let rows = wrap("see https://example.com/a/very/long/path now", 12);
        assert!(rows.iter().all(|row| width(row) <= 12), "{rows:?}");
        assert_eq!(
            rows.concat().replace(' ', ""),
            "seehttps://example.com/a/very/long/pathnow"
        );
    }

    #[test]
    fn a_box_is_centred_and_never_larger_than_its_area() {
        let area = Rect::new(0, 0, 80, 24);
        assert_eq!(centred(area, 40, 10), Rect::new(20, 7, 40, 10));
        assert_eq!(centred(area, 100, 30), area);
    }

    #[test]
    fn flowed_items_break_between_items_not_inside_them() {
        let items = ["one two", "three", "four five six"]
            .map(|item| vec![Span::raw(item)])
            .to_vec();
        let lines = flow(items, Span::raw(" · "), 16);
        let rows: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
        assert_eq!(rows, ["one two · three", "four five six"]);
    }
}
