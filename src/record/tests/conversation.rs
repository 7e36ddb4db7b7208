//! A conversation by mail in the record: a message opens a ticket, a reply makes it
//! pending, the customer's answer opens it again for another reply, a machine's message is
//! kept but never asks for one, and the mail server's answers and a solve are recorded
//! after a send.

use super::*;
use crate::mail::message::{Address, Automatic, Message};
use crate::record::Conversation;

fn mail(id: &str, automatic: Option<Automatic>) -> Event {
    Event::MessageReceived {
        ticket: "M-00001".into(),
        message: Box::new(Message {
            message_id: id.into(),
            from: Address {
                address: "ana@example.com".into(),
                name: Some("Ana".into()),
            },
            date: None,
            subject: "Parcel".into(),
            text: "Where is it?".into(),
            quoted: None,
            attachments: vec![],
            in_reply_to: None,
            references: vec![],
            automatic,
            size: 40,
            problems: vec![],
        }),
        mailbox: "maildir".into(),
        uid: None,
        customer: None,
        mark: None,
    }
}

fn by_mail(text: &str, id: &str) -> Event {
    Event::Sent {
        ticket: "M-00001".into(),
        by: "dana".into(),
        text: text.into(),
        override_reason: None,
        message_id: Some(id.into()),
        answers: None,
    }
}

#[test]
fn a_customers_answer_opens_a_sent_conversation_for_one_more_reply() {
    let dir = tempfile::tempdir().expect("temp dir");
    let record = record_in(dir.path());
    record.append(&mail("m1@x", None)).expect("in");
    let opened = state(&record, "M-00001");
    assert_eq!(
        (opened.state, opened.conversation),
        (Lifecycle::New, Conversation::Open)
    );
    record.append(&draft("M-00001", vec![])).expect("drafted");
    record
        .append(&by_mail("It left Monday.", "r1@shop"))
        .expect("sent");
    let sent = state(&record, "M-00001");
    assert_eq!(
        (sent.state, sent.conversation),
        (Lifecycle::Sent, Conversation::Pending)
    );
    assert_eq!(
        sent.delivery.as_ref().map(|d| d.state.as_str()),
        Some("queued")
    );
    record
        .append(&Event::Delivery {
            ticket: "M-00001".into(),
            message_id: "r1@shop".into(),
            delivered: true,
            words: "250 OK".into(),
            attempt: 1,
            permanent: false,
        })
        .expect("the mail server's answer comes after the send");
    assert_eq!(
        state(&record, "M-00001").delivery.map(|d| d.state),
        Some("delivered".into())
    );
    // A second reply to the same message is refused; the customer's answer allows one.
    record
        .append(&by_mail("Again", "r2@shop"))
        .expect_err("one reply per message");
    record
        .append(&mail("m2@x", None))
        .expect("the customer answers");
    let reopened = state(&record, "M-00001");
    assert_eq!(
        (reopened.state, reopened.conversation, reopened.messages),
        (Lifecycle::New, Conversation::Open, 2)
    );
    assert!(reopened.sent.is_none() && reopened.draft.is_none());
    record
        .append(&draft("M-00001", vec![]))
        .expect("drafted again");
    record
        .append(&by_mail("Here it is.", "r2@shop"))
        .expect("a second reply");
    // The outbox is not where mail replies go.
    assert!(!dir.path().join(OUTBOX_FILE).exists());
}

#[test]
fn a_solved_conversation_closes_after_its_quiet_days_and_an_answer_opens_it() {
    let dir = tempfile::tempdir().expect("temp dir");
    let record = record_in(dir.path());
    record.append(&mail("m1@x", None)).expect("in");
    record
        .append(&Event::Solved {
            ticket: "M-00001".into(),
            by: "dana".into(),
            note: Some("answered by phone".into()),
        })
        .expect("solved");
    let solved = state(&record, "M-00001");
    assert_eq!(solved.conversation, Conversation::Solved);
    let day = 86_400_000;
    assert_eq!(
        solved.conversation_at(clock() + 3 * day, 4),
        Conversation::Solved
    );
    assert_eq!(
        solved.conversation_at(clock() + 4 * day, 4),
        Conversation::Closed
    );
    record
        .append(&mail("m2@x", None))
        .expect("the customer writes again");
    let open = state(&record, "M-00001");
    assert_eq!(open.conversation, Conversation::Open);
    assert!(open.solved.is_none());
}

#[test]
fn a_machines_message_is_kept_but_asks_nobody_to_answer() {
    let dir = tempfile::tempdir().expect("temp dir");
    let record = record_in(dir.path());
    record
        .append(&mail("bounce@x", Some(Automatic::Bounce)))
        .expect("in");
    let opened = state(&record, "M-00001");
    assert_eq!(opened.state, Lifecycle::NeedsPerson);
    assert!(
        opened
            .reason
            .as_deref()
            .is_some_and(|r| r.contains("a bounce"))
    );
    assert!(!opened.is_for_the_queue());
    // An out-of-office after our reply does not open the conversation again.
    let dir = tempfile::tempdir().expect("temp dir");
    let record = record_in(dir.path());
    record.append(&mail("m1@x", None)).expect("in");
    record.append(&draft("M-00001", vec![])).expect("drafted");
    record.append(&by_mail("Sent", "r1@shop")).expect("sent");
    record
        .append(&mail("ooo@x", Some(Automatic::AutoReply)))
        .expect("kept");
    let after = state(&record, "M-00001");
    assert_eq!(
        (after.state, after.conversation),
        (Lifecycle::Sent, Conversation::Pending)
    );
}

#[test]
fn the_due_clock_runs_from_the_customers_unanswered_message_and_restarts_at_their_answer() {
    let dir = tempfile::tempdir().expect("temp dir");
    let record = record_in(dir.path());
    record.append(&mail("m1@x", None)).expect("in");
    let waiting = state(&record, "M-00001");
    assert_eq!(
        (waiting.waiting_since, waiting.replied),
        (Some(clock()), false)
    );
    record.append(&draft("M-00001", vec![])).expect("drafted");
    record.append(&by_mail("Sent", "r1@shop")).expect("sent");
    let answered = state(&record, "M-00001");
    assert_eq!((answered.waiting_since, answered.replied), (None, true));
    // An out-of-office starts no clock; the customer's answer does, as a next reply.
    record
        .append(&mail("ooo@x", Some(Automatic::AutoReply)))
        .expect("kept");
    assert_eq!(state(&record, "M-00001").waiting_since, None);
    record.append(&mail("m2@x", None)).expect("answer");
    let again = state(&record, "M-00001");
    assert_eq!((again.waiting_since, again.replied), (Some(clock()), true));
    record
        .append(&Event::Solved {
            ticket: "M-00001".into(),
            by: "dana".into(),
            note: None,
        })
        .expect("solved");
    assert_eq!(state(&record, "M-00001").waiting_since, None);
}
