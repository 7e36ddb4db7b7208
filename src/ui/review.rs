//! The review screen: a recorded run, read-only, stepped through turn by turn.
//!
//! The run's figures sit on top, the tickets on the left (marked for errors, consent
//! questions, refunds and injected text), the selected ticket on the right: its text, then
//! one step at a time, each turn (what the model saw, what it said, the consent decision,
//! the form answers, the outcome) and at the end the draft with its checks. Nothing here can
//! change the recording; every string from it is untrusted and is cleaned before it is drawn.

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, List, ListItem, ListState, Paragraph};

use super::sanitize::{clean, one_line};
use super::theme;
use crate::host::api::Outcome;
use crate::recording::review::{Review, ReviewTicket, ReviewTurn, Said};

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
/// Lines kept of each earlier tool response, of an unreadable answer, and of an outcome,
/// until Enter unfolds them.
const SAW_LINES: usize = 3;
const RAW_LINES: usize = 3;
const OUTCOME_LINES: usize = 12;

#[derive(Debug, Clone)]
pub struct ReviewScreen {
    review: Review,
    filter: Filter,
    /// Index into `review.tickets`; shown only while the filter keeps it.
    selected: usize,
    /// `0..turns.len()` is a turn; `turns.len()` is the end (the draft).
    step: usize,
    ticket_scroll: u16,
    step_scroll: u16,
    focus: Focus,
    unfolded: bool,
    help: bool,
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
            focus: Focus::Step,
            unfolded: false,
            help: false,
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
        let last = self.current().map_or(0, |t| t.turns.len());
        let step = step.min(last);
        if step != self.step {
            self.step = step;
            self.step_scroll = 0;
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
        let (content, scroll) = match self.focus {
            Focus::TicketText => (ticket_lines(ticket, NARROWEST).len(), self.ticket_scroll),
            Focus::Step => (
                step_lines(ticket, self.step, self.unfolded, NARROWEST).len(),
                self.step_scroll,
            ),
        };
        let most = u16::try_from(content).unwrap_or(u16::MAX);
        let scroll = scroll.saturating_add_signed(lines as i16).min(most);
        match self.focus {
            Focus::TicketText => self.ticket_scroll = scroll,
            Focus::Step => self.step_scroll = scroll,
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
        let mut lines: Vec<Line<'static>> = wrap(&one_line(&review.model), width)
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
        lines.extend(flow(&figures, " · ", width).into_iter().map(Line::from));
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
        let title = match ticket.turns.get(self.step) {
            Some(turn) => format!(
                " turn {} of {} · {:.1} s ",
                self.step + 1,
                ticket.turns.len(),
                turn.seconds
            ),
            None => format!(" the end · after {} turns ", ticket.turns.len()),
        };
        let lines = step_lines(ticket, self.step, self.unfolded, inner_width);
        self.render_pane(
            frame,
            step_area,
            title,
            lines,
            self.step_scroll,
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

/// One row of the ticket list: ID, the four marks (blank when absent), subject.
fn ticket_row(ticket: &ReviewTicket) -> Line<'static> {
    let mark = |on: bool, symbol: &'static str, style: Style| {
        if on {
            Span::styled(symbol, style)
        } else {
            Span::raw(" ")
        }
    };
    Line::from(vec![
        Span::raw(one_line(&ticket.ticket)),
        Span::raw(" "),
        mark(ticket.has_error(), "✗", theme::danger()),
        mark(ticket.has_consent(), "?", theme::warning()),
        mark(ticket.touches_refunds(), "€", Style::default()),
        mark(ticket.injected, "⚠", theme::warning()),
        Span::raw(" "),
        // A run with a person's request (a server prompt) is marked before its subject.
        Span::styled(
            if ticket.request.is_some() { "» " } else { "" },
            theme::key(),
        ),
        Span::styled(one_line(&ticket.subject), theme::untrusted()),
    ])
}

/// The ticket as the customer wrote it, with what the shop knows about it.
fn ticket_lines(ticket: &ReviewTicket, width: usize) -> Vec<Line<'static>> {
    let mut out = Out::new(width);
    if ticket.subject.is_empty() && ticket.body.is_empty() {
        out.text(0, "not one of the shop's tickets", theme::dim());
        return out.lines;
    }
    out.text(0, &ticket.subject, theme::title().patch(theme::untrusted()));
    out.text(
        0,
        &format!(
            "customer {} · tagged {}",
            one_line(&ticket.customer),
            one_line(&ticket.expected_tool)
        ),
        theme::dim(),
    );
    if ticket.injected {
        out.text(
            0,
            "⚠ carries instructions aimed at an agent",
            theme::warning(),
        );
    }
    out.text(0, &ticket.body, theme::untrusted());
    if let Some(request) = &ticket.request {
        out.text(
            0,
            "» A person ran a server prompt for this ticket; the model read it after the ticket:",
            theme::key(),
        );
        out.text(2, request, theme::untrusted());
    }
    out.lines
}

/// One step of a ticket: a turn, or (past the last turn) the end with the draft.
fn step_lines(
    ticket: &ReviewTicket,
    step: usize,
    unfolded: bool,
    width: usize,
) -> Vec<Line<'static>> {
    let mut out = Out::new(width);
    out.unfolded = unfolded;
    match ticket.turns.get(step) {
        Some(turn) => turn_lines(&mut out, turn),
        None => end_lines(&mut out, ticket),
    }
    out.lines
}

fn turn_lines(out: &mut Out, turn: &ReviewTurn) {
    match turn.saw.len() {
        0 => out.text(0, "Saw the system prompt and the ticket.", theme::title()),
        n => {
            let responses = plural(n, "tool response", "tool responses");
            out.text(
                0,
                &format!("Saw the ticket and {responses}:"),
                theme::title(),
            );
            for (tool, outcome, text) in &turn.saw {
                let tool = if tool.is_empty() {
                    "the host".to_owned()
                } else {
                    one_line(tool)
                };
                out.line(vec![
                    Span::raw("  "),
                    Span::raw(tool),
                    Span::raw(" · "),
                    Span::styled(one_line(outcome), label_style(outcome)),
                ]);
                out.folded(4, text, theme::untrusted(), SAW_LINES);
            }
        }
    }
    match &turn.said {
        Said::Words(words) => {
            out.text(0, "Said, in words:", theme::title());
            out.text(2, words, theme::untrusted());
        }
        Said::Unreadable { raw, problem } => {
            out.line(vec![
                Span::styled("Said: ", theme::title()),
                Span::styled("something the host could not use", theme::warning()),
            ]);
            out.folded(2, raw, theme::untrusted(), RAW_LINES);
            out.text(2, &format!("problem: {}", clean(problem)), theme::warning());
        }
        Said::Call { tool, arguments } => {
            out.line(vec![
                Span::styled("Said: call ", theme::title()),
                Span::styled(one_line(tool), theme::untrusted()),
            ]);
            if arguments.is_empty() {
                out.text(2, "(no arguments)", theme::dim());
            }
            for (name, value) in arguments {
                out.text(
                    2,
                    &format!("{} = {}", one_line(name), one_line(value)),
                    theme::untrusted(),
                );
            }
        }
    }
    if let Some((approved, by, unseen)) = &turn.consent {
        let (answer, style) = if *approved {
            ("approved", theme::good())
        } else {
            ("declined", theme::danger())
        };
        out.line(vec![
            Span::styled("Consent: ", theme::title()),
            Span::styled(answer, style),
            Span::raw(format!(" by {}", one_line(by))),
        ]);
        if !unseen.is_empty() {
            let unseen: Vec<String> = unseen.iter().map(|u| one_line(u)).collect();
            out.text(
                2,
                &format!(
                    "⚠ not in the ticket or any earlier result: {}",
                    unseen.join(", ")
                ),
                theme::warning(),
            );
        }
    }
    for (server, message, action) in &turn.inputs {
        out.line(vec![
            Span::styled("Input request from ", theme::title()),
            Span::styled(one_line(server), theme::warning()),
        ]);
        out.text(2, message, theme::untrusted());
        out.text(
            2,
            &format!("answer: {}", one_line(action)),
            Style::default(),
        );
    }
    match &turn.outcome {
        Some((tool, outcome, text, truncated)) => {
            out.line(vec![
                Span::styled("Outcome: ", theme::title()),
                Span::styled(outcome.label(), outcome_style(*outcome)),
                Span::raw(format!(" from {}", one_line(tool))),
            ]);
            out.folded(2, text, theme::untrusted(), OUTCOME_LINES);
            if *truncated {
                out.text(
                    2,
                    "(cut to the host's size limit before the model saw it)",
                    theme::dim(),
                );
            }
        }
        None => match turn.said {
            Said::Call { .. } => out.text(0, "Outcome: none recorded.", theme::warning()),
            Said::Words(_) => out.text(0, "These words end the ticket.", theme::dim()),
            Said::Unreadable { .. } => out.text(
                0,
                "The host told the model its answer could not be used.",
                theme::dim(),
            ),
        },
    }
}

fn end_lines(out: &mut Out, ticket: &ReviewTicket) {
    match (&ticket.draft, &ticket.error) {
        (Some(draft), _) => {
            out.text(0, "Draft, as staff would send it:", theme::title());
            out.text(2, draft, theme::untrusted());
            if ticket.findings.is_empty() {
                out.line(vec![
                    Span::styled("Checks: ", theme::title()),
                    Span::styled("no findings", theme::good()),
                ]);
            } else {
                out.line(vec![
                    Span::styled("Checks: ", theme::title()),
                    Span::styled(
                        format!("{} findings; a person must look", ticket.findings.len()),
                        theme::danger(),
                    ),
                ]);
                for finding in &ticket.findings {
                    out.text(2, &format!("✗ {}", clean(finding)), theme::danger());
                }
            }
        }
        (None, Some(error)) => {
            out.text(0, "No draft: the run ended in an error.", theme::danger());
            out.text(2, error, theme::untrusted());
        }
        (None, None) if ticket.stopped_at_turn_limit => {
            out.text(0, "No draft: stopped at the turn limit.", theme::danger());
            out.text(
                2,
                &format!(
                    "{} model calls went by without a reply to the customer; a person takes this ticket.",
                    ticket.turns.len()
                ),
                Style::default(),
            );
        }
        (None, None) => out.text(
            0,
            "No draft: the recording ends before this ticket finished.",
            theme::warning(),
        ),
    }
}

/// `1 refund issued`, `3 refunds issued`.
fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

fn outcome_style(outcome: Outcome) -> Style {
    match outcome {
        Outcome::Result => theme::good(),
        Outcome::Declined => theme::warning(),
        Outcome::ToolError | Outcome::UnknownTool | Outcome::Failed => theme::danger(),
    }
}

/// The style of an outcome named by its label (as the model saw it).
fn label_style(label: &str) -> Style {
    Outcome::ALL
        .into_iter()
        .find(|o| o.label() == label)
        .map_or(Style::default(), outcome_style)
}

/// Lines laid out for one width: every text is cleaned, wrapped and indented here.
struct Out {
    width: usize,
    unfolded: bool,
    lines: Vec<Line<'static>>,
}

impl Out {
    fn new(width: usize) -> Self {
        Self {
            width,
            unfolded: false,
            lines: vec![],
        }
    }

    /// One line as given (its spans already cleaned); cut at the pane's edge.
    fn line(&mut self, spans: Vec<Span<'static>>) {
        self.lines.push(Line::from(spans));
    }

    fn text(&mut self, indent: usize, text: &str, style: Style) {
        self.push(indent, text, style, None);
    }

    /// Like `text`, keeping `keep` lines until the screen is unfolded.
    fn folded(&mut self, indent: usize, text: &str, style: Style, keep: usize) {
        self.push(indent, text, style, Some(keep));
    }

    fn push(&mut self, indent: usize, text: &str, style: Style, keep: Option<usize>) {
        let indent = indent.min(self.width / 2);
        let mut wrapped = wrap(&clean(text), self.width - indent);
        let hidden = match keep {
            Some(keep) if !self.unfolded && wrapped.len() > keep + 1 => {
                let hidden = wrapped.len() - keep;
                wrapped.truncate(keep);
                hidden
            }
            _ => 0,
        };
        let pad = " ".repeat(indent);
        for line in wrapped {
            self.lines.push(Line::from(vec![
                Span::raw(pad.clone()),
                Span::styled(line, style),
            ]));
        }
        if hidden > 0 {
            let note = format!("{pad}… {hidden} more lines (Enter unfolds)");
            self.lines.push(Line::styled(note, theme::dim()));
        }
    }
}

/// `items` joined by `separator`, a new line wherever the next item would not fit.
fn flow(items: &[String], separator: &str, width: usize) -> Vec<String> {
    let mut lines: Vec<String> = vec![];
    let mut current = String::new();
    for item in items {
        let joined = format!("{current}{separator}{item}");
        if current.is_empty() {
            current = item.clone();
        } else if text_width(&joined) <= width {
            current = joined;
        } else {
            lines.extend(wrap(&current, width));
            current = item.clone();
        }
    }
    if !current.is_empty() {
        lines.extend(wrap(&current, width));
    }
    lines
}

/// Word-wrapped to `width` columns; words longer than a line are cut. Newlines are kept,
/// and so are runs of spaces inside a line (JSON's indentation).
fn wrap(text: &str, width: usize) -> Vec<String> {
    let width = width.max(1);
    let mut lines = vec![];
    for source in text.split('\n') {
        let mut current = String::new();
        let mut current_width = 0;
        let mut started = false;
        for word in source.split(' ') {
            let word_width = text_width(word);
            if started && current_width + 1 + word_width <= width {
                current.push(' ');
                current.push_str(word);
                current_width += 1 + word_width;
                continue;
            }
            if started {
                lines.push(std::mem::take(&mut current));
                current_width = 0;
            }
            started = true;
            for c in word.chars() {
                let w = text_width(c.encode_utf8(&mut [0; 4]));
                if current_width + w > width && current_width > 0 {
                    lines.push(std::mem::take(&mut current));
                    current_width = 0;
                }
                current.push(c);
                current_width += w;
            }
        }
        lines.push(current);
    }
    lines
}

fn text_width(text: &str) -> usize {
    Span::raw(text).width()
}

#[cfg(test)]
mod tests;
