//! Due times on the desk, with `[sla]` and a clock the test sets: the queue in due order
//! (late first), each row saying how long is left or how late it is, the footer counting the
//! late and the nearly due; a reply takes a ticket off the clock, and a tag with a tighter
//! target brings its ticket's due time forward while the ticket carries it.

use support_desk::host::api::Sla;
use support_desk::host::events::HostEvent;
use support_desk::mail::message::{Address, Message};
use support_desk::mailroom::MailTickets;
use support_desk::record::{DeskRecord, Event};
use support_desk::ui::app::App;

use crate::ui_desk::{answer_asks, screen};

/// Berlin time `h:m` on Monday 7 December 2026 (UTC+1), as unix ms.
const fn monday(h: i64, m: i64) -> i64 {
    1_796_601_600_000 + ((h - 1) * 60 + m) * 60_000
}

/// Monday 7 December 2026, 13:35 in Berlin: the desk's now.
fn monday_afternoon() -> i64 {
    monday(13, 35)
}

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

fn mail(ticket: &str, id: &str, subject: &str) -> Event {
    Event::MessageReceived {
        ticket: ticket.into(),
        message: Box::new(Message {
            message_id: id.into(),
            from: Address {
                address: format!("{ticket}@example.net").to_lowercase(),
                name: None,
            },
            date: None,
            subject: subject.into(),
            text: "Where is my order?".into(),
            quoted: None,
            attachments: vec![],
            in_reply_to: None,
            references: vec![],
            automatic: None,
            size: 100,
            problems: vec![],
        }),
        mailbox: "maildir".into(),
        uid: None,
        customer: None,
        mark: None,
    }
}

/// When a message came in (the record's clock then), its ticket, Message-ID and subject.
type Arrival = (fn() -> i64, &'static str, &'static str, &'static str);

/// Three tickets that came in at Berlin 12:50, 09:40 and 09:00 on Monday, seen at 13:35.
fn desk() -> (App, DeskRecord) {
    desk_timed(sla())
}

/// The same desk, timed against `sla`.
fn desk_timed(sla: Sla) -> (App, DeskRecord) {
    let mut app = App::new(vec![], "replay".into(), "dana".into()).with_sla(sla, monday_afternoon);
    let mut tickets = MailTickets::new("support@fernbrook.example");
    let arrivals: [Arrival; 3] = [
        (|| monday(12, 50), "M-00001", "a@x", "came in last"),
        (|| monday(9, 40), "M-00002", "b@x", "nearly due"),
        (|| monday(9, 0), "M-00003", "c@x", "late"),
    ];
    let mut record = DeskRecord::in_memory("dana", &[]).expect("record");
    for (clock, ticket, id, subject) in arrivals {
        record = record.with_clock(clock);
        let appended = record.append(&mail(ticket, id, subject)).expect("in");
        if let Some(ticket) = tickets.add(&appended.stored).cloned() {
            app.on_host(HostEvent::Tickets(vec![ticket]));
        }
        let state = appended.state.expect("state");
        app.on_host(HostEvent::happened(&appended.stored, state).expect("event"));
    }
    (app, record)
}

#[test]
fn the_queue_is_in_due_order_and_says_how_late_or_how_soon() {
    let (mut app, record) = desk();
    answer_asks(&mut app, &record);
    let order: Vec<&str> = app
        .items
        .iter()
        .map(|i| i.ticket.ticket_id.as_str())
        .collect();
    assert_eq!(order, ["M-00003", "M-00002", "M-00001"]);
    let shown = screen(&app, 120, 36);
    assert!(
        shown.contains("late 35m"),
        "09:00 + 4h = 13:00, seen at 13:35: {shown}"
    );
    assert!(shown.contains("due 5m"), "09:40 + 4h = 13:40: {shown}");
    assert!(shown.contains("due 3h 15m"), "12:50 + 4h = 16:50: {shown}");
    assert!(shown.contains("1 late, 1 due within 1h"), "{shown}");
    insta::assert_snapshot!("desk_due_120x36", shown);
    insta::assert_snapshot!("desk_due_80x24", screen(&app, 80, 24));
}

#[test]
fn a_reply_takes_a_ticket_off_the_clock() {
    let (mut app, record) = desk();
    let record = record.with_clock(monday_afternoon);
    for event in [
        Event::Draft {
            ticket: "M-00003".into(),
            text: "Your order left on Friday.".into(),
            findings: vec![],
        },
        Event::Sent {
            ticket: "M-00003".into(),
            by: "dana".into(),
            text: "Your order left on Friday.".into(),
            override_reason: None,
            message_id: Some("r@fernbrook.example".into()),
            answers: Some("c@x".into()),
        },
    ] {
        let appended = record.append(&event).expect("appended");
        app.on_host(
            HostEvent::happened(&appended.stored, appended.state.expect("state")).expect("event"),
        );
    }
    let order: Vec<&str> = app
        .items
        .iter()
        .map(|i| i.ticket.ticket_id.as_str())
        .collect();
    assert_eq!(
        order,
        ["M-00002", "M-00001", "M-00003"],
        "a pending ticket is not due"
    );
    let shown = screen(&app, 120, 36);
    assert!(!shown.contains("late"), "{shown}");
    assert!(shown.contains("1 due within 1h"), "{shown}");
}

#[test]
fn a_tag_with_a_tighter_target_moves_its_ticket_up_while_it_carries_it() {
    let urgent = sla()
        .with_tag("urgent", Some("30m"), None)
        .expect("tag settings");
    let (mut app, record) = desk_timed(urgent);
    let record = record.with_clock(monday_afternoon);
    let tag = |app: &mut App, removed: bool| {
        let event = Event::Tagged {
            ticket: "M-00001".into(),
            by: "dana".into(),
            tag: "urgent".into(),
            removed,
        };
        let appended = record.append(&event).expect("appended");
        app.on_host(
            HostEvent::happened(&appended.stored, appended.state.expect("state")).expect("event"),
        );
    };
    tag(&mut app, false);
    let order = |app: &App| -> Vec<String> {
        app.items
            .iter()
            .map(|i| i.ticket.ticket_id.clone())
            .collect()
    };
    assert_eq!(order(&app), ["M-00003", "M-00001", "M-00002"]);
    let shown = screen(&app, 120, 36);
    assert!(
        shown.contains("late 15m"),
        "12:50 + 30m = 13:20, seen at 13:35: {shown}"
    );
    assert!(shown.contains("2 late, 1 due within 1h"), "{shown}");

    tag(&mut app, true);
    assert_eq!(order(&app), ["M-00003", "M-00002", "M-00001"]);
    assert!(screen(&app, 120, 36).contains("due 3h 15m"));
}
