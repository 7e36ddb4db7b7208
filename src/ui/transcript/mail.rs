//! A conversation's steps on a ticket's transcript: a message that came in (the sender's
//! words as data), the mail server's answer to a reply, a person's solve.

use ratatui::text::Line;

use super::{at_only, who_when};
use crate::host::api::{Entry, EntryKind};
use crate::ui::sanitize::{clean, one_line};
use crate::ui::text::push_wrapped;
use crate::ui::theme;

pub(super) fn push_mail_entry(lines: &mut Vec<Line<'static>>, entry: &Entry, width: usize) {
    match &entry.kind {
        EntryKind::Received {
            from,
            subject,
            text,
            attachments,
            automatic,
            mark,
            problems,
        } => {
            lines.push(Line::raw(""));
            let heading = format!("✉ from {}{}:", one_line(from), at_only(entry));
            push_wrapped(lines, &heading, width, theme::title(), "");
            push_wrapped(lines, &one_line(subject), width, theme::untrusted(), "  ");
            push_wrapped(lines, &clean(text), width, theme::untrusted(), "    ");
            for attachment in attachments {
                let line = format!(
                    "▪ attached: {} (not given to the model)",
                    one_line(attachment)
                );
                push_wrapped(lines, &line, width, theme::dim(), "    ");
            }
            if let Some(automatic) = automatic {
                let line = format!("⚠ {automatic}: kept here, never answered by the model");
                push_wrapped(lines, &line, width, theme::warning(), "  ");
            }
            if let Some(mark) = mark {
                push_wrapped(
                    lines,
                    &format!("⚠ {}", clean(mark)),
                    width,
                    theme::danger(),
                    "  ",
                );
            }
            for problem in problems {
                push_wrapped(
                    lines,
                    &format!("⚠ {}", clean(problem)),
                    width,
                    theme::dim(),
                    "  ",
                );
            }
        }
        EntryKind::Delivery {
            message_id,
            delivered,
            words,
            attempt,
        } => {
            let (said, style) = match delivered {
                true => ("the mail server took", theme::dim()),
                false => ("the mail server did not take", theme::danger()),
            };
            let line = format!(
                "{said} <{}> (attempt {attempt}): {}{}",
                one_line(message_id),
                one_line(words),
                who_when(entry)
            );
            push_wrapped(lines, &line, width, style, "  ");
        }
        EntryKind::Solved { by, note } => {
            let mut line = format!("✔ solved by {}{}", one_line(by), at_only(entry));
            if let Some(note) = note {
                line.push_str(&format!(": {}", clean(note)));
            }
            push_wrapped(lines, &line, width, theme::title(), "  ");
        }
        _ => {}
    }
}
