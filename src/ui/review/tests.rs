use std::path::Path;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::style::Color;

use super::*;
use crate::host::api::{Entry, EntryKind, Finding, Outcome, Ticket};
use crate::model::chat::Reply;
use crate::record::Event;
use crate::record::transcript::entries_of;
use crate::recording::reader::Recording;
use crate::ui::transcript;

mod fixtures;
use fixtures::*;

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

fn press(screen: &mut ReviewScreen, codes: &[KeyCode]) {
    for &code in codes {
        assert_eq!(screen.handle_key(key(code)), ReviewKey::Stay);
    }
}

/// A real run of the local model over the queue, kept as a fixture so these tests do not
/// move when the committed recording is made again (tests/fixtures/README.md).
fn real_review() -> Review {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/ticket-runs-2026-11-29.jsonl");
    let mut review = Review::open(&path).expect("the fixture recording reads");
    // As a person would type it; the absolute path differs from machine to machine.
    review.source = "recordings/ticket-runs".to_owned();
    review
}

fn real_screen() -> ReviewScreen {
    ReviewScreen::new(real_review())
}

/// The real run with `ticket` selected by keys.
fn screen_on(ticket: &str) -> ReviewScreen {
    let mut screen = real_screen();
    while screen.current().map(|t| t.ticket.as_str()) != Some(ticket) {
        let before = screen.selected;
        press(&mut screen, &[KeyCode::Down]);
        assert_ne!(before, screen.selected, "{ticket} is in the recording");
    }
    screen
}

fn draw(screen: &ReviewScreen, width: u16, height: u16) -> Terminal<TestBackend> {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).expect("terminal");
    terminal.draw(|f| screen.render(f, f.area())).expect("draw");
    terminal
}

fn snapshot(name: &str, screen: &ReviewScreen) {
    for (width, height) in [(80, 24), (120, 36)] {
        let terminal = draw(screen, width, height);
        insta::assert_snapshot!(format!("{name}_{width}x{height}"), terminal.backend());
    }
}

/// Where `text` starts on screen.
fn find(buffer: &Buffer, text: &str) -> (u16, u16) {
    let width = buffer.area.width;
    for y in 0..buffer.area.height {
        let row: Vec<String> = (0..width)
            .map(|x| buffer[(x, y)].symbol().to_owned())
            .collect();
        for x in 0..width as usize {
            if row[x..].concat().starts_with(text) {
                return (x as u16, y);
            }
        }
    }
    panic!("{text:?} is not on screen");
}

/// Every row of the screen as text.
fn rows(buffer: &Buffer) -> Vec<String> {
    (0..buffer.area.height)
        .map(|y| {
            (0..buffer.area.width)
                .map(|x| buffer[(x, y)].symbol())
                .collect()
        })
        .collect()
}

/// `block` is on screen as it is, one line under another from the same column.
fn shows_block(buffer: &Buffer, block: &[String]) -> bool {
    let rows = rows(buffer);
    let Some(first) = block.first() else {
        return true;
    };
    rows.iter().enumerate().any(|(y, row)| {
        row.match_indices(first.as_str()).any(|(x, _)| {
            let column = row[..x].chars().count();
            block.iter().enumerate().all(|(k, line)| {
                rows.get(y + k).is_some_and(|below| {
                    let rest: String = below.chars().skip(column).collect();
                    rest.starts_with(line.as_str())
                })
            })
        })
    })
}

/// An entry's lines as text, blank lines left out (they part entries, and a pane's edge may
/// cut them).
fn text_of(entry: &Entry, width: usize) -> Vec<String> {
    transcript::lines(entry, width)
        .iter()
        .map(|line| line.to_string())
        .filter(|line| !line.trim().is_empty())
        .collect()
}

#[test]
fn arrows_step_through_turns_and_tickets() {
    let mut screen = real_screen();
    assert_eq!((screen.selected, screen.step), (0, 0));
    press(&mut screen, &[KeyCode::Right]);
    assert_eq!(screen.step, 1, "T-0001's second turn");
    press(
        &mut screen,
        &[KeyCode::Right, KeyCode::Char('l'), KeyCode::Right],
    );
    assert_eq!(screen.step, 2, "after two turns the end is the last step");
    press(
        &mut screen,
        &[KeyCode::Left, KeyCode::Char('h'), KeyCode::Left],
    );
    assert_eq!(screen.step, 0, "turn 1 is the first step");
    press(&mut screen, &[KeyCode::Right]);
    press(&mut screen, &[KeyCode::Down]);
    assert_eq!((screen.selected, screen.step), (1, 0));
    press(&mut screen, &[KeyCode::End]);
    assert_eq!(screen.step, 4, "T-0002: four turns, then the end");
    press(&mut screen, &[KeyCode::Home, KeyCode::Char('l')]);
    assert_eq!(screen.step, 1);
    press(&mut screen, &[KeyCode::Char('j')]);
    assert_eq!(
        (screen.selected, screen.step),
        (2, 0),
        "a new ticket starts at turn 1"
    );
    press(&mut screen, &[KeyCode::Char('k'), KeyCode::Up, KeyCode::Up]);
    assert_eq!(screen.selected, 0, "the list stops at its top");
}

#[test]
fn each_filter_narrows_the_list_and_keeps_a_ticket_it_still_shows() {
    let mut screen = real_screen();
    let all = screen.visible().len();
    assert_eq!(all, 48);
    press(&mut screen, &[KeyCode::Char('f')]);
    assert_eq!(screen.filter, Filter::Errors);
    let errors = screen.visible();
    assert!(errors.len() < all);
    assert!(errors.iter().all(|&i| screen.review.tickets[i].has_error()));
    assert_eq!(
        screen.current().map(|t| t.ticket.as_str()),
        Some("T-0002"),
        "T-0001 has no error, so the first error ticket is selected"
    );
    press(&mut screen, &[KeyCode::Char('f')]);
    assert_eq!(screen.filter, Filter::Consent);
    assert!(
        screen
            .visible()
            .iter()
            .all(|&i| screen.review.tickets[i].has_consent())
    );
    press(&mut screen, &[KeyCode::Char('f')]);
    assert_eq!(screen.filter, Filter::Refunds);
    let refunds = screen.visible();
    assert!(!refunds.is_empty() && refunds.len() < all);
    assert!(
        refunds
            .iter()
            .all(|&i| screen.review.tickets[i].touches_refunds())
    );
    let in_refunds = screen.selected;
    press(&mut screen, &[KeyCode::Char('f')]);
    assert_eq!((screen.filter, screen.visible().len()), (Filter::All, all));
    assert_eq!(
        screen.selected, in_refunds,
        "a filter that still shows the ticket keeps it selected"
    );
}

#[test]
fn q_and_esc_quit_and_other_keys_stay() {
    let mut screen = real_screen();
    for code in [
        KeyCode::Char('x'),
        KeyCode::Enter,
        KeyCode::Tab,
        KeyCode::PageDown,
        KeyCode::Char('?'),
    ] {
        assert_eq!(screen.handle_key(key(code)), ReviewKey::Stay);
    }
    assert_eq!(screen.handle_key(key(KeyCode::Char('q'))), ReviewKey::Quit);
    assert_eq!(screen.handle_key(key(KeyCode::Esc)), ReviewKey::Quit);
}

#[test]
fn page_up_goes_back_into_the_run_and_a_new_step_opens_where_it_begins() {
    let mut screen = screen_on("T-0009");
    press(&mut screen, &[KeyCode::Right]);
    let opened = format!("{}", draw(&screen, 80, 24).backend());
    press(&mut screen, &[KeyCode::PageUp]);
    assert!(screen.step_scroll < 0, "back into turn 1");
    let back = format!("{}", draw(&screen, 80, 24).backend());
    assert_ne!(opened, back);
    assert_eq!(screen.ticket_scroll, 0);
    press(&mut screen, &[KeyCode::Right]);
    assert_eq!(screen.step_scroll, 0);
    press(&mut screen, &[KeyCode::Tab, KeyCode::PageDown]);
    assert!(screen.ticket_scroll > 0);
    press(&mut screen, &[KeyCode::PageUp, KeyCode::PageUp]);
    assert_eq!(screen.ticket_scroll, 0);
}

#[test]
fn scrolling_stops_at_either_end_of_the_run() {
    let mut screen = screen_on("T-0009");
    press(&mut screen, &[KeyCode::Right]);
    draw(&screen, 80, 24);
    press(&mut screen, &[KeyCode::PageUp; 20]);
    let top = screen.step_scroll;
    press(&mut screen, &[KeyCode::PageDown]);
    assert!(screen.step_scroll > top, "one PgDn moves back down at once");
    press(&mut screen, &[KeyCode::PageDown; 20]);
    let bottom = screen.step_scroll;
    press(&mut screen, &[KeyCode::PageUp]);
    assert!(
        screen.step_scroll < bottom,
        "one PgUp moves back up at once"
    );
}

#[test]
fn the_real_recording_opens_on_the_first_ticket_at_turn_1() {
    snapshot("opened", &real_screen());
}

#[test]
fn a_tool_error_on_turn_1_stays_in_view_above_turn_2() {
    let mut screen = screen_on("T-0009");
    snapshot("tool_error_turn_1", &screen);
    press(&mut screen, &[KeyCode::Right]);
    snapshot("tool_error_turn_2", &screen);
}

#[test]
fn the_last_step_shows_the_draft_and_its_checks() {
    let mut screen = screen_on("T-0009");
    press(&mut screen, &[KeyCode::End]);
    snapshot("draft_step", &screen);
}

#[test]
fn a_ticket_stopped_at_the_turn_limit_ends_without_a_draft() {
    let mut screen = screen_on("T-0011");
    press(
        &mut screen,
        &[KeyCode::Right, KeyCode::Right, KeyCode::Right],
    );
    snapshot("call_refused_on_the_last_turn", &screen);
    press(&mut screen, &[KeyCode::Right]);
    snapshot("stopped_at_limit", &screen);
}

#[test]
fn a_consent_question_shows_who_answered_and_the_unseen_argument() {
    let screen = screen_on("T-0008");
    snapshot("consent_turn", &screen);
    let terminal = draw(&screen, 80, 24);
    let buffer = terminal.backend().buffer();
    let (x, y) = find(buffer, "seen nowhere before: quote_id");
    assert_eq!(buffer[(x, y)].fg, Color::Yellow);
    let (x, y) = find(buffer, "✓ approved");
    assert_eq!(buffer[(x, y)].fg, Color::Green);
}

#[test]
fn the_errors_filter_lists_only_tickets_that_went_wrong() {
    let mut screen = real_screen();
    press(&mut screen, &[KeyCode::Char('f')]);
    snapshot("errors_filter", &screen);
    let terminal = draw(&screen, 80, 24);
    let buffer = terminal.backend().buffer();
    let (x, y) = find(buffer, "T-0006 ✗");
    assert_eq!(buffer[(x + 7, y)].fg, Color::Red, "the error mark is red");
}

#[test]
fn the_refunds_filter_lists_only_refund_tickets() {
    let mut screen = real_screen();
    press(
        &mut screen,
        &[KeyCode::Char('f'), KeyCode::Char('f'), KeyCode::Char('f')],
    );
    snapshot("refunds_filter", &screen);
}

#[test]
fn question_mark_shows_the_keys() {
    let mut screen = real_screen();
    press(&mut screen, &[KeyCode::Char('?')]);
    let terminal = draw(&screen, 80, 24);
    insta::assert_snapshot!("help_80x24", terminal.backend());
}

#[test]
fn hostile_text_is_cleaned_long_results_fold_and_findings_show() {
    let mut screen = hostile_screen();
    let terminal = draw(&screen, 80, 24);
    insta::assert_snapshot!("hostile_turn_80x24", terminal.backend());
    press(&mut screen, &[KeyCode::Enter]);
    draw(&screen, 120, 36);
    press(&mut screen, &[KeyCode::PageDown; 3]);
    let terminal = draw(&screen, 120, 36);
    insta::assert_snapshot!("hostile_turn_unfolded_120x36", terminal.backend());
    let buffer = terminal.backend().buffer();
    find(buffer, "line 30");
    let text = rows(buffer).join("\n");
    assert!(!text.contains("more lines folded"), "{text}");
    press(&mut screen, &[KeyCode::End]);
    let terminal = draw(&screen, 80, 24);
    insta::assert_snapshot!("draft_with_findings_80x24", terminal.backend());
    let buffer = terminal.backend().buffer();
    let (x, y) = find(buffer, "⚠ The reply promises");
    assert_eq!(buffer[(x, y)].fg, Color::Red);
}

#[test]
fn no_screen_shows_the_data_sets_tag_or_injected_mark() {
    let mut screen = hostile_screen();
    for _ in 0..3 {
        for (width, height) in [(80, 24), (120, 36)] {
            let terminal = draw(&screen, width, height);
            let rows = rows(terminal.backend().buffer());
            // The run's figures on top are for scoring and may name the tags; the panes never.
            let panes: Vec<&String> = rows
                .iter()
                .filter(|r| r.starts_with(['│', '┌', '└']))
                .collect();
            let text = panes
                .iter()
                .map(|r| r.as_str())
                .collect::<Vec<_>>()
                .join("\n");
            for label in ["tagged", "issue_refund ·", "instructions aimed", "expected"] {
                assert!(!text.contains(label), "{label:?} on screen:\n{text}");
            }
            let row = rows
                .iter()
                .find(|r| r.starts_with("│T-0099"))
                .expect("the ticket is listed");
            assert!(
                row.contains("T-0099 ✗?€ » refund"),
                "three marks and the request's, no injected mark: {row}"
            );
        }
        press(&mut screen, &[KeyCode::Right]);
    }
}

#[test]
fn a_filter_that_keeps_nothing_says_so() {
    let t = "T-0099";
    let events = vec![
        Event::TicketStarted {
            ticket: t.to_owned(),
            tools: vec![],
            attached: vec![],
            request: None,
        },
        model_call(
            t,
            1,
            Reply::Words {
                content: "Thanks, we are on it.".to_owned(),
            },
        ),
        Event::Draft {
            ticket: t.to_owned(),
            text: "Thanks, we are on it.".to_owned(),
            findings: vec![],
        },
        Event::TicketDone {
            ticket: t.to_owned(),
            model_calls: 1,
            stopped_at_turn_limit: false,
            error: None,
        },
    ];
    let mut screen = ReviewScreen::new(review_of(&[hostile_shop_ticket()], events, false));
    press(&mut screen, &[KeyCode::Char('f')]);
    assert!(screen.visible().is_empty());
    press(
        &mut screen,
        &[KeyCode::Down, KeyCode::Right, KeyCode::PageDown],
    );
    let terminal = draw(&screen, 80, 24);
    insta::assert_snapshot!("empty_filter_80x24", terminal.backend());
}

#[test]
fn an_unreadable_answer_shows_with_the_problem_the_host_told_the_model() {
    let mut screen = screen_on("T-0002");
    press(&mut screen, &[KeyCode::Right, KeyCode::Right]);
    let terminal = draw(&screen, 120, 36);
    insta::assert_snapshot!("unreadable_answer_120x36", terminal.backend());
}

#[test]
fn a_ticket_reads_the_same_in_review_mode_as_on_the_live_desk() {
    let events = status_events();

    // (a) The live desk hears of each event as the record keeps it.
    let allow = ["shop.get_order_status", "shop.find_orders"].map(String::from);
    let record = crate::record::DeskRecord::in_memory("dana", &allow)
        .expect("an in-memory record")
        .with_clock(fixed_clock);
    let mut app = crate::ui::app::App::new(
        crate::tickets::bundled(),
        "replay:test (2 recorded model calls)".to_owned(),
        "dana".to_owned(),
    );
    // The desk shows T-0001 and asks for its history, which the record does not hold yet.
    assert_eq!(app.transcript_wanted().as_deref(), Some("T-0001"));
    app.on_host(crate::host::api::HostEvent::Transcript {
        ticket: "T-0001".to_owned(),
        events: vec![],
    });
    for event in &events {
        let appended = record.append(event).expect("the record takes it");
        let state = appended.state.expect("a ticket's state");
        app.on_host(
            crate::host::api::HostEvent::happened(&appended.stored, state).expect("a ticket's"),
        );
    }
    assert_eq!(
        app.current().map(|i| i.ticket.ticket_id.as_str()),
        Some("T-0001")
    );
    let mut live = Terminal::new(TestBackend::new(120, 36)).expect("terminal");
    live.draw(|frame| crate::ui::render::render(&app, frame))
        .expect("draw");
    insta::assert_snapshot!("same_ticket_live_120x36", live.backend());

    // (b) Review mode reads the same events from a recording, at the end step.
    let recording = Recording {
        manifests: vec![],
        events: events.clone(),
        truncated: false,
    };
    let mut review = Review::from_recording("test.jsonl", &recording, &crate::tickets::bundled());
    review.tickets.retain(|t| t.ticket == "T-0001");
    let mut screen = ReviewScreen::new(review);
    press(&mut screen, &[KeyCode::End]);
    let reviewed = draw(&screen, 120, 36);
    insta::assert_snapshot!("same_ticket_review_120x36", reviewed.backend());

    // The draft and the outcome are drawn line for line alike in both.
    let draft = entries_of(&events[5], None, None);
    let outcome = entries_of(&events[3], None, None);
    assert!(matches!(draft[0].kind, EntryKind::Draft { .. }));
    assert!(matches!(outcome[0].kind, EntryKind::Outcome { .. }));
    for entry in [&draft[0], &outcome[0]] {
        // Narrower than either pane, so neither wraps it differently.
        let block = text_of(entry, 70);
        assert!(
            shows_block(live.backend().buffer(), &block),
            "live: {block:#?}"
        );
        assert!(
            shows_block(reviewed.backend().buffer(), &block),
            "review: {block:#?}"
        );
    }
}

/// The fixture run held against the 2026-11-30 recording (both kept, neither moves).
fn compared_screen() -> ReviewScreen {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("recordings/ticket-runs-2026-11-30/events.jsonl");
    let mut other = Review::open(&path).expect("the dated recording reads");
    other.source = "recordings/ticket-runs-2026-11-30".to_owned();
    ReviewScreen::against(real_review(), other)
}

#[test]
fn against_another_recording_the_two_runs_of_a_ticket_stand_side_by_side() {
    let mut screen = compared_screen();
    snapshot("compared_side_by_side", &screen);
    let terminal = draw(&screen, 120, 36);
    let buffer = terminal.backend().buffer();
    find(buffer, "other: ");
    find(buffer, "this: ");
    press(&mut screen, &[KeyCode::Char('c')]);
    let terminal = draw(&screen, 120, 36);
    let text = rows(terminal.backend().buffer()).join("\n");
    assert!(!text.contains("other: "), "c goes back to one run:\n{text}");
}

#[test]
fn against_another_recording_the_figures_are_a_bar_chart() {
    let mut screen = compared_screen();
    press(&mut screen, &[KeyCode::Char('g')]);
    snapshot("compared_chart", &screen);
    let terminal = draw(&screen, 120, 36);
    let buffer = terminal.backend().buffer();
    for label in [
        "1st tool", "drafts", "at limit", "flagged", "consent", "refunds",
    ] {
        find(buffer, label);
    }
    find(buffer, "each pair: the other recording, then this one");
    // Without another recording the keys do nothing.
    let mut alone = real_screen();
    press(&mut alone, &[KeyCode::Char('g'), KeyCode::Char('c')]);
    let text = rows(draw(&alone, 120, 36).backend().buffer()).join("\n");
    assert!(!text.contains("each pair"), "{text}");
}

/// A ticket a person answered by hand had no run: review shows the reply and who sent it,
/// and neither marks it as gone wrong nor says a run was cut off.
#[test]
fn a_ticket_answered_by_hand_is_no_run_cut_off() {
    let ticket = shop_ticket("T-0042", "where is my order", "Order O-1 please.");
    let events = vec![Event::Sent {
        ticket: "T-0042".to_owned(),
        by: "dana".to_owned(),
        text: "Your order left our warehouse today.".to_owned(),
        override_reason: None,
        message_id: None,
        answers: None,
    }];
    let screen = ReviewScreen::new(review_of(&[ticket], events, false));
    let shown = rows(draw(&screen, 100, 30).backend().buffer()).join("\n");
    assert!(
        shown.contains("Your order left our warehouse today."),
        "{shown}"
    );
    assert!(!shown.contains("ends before this run finished"), "{shown}");
    assert!(!shown.contains("T-0042 ✗"), "{shown}");
    // A run that began, and whose first model call never came back, is said to be cut off.
    let ticket = shop_ticket("T-0043", "refund?", "Refund please.");
    let events = vec![Event::TicketStarted {
        ticket: "T-0043".to_owned(),
        tools: vec![],
        attached: vec![],
        request: None,
    }];
    let screen = ReviewScreen::new(review_of(&[ticket], events, true));
    let shown = rows(draw(&screen, 100, 30).backend().buffer()).join("\n");
    assert!(shown.contains("ends before this run finished"), "{shown}");
}
