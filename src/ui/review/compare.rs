//! Review against another recording (`support-desk review NEW --against OLD`): the selected
//! ticket's run beside its counterpart in the other recording, at the same step, and the two
//! runs' figures as a bar chart, since a reviewer would rather look than read.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Style, Stylize};
use ratatui::text::Line;
use ratatui::widgets::{Bar, BarChart, BarGroup, Block, Paragraph};

use super::history::{history_lines, step_title};
use super::one_line;
use crate::host::api::Summary;
use crate::recording::review::{Review, ReviewTicket};
use crate::ui::theme;

/// The run of `ticket` in `other` that matches it: the same ticket, the same run in order.
pub(super) fn counterpart<'a>(
    review: &Review,
    selected: usize,
    other: &'a Review,
) -> Option<&'a ReviewTicket> {
    let ticket = review.tickets.get(selected)?;
    let nth = review.tickets[..selected]
        .iter()
        .filter(|t| t.ticket == ticket.ticket)
        .count();
    other
        .tickets
        .iter()
        .filter(|t| t.ticket == ticket.ticket)
        .nth(nth)
}

/// One run at `step` (its last step when it has fewer), showing the step's end.
pub(super) fn render_run(
    frame: &mut Frame,
    area: Rect,
    label: &str,
    run: Option<&ReviewTicket>,
    step: usize,
    unfolded: bool,
) {
    let width = usize::from(area.width.saturating_sub(2)).max(1);
    let Some(run) = run else {
        let block = Block::bordered().title(Line::styled(format!(" {label} "), theme::title()));
        let text = Line::styled(
            "this ticket has no such run in this recording",
            theme::dim(),
        );
        frame.render_widget(Paragraph::new(text).block(block), area);
        return;
    };
    let step = step.min(run.steps().len().saturating_sub(1));
    let (lines, _) = history_lines(run, step, unfolded, width);
    let height = usize::from(area.height.saturating_sub(2));
    let top = lines.len().saturating_sub(height);
    let title = format!(" {label}: {}", step_title(run, step).trim_start());
    let block = Block::bordered().title(Line::styled(title, theme::title()));
    let top = u16::try_from(top).unwrap_or(u16::MAX);
    frame.render_widget(Paragraph::new(lines).block(block).scroll((top, 0)), area);
}

/// The figures a reviewer compares first, old beside new.
fn counts(summary: &Summary) -> [(&'static str, u64); 7] {
    let n = |v: usize| u64::try_from(v).unwrap_or(u64::MAX);
    [
        ("1st tool", n(summary.first_tool_as_tagged.right)),
        ("drafts", n(summary.drafts)),
        ("at limit", n(summary.stopped_at_turn_limit)),
        ("flagged", n(summary.flagged_for_person)),
        ("consent", n(summary.consent_questions)),
        ("errors", n(summary.outcomes.tool_error)),
        ("refunds", n(summary.refunds_issued)),
    ]
}

/// Both recordings' counts as grouped bars: this recording's and the other's, per figure.
pub(super) fn render_chart(
    frame: &mut Frame,
    area: Rect,
    this: (&str, &Summary),
    other: (&str, &Summary),
) {
    let (mine, theirs) = (counts(this.1), counts(other.1));
    let groups: Vec<BarGroup> = mine
        .iter()
        .zip(theirs.iter())
        .map(|((label, new), (_, old))| {
            BarGroup::default().label(Line::from(*label)).bars(&[
                Bar::default()
                    .value(*old)
                    .style(theme::dim())
                    .value_style(theme::dim().reversed()),
                Bar::default()
                    .value(*new)
                    .style(theme::key())
                    .value_style(theme::key().reversed()),
            ])
        })
        .collect();
    let title = format!(
        " {} (left) against {} (right) ",
        one_line(other.0),
        one_line(this.0)
    );
    let mut chart = BarChart::default()
        .block(Block::bordered().title(Line::styled(title, theme::title())))
        .bar_width(4)
        .bar_gap(1)
        .group_gap(2)
        .bar_style(Style::default());
    for group in groups {
        chart = chart.data(group);
    }
    let [chart_area, legend] =
        Layout::vertical([Constraint::Min(0), Constraint::Length(1)]).areas(area);
    frame.render_widget(chart, chart_area);
    let legend_text = Line::styled(
        "each pair: the other recording, then this one · 1st tool as tagged, drafts, stopped at the \
         turn limit, flagged for a person, consent questions, tool errors, refunds · g closes",
        theme::dim(),
    );
    frame.render_widget(Paragraph::new(legend_text), legend);
}
