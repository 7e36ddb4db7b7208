//! Review mode shows a recorded draft's findings as recorded, and under them what today's
//! check finds otherwise in the same words.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use support_desk::commands::review::with_findings_now;
use support_desk::model::chat::Reply;
use support_desk::record::{Event, Finding};
use support_desk::recording::Recording;
use support_desk::recording::review::Review;
use support_desk::ui::review::{ReviewKey, ReviewScreen};

/// T-0001 ends with a draft the check passed when it was recorded and that today's check
/// reads as a refund promised with no refund call, and that it once flagged for a placeholder.
fn recorded_run() -> Recording {
    let ticket = "T-0001".to_owned();
    let words =
        "Hello, your refund has been issued and reaches your card within five working days.";
    let events = vec![
        Event::TicketStarted {
            ticket: ticket.clone(),
            tools: vec!["shop.get_order_status".into()],
            attached: vec![],
            request: None,
        },
        Event::ModelCall {
            ticket: ticket.clone(),
            turn: 1,
            messages_hash: "h1".into(),
            reply: Reply::Words {
                content: words.into(),
            },
            seconds: 1.5,
            first_visible_seconds: None,
            tool_list_chars: 900,
            context_chars: 400,
            prompt: None,
        },
        Event::Draft {
            ticket: ticket.clone(),
            text: words.into(),
            findings: vec![Finding::NotForCustomer {
                kind: "a placeholder".into(),
                words: "[Your Name]".into(),
            }],
        },
        Event::TicketDone {
            ticket,
            model_calls: 1,
            stopped_at_turn_limit: false,
            error: None,
        },
    ];
    Recording {
        manifests: vec![],
        events,
        truncated: false,
    }
}

#[test]
fn a_draft_todays_check_reads_otherwise_shows_both_findings() {
    let recording = recorded_run();
    let tickets = support_desk::tickets::bundled();
    let mut review = Review::from_recording("recordings/old-run.jsonl", &recording, &tickets);
    with_findings_now(&mut review, &recording, &tickets);
    let promised = Finding::RefundPromisedWithoutRefund {
        phrase: "refund has been issued".into(),
    };
    let placeholder = Finding::NotForCustomer {
        kind: "a placeholder".into(),
        words: "[Your Name]".into(),
    };
    assert_eq!(
        review.tickets[0].findings(),
        [
            placeholder.reason(),
            format!("today's check also finds: {}", promised.reason()),
            format!("today's check no longer finds: {}", placeholder.reason()),
        ]
    );
    let mut screen = ReviewScreen::new(review);
    assert_eq!(
        screen.handle_key(KeyEvent::new(KeyCode::End, KeyModifiers::NONE)),
        ReviewKey::Stay
    );
    let mut terminal = Terminal::new(TestBackend::new(100, 30)).expect("terminal");
    terminal.draw(|f| screen.render(f, f.area())).expect("draw");
    insta::assert_snapshot!("review_draft_rechecked_100x30", terminal.backend());
}
