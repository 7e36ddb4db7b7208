//! The review screen: a recorded run, read-only, stepped through turn by turn.
//!
//! The run's figures sit on top, the runs of tickets on the left (marked for errors, consent
//! questions and refunds), the selected run on the right: the ticket's text, then one step at
//! a time, each model call with what followed from it and at the end the draft and whatever
//! people did after, below the run before it. The history is drawn by `ui::transcript`, the
//! live ticket pane's renderer, so a ticket reads the same in both; this screen adds only its
//! frame and step titles. No pane shows the data set's labels for a ticket (the tool it is
//! tagged for, whether it carries injected text): a desk cannot know them, and only the
//! scoring figures on top count them. Nothing here can change the recording; every string
//! from it is cleaned before it is drawn.

use std::cell::Cell;

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, List, ListItem, ListState, Paragraph};

use super::sanitize::one_line;
use super::text::{flow, wrap};
use super::theme;
use crate::recording::review::{Review, ReviewTicket};
use history::{history_lines, step_title, ticket_lines, ticket_row};

mod compare;
mod history;

/// What the screen's owner does after a key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReviewKey {
    Stay,
    Quit,
}

/// Which tickets the list shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Filter {
    All,
    Errors,
    Consent,
    Refunds,
}

impl Filter {
    fn next(self) -> Self {
        match self {
            Filter::All => Filter::Errors,
            Filter::Errors => Filter::Consent,
            Filter::Consent => Filter::Refunds,
            Filter::Refunds => Filter::All,
        }
    }

    fn label(self) -> &'static str {
        match self {
            Filter::All => "all",
            Filter::Errors => "errors",
            Filter::Consent => "consent",
            Filter::Refunds => "refunds",
        }
    }

    fn keeps(self, ticket: &ReviewTicket) -> bool {
        match self {
            Filter::All => true,
            Filter::Errors => ticket.has_error(),
            Filter::Consent => ticket.has_consent(),
            Filter::Refunds => ticket.touches_refunds(),
        }
    }
}

/// The pane PgUp/PgDn scroll (Tab switches).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Focus {
    TicketText,
    Step,
}

/// Lines PgUp/PgDn move.
const PAGE: u16 = 8;
/// Scrolling stops once the content, wrapped this narrow, is past; the drawing clamps to
/// the real width.
const NARROWEST: usize = 40;

#[derive(Debug, Clone)]
pub struct ReviewScreen {
    review: Review,
    filter: Filter,
    /// Index into `review.tickets`; shown only while the filter keeps it.
    selected: usize,
    /// Index into the selected run's steps; the last is the end.
    step: usize,
    ticket_scroll: u16,
    /// Lines the step pane is scrolled from where the step opens (negative: back into the
    /// run's earlier steps).
    step_scroll: i32,
    /// Where the step pane opened and how far it can scroll, as last drawn: (first line
    /// shown at the step's opening, most first line).
    step_view: Cell<Option<(usize, usize)>>,
    focus: Focus,
    unfolded: bool,
    help: bool,
    /// Another recording to hold this one against (`c` side by side, `g` the chart).
    against: Option<Review>,
    side_by_side: bool,
    chart: bool,
}

impl ReviewScreen {
    pub fn new(review: Review) -> Self {
        Self {
            review,
            filter: Filter::All,
            selected: 0,
            step: 0,
            ticket_scroll: 0,
            step_scroll: 0,
            step_view: Cell::new(None),
            focus: Focus::Step,
            unfolded: false,
            help: false,
            against: None,
            side_by_side: false,
            chart: false,
        }
    }

    /// Review `review` against `other`: opens with the two runs of each ticket side by side.
    pub fn against(review: Review, other: Review) -> Self {
        Self {
            against: Some(other),
            side_by_side: true,
            ..Self::new(review)
        }
    }

    pub fn handle_key(&mut self, key: KeyEvent) -> ReviewKey {
        if key.kind == KeyEventKind::Release {
            return ReviewKey::Stay;
        }
        match key.code {
            KeyCode::Char('q') | KeyCode::Esc => return ReviewKey::Quit,
            KeyCode::Up | KeyCode::Char('k') => self.move_selection(-1),
            KeyCode::Down | KeyCode::Char('j') => self.move_selection(1),
            KeyCode::Left | KeyCode::Char('h') => self.go_to_step(self.step.saturating_sub(1)),
            KeyCode::Right | KeyCode::Char('l') => self.go_to_step(self.step + 1),
            KeyCode::Home => self.go_to_step(0),
            KeyCode::End => self.go_to_step(usize::MAX),
            KeyCode::Char('f') => self.cycle_filter(),
            KeyCode::PageDown => self.scroll_by(PAGE as i32),
            KeyCode::PageUp => self.scroll_by(-(PAGE as i32)),
            KeyCode::Tab | KeyCode::BackTab => {
                self.focus = match self.focus {
                    Focus::TicketText => Focus::Step,
                    Focus::Step => Focus::TicketText,
                }
            }
            KeyCode::Enter => self.unfolded = !self.unfolded,
            KeyCode::Char('?') => self.help = !self.help,
            KeyCode::Char('c') if self.against.is_some() => self.side_by_side = !self.side_by_side,
            KeyCode::Char('g') if self.against.is_some() => self.chart = !self.chart,
            _ => {}
        }
        ReviewKey::Stay
    }

    /// Indices of the tickets the filter keeps.
    fn visible(&self) -> Vec<usize> {
        (0..self.review.tickets.len())
            .filter(|&i| self.filter.keeps(&self.review.tickets[i]))
            .collect()
    }

    fn current(&self) -> Option<&ReviewTicket> {
        self.visible()
            .contains(&self.selected)
            .then(|| &self.review.tickets[self.selected])
    }

    fn select(&mut self, index: usize) {
        if index != self.selected {
            self.selected = index;
            self.step = 0;
            self.ticket_scroll = 0;
            self.step_scroll = 0;
            self.step_view.set(None);
        }
    }

    fn move_selection(&mut self, by: isize) {
        let visible = self.visible();
        let Some(position) = visible.iter().position(|&i| i == self.selected) else {
            return;
        };
        let target = position.saturating_add_signed(by).min(visible.len() - 1);
        self.select(visible[target]);
    }

    fn go_to_step(&mut self, step: usize) {
        let last = self
            .current()
            .map_or(0, |t| t.steps().len().saturating_sub(1));
        let step = step.min(last);
        if step != self.step {
            self.step = step;
            self.step_scroll = 0;
            self.step_view.set(None);
        }
    }

    fn cycle_filter(&mut self) {
        self.filter = self.filter.next();
        let visible = self.visible();
        if !visible.contains(&self.selected)
            && let Some(&first) = visible.first()
        {
            self.select(first);
        }
    }

    fn scroll_by(&mut self, lines: i32) {
        let Some(ticket) = self.current() else {
            return;
        };
        match self.focus {
            Focus::TicketText => {
                let content = ticket_lines(ticket, NARROWEST).len();
                let most = u16::try_from(content).unwrap_or(u16::MAX);
                let by = i16::try_from(lines).unwrap_or(0);
                self.ticket_scroll = self.ticket_scroll.saturating_add_signed(by).min(most);
            }
            Focus::Step => {
                // Until the pane is drawn its height is unknown: as far as the content goes.
                let (opening, most) = self.step_view.get().unwrap_or_else(|| {
                    let content = history_lines(ticket, self.step, self.unfolded, NARROWEST)
                        .0
                        .len();
                    (content, content * 2)
                });
                let up = -i32::try_from(opening).unwrap_or(i32::MAX);
                let down = i32::try_from(most.saturating_sub(opening)).unwrap_or(i32::MAX);
                self.step_scroll = self.step_scroll.saturating_add(lines).clamp(up, down);
            }
        }
    }

    pub fn render(&self, frame: &mut Frame, area: Rect) {
        frame.render_widget(Clear, area);
        let header = self.header_lines(usize::from(area.width));
        let header_height = u16::try_from(header.len()).unwrap_or(u16::MAX);
        let [top, body, footer] = Layout::vertical([
            Constraint::Length(header_height),
            Constraint::Min(0),
            Constraint::Length(1),
        ])
        .areas(area);
        frame.render_widget(Paragraph::new(header), top);
        if let (true, Some(other)) = (self.chart, &self.against) {
            let this = (self.review.source.as_str(), &self.review.summary);
            compare::render_chart(frame, body, this, (other.source.as_str(), &other.summary));
            frame.render_widget(Paragraph::new(self.footer()), footer);
            return;
        }
        let list_width = (area.width * 35 / 100).clamp(28, 44);
        let [list, detail] =
            Layout::horizontal([Constraint::Length(list_width), Constraint::Min(0)]).areas(body);
        self.render_list(frame, list);
        self.render_detail(frame, detail);
        frame.render_widget(Paragraph::new(self.footer()), footer);
    }

    /// The model, then the run's figures flowed into as few lines as fit (outcomes that
    /// never happened are left out).
    fn header_lines(&self, width: usize) -> Vec<Line<'static>> {
        let review = &self.review;
        let s = &review.summary;
        let o = &s.outcomes;
        let mut lines: Vec<Line<'static>> = wrap(&one_line(&review.model), width.max(1))
            .into_iter()
            .map(|line| Line::styled(line, theme::title()))
            .collect();
        let outcomes: Vec<String> = [
            (o.result, "result"),
            (o.tool_error, "tool error"),
            (o.declined, "declined"),
            (o.unknown_tool, "unknown tool"),
            (o.failed, "failed"),
        ]
        .into_iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, label)| format!("{n} {label}"))
        .collect();
        let mut tool_calls = format!("{} tool calls", s.tool_calls);
        if !outcomes.is_empty() {
            tool_calls = format!("{tool_calls}: {}", outcomes.join(", "));
        }
        let mut flagged = format!("{} flagged for a person", s.flagged_for_person);
        let why: Vec<String> = [
            (s.stopped_at_turn_limit, "at the turn limit"),
            (s.errors, "with an error"),
        ]
        .into_iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, what)| format!("{n} {what}"))
        .collect();
        if !why.is_empty() {
            flagged = format!("{flagged} ({})", why.join(", "));
        }
        let mut figures = vec![
            format!("{} tickets", s.tickets_worked),
            format!("{} model calls", s.model_calls),
            tool_calls,
            format!(
                "first tool as tagged {} of {}",
                s.first_tool_as_tagged.right, s.first_tool_as_tagged.of
            ),
            plural(s.refunds_issued, "refund issued", "refunds issued"),
            plural(s.consent_questions, "consent question", "consent questions"),
            flagged,
        ];
        if review.truncated {
            figures.push("the recording's last line was cut off".to_owned());
        }
        let items = figures.into_iter().map(|f| vec![Span::raw(f)]).collect();
        lines.extend(flow(items, Span::raw(" · "), width));
        lines
    }

    fn render_list(&self, frame: &mut Frame, area: Rect) {
        let visible = self.visible();
        let total = self.review.tickets.len();
        let title = match self.filter {
            Filter::All => format!(" Tickets: all ({total}) "),
            filter => format!(" Tickets: {} ({}/{total}) ", filter.label(), visible.len()),
        };
        let block = Block::bordered().title(Line::styled(title, theme::title()));
        if visible.is_empty() {
            let empty = Paragraph::new(Line::styled("no tickets match", theme::dim())).block(block);
            frame.render_widget(empty, area);
            return;
        }
        let items: Vec<ListItem> = visible
            .iter()
            .map(|&i| ListItem::new(ticket_row(&self.review.tickets[i])))
            .collect();
        let position = visible.iter().position(|&i| i == self.selected);
        let height = usize::from(area.height.saturating_sub(2)).max(1);
        let offset = position
            .unwrap_or(0)
            .saturating_sub(height / 2)
            .min(visible.len().saturating_sub(height));
        let mut state = ListState::default()
            .with_selected(position)
            .with_offset(offset);
        let list = List::new(items)
            .block(block)
            .highlight_style(theme::selected());
        frame.render_stateful_widget(list, area, &mut state);
    }

    fn render_detail(&self, frame: &mut Frame, area: Rect) {
        let Some(ticket) = self.current() else {
            let text = format!(
                "No ticket is in the {} filter. Press f for the next one.",
                self.filter.label()
            );
            let paragraph = Paragraph::new(Line::styled(text, theme::dim()))
                .block(Block::bordered())
                .wrap(ratatui::widgets::Wrap { trim: true });
            frame.render_widget(paragraph, area);
            return;
        };
        let inner_width = usize::from(area.width.saturating_sub(2)).max(1);
        let text = ticket_lines(ticket, inner_width);
        let most = (area.height * 9 / 20).max(5);
        let text_height = u16::try_from(text.len() + 2).unwrap_or(u16::MAX).min(most);
        let [text_area, step_area] =
            Layout::vertical([Constraint::Length(text_height), Constraint::Min(0)]).areas(area);
        let title = format!(" Ticket {} ", one_line(&ticket.ticket));
        self.render_pane(
            frame,
            text_area,
            title,
            text,
            self.ticket_scroll,
            self.focus == Focus::TicketText,
        );
        if let (true, Some(other)) = (self.side_by_side, &self.against) {
            let [left, right] =
                Layout::horizontal([Constraint::Percentage(50), Constraint::Percentage(50)])
                    .areas(step_area);
            let theirs = compare::counterpart(&self.review, self.selected, other);
            compare::render_run(frame, left, "other", theirs, self.step, self.unfolded);
            compare::render_run(frame, right, "this", Some(ticket), self.step, self.unfolded);
            return;
        }
        let title = step_title(ticket, self.step);
        let (lines, start) = history_lines(ticket, self.step, self.unfolded, inner_width);
        // The step opens showing all of itself and as much of the run before it as fits, or,
        // when it is taller than the pane, from its own first line.
        let height = usize::from(step_area.height.saturating_sub(2));
        let most = lines.len().saturating_sub(height);
        let opening = if lines.len() - start <= height {
            most
        } else {
            start
        };
        self.step_view.set(Some((opening, most)));
        let offset = isize::try_from(self.step_scroll).unwrap_or(0);
        let top = opening.saturating_add_signed(offset).min(most);
        self.render_pane(
            frame,
            step_area,
            title,
            lines,
            u16::try_from(top).unwrap_or(u16::MAX),
            self.focus == Focus::Step,
        );
    }

    fn render_pane(
        &self,
        frame: &mut Frame,
        area: Rect,
        title: String,
        lines: Vec<Line<'static>>,
        scroll: u16,
        focused: bool,
    ) {
        let height = usize::from(area.height.saturating_sub(2));
        let most = lines.len().saturating_sub(height);
        let scroll = usize::from(scroll).min(most);
        let border = if focused {
            theme::key()
        } else {
            Style::default()
        };
        let mut block = Block::bordered()
            .border_style(border)
            .title(Line::styled(title, theme::title()));
        let marks = match (scroll > 0, scroll < most) {
            (true, true) => Some(" ↑↓ more "),
            (false, true) => Some(" ↓ more "),
            (true, false) => Some(" ↑ more "),
            (false, false) => None,
        };
        if let Some(marks) = marks {
            block = block.title_bottom(Line::styled(marks, theme::dim()).right_aligned());
        }
        let scroll = u16::try_from(scroll).unwrap_or(u16::MAX);
        frame.render_widget(Paragraph::new(lines).block(block).scroll((scroll, 0)), area);
    }

    fn footer(&self) -> Line<'static> {
        if !self.help {
            return Line::from(vec![
                Span::styled("?", theme::key()),
                Span::raw(" keys  "),
                Span::styled("q", theme::key()),
                Span::raw(" quit  "),
                Span::styled(
                    format!("read-only review of {}", one_line(&self.review.source)),
                    theme::dim(),
                ),
            ]);
        }
        let keys = [
            ("↑↓", "ticket"),
            ("←→", "turn"),
            ("f", "filter"),
            ("Tab", "pane"),
            ("PgUp/PgDn", "scroll"),
            ("Enter", "unfold"),
            ("q", "quit"),
        ];
        let compared = [("c", "side by side"), ("g", "chart")];
        let keys: Vec<(&str, &str)> = if self.against.is_some() {
            keys.into_iter().chain(compared).collect()
        } else {
            keys.to_vec()
        };
        let mut spans = vec![];
        for (key, what) in keys {
            if !spans.is_empty() {
                spans.push(Span::raw("  "));
            }
            spans.push(Span::styled(key, theme::key()));
            spans.push(Span::raw(format!(" {what}")));
        }
        Line::from(spans)
    }
}

/// `1 refund issued`, `3 refunds issued`.
fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

#[cfg(test)]
mod tests;
