use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

use super::*;

const TICKET: &str = "T-0012 · Anna Weber · Kettle arrived cracked, want my money back";

const DRAFT: &str = "Hi Anna,\n\nI'm sorry the kettle arrived cracked. I have refunded EUR 89.90 to your original payment method; it should reach you within 5 working days.\n\nBest regards,\nThe support team";

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

fn ctrl(c: char) -> KeyEvent {
    KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL)
}

fn type_text(editor: &mut DraftEditor, text: &str) {
    for c in text.chars() {
        assert_eq!(
            editor.handle_key(key(KeyCode::Char(c))),
            ModalOutcome::Pending
        );
    }
}

fn clean_draft() -> DraftEditor {
    DraftEditor::new(TICKET.into(), DRAFT, vec![])
}

fn two_findings() -> Vec<String> {
    vec![
        "The reply promises a refund, but no refund was issued for this ticket.".into(),
        "The reply states EUR 89.90, an amount no tool returned.".into(),
    ]
}

fn draft_with_findings() -> DraftEditor {
    DraftEditor::new(TICKET.into(), DRAFT, two_findings())
}

fn draw(editor: &DraftEditor, width: u16, height: u16) -> Terminal<TestBackend> {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).expect("terminal");
    terminal
        .draw(|frame| editor.render(frame, frame.area()))
        .expect("draw");
    terminal
}

fn screen(terminal: &Terminal<TestBackend>) -> String {
    let buffer = terminal.backend().buffer();
    (buffer.area.top()..buffer.area.bottom())
        .map(|y| {
            (buffer.area.left()..buffer.area.right())
                .map(|x| buffer[(x, y)].symbol())
                .collect::<String>()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn the_cursor_starts_after_the_draft_so_typing_adds_to_it() {
    let draft = "Hi Anna,\nYour parcel left today.";
    let mut editor = DraftEditor::new(TICKET.into(), draft, vec![]);
    editor.handle_key(key(KeyCode::Enter));
    type_text(&mut editor, "Best, Dana");
    assert_eq!(
        editor.text(),
        "Hi Anna,\nYour parcel left today.\nBest, Dana"
    );
}

#[test]
fn typing_edits_the_draft_and_enter_is_a_newline() {
    let mut editor = DraftEditor::new(TICKET.into(), "Hi Anna,", vec![]);
    editor.handle_key(key(KeyCode::Home));
    type_text(&mut editor, "Dear");
    editor.handle_key(key(KeyCode::Enter));
    editor.handle_key(key(KeyCode::End));
    editor.handle_key(key(KeyCode::Backspace));
    type_text(&mut editor, "!");
    assert_eq!(editor.text(), "Dear\nHi Anna!");
}

#[test]
fn the_draft_is_cleaned_of_escape_sequences() {
    let editor = DraftEditor::new(
        TICKET.into(),
        "Hi\x1b]52;c;ZXZpbA==\x07 Anna\x1b[2J,\r\nthanks",
        vec![],
    );
    assert_eq!(editor.text(), "Hi Anna,\nthanks");
}

#[test]
fn ctrl_s_sends_when_nothing_is_open() {
    let mut editor = clean_draft();
    assert_eq!(
        editor.handle_key(ctrl('s')),
        ModalOutcome::Answered(DraftAction::Send {
            text: DRAFT.into(),
            override_reason: None,
        })
    );
}

#[test]
fn an_empty_reply_is_not_sent() {
    let mut editor = DraftEditor::new(TICKET.into(), "  \n", vec![]);
    assert_eq!(editor.handle_key(ctrl('s')), ModalOutcome::Pending);
    assert!(screen(&draw(&editor, 80, 24)).contains("The reply is empty"));
}

#[test]
fn send_with_open_findings_asks_why_and_sends_with_the_reason() {
    let mut editor = draft_with_findings();
    assert_eq!(editor.handle_key(ctrl('s')), ModalOutcome::Pending);
    assert!(screen(&draw(&editor, 80, 24)).contains("Why send despite the findings? (recorded)"));
    type_text(&mut editor, "Refund issued by hand in the shop admin");
    assert_eq!(
        editor.handle_key(key(KeyCode::Enter)),
        ModalOutcome::Answered(DraftAction::Send {
            text: DRAFT.into(),
            override_reason: Some("Refund issued by hand in the shop admin".into()),
        })
    );
}

#[test]
fn a_blank_override_reason_is_refused_with_a_message() {
    let mut editor = draft_with_findings();
    editor.handle_key(ctrl('s'));
    type_text(&mut editor, "   ");
    assert_eq!(
        editor.handle_key(key(KeyCode::Enter)),
        ModalOutcome::Pending
    );
    assert!(
        screen(&draw(&editor, 80, 24)).contains("A reason is needed to send despite the findings.")
    );
}

#[test]
fn esc_in_the_reason_prompt_goes_back_to_editing_the_draft() {
    let mut editor = draft_with_findings();
    editor.handle_key(ctrl('s'));
    type_text(&mut editor, "never mind");
    assert_eq!(editor.handle_key(key(KeyCode::Esc)), ModalOutcome::Pending);
    type_text(&mut editor, ">");
    assert_eq!(editor.text(), format!("{DRAFT}>"));
    let shown = screen(&draw(&editor, 80, 24));
    assert!(!shown.contains("Why send despite"));
    assert!(shown.contains("Esc close, keep edits"));
}

#[test]
fn ctrl_p_hands_the_ticket_to_a_person_with_a_note() {
    let mut editor = draft_with_findings();
    assert_eq!(editor.handle_key(ctrl('p')), ModalOutcome::Pending);
    type_text(&mut editor, "Customer wants a refund; check the photo");
    assert_eq!(
        editor.handle_key(key(KeyCode::Enter)),
        ModalOutcome::Answered(DraftAction::HandToPerson {
            note: "Customer wants a refund; check the photo".into(),
        })
    );
}

#[test]
fn esc_closes_keeping_the_edits() {
    let mut editor = clean_draft();
    type_text(&mut editor, " Hello!");
    assert_eq!(
        editor.handle_key(key(KeyCode::Esc)),
        ModalOutcome::Answered(DraftAction::Close {
            text: format!("{DRAFT} Hello!"),
        })
    );
}

#[test]
fn open_findings_are_listed_in_red() {
    let terminal = draw(&draft_with_findings(), 80, 24);
    let buffer = terminal.backend().buffer();
    let shown = screen(&terminal);
    let row = shown
        .lines()
        .position(|line| line.contains("send is refused while these are open"))
        .expect("the findings heading is on screen");
    let column = shown
        .lines()
        .nth(row)
        .and_then(|line| line.find('✗'))
        .expect("✗");
    // `find` counts bytes; the row starts with ASCII and box drawing, so count chars instead.
    let column = shown.lines().nth(row).expect("row")[..column]
        .chars()
        .count();
    let (x, y) = (
        u16::try_from(column).expect("narrow"),
        u16::try_from(row).expect("short"),
    );
    assert_eq!(buffer[(x, y)].fg, ratatui::style::Color::Red);
    assert_eq!(buffer[(x + 10, y)].fg, ratatui::style::Color::Red);
}

#[test]
fn long_lines_wrap_at_spaces_and_keep_every_character() {
    let chars: Vec<char> = "one two three".chars().collect();
    assert_eq!(row_breaks(&chars, 7), [(0, 8), (8, 13)]);
    let word: Vec<char> = "abcdefghij".chars().collect();
    assert_eq!(row_breaks(&word, 4), [(0, 4), (4, 8), (8, 10)]);
    assert_eq!(row_breaks(&[], 4), [(0, 0)]);
}

#[test]
fn a_long_draft_scrolls_to_keep_the_cursor_in_view() {
    let long: String = (1..=40).map(|n| format!("line {n}\n")).collect();
    let mut editor = DraftEditor::new(TICKET.into(), &long, vec![]);
    for _ in 0..35 {
        editor.handle_key(key(KeyCode::Down));
    }
    let shown = screen(&draw(&editor, 80, 24));
    assert!(shown.contains("line 36"));
    assert!(!shown.contains("line 1 "));
}

macro_rules! snapshot {
    ($name:ident, $editor:expr, $width:expr, $height:expr) => {
        #[test]
        fn $name() {
            let terminal = draw(&$editor, $width, $height);
            insta::assert_snapshot!(stringify!($name), terminal.backend());
        }
    };
}

fn override_prompt() -> DraftEditor {
    let mut editor = draft_with_findings();
    editor.handle_key(ctrl('s'));
    type_text(&mut editor, "Refund issued by hand");
    editor
}

fn hand_off_prompt() -> DraftEditor {
    let mut editor = draft_with_findings();
    editor.handle_key(ctrl('p'));
    type_text(&mut editor, "Check the photo first");
    editor
}

snapshot!(draft_clean, clean_draft(), 80, 24);
snapshot!(draft_clean_wide, clean_draft(), 120, 36);
snapshot!(draft_with_two_findings, draft_with_findings(), 80, 24);
snapshot!(draft_with_two_findings_wide, draft_with_findings(), 120, 36);
snapshot!(draft_override_reason_prompt, override_prompt(), 80, 24);
snapshot!(
    draft_override_reason_prompt_wide,
    override_prompt(),
    120,
    36
);
snapshot!(draft_hand_off_prompt, hand_off_prompt(), 80, 24);
snapshot!(draft_hand_off_prompt_wide, hand_off_prompt(), 120, 36);

#[test]
fn draft_override_reason_refused() {
    let mut editor = draft_with_findings();
    editor.handle_key(ctrl('s'));
    editor.handle_key(key(KeyCode::Enter));
    let terminal = draw(&editor, 80, 24);
    insta::assert_snapshot!("draft_override_reason_refused", terminal.backend());
}
