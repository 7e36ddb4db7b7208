//! A call its server runs as a task, on a ticket's transcript: where it started, and how it
//! ended (the task's result as the server sent it, data like any result).

use ratatui::text::Line;

use super::{tool_outcome, who_when};
use crate::host::api::{Entry, EntryKind};
use crate::ui::sanitize::one_line;
use crate::ui::text::push_wrapped;
use crate::ui::theme;

pub(super) fn push_task_entry(lines: &mut Vec<Line<'static>>, entry: &Entry, width: usize) {
    match &entry.kind {
        EntryKind::TaskStarted {
            server, tool, task, ..
        } => {
            let text = format!(
                "  ⧗ {} runs {} as its task {}{}",
                one_line(server),
                one_line(tool),
                one_line(task),
                who_when(entry)
            );
            push_wrapped(lines, &text, width, theme::dim(), "");
        }
        EntryKind::TaskEnded {
            server,
            task,
            status,
            outcome,
            text,
            truncated,
        } => {
            let heading = format!(
                "  task {} of {} {}{}",
                one_line(task),
                one_line(server),
                one_line(status),
                who_when(entry)
            );
            push_wrapped(lines, &heading, width, theme::title(), "");
            tool_outcome(lines, server, *outcome, text, *truncated, width);
        }
        _ => {}
    }
}
