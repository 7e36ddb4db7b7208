//! Approvals on screen: a ticket waiting for a lead, the lead's count and list with the
//! oldest's wait, opening one, withdrawing one, the run going on from a lead's answer, and a
//! lead hearing of a new approval and of one passed to them.

use crossterm::event::KeyCode;
use serde_json::json;
use support_desk::config::Notice;
use support_desk::host::api::{
    ApprovalView, Command, Field, FieldKind, FormAsk, FormKind, Outcome, Pending, Question,
};
use support_desk::host::events::HostEvent;
use support_desk::record::Event;
use support_desk::ui::app::{Modal, notice_bytes};

use crate::ui_desk::{
    app, asks_for, ctrl, happen, key, look_at, model_call, record, screen, tool_call,
};

const MESSAGE: &str = "Release refund R-0001 of EUR 279.00 on order O-1587? It is above the EUR 150.00 refund limit, so a lead must confirm it.";

/// T-0003 worked as far as the lead's form, which went to the team's leads as approval 7.
fn waiting() -> (support_desk::ui::app::App, support_desk::record::DeskRecord) {
    let mut app = app().on_team(false);
    let record = record();
    let t = "T-0003";
    for event in [
        Event::TicketStarted {
            ticket: t.into(),
            tools: vec!["shop.issue_refund".into()],
            attached: vec![],
            request: None,
        },
        model_call(
            t,
            1,
            asks_for("shop__issue_refund", json!({"quote_id": "Q-0c78b1d064"})),
        ),
        tool_call(
            t,
            1,
            "shop.issue_refund",
            json!({"quote_id": "Q-0c78b1d064"}),
        ),
        Event::ApprovalAsked {
            ticket: t.into(),
            turn: 1,
            approval: 7,
            server: "shop".into(),
            tool: "shop.issue_refund".into(),
            message: MESSAGE.into(),
        },
    ] {
        happen(&mut app, &record, event);
    }
    look_at(&mut app, &record, t);
    (app, record)
}

fn open_approval() -> ApprovalView {
    ApprovalView {
        id: 7,
        ticket: "T-0003".into(),
        server: "shop".into(),
        origin: "http://127.0.0.1:8421/mcp".into(),
        tool: "shop.issue_refund".into(),
        arguments: vec![("quote_id".into(), "\"Q-0c78b1d064\"".into())],
        asked_by: "ana".into(),
        asked_at: 1_798_000_000_000,
        message: MESSAGE.into(),
        fields: vec![Field {
            name: "release".into(),
            title: Some("Release the refund".into()),
            description: None,
            required: true,
            kind: FieldKind::Boolean { default: None },
        }],
        answering_by: None,
        passed_to: None,
    }
}

#[test]
fn a_ticket_waiting_for_a_lead_says_so_and_x_withdraws_its_approval_with_why() {
    let (mut app, _record) = waiting();
    let shown = screen(&app, 120, 36);
    assert!(shown.contains("T-0003 waiting"), "{shown}");
    insta::assert_snapshot!("desk_waiting_for_a_lead_120x36", shown);

    assert_eq!(
        app.on_key(key(KeyCode::Char('w'))),
        None,
        "not worked while it waits"
    );
    app.on_key(key(KeyCode::Char('x')));
    assert!(matches!(app.modal, Some(Modal::Withdraw(..))));
    insta::assert_snapshot!("desk_withdraw_approval_80x24", screen(&app, 80, 24));
    for c in "the customer withdrew the request".chars() {
        app.on_key(key(KeyCode::Char(c)));
    }
    assert_eq!(
        app.on_key(ctrl('s')),
        Some(Command::WithdrawApproval {
            ticket: "T-0003".into(),
            reason: "the customer withdrew the request".into()
        })
    );
}

/// Twelve minutes after approval 7 was asked.
fn twelve_minutes_on() -> i64 {
    1_798_000_000_000 + 12 * 60_000
}

#[test]
fn a_lead_sees_the_open_approvals_and_opens_one_from_the_list() {
    let mut lead = app().on_team(true);
    lead.clock = twelve_minutes_on;
    lead.on_host(HostEvent::Approvals(vec![open_approval()]));
    let shown = screen(&lead, 120, 36);
    assert!(
        shown.contains("1 approval open (A), waiting 12m"),
        "{shown}"
    );
    assert_eq!(
        lead.on_key(key(KeyCode::Char('A'))),
        Some(Command::ListApprovals)
    );
    insta::assert_snapshot!("desk_approvals_list_120x36", screen(&lead, 120, 36));
    assert_eq!(
        lead.on_key(key(KeyCode::Enter)),
        Some(Command::AnswerApproval(7))
    );
    assert_eq!(
        lead.current().map(|i| i.ticket.ticket_id.as_str()),
        Some("T-0003"),
        "its ticket, with the call log that led there, is behind the form"
    );
    let on_its_way = "approval 7: its form opens when the host has it";
    assert_eq!(lead.message.as_deref(), Some(on_its_way));
    let (form, _answer) = Pending::new(FormAsk {
        ticket: Some("T-0003".into()),
        server: "shop".into(),
        origin: "http://127.0.0.1:8421/mcp".into(),
        message: MESSAGE.into(),
        kind: FormKind::Fields(open_approval().fields),
        asked_by: Some("ana".into()),
    });
    lead.on_question(Question::Form(form));
    assert!(
        matches!(lead.modal, Some(Modal::Form(..))),
        "the form is open"
    );
    assert_eq!(
        lead.message, None,
        "the form came: nothing says it is coming"
    );

    // Answered elsewhere before its form came: the message goes with the approval.
    let mut other = app().on_team(true);
    other.on_host(HostEvent::Approvals(vec![open_approval()]));
    other.on_key(key(KeyCode::Char('A')));
    other.on_key(key(KeyCode::Enter));
    assert_eq!(other.message.as_deref(), Some(on_its_way));
    other.on_host(HostEvent::Approvals(vec![]));
    assert_eq!(other.message, None);
    assert!(!screen(&other, 120, 36).contains("approval open"));

    // Staff see no count: approvals are for leads.
    let mut staff = app_on_staff();
    staff.on_host(HostEvent::Approvals(vec![open_approval()]));
    assert!(!screen(&staff, 120, 36).contains("approval open"));
}

fn app_on_staff() -> support_desk::ui::app::App {
    app().on_team(false)
}

#[test]
fn the_run_going_on_from_a_lead_answer_shows_who_answered_and_the_outcome() {
    let (mut app, record) = waiting();
    for event in [
        Event::ApprovalAnswered {
            ticket: "T-0003".into(),
            turn: 1,
            approval: 7,
            by: "lee".into(),
            tool: "shop.issue_refund".into(),
            action: "accept".into(),
            content: Some("{\"release\":true}".into()),
            outcome: Outcome::Result,
            text: "{\"refund_id\":\"R-0001\",\"status\":\"released\",\"released_by\":\"lee\"}"
                .into(),
            truncated: false,
        },
        Event::RunContinued {
            ticket: "T-0003".into(),
            approval: 7,
        },
    ] {
        happen(&mut app, &record, event);
    }
    insta::assert_snapshot!("desk_continued_after_a_lead_120x36", screen(&app, 120, 36));
}

/// A lead's desk announces each approval it may answer once as it appears, and once more
/// when one is passed to them because no lead answered it in time; never their own request,
/// never to staff.
#[test]
fn a_lead_hears_of_a_new_approval_once_and_again_when_it_is_passed_to_them() {
    let mut lead = app().on_team(true);
    lead.clock = twelve_minutes_on;
    lead.on_host(HostEvent::Approvals(vec![open_approval()]));
    assert_eq!(
        lead.take_notices(),
        ["approval 7 waits for a lead: T-0003, shop.issue_refund, asked by ana"]
    );
    lead.on_host(HostEvent::Approvals(vec![open_approval()]));
    assert!(lead.take_notices().is_empty(), "told once");

    let passed = ApprovalView {
        passed_to: Some("dana".into()),
        ..open_approval()
    };
    lead.on_host(HostEvent::Approvals(vec![passed.clone()]));
    assert_eq!(
        lead.take_notices(),
        [
            "approval 7 is yours: no lead answered it in time (T-0003, shop.issue_refund, asked by ana)"
        ]
    );
    lead.on_host(HostEvent::Approvals(vec![passed.clone()]));
    assert!(lead.take_notices().is_empty(), "told once");
    let shown = screen(&lead, 120, 36);
    assert!(shown.contains("waiting 12m · yours: 7"), "{shown}");
    insta::assert_snapshot!("desk_approval_passed_to_you_120x36", shown);
    insta::assert_snapshot!("desk_approval_passed_to_you_80x24", screen(&lead, 80, 24));

    // Two new at once are one notice; someone else's passed approval is not news to this lead.
    let mut other = app().on_team(true);
    let second = ApprovalView {
        id: 8,
        ticket: "T-0005".into(),
        ..open_approval()
    };
    other.on_host(HostEvent::Approvals(vec![
        ApprovalView {
            passed_to: Some("lee".into()),
            ..open_approval()
        },
        second,
    ]));
    assert_eq!(other.take_notices(), ["2 approvals wait for a lead"]);

    // Nothing for staff, nor for a lead's own request.
    let mut staff = app_on_staff();
    staff.on_host(HostEvent::Approvals(vec![passed]));
    assert!(staff.take_notices().is_empty());
    let mut asker = app().on_team(true);
    asker.on_host(HostEvent::Approvals(vec![ApprovalView {
        asked_by: "dana".into(),
        ..open_approval()
    }]));
    assert!(asker.take_notices().is_empty());
}

#[test]
fn a_notice_is_the_bell_or_a_desktop_notice_with_no_control_characters() {
    let text = "approval 7 waits\x07\x1b]9;evil\x07 for a lead";
    assert_eq!(notice_bytes(Notice::Bell, Some("WezTerm"), text), b"\x07");
    assert_eq!(notice_bytes(Notice::None, None, text), b"");
    assert_eq!(notice_bytes(Notice::Auto, None, text), b"\x07");
    let desktop = notice_bytes(Notice::Auto, Some("WezTerm"), text);
    assert_eq!(desktop, notice_bytes(Notice::Desktop, None, text));
    assert!(desktop.starts_with(b"\x1b]9;approval 7 waits"));
    assert!(desktop.ends_with(b"for a lead\x07"));
    assert_eq!(
        desktop.iter().filter(|&&b| b == 0x1b || b == 0x07).count(),
        2,
        "one sequence, opened and closed once: {:?}",
        String::from_utf8_lossy(&desktop)
    );
}
