//! Keys and colours: `[keys]` rebinds an action (and the help says so), a clash stops every
//! command that reads the config, and under `NO_COLOR` the desk draws without a colour.

use std::collections::BTreeMap;

use crossterm::event::KeyCode;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::style::Color;
use support_desk::host::api::Command;
use support_desk::ui::app::Modal;
use support_desk::ui::keymap::Keymap;
use support_desk::ui::render::render;
use support_desk::ui::theme::{self, Palette};

use crate::support::BIN;
use crate::ui_desk::{app, key, screen};

#[test]
fn a_rebound_key_does_the_action_and_the_help_says_so() {
    let keys = BTreeMap::from([("work_selected".to_owned(), vec!["z".to_owned()])]);
    let mut desk = app().with_keymap(Keymap::with(&keys).expect("keys"));
    assert_eq!(desk.on_key(key(KeyCode::Char('w'))), None, "w lets go");
    assert_eq!(
        desk.on_key(key(KeyCode::Char('z'))),
        Some(Command::WorkTicket("T-0001".into()))
    );
    desk.on_key(key(KeyCode::Char('?')));
    assert!(matches!(desk.modal, Some(Modal::Help { .. })));
    let help = screen(&desk, 80, 24);
    assert!(
        help.contains("z  work the selected ticket (again)"),
        "{help}"
    );
}

#[test]
fn a_clash_in_keys_stops_the_command_with_both_actions_named() {
    let dir = tempfile::tempdir().expect("dir");
    let config = dir.path().join("desk.toml");
    std::fs::write(&config, "[keys]\nsolve = \"w\"\n").expect("config");
    for command in [&["queue"][..], &["servers"][..]] {
        let out = std::process::Command::new(BIN)
            .args(command)
            .arg("--config")
            .arg(&config)
            .arg("--data-dir")
            .arg(dir.path())
            .output()
            .expect("runs");
        assert!(!out.status.success());
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(
            said.contains("binds w to both work_selected and solve"),
            "{said}"
        );
    }
}

#[test]
fn under_no_color_no_cell_has_a_colour_and_the_words_are_the_same() {
    let palette = theme::chosen(false, Some("1".into()));
    assert_eq!(palette, Palette::NoColor);
    assert_eq!(
        theme::chosen(true, Some("".into())),
        Palette::Light,
        "an empty NO_COLOR is unset"
    );
    let desk = app();
    let draw = |palette| {
        theme::set(palette);
        let mut terminal = Terminal::new(TestBackend::new(80, 24)).expect("terminal");
        terminal.draw(|frame| render(&desk, frame)).expect("draw");
        terminal.backend().buffer().clone()
    };
    let coloured = draw(Palette::Dark);
    assert!(
        coloured
            .content()
            .iter()
            .any(|cell| cell.fg != Color::Reset)
    );
    let plain = draw(Palette::NoColor);
    theme::set(Palette::Dark);
    assert!(
        plain
            .content()
            .iter()
            .all(|cell| cell.fg == Color::Reset && cell.bg == Color::Reset),
        "no colour under NO_COLOR"
    );
    let words = |buffer: &ratatui::buffer::Buffer| {
        buffer
            .content()
            .iter()
            .map(|c| c.symbol().to_owned())
            .collect::<String>()
    };
    assert_eq!(words(&coloured), words(&plain));
    insta::assert_snapshot!(
        "desk_no_color_80x24",
        format!("{}", {
            theme::set(Palette::NoColor);
            let shown = screen(&desk, 80, 24);
            theme::set(Palette::Dark);
            shown
        })
    );
}
