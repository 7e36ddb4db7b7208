//! The picker: the prompts or resources the servers offer, or what review mode can open,
//! as a list to choose one from.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::widgets::{Block, Borders, Clear, List, ListItem, ListState};

use crate::host::api::rfc3339;
use crate::ui::app::{App, Picker, PickerKind};
use crate::ui::sanitize::one_line;
use crate::ui::text::centred;
use crate::ui::theme;

pub fn render(app: &App, picker: &Picker, frame: &mut Frame, area: Rect) {
    let (title, rows) = rows(app, picker);
    let rect = centred(
        area,
        area.width.saturating_sub(8).max(40),
        (rows.len() as u16 + 2).clamp(4, 16),
    );
    frame.render_widget(Clear, rect);
    let empty = rows.is_empty();
    let items: Vec<ListItem> = if empty {
        let none = match picker.kind {
            PickerKind::Approvals => "(no approval is open)",
            _ => "(none offered by the connected servers)",
        };
        vec![ListItem::new(none)]
    } else {
        rows.into_iter().map(ListItem::new).collect()
    };
    let list = List::new(items)
        .block(Block::default().borders(Borders::ALL).title(title))
        .highlight_style(theme::selected());
    let mut state = ListState::default().with_selected((!empty).then_some(picker.selected));
    frame.render_stateful_widget(list, rect, &mut state);
}

fn rows(app: &App, picker: &Picker) -> (&'static str, Vec<String>) {
    match picker.kind {
        PickerKind::Prompts => (
            " Prompts: run one for this ticket (Enter · Esc closes) ",
            app.prompts
                .iter()
                .map(|p| format!("{}  {}", one_line(&p.name), one_line(&p.description)))
                .collect(),
        ),
        PickerKind::Reviews => (
            " Review: open one (Enter · Esc closes) ",
            app.review_choices()
                .into_iter()
                .map(|(label, _, _)| one_line(&label))
                .collect(),
        ),
        PickerKind::Approvals => (
            " Approvals: answer one as a lead (Enter · Esc closes) ",
            app.approvals
                .iter()
                .map(|a| {
                    let busy = a
                        .answering_by
                        .as_ref()
                        .map(|lead| format!(" · {} is answering", one_line(lead)))
                        .unwrap_or_default();
                    format!(
                        "#{} {} {} · asked by {} at {}{busy} · {}",
                        a.id,
                        one_line(&a.ticket),
                        one_line(&a.tool),
                        one_line(&a.asked_by),
                        rfc3339(a.asked_at),
                        one_line(&a.message)
                    )
                })
                .collect(),
        ),
        PickerKind::Tools => (
            " Call a tool yourself (Enter opens its form · Esc closes) ",
            app.next_steps
                .iter()
                .map(|step| {
                    let values: Vec<String> = step
                        .values
                        .iter()
                        .map(|(name, value, from)| format!("{name}={value} (from {from})"))
                        .collect();
                    format!(
                        "next: {}  {}",
                        one_line(&step.tool),
                        one_line(&values.join(" "))
                    )
                })
                .chain(app.tools.iter().map(|t| {
                    let about = t.title.as_deref().unwrap_or(&t.description);
                    let withheld = if t.withheld.is_some() {
                        " (withheld)"
                    } else {
                        ""
                    };
                    format!("{}{withheld}  {}", one_line(&t.name), one_line(about))
                }))
                .collect(),
        ),
        PickerKind::Resources => (
            " Resources (Enter attaches to this ticket · v reads · Esc closes) ",
            app.resources
                .iter()
                .map(|r| {
                    let size = r.size.map(|s| format!(" {s} bytes")).unwrap_or_default();
                    format!(
                        "{} {}  {}{}",
                        one_line(&r.server),
                        one_line(&r.uri),
                        one_line(&r.title),
                        size
                    )
                })
                .collect(),
        ),
    }
}
