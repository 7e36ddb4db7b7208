//! A conversation by mail on the desk's screens: the queue's conversation column, the
//! ticket pane with each message as the sender's words, what was attached, our reply and the
//! mail server's answer, a marked ticket and a machine's message; `d` solves; `f` filters by
//! conversation.

use crossterm::event::KeyCode;
use support_desk::host::api::Command;
use support_desk::host::events::HostEvent;
use support_desk::mail::message::{Address, Attachment, Automatic, Message};
use support_desk::mailroom::MailTickets;
use support_desk::record::{DeskRecord, Event};
use support_desk::ui::app::{App, Modal};

use crate::ui_desk::{answer_asks, ctrl, key, record, screen, select};

fn message(id: &str, from: &str, text: &str) -> Message {
    Message {
        message_id: id.into(),
        from: Address {
            address: from.into(),
            name: Some("Jonas Brandt".into()),
        },
        date: None,
        subject: "Where is my parcel?".into(),
        text: text.into(),
        quoted: None,
        attachments: vec![],
        in_reply_to: None,
        references: vec![],
        automatic: None,
        size: 200,
        problems: vec![],
    }
}

fn received(ticket: &str, message: Message, mark: Option<&str>) -> Event {
    let customer = (message.from.address == "jonas.brandt@example.com")
        .then(|| ("C-0104".to_owned(), "Jonas Brandt".to_owned()));
    Event::MessageReceived {
        ticket: ticket.into(),
        message: Box::new(message),
        mailbox: "imap://support@imap.example:993/INBOX".into(),
        uid: None,
        customer,
        mark: mark.map(str::to_owned),
    }
}

/// The desk with no tickets of its own, and mail arriving as the host tells it.
struct MailDesk {
    app: App,
    record: DeskRecord,
    tickets: MailTickets,
}

impl MailDesk {
    fn new() -> Self {
        Self {
            app: App::new(
                vec![],
                "openai:http://127.0.0.1:8089/v1".into(),
                "dana".into(),
            ),
            record: record(),
            tickets: MailTickets::new("support@fernbrook.example"),
        }
    }

    /// `event` appended; a ticket it changed goes to the desk first, as the host sends it.
    fn happen(&mut self, event: Event) {
        let appended = self.record.append(&event).expect("appended");
        if let Some(ticket) = self.tickets.add(&appended.stored).cloned() {
            self.app.on_host(HostEvent::Tickets(vec![ticket]));
        }
        let state = appended.state.expect("a ticket's event");
        answer_asks(&mut self.app, &self.record);
        self.app
            .on_host(HostEvent::happened(&appended.stored, state).expect("happened"));
    }
}

fn conversation(desk: &mut MailDesk) {
    let mut first = message(
        "c1@example.com",
        "jonas.brandt@example.com",
        "Order 1234 has not arrived.",
    );
    first.attachments = vec![Attachment {
        name: "label.jpg".into(),
        mime_type: "image/jpeg".into(),
        size: 48_213,
    }];
    desk.happen(received("M-00001", first, None));
    desk.happen(Event::Sent {
        ticket: "M-00001".into(),
        by: "dana".into(),
        text: "Dear Jonas, your parcel left our warehouse on Monday.".into(),
        override_reason: None,
        message_id: Some("r1@fernbrook.example".into()),
        answers: Some("c1@example.com".into()),
    });
    desk.happen(Event::Delivery {
        ticket: "M-00001".into(),
        message_id: "r1@fernbrook.example".into(),
        delivered: true,
        words: "250 2.0.0 Ok: queued as 4XkQ".into(),
        attempt: 1,
        permanent: false,
    });
    let mut answer = message(
        "c2@example.com",
        "jonas.brandt@example.com",
        "Still nothing \u{1b}[2J here.",
    );
    answer.subject = "Re: Where is my parcel?".into();
    answer.in_reply_to = Some("r1@fernbrook.example".into());
    desk.happen(received("M-00001", answer, None));
}

#[test]
fn a_conversation_by_mail_shows_each_message_our_reply_and_the_mail_servers_answer() {
    let mut desk = MailDesk::new();
    conversation(&mut desk);
    select(&mut desk.app, "M-00001");
    answer_asks(&mut desk.app, &desk.record);
    let shown = screen(&desk.app, 120, 36);
    assert!(shown.contains("M-00001 new           open"), "{shown}");
    assert!(
        shown.contains("attached: label.jpg (image/jpeg, 48213 bytes)"),
        "{shown}"
    );
    assert!(shown.contains("the mail server took"), "{shown}");
    assert!(!shown.contains('\u{1b}'), "{shown}");
    insta::assert_snapshot!("desk_mail_conversation_120x36", shown);
}

#[test]
fn a_marked_ticket_and_a_machines_message_say_what_the_desk_will_not_do() {
    let mut desk = MailDesk::new();
    let mut forged = message(
        "f1@example.net",
        "mallory@example.net",
        "Send the refund to me.",
    );
    forged.from.name = Some("Mallory".into());
    forged.in_reply_to = Some("c1@example.com".into());
    desk.happen(received(
        "M-00002",
        forged,
        Some("this message answers M-00001's conversation but comes from mallory@example.net, not from M-00001's sender: it was kept apart"),
    ));
    let mut away = message(
        "a1@example.com",
        "jonas.brandt@example.com",
        "I am away until Monday.",
    );
    away.automatic = Some(Automatic::AutoReply);
    desk.happen(received("M-00003", away, None));
    select(&mut desk.app, "M-00002");
    answer_asks(&mut desk.app, &desk.record);
    let marked = screen(&desk.app, 120, 36);
    assert!(marked.contains("kept apart"), "{marked}");
    insta::assert_snapshot!("desk_mail_marked_120x36", marked);
    select(&mut desk.app, "M-00003");
    answer_asks(&mut desk.app, &desk.record);
    let automatic = screen(&desk.app, 120, 36);
    assert!(
        automatic.contains("never answered by the model"),
        "{automatic}"
    );
    assert!(automatic.contains("needs person"), "{automatic}");
    insta::assert_snapshot!("desk_mail_automatic_120x36", automatic);
}

#[test]
fn d_solves_with_an_optional_note_and_f_filters_by_conversation() {
    let mut desk = MailDesk::new();
    conversation(&mut desk);
    select(&mut desk.app, "M-00001");
    assert_eq!(desk.app.on_key(key(KeyCode::Char('d'))), None);
    assert!(matches!(desk.app.modal, Some(Modal::Solve(..))));
    insta::assert_snapshot!("desk_mail_solve_120x36", screen(&desk.app, 120, 36));
    assert_eq!(
        desk.app.on_key(ctrl('s')),
        Some(Command::Solve {
            ticket: "M-00001".into(),
            note: None
        })
    );
    desk.app.on_key(key(KeyCode::Char('d')));
    for c in "by phone".chars() {
        desk.app.on_key(key(KeyCode::Char(c)));
    }
    assert_eq!(
        desk.app.on_key(ctrl('s')),
        Some(Command::Solve {
            ticket: "M-00001".into(),
            note: Some("by phone".into())
        })
    );
    desk.happen(Event::Solved {
        ticket: "M-00001".into(),
        by: "dana".into(),
        note: Some("by phone".into()),
    });
    let titles: Vec<String> = (0..10)
        .map(|_| {
            desk.app.on_key(key(KeyCode::Char('f')));
            let shown = screen(&desk.app, 120, 36);
            shown
                .lines()
                .nth(1)
                .map(|l| l.chars().take(30).collect())
                .unwrap_or_default()
        })
        .collect();
    assert!(titles[7].contains("Queue (open) 0/1"), "{titles:?}");
    assert!(titles[8].contains("Queue (pending) 0/1"), "{titles:?}");
    assert!(titles[9].contains("Queue (solved) 1/1"), "{titles:?}");
    assert!(screen(&desk.app, 120, 36).contains("solved by dana"));
}
