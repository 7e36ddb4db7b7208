use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;

use super::view::{host_range, host_style};
use super::*;
use crate::host::api::{Choice, TextFormat};

const RELEASE_MESSAGE: &str = "Release refund R-0001 of EUR 343.49 on order O-1145? It is above the EUR 150.00 refund limit, so a lead must confirm it.";

fn field(name: &str, title: Option<&str>, required: bool, kind: FieldKind) -> Field {
    Field {
        name: name.to_owned(),
        title: title.map(str::to_owned),
        description: None,
        required,
        kind,
    }
}

fn described(mut field: Field, description: &str) -> Field {
    field.description = Some(description.to_owned());
    field
}

fn options(pairs: &[(&str, &str)]) -> Vec<Choice> {
    let choice = |(value, label): &(&str, &str)| Choice {
        value: (*value).to_owned(),
        label: (*label).to_owned(),
    };
    pairs.iter().map(choice).collect()
}

fn text_kind(max_length: Option<u32>, format: Option<TextFormat>) -> FieldKind {
    FieldKind::Text {
        min_length: None,
        max_length,
        format,
        default: None,
    }
}

fn amount() -> Field {
    let kind = FieldKind::Number {
        minimum: Some(0.0),
        maximum: Some(500.0),
        default: None,
    };
    field("amount", Some("Amount (EUR)"), true, kind)
}

/// One field of each kind, in the order the tests walk them.
fn every_field_type() -> Vec<Field> {
    let note = described(
        field(
            "note",
            Some("Note to the customer"),
            false,
            text_kind(Some(200), None),
        ),
        "Shown on the refund receipt.",
    );
    let email = field(
        "email",
        Some("Lead's email"),
        true,
        text_kind(None, Some(TextFormat::Email)),
    );
    let parcels = FieldKind::Integer {
        minimum: Some(1),
        maximum: Some(5),
        default: Some(1),
    };
    let release = described(
        field(
            "release",
            Some("Release the refund"),
            true,
            FieldKind::Boolean { default: None },
        ),
        "Yes pays the customer now; no keeps the refund held.",
    );
    let reason = FieldKind::Choice {
        options: options(&[
            ("dmg", "Arrived damaged"),
            ("late", "Late"),
            ("lost", "Lost in transit"),
        ]),
        default: None,
    };
    let regions = FieldKind::Choices {
        options: options(&[
            ("eu", "Europe"),
            ("uk", "United Kingdom"),
            ("us", "United States"),
        ]),
        min_items: Some(1),
        max_items: Some(2),
        default: Vec::new(),
    };
    vec![
        note,
        email,
        amount(),
        field("parcels", Some("Parcels"), false, parcels),
        release,
        field("reason", Some("Reason"), true, reason),
        field("regions", None, false, regions),
    ]
}

fn ask(message: &str, fields: Vec<Field>) -> FormAsk {
    FormAsk {
        ticket: Some("T-0009".to_owned()),
        server: "shop".to_owned(),
        origin: "support-desk serve shop --stdio".to_owned(),
        message: message.to_owned(),
        kind: FormKind::Fields(fields),
        asked_by: None,
    }
}

fn every_field_form() -> FormModal {
    let message = "Confirm the refund details for order O-1145 before the shop pays it.";
    FormModal::new(ask(message, every_field_type()))
}

fn release_form() -> FormModal {
    let release = described(
        field(
            "release",
            Some("Release the refund"),
            true,
            FieldKind::Boolean { default: None },
        ),
        "Yes pays the customer now; no keeps the refund held.",
    );
    let note_kind = FieldKind::Text {
        min_length: Some(0),
        max_length: Some(500),
        format: None,
        default: None,
    };
    let note = described(
        field("note", Some("Note for the record"), false, note_kind),
        "Optional: why you release or hold this refund.",
    );
    let mut ask = ask(RELEASE_MESSAGE, vec![release, note]);
    ask.ticket = Some("T-0031".to_owned());
    FormModal::new(ask)
}

fn url_form() -> FormModal {
    FormModal::new(FormAsk {
        ticket: Some("T-0044".to_owned()),
        server: "partner".to_owned(),
        origin: "in-process".to_owned(),
        message: "Confirm the new delivery address with the carrier to release parcel TRK-EXAMPLE."
            .to_owned(),
        kind: FormKind::Url {
            url: "https://track.partner.example/confirm/address?parcel=TRK-EXAMPLE&session=5f0c9a7e-2b41-4c1e-9d7a-8e6f3b2a1c0d&return=https%3A%2F%2Fdesk.example%2Fdone".to_owned(),
        },
        asked_by: None,
    })
}

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

fn ctrl(c: char) -> KeyEvent {
    KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL)
}

/// Presses every key; all but the last must leave the modal open. Returns the last outcome.
fn press(modal: &mut FormModal, keys: &[KeyEvent]) -> ModalOutcome<FormAnswer> {
    let (last, before) = keys.split_last().expect("at least one key");
    for key in before {
        assert_eq!(modal.handle_key(*key), ModalOutcome::Pending, "{key:?}");
    }
    modal.handle_key(*last)
}

fn type_text(modal: &mut FormModal, text: &str) {
    for c in text.chars() {
        assert_eq!(
            modal.handle_key(key(KeyCode::Char(c))),
            ModalOutcome::Pending
        );
    }
}

fn draw(modal: &FormModal, width: u16, height: u16) -> Terminal<TestBackend> {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).expect("terminal");
    terminal
        .draw(|frame| modal.render(frame, frame.area()))
        .expect("draw");
    terminal
}

fn screen(modal: &FormModal, width: u16, height: u16) -> String {
    text_of(draw(modal, width, height).backend().buffer())
}

fn text_of(buffer: &Buffer) -> String {
    let area = buffer.area;
    let rows = (0..area.height).map(|y| {
        let cells = (0..area.width).map(|x| buffer[(x, y)].symbol().to_owned());
        cells.collect::<String>()
    });
    rows.collect::<Vec<_>>().join("\n")
}

fn accepted(pairs: Vec<(&str, FieldValue)>) -> ModalOutcome<FormAnswer> {
    let map = pairs
        .into_iter()
        .map(|(name, value)| (name.to_owned(), value));
    ModalOutcome::Answered(FormAnswer::Accept(map.collect()))
}

/// Fills every field of [`every_field_type`] with keys, ending on the review line.
fn fill_every_field(modal: &mut FormModal) {
    type_text(modal, "Sorry for the wait");
    modal.handle_key(key(KeyCode::Tab));
    type_text(modal, "dana@shop.example");
    modal.handle_key(key(KeyCode::Tab));
    type_text(modal, "x12a.5");
    modal.handle_key(key(KeyCode::Tab));
    modal.handle_key(key(KeyCode::Backspace));
    type_text(modal, "3.");
    modal.handle_key(key(KeyCode::Tab));
    modal.handle_key(key(KeyCode::Char(' ')));
    modal.handle_key(key(KeyCode::Down));
    modal.handle_key(key(KeyCode::Right));
    modal.handle_key(key(KeyCode::Right));
    modal.handle_key(key(KeyCode::Down));
    modal.handle_key(key(KeyCode::Char(' ')));
    modal.handle_key(key(KeyCode::Down));
    modal.handle_key(key(KeyCode::Down));
    modal.handle_key(key(KeyCode::Char(' ')));
    modal.handle_key(key(KeyCode::Down));
}

#[test]
fn every_field_type_is_edited_by_keys_and_sent_with_its_own_kind_of_value() {
    let mut modal = every_field_form();
    fill_every_field(&mut modal);
    let sent = press(&mut modal, &[key(KeyCode::Enter), key(KeyCode::Enter)]);
    let expected = accepted(vec![
        ("note", FieldValue::Text("Sorry for the wait".into())),
        ("email", FieldValue::Text("dana@shop.example".into())),
        ("amount", FieldValue::Number(12.5)),
        ("parcels", FieldValue::Integer(3)),
        ("release", FieldValue::Boolean(true)),
        ("reason", FieldValue::Choice("late".into())),
        (
            "regions",
            FieldValue::Choices(vec!["eu".into(), "us".into()]),
        ),
    ]);
    assert_eq!(sent, expected);
}

#[test]
fn fields_start_at_their_defaults_and_optional_empty_ones_are_left_out() {
    let mut modal = release_form();
    let sent = press(&mut modal, &[key(KeyCode::Char('y')), ctrl('r'), ctrl('s')]);
    assert_eq!(sent, accepted(vec![("release", FieldValue::Boolean(true))]));
    let mut modal = every_field_form();
    assert_eq!(
        modal.answers().0,
        BTreeMap::from([("parcels".to_owned(), FieldValue::Integer(1))])
    );
    modal.handle_key(key(KeyCode::BackTab));
    assert_eq!(
        modal.focus,
        modal.editors.len(),
        "Shift-Tab wraps to the review line"
    );
}

#[test]
fn enter_in_a_text_field_moves_to_the_next_field_and_never_sends() {
    let mut modal = release_form();
    press(&mut modal, &[key(KeyCode::Char(' ')), key(KeyCode::Tab)]);
    type_text(&mut modal, "ok");
    assert_eq!(modal.handle_key(key(KeyCode::Enter)), ModalOutcome::Pending);
    assert_eq!(modal.step, Step::Editing);
    assert_eq!(modal.focus, 2, "on the review line");
    let note = modal.answers().0.remove("note");
    assert_eq!(note, Some(FieldValue::Text("ok".into())), "still one line");
}

#[test]
fn review_is_refused_while_a_required_field_is_empty() {
    let mut modal = release_form();
    modal.handle_key(key(KeyCode::Tab));
    assert_eq!(modal.handle_key(ctrl('r')), ModalOutcome::Pending);
    assert_eq!(modal.step, Step::Editing);
    assert_eq!(modal.focus, 0, "the first field with a problem is focused");
    let screen = screen(&modal, 80, 24);
    assert!(screen.contains("✗ is required"), "{screen}");
    assert!(screen.contains("1 field needs fixing first"), "{screen}");
    let problem = modal
        .problems
        .first()
        .map(|p| (p.field.as_str(), p.problem.as_str()));
    assert_eq!(problem, Some(("release", "is required")));
}

#[test]
fn review_shows_the_answers_read_only_and_enter_sends_them() {
    let mut modal = release_form();
    press(&mut modal, &[key(KeyCode::Char(' ')), key(KeyCode::Tab)]);
    type_text(&mut modal, "Parcel came back damaged");
    press(&mut modal, &[key(KeyCode::Tab), key(KeyCode::Enter)]);
    assert_eq!(modal.step, Step::Review);
    // Typing does nothing in review; E goes back and the answers are kept.
    assert_eq!(
        modal.handle_key(key(KeyCode::Char('x'))),
        ModalOutcome::Pending
    );
    modal.handle_key(key(KeyCode::Char('e')));
    assert_eq!(modal.step, Step::Editing);
    let sent = press(&mut modal, &[ctrl('r'), key(KeyCode::Enter)]);
    let expected = accepted(vec![
        ("release", FieldValue::Boolean(true)),
        ("note", FieldValue::Text("Parcel came back damaged".into())),
    ]);
    assert_eq!(sent, expected);
}

#[test]
fn decline_and_cancel_answer_while_editing_and_in_review() {
    for step_keys in [vec![], vec![key(KeyCode::Char(' ')), ctrl('r')]] {
        let mut modal = release_form();
        for key in &step_keys {
            modal.handle_key(*key);
        }
        let mut declined = release_form();
        for key in &step_keys {
            declined.handle_key(*key);
        }
        assert_eq!(
            modal.handle_key(key(KeyCode::Esc)),
            ModalOutcome::Answered(FormAnswer::Cancel)
        );
        assert_eq!(
            declined.handle_key(ctrl('d')),
            ModalOutcome::Answered(FormAnswer::Decline)
        );
    }
}

#[test]
fn ctrl_d_inside_a_text_field_declines_rather_than_editing() {
    let mut modal = release_form();
    press(&mut modal, &[key(KeyCode::Char(' ')), key(KeyCode::Tab)]);
    type_text(&mut modal, "abc");
    press(&mut modal, &[key(KeyCode::Left)]);
    assert_eq!(
        modal.handle_key(ctrl('d')),
        ModalOutcome::Answered(FormAnswer::Decline)
    );
}

#[test]
fn a_number_out_of_bounds_shows_its_problem_once_the_field_is_left() {
    let mut modal = every_field_form();
    press(&mut modal, &[key(KeyCode::Tab), key(KeyCode::Tab)]);
    type_text(&mut modal, "900");
    assert!(
        !screen(&modal, 80, 24).contains("must be at most 500"),
        "not while typing"
    );
    modal.handle_key(key(KeyCode::Tab));
    let screen = screen(&modal, 80, 24);
    assert!(screen.contains("✗ must be at most 500"), "{screen}");
    assert!(screen.contains("a number between 0 and 500"), "{screen}");
}

#[test]
fn a_number_that_does_not_parse_is_a_problem() {
    let mut modal = every_field_form();
    press(&mut modal, &[key(KeyCode::Tab), key(KeyCode::Tab)]);
    type_text(&mut modal, "1-2");
    modal.handle_key(key(KeyCode::Tab));
    let problem = modal.problems.iter().find(|p| p.field == "amount");
    let problem = problem.map(|p| p.problem.as_str());
    assert_eq!(problem, Some("must be a number, like 12.5"));
    assert!(screen(&modal, 80, 24).contains("✗ must be a number, like 12.5"));
}

#[test]
fn a_multi_choice_list_moves_its_own_cursor_and_leaves_at_its_ends() {
    let mut modal = every_field_form();
    modal.handle_key(key(KeyCode::BackTab));
    modal.handle_key(key(KeyCode::Up));
    assert_eq!(modal.focus, 6);
    let cursor = |modal: &FormModal| match &modal.editors[6] {
        Editor::Choices { cursor, .. } => *cursor,
        _ => usize::MAX,
    };
    assert_eq!(cursor(&modal), 2, "entered from below at its last option");
    press(&mut modal, &[key(KeyCode::Up), key(KeyCode::Up)]);
    assert_eq!((modal.focus, cursor(&modal)), (6, 0));
    modal.handle_key(key(KeyCode::Up));
    assert_eq!(
        modal.focus, 5,
        "past the first option to the previous field"
    );
}

#[test]
fn picking_more_than_allowed_shows_the_problem_at_once() {
    let mut modal = every_field_form();
    modal.handle_key(key(KeyCode::BackTab));
    modal.handle_key(key(KeyCode::BackTab));
    let keys = [
        key(KeyCode::Char(' ')),
        key(KeyCode::Down),
        key(KeyCode::Char(' ')),
    ];
    press(&mut modal, &keys);
    press(&mut modal, &[key(KeyCode::Down), key(KeyCode::Char(' '))]);
    assert!(screen(&modal, 80, 24).contains("✗ must have at most 2 choices"));
}

#[test]
fn the_focused_field_stays_visible_in_a_long_form_at_80x24() {
    let mut modal = every_field_form();
    for _ in 0..6 {
        modal.handle_key(key(KeyCode::Tab));
    }
    let terminal = draw(&modal, 80, 24);
    let screen = text_of(terminal.backend().buffer());
    assert!(screen.contains("▸ regions"), "{screen}");
    assert!(screen.contains("United States"), "{screen}");
    assert!(screen.contains("↑ more"), "{screen}");
    insta::assert_snapshot!("form_scrolled_to_the_last_field_80x24", terminal.backend());
}

#[test]
fn url_mode_accepts_declines_and_cancels() {
    let answers = [
        (key(KeyCode::Enter), FormAnswer::Accept(BTreeMap::new())),
        (ctrl('s'), FormAnswer::Accept(BTreeMap::new())),
        (ctrl('d'), FormAnswer::Decline),
        (key(KeyCode::Esc), FormAnswer::Cancel),
    ];
    for (key, answer) in answers {
        let mut modal = url_form();
        assert_eq!(modal.handle_key(key), ModalOutcome::Answered(answer));
    }
    let mut modal = url_form();
    assert_eq!(
        modal.handle_key(KeyEvent::new(KeyCode::Char('y'), KeyModifiers::NONE)),
        ModalOutcome::Pending
    );
}

#[test]
fn the_url_host_is_highlighted_and_the_whole_url_is_shown() {
    let modal = url_form();
    let FormKind::Url { url } = &modal.ask().kind else {
        panic!("a URL form");
    };
    let terminal = draw(&modal, 80, 24);
    let buffer = terminal.backend().buffer();
    let screen = text_of(buffer);
    let joined: String = screen
        .split('\n')
        .map(|row| row.trim_matches(['│', ' ']))
        .collect();
    assert!(joined.contains(url.as_str()), "{screen}");
    let row = screen
        .split('\n')
        .position(|row| row.contains("https://"))
        .expect("URL row");
    let line = screen.split('\n').nth(row).expect("URL row");
    let column = line[..line.find("https://").expect("URL column")]
        .chars()
        .count();
    let styles: Vec<Style> = (0..40)
        .map(|n| buffer[(column as u16 + n, row as u16)].style())
        .collect();
    let host = "track.partner.example";
    let start = "https://".len();
    for (n, style) in styles.iter().enumerate() {
        let in_host = (start..start + host.len()).contains(&n);
        assert_eq!(
            style.fg == host_style().fg && style.add_modifier.contains(Modifier::UNDERLINED),
            in_host,
            "column {n}"
        );
    }
}

#[test]
fn the_host_is_the_one_a_browser_would_visit() {
    let host = |url: &str| host_range(url).map(|range| url[range].to_owned());
    assert_eq!(
        host("https://shop.example@evil.example:8443/x"),
        Some("evil.example".into())
    );
    assert_eq!(
        host("https://evil.example\\@shop.example/"),
        Some("evil.example".into())
    );
    assert_eq!(host("http://[::1]:8080/"), Some("[::1]".into()));
    assert_eq!(host("mailto:lead@shop.example"), None);
}

#[test]
fn a_message_with_escape_sequences_is_shown_clean() {
    let message = "Release\x1b[2J\x1b[31m now\x1b[0m?\x1b]52;c;ZXZpbA==\x07 Sure\u{202e}txt";
    let mut hostile = ask(
        message,
        vec![field(
            "ok",
            Some("OK\x1b[5m?"),
            true,
            FieldKind::Boolean { default: None },
        )],
    );
    hostile.server = "shop\x1b[8m".to_owned();
    let modal = FormModal::new(hostile);
    let terminal = draw(&modal, 80, 24);
    let screen = text_of(terminal.backend().buffer());
    assert!(
        !screen.contains('\x1b') && !screen.contains('\x07'),
        "{screen}"
    );
    assert!(screen.contains("Release now? Suretxt"), "{screen}");
    assert!(screen.contains("shop asks:"), "{screen}");
    insta::assert_snapshot!("form_message_with_escapes_80x24", terminal.backend());
}

fn with_problems() -> FormModal {
    let mut modal = every_field_form();
    press(&mut modal, &[key(KeyCode::Tab)]);
    type_text(&mut modal, "dana@");
    press(&mut modal, &[key(KeyCode::Tab)]);
    type_text(&mut modal, "900");
    modal.handle_key(ctrl('r'));
    modal
}

fn reviewing() -> FormModal {
    let mut modal = every_field_form();
    fill_every_field(&mut modal);
    modal.handle_key(ctrl('r'));
    assert_eq!(modal.step, Step::Review);
    modal
}

#[test]
fn snapshots_of_every_state() {
    let url = url_form();
    let mut released = release_form();
    released.handle_key(key(KeyCode::Char(' ')));
    let states: [(&str, FormModal); 6] = [
        ("form_every_field_type", every_field_form()),
        ("form_with_problems", with_problems()),
        ("form_review", reviewing()),
        ("form_shop_release", release_form()),
        ("form_shop_release_answered", released),
        ("form_url", url),
    ];
    for (name, modal) in &states {
        for (width, height) in [(80, 24), (120, 36)] {
            let terminal = draw(modal, width, height);
            insta::assert_snapshot!(format!("{name}_{width}x{height}"), terminal.backend());
        }
    }
}
