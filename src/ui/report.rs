//! The lead's report on the desk's screen: the figures of [`Report`] as lines, the unsolved
//! backlog by age as a bar chart and each day's volume as sparklines, since a lead would
//! rather look than read. Names in it (leads, tickets, the time zone) come from the record
//! and the config, and are cleaned before they are drawn.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Stylize;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Bar, BarChart, BarGroup, Block, Clear, Paragraph, Sparkline};

use crate::report::{Report, Spread, span};
use crate::ui::sanitize::one_line;
use crate::ui::theme;

/// How many leads get a line of their own before the rest are counted.
const LEADS_SHOWN: usize = 4;
/// The width of a figure's name at the start of its line.
const LABEL: usize = 15;
/// The widest a day is drawn in the sparklines, in columns.
const WIDEST_DAY: usize = 4;

/// The report over the whole desk (`R`), or word that it is being read while the host reads
/// the record.
pub fn render_on_desk(report: Option<&Report>, frame: &mut Frame, area: Rect) {
    frame.render_widget(Clear, area);
    match report {
        Some(report) => render(report, frame, area),
        None => {
            let block =
                Block::bordered().title(Line::styled(" The lead's report ", theme::title()));
            let waiting = Line::styled("Reading the desk's record… (q returns)", theme::dim());
            frame.render_widget(Paragraph::new(waiting).block(block), area);
        }
    }
}

/// Draws `report` in `area`: the figures above, the backlog's ages and the daily volume below.
pub fn render(report: &Report, frame: &mut Frame, area: Rect) {
    let lines = figures(report, usize::from(area.width.saturating_sub(2)));
    let height = u16::try_from(lines.len() + 2).unwrap_or(u16::MAX);
    let [top, bottom] =
        Layout::vertical([Constraint::Length(height), Constraint::Min(0)]).areas(area);
    let title = format!(
        " The lead's report · as of {} ({}){} · {} tickets ",
        one_line(&report.as_of),
        one_line(&report.time_zone),
        report
            .since
            .as_deref()
            .map_or(String::new(), |day| format!(" · since {}", one_line(day))),
        report.tickets
    );
    let block = Block::bordered().title(Line::styled(title, theme::title()));
    frame.render_widget(Paragraph::new(lines).block(block), top);
    let [ages, daily] =
        Layout::horizontal([Constraint::Percentage(45), Constraint::Percentage(55)]).areas(bottom);
    render_ages(report, frame, ages);
    render_daily(report, frame, daily);
}

/// The figures as lines of at most `width` columns.
fn figures(report: &Report, width: usize) -> Vec<Line<'static>> {
    if report.tickets == 0 {
        return vec![Line::styled(
            "No ticket has reached the desk's record in this period yet.",
            theme::dim(),
        )];
    }
    let mut lines = vec![
        spread_line("First response", &report.first_response),
        spread_line("Resolution", &report.resolution),
        spread_line("Approval wait", &report.approvals.wait),
    ];
    let b = &report.backlog;
    lines.push(Line::from(vec![
        label("Backlog"),
        Span::raw(format!(
            "open {} · pending {} · solved {} · closed {}",
            b.open, b.pending, b.solved, b.closed
        )),
    ]));
    lines.push(late_line(report, width));
    let r = &report.replies;
    lines.push(Line::from(vec![
        label("Replies"),
        Span::raw(format!(
            "{} sent: {} as drafted · {} edited · {} by hand · {} handed over",
            r.sent, r.model_unchanged, r.model_edited, r.by_hand, r.handed_over
        )),
    ]));
    let a = &report.approvals;
    lines.push(Line::from(vec![
        label("Approvals"),
        Span::raw(format!(
            "{} asked · {} answered · {} withdrawn · {} lapsed · {} open",
            a.asked, a.answered, a.withdrawn, a.lapsed, a.open
        )),
    ]));
    for (lead, answers) in a.by_lead.iter().take(LEADS_SHOWN) {
        let mut spans = vec![
            Span::raw(format!("  {:<width$}", one_line(lead), width = LABEL - 2)),
            Span::raw(format!(
                "{} accepted · {} declined · {} cancelled",
                answers.accepted, answers.declined, answers.cancelled
            )),
        ];
        if let Some(released) = report.refunds_released.get(lead) {
            let amounts: Vec<String> = released
                .amounts
                .iter()
                .map(|(currency, amount)| format!("{} {}", one_line(currency), one_line(amount)))
                .collect();
            let mut said = format!(" · {} released", released.count);
            if !amounts.is_empty() {
                said.push_str(&format!(": {}", amounts.join(" + ")));
            }
            spans.push(Span::styled(said, theme::good()));
        }
        lines.push(Line::from(spans));
    }
    let more = a.by_lead.len().saturating_sub(LEADS_SHOWN);
    if more > 0 {
        lines.push(Line::styled(
            format!("  and {more} more leads: support-desk report lists them all"),
            theme::dim(),
        ));
    }
    lines
}

fn label(name: &str) -> Span<'static> {
    Span::styled(format!("{name:<LABEL$}"), theme::title())
}

fn spread_line(name: &str, spread: &Spread) -> Line<'static> {
    let said = |seconds: Option<u64>| seconds.map_or("-".to_owned(), span);
    Line::from(vec![
        label(name),
        Span::raw(format!(
            "{:>5} · median {:>7} · p90 {:>7}",
            spread.count,
            said(spread.median_seconds),
            said(spread.p90_seconds)
        )),
    ])
}

/// Lateness, naming as many late tickets as fit in `width` and counting the rest.
fn late_line(report: &Report, width: usize) -> Line<'static> {
    let Some(late) = &report.late else {
        return Line::from(vec![
            label("Late"),
            Span::styled("no [sla] targets in the config", theme::dim()),
        ]);
    };
    let style = if late.now > 0 {
        theme::danger()
    } else {
        theme::good()
    };
    let replies = format!(
        "first replies {} late, {} in time · ",
        late.first_reply_late, late.first_reply_in_time
    );
    let mut now = format!("{} late now", late.now);
    let room = width.saturating_sub(LABEL + replies.chars().count());
    let names: Vec<String> = late.now_tickets.iter().map(|t| one_line(t)).collect();
    for (shown, name) in names.iter().enumerate() {
        let rest = names.len() - shown - 1;
        let tail = if rest > 0 {
            format!(" +{rest}")
        } else {
            String::new()
        };
        let next = format!("{}{name}", if shown == 0 { ": " } else { ", " });
        if now.chars().count() + next.chars().count() + tail.chars().count() > room {
            now.push_str(&format!(" +{}", names.len() - shown));
            break;
        }
        now.push_str(&next);
    }
    Line::from(vec![
        label("Late"),
        Span::raw(replies),
        Span::styled(now, style),
    ])
}

/// The unsolved tickets by age, one bar per bucket, as wide as the area allows.
fn render_ages(report: &Report, frame: &mut Frame, area: Rect) {
    let ages = &report.backlog.by_age;
    let bars: Vec<Bar> = ages
        .iter()
        .map(|age| {
            Bar::default()
                .value(u64::try_from(age.tickets).unwrap_or(u64::MAX))
                .label(Line::from(age.age))
                .style(theme::key())
                .value_style(theme::key().reversed())
        })
        .collect();
    let count = u16::try_from(bars.len().max(1)).unwrap_or(1);
    let gap = 1;
    let inner = area.width.saturating_sub(2);
    let width = (inner.saturating_sub(gap * (count - 1)) / count).clamp(1, 9);
    let unsolved: usize = ages.iter().map(|a| a.tickets).sum();
    let title = format!(" Unsolved by age: {unsolved} ");
    let chart = BarChart::default()
        .block(Block::bordered().title(Line::styled(title, theme::title())))
        .data(BarGroup::default().bars(&bars))
        .bar_width(width)
        .bar_gap(gap);
    frame.render_widget(chart, area);
}

/// Tickets arrived and replies sent per day, the latest days that fit, each as wide as the
/// area allows up to [`WIDEST_DAY`] columns.
fn render_daily(report: &Report, frame: &mut Frame, area: Rect) {
    let block = Block::bordered().title(Line::styled(" Each day ", theme::title()));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let Some(last) = report.daily.last() else {
        let none = Line::styled("no days to show yet", theme::dim());
        frame.render_widget(Paragraph::new(none), inner);
        return;
    };
    let columns = usize::from(inner.width).max(1);
    let shown = report.daily.len().min(columns);
    let days = &report.daily[report.daily.len() - shown..];
    let per_day = (columns / shown).clamp(1, WIDEST_DAY);
    let widen = |values: Vec<usize>| -> Vec<u64> {
        values
            .into_iter()
            .flat_map(|v| std::iter::repeat_n(u64::try_from(v).unwrap_or(u64::MAX), per_day))
            .collect()
    };
    let arrived = widen(days.iter().map(|d| d.arrived).collect());
    let replies = widen(days.iter().map(|d| d.replies).collect());
    let [caption, arrived_area, replies_caption, replies_area] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Fill(1),
        Constraint::Length(1),
        Constraint::Fill(1),
    ])
    .areas(inner);
    let first = &days[0];
    let peak = |pick: fn(&crate::report::Day) -> usize| days.iter().map(pick).max().unwrap_or(0);
    frame.render_widget(
        Paragraph::new(Line::styled(
            format!(
                "arrived {} → {} (peak {})",
                one_line(&first.day),
                one_line(&last.day),
                peak(|d| d.arrived)
            ),
            theme::dim(),
        )),
        caption,
    );
    frame.render_widget(
        Sparkline::default().data(&arrived).style(theme::key()),
        arrived_area,
    );
    frame.render_widget(
        Paragraph::new(Line::styled(
            format!("replies sent (peak {})", peak(|d| d.replies)),
            theme::dim(),
        )),
        replies_caption,
    );
    frame.render_widget(
        Sparkline::default().data(&replies).style(theme::good()),
        replies_area,
    );
}
