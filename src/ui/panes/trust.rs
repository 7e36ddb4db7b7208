//! The `T` screen: the tools people trust to run without asking, who trusted each, when and
//! for how long, and the key that takes the trust back.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

use crate::clock::Civil;
use crate::host::api::{TrustGrant, TrustScope};
use crate::ui::sanitize::one_line;
use crate::ui::text::centred;
use crate::ui::theme;

const WIDTH: u16 = 76;

pub fn render(grants: &[TrustGrant], selected: usize, frame: &mut Frame, area: Rect) {
    let lines = lines(grants, selected);
    let rect = centred(area, WIDTH, lines.len() as u16 + 2);
    let block = Block::default()
        .borders(Borders::ALL)
        .title(" Trusted tools (↑↓ choose · x revoke · Esc closes) ");
    frame.render_widget(Clear, rect);
    frame.render_widget(Paragraph::new(lines).block(block), rect);
}

fn lines(grants: &[TrustGrant], selected: usize) -> Vec<Line<'static>> {
    let mut lines = vec![Line::from(Span::styled(
        "Read-only tools on the desk's own list that run without a consent question.",
        theme::dim(),
    ))];
    lines.push(Line::from(Span::styled(
        "A tool whose definition changes is asked about again.",
        theme::dim(),
    )));
    lines.push(Line::default());
    if grants.is_empty() {
        lines.push(Line::from(Span::styled(
            "No tool is trusted. On a consent card, s trusts a read-only tool for the session, a always.",
            theme::dim(),
        )));
        return lines;
    }
    for (i, grant) in grants.iter().enumerate() {
        let marker = if i == selected { "▶ " } else { "  " };
        let scope = match grant.scope {
            TrustScope::Session => "this session",
            TrustScope::Always => "always",
        };
        let at = Civil::from_unix(grant.at);
        let when = format!(
            "{:04}-{:02}-{:02} {:02}:{:02}",
            at.year, at.month, at.day, at.hour, at.minute
        );
        let style = if i == selected {
            theme::title()
        } else {
            ratatui::style::Style::default()
        };
        lines.push(Line::from(vec![
            Span::styled(marker, theme::key()),
            Span::styled(format!("{:<24}", one_line(&grant.tool)), style),
            Span::raw(format!("{scope:<13}")),
            Span::styled(format!("by {} · {when}", one_line(&grant.by)), theme::dim()),
        ]));
    }
    lines
}

#[cfg(test)]
mod tests {
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;

    use super::*;

    fn draw(grants: &[TrustGrant], selected: usize) -> Terminal<TestBackend> {
        let mut terminal = Terminal::new(TestBackend::new(80, 24)).expect("terminal");
        terminal
            .draw(|frame| render(grants, selected, frame, frame.area()))
            .expect("draw");
        terminal
    }

    #[test]
    fn the_trust_screen_lists_each_grant_with_who_and_how_long() {
        let grants = [
            TrustGrant {
                tool: "partner.track_parcel".into(),
                scope: TrustScope::Always,
                by: "ana".into(),
                at: 1_782_810_000,
                definition: "abc".into(),
                origin: "in-process partner".into(),
            },
            TrustGrant {
                tool: "shop.find_orders".into(),
                scope: TrustScope::Session,
                by: "ben\u{1b}[31m".into(),
                at: 1_782_813_600,
                definition: "def".into(),
                origin: "support-desk serve shop --stdio".into(),
            },
        ];
        let terminal = draw(&grants, 1);
        insta::assert_snapshot!("trust_two_grants_80x24", terminal.backend());
        let screen: String = terminal
            .backend()
            .buffer()
            .content()
            .iter()
            .map(|c| c.symbol())
            .collect();
        assert!(!screen.contains('\u{1b}'));
        assert!(screen.contains("▶ shop.find_orders"));
    }

    #[test]
    fn with_no_grant_the_screen_says_how_to_make_one() {
        let terminal = draw(&[], 0);
        insta::assert_snapshot!("trust_empty_80x24", terminal.backend());
    }
}
