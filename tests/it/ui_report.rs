//! The lead's report on screen: the scripted day of `report.rs` read from its SQLite record,
//! drawn at both sizes; an empty record; and a lead's name that carries escape sequences,
//! which never reach the terminal.

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use support_desk::record::Record;
use support_desk::report::{Report, Settings};
use support_desk::sla::Sla;

use crate::report::{monday, sqlite_day};

fn sla() -> Sla {
    Sla::new(
        "4h",
        "8h",
        "Mon-Fri 09:00-17:00",
        "Europe/Berlin",
        &[],
        "1h",
    )
    .expect("settings")
}

/// The report of `record` at Monday 17:00 in Berlin.
async fn report_of(record: Record) -> Report {
    let sla = sla();
    let tickets = support_desk::tickets::bundled();
    let settings = Settings {
        now: monday(17, 0),
        since: None,
        zone: jiff::tz::TimeZone::get("Europe/Berlin").expect("zone"),
        sla: Some(&sla),
        tickets: &tickets,
        allow: &[],
        close_after_days: 4,
    };
    support_desk::report::read(&record, &settings)
        .await
        .expect("the record reads")
}

fn screen(report: &Report, width: u16, height: u16) -> String {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).expect("terminal");
    terminal
        .draw(|frame| support_desk::ui::report::render(report, frame, frame.area()))
        .expect("draw");
    format!("{}", terminal.backend())
}

#[tokio::test]
async fn the_report_shows_the_days_figures_the_backlog_by_age_and_each_days_volume() {
    let dir = tempfile::tempdir().expect("dir");
    let report = report_of(Record::Sqlite(sqlite_day(dir.path()))).await;
    let wide = screen(&report, 120, 36);
    assert!(wide.contains("2 late now: M-00003, T-0003"), "{wide}");
    assert!(
        wide.contains("1 accepted · 1 declined · 0 cancelled · 1 released: EUR 250.00"),
        "{wide}"
    );
    insta::assert_snapshot!("report_120x36", wide);
    insta::assert_snapshot!("report_80x24", screen(&report, 80, 24));
}

#[tokio::test]
async fn an_empty_record_says_nothing_has_arrived_yet() {
    let record = support_desk::record::DeskRecord::in_memory("dana", &[]).expect("record");
    let report = report_of(Record::Sqlite(record)).await;
    let shown = screen(&report, 80, 24);
    assert!(shown.contains("No ticket has reached"), "{shown}");
    insta::assert_snapshot!("report_empty_80x24", shown);
}

#[tokio::test]
async fn a_name_from_the_record_never_carries_an_escape_to_the_terminal() {
    let dir = tempfile::tempdir().expect("dir");
    let mut report = report_of(Record::Sqlite(sqlite_day(dir.path()))).await;
    let answers = report
        .approvals
        .by_lead
        .remove("lee")
        .expect("lee answered");
    report
        .approvals
        .by_lead
        .insert("lee\u{1b}]52;c;bWFsaWNl\u{7}\u{1b}[2J".into(), answers);
    report.late.as_mut().expect("sla").now_tickets[0] = "M-00003\u{1b}[31m".into();
    let mut terminal = Terminal::new(TestBackend::new(120, 36)).expect("terminal");
    terminal
        .draw(|frame| support_desk::ui::report::render(&report, frame, frame.area()))
        .expect("draw");
    let cells: String = terminal
        .backend()
        .buffer()
        .content()
        .iter()
        .map(|cell| cell.symbol())
        .collect();
    assert!(
        !cells.contains('\u{1b}') && !cells.contains('\u{7}'),
        "{cells}"
    );
    assert!(cells.contains("  lee  "), "{cells}");
    assert!(cells.contains("late now: M-00003, T-0003"), "{cells}");
}

/// `R` on the desk asks the host for the report and says it is reading the record; the
/// host's answer is drawn over the desk; `r` asks again and `q` returns to the queue.
#[tokio::test]
async fn r_on_the_desk_shows_the_report_the_host_computed() {
    use crossterm::event::KeyCode;
    use support_desk::host::api::{Command, HostEvent};

    use crate::ui_desk::{app, key};

    let mut desk = app();
    assert_eq!(
        desk.on_key(key(KeyCode::Char('R'))),
        Some(Command::LeadReport)
    );
    let reading = crate::ui_desk::screen(&desk, 80, 24);
    assert!(reading.contains("Reading the desk's record"), "{reading}");
    insta::assert_snapshot!("desk_report_reading_80x24", reading);

    let dir = tempfile::tempdir().expect("dir");
    let report = report_of(Record::Sqlite(sqlite_day(dir.path()))).await;
    desk.on_host(HostEvent::LeadReport(Box::new(report)));
    let wide = crate::ui_desk::screen(&desk, 120, 36);
    assert!(wide.contains("2 late now: M-00003, T-0003"), "{wide}");
    insta::assert_snapshot!("desk_report_120x36", wide);
    insta::assert_snapshot!("desk_report_80x24", crate::ui_desk::screen(&desk, 80, 24));

    assert_eq!(
        desk.on_key(key(KeyCode::Char('r'))),
        Some(Command::LeadReport),
        "r reads it again"
    );
    assert!(
        desk.report.is_none(),
        "the old figures are not shown as new"
    );
    assert_eq!(desk.on_key(key(KeyCode::Char('q'))), None);
    let back = crate::ui_desk::screen(&desk, 80, 24);
    assert!(!back.contains("lead's report"), "{back}");
}
