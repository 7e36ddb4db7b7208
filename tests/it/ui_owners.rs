//! Owners, tags, views, marks and the command line on the desk: keys become the host's
//! commands, the record's events come back and the screen shows whose each ticket is, its
//! tags and the view it is in. Snapshots at 80×24 and 120×36.

use crossterm::event::KeyCode;
use support_desk::host::api::Command;
use support_desk::record::Event;
use support_desk::ui::app::{App, Filter};
use support_desk::views::{ViewConfig, saved_views};

use crate::ui_desk::{app, happen, key, record, screen};

fn typed(app: &mut App, text: &str) -> Option<Command> {
    let mut last = None;
    for c in text.chars() {
        last = app.on_key(key(KeyCode::Char(c)));
    }
    last
}

fn enter(app: &mut App) -> Option<Command> {
    app.on_key(key(KeyCode::Enter))
}

fn tag(ticket: &str, tag: &str) -> Command {
    Command::Tag {
        ticket: ticket.into(),
        tag: tag.into(),
        removed: false,
    }
}

#[test]
fn marked_tickets_take_one_command_together() {
    let mut app = app();
    assert_eq!(typed(&mut app, "  "), None, "space marks and moves on");
    assert_eq!(app.targets(), ["T-0001", "T-0002"]);
    let shown = screen(&app, 120, 36);
    assert!(shown.contains("T-0001*"), "{shown}");
    assert!(shown.contains("2 marked"), "{shown}");
    insta::assert_snapshot!("desk_marked_120x36", shown);
    insta::assert_snapshot!("desk_marked_80x24", screen(&app, 80, 24));

    typed(&mut app, ":tag refund");
    let shown = screen(&app, 80, 24);
    assert!(shown.contains(":tag refund▏"), "{shown}");
    assert_eq!(
        enter(&mut app),
        Some(Command::Each(vec![
            tag("T-0001", "refund"),
            tag("T-0002", "refund")
        ]))
    );
    assert!(app.marked.is_empty(), "the marks are spent");
    assert_eq!(app.message.as_deref(), Some(":tag refund on 2 tickets"));

    // With nothing marked, a command acts on the selected ticket alone (T-0003 now).
    typed(&mut app, ":assign bo");
    assert_eq!(
        enter(&mut app),
        Some(Command::Assign {
            ticket: "T-0003".into(),
            to: Some("bo".into()),
        })
    );
}

#[test]
fn tab_completes_on_the_command_line_and_lists_the_choices() {
    let mut app = app();
    typed(&mut app, ":ta");
    app.on_key(key(KeyCode::Tab));
    let shown = screen(&app, 120, 36);
    for offered in ["take ", "tag ", "take_over"] {
        assert!(shown.contains(offered), "{offered}: {shown}");
    }
    insta::assert_snapshot!("desk_command_line_120x36", shown);
    insta::assert_snapshot!("desk_command_line_80x24", screen(&app, 80, 24));
    typed(&mut app, "g r");
    app.on_key(key(KeyCode::Backspace));
    app.on_key(key(KeyCode::Backspace));
    app.on_key(key(KeyCode::Tab));
    assert_eq!(
        app.command_line.as_ref().map(|l| l.text.as_str()),
        Some("tag ")
    );
    // An unknown command says so, and how to find the right one.
    app.on_key(key(KeyCode::Esc));
    typed(&mut app, ":frob");
    assert_eq!(enter(&mut app), None);
    assert!(app.message.as_deref().is_some_and(|m| m.contains("Tab")));
    // An action of the keys by its name does what its key does.
    typed(&mut app, ":help");
    enter(&mut app);
    assert!(app.modal.is_some(), "the help opened");
}

#[test]
fn own_takes_the_ticket_and_the_views_follow_whose_it_is() {
    let mut app = app();
    let record = record();
    assert_eq!(
        app.on_key(key(KeyCode::Char('o'))),
        Some(Command::Assign {
            ticket: "T-0001".into(),
            to: Some("me".into()),
        })
    );
    // The host's part: the record takes the events, the desk hears of them.
    for event in [
        Event::Assigned {
            ticket: "T-0001".into(),
            by: "dana".into(),
            to: Some("dana".into()),
        },
        Event::Tagged {
            ticket: "T-0001".into(),
            by: "dana".into(),
            tag: "refund".into(),
            removed: false,
        },
        Event::Assigned {
            ticket: "T-0004".into(),
            by: "dana".into(),
            to: Some("bo".into()),
        },
    ] {
        happen(&mut app, &record, event);
    }
    assert_eq!(
        app.on_key(key(KeyCode::Char('o'))),
        Some(Command::Assign {
            ticket: "T-0001".into(),
            to: None,
        }),
        "o again gives one's own ticket back"
    );
    let shown = screen(&app, 120, 36);
    assert!(shown.contains("@me"), "{shown}");
    assert!(shown.contains("@bo"), "{shown}");
    assert!(shown.contains("dana's #refund"), "the ticket pane: {shown}");

    typed(&mut app, ":view mine");
    enter(&mut app);
    assert_eq!(app.filter, Filter::Mine);
    assert_eq!(app.visible_count(), 1);
    let shown = screen(&app, 120, 36);
    assert!(shown.contains("Queue (mine) 1/48"), "{shown}");
    insta::assert_snapshot!("desk_view_mine_120x36", shown);
    insta::assert_snapshot!("desk_view_mine_80x24", screen(&app, 80, 24));

    typed(&mut app, ":view unassigned");
    enter(&mut app);
    assert_eq!(app.visible_count(), 46);
    typed(&mut app, ":view nonesuch");
    enter(&mut app);
    assert_eq!(
        app.filter,
        Filter::Unassigned,
        "an unknown view changes nothing"
    );
    assert!(
        app.message
            .as_deref()
            .is_some_and(|m| m.contains("no view"))
    );
}

#[test]
fn f_steps_through_every_view_and_then_the_saved_ones() {
    let views = [(
        "big".to_owned(),
        ViewConfig {
            amount: Some("150".into()),
            ..ViewConfig::default()
        },
    )]
    .into_iter()
    .collect();
    let mut app = app().with_views(saved_views(&views).expect("views"));
    let mut seen = vec![app.filter.label(&app.views)];
    for _ in 0..Filter::BUILT_IN.len() {
        app.on_key(key(KeyCode::Char('f')));
        seen.push(app.filter.label(&app.views));
    }
    assert_eq!(
        seen,
        [
            "all",
            "needs me",
            "needs a person",
            "mine",
            "unassigned",
            "due soon",
            "late",
            "waiting for a lead",
            "open",
            "pending",
            "solved",
            "solved today",
            "big",
        ]
    );
    // The saved view: the three bundled tickets that name EUR 150 or more.
    let shown: Vec<&str> = (0..app.visible_count())
        .filter_map(|n| app.visible_at(n))
        .map(|i| app.items[i].ticket.ticket_id.as_str())
        .collect();
    assert_eq!(shown, ["T-0003", "T-0008", "T-0018"]);
    app.on_key(key(KeyCode::Char('f')));
    assert_eq!(app.filter, Filter::All, "round again");
}

fn replies() -> Vec<support_desk::replies::SavedReply> {
    use support_desk::replies::ReplyConfig;
    let config = [
        (
            "damaged-parcel".to_owned(),
            ReplyConfig {
                text: "Hello {customer.id}, we are sorry that parcel {result.tracking_number} of order {result.order_id} arrived damaged. We have asked the carrier to look into it. {me}".into(),
                tags: vec!["damaged".into()],
                assign: Some("me".into()),
                note: Some("carrier asked about the damage".into()),
                ..ReplyConfig::default()
            },
        ),
        (
            "wrap-up".to_owned(),
            ReplyConfig {
                text: "Hello {customer.id}, parcel {result.tracking_number} shows as delivered, so we are closing this conversation. {me}".into(),
                state: Some("solved".into()),
                ..ReplyConfig::default()
            },
        ),
        (
            "spam".to_owned(),
            ReplyConfig {
                tags: vec!["spam".into()],
                state: Some("solved".into()),
                ..ReplyConfig::default()
            },
        ),
    ]
    .into_iter()
    .collect();
    support_desk::replies::load(&config, None).expect("replies")
}

/// T-0004 selected, after a run that looked its order up.
fn t0004_looked_up(app: &mut App, record: &support_desk::record::DeskRecord) {
    for event in [
        Event::TicketStarted {
            ticket: "T-0004".into(),
            tools: vec!["shop.get_order_status".into()],
            attached: vec![],
            request: None,
        },
        Event::ToolCall {
            ticket: "T-0004".into(),
            turn: 1,
            tool: "shop.get_order_status".into(),
            arguments: serde_json::Map::new(),
        },
        Event::Outcome {
            ticket: "T-0004".into(),
            turn: 1,
            tool: "shop.get_order_status".into(),
            outcome: support_desk::record::Outcome::Result,
            text: r#"{"order_id": "O-2318", "status": "delivered", "parcel": {"tracking_number": "KP842713906"}}"#.into(),
            truncated: false,
        },
    ] {
        happen(app, record, event);
    }
    typed(app, "jjj");
    crate::ui_desk::answer_asks(app, record);
}

#[test]
fn a_macro_fills_the_editor_from_the_ticket_and_sets_tag_owner_and_note() {
    let mut app = app().with_replies(replies());
    let record = record();
    t0004_looked_up(&mut app, &record);
    typed(&mut app, ":macro d");
    app.on_key(key(KeyCode::Tab));
    assert_eq!(
        app.command_line.as_ref().map(|l| l.text.as_str()),
        Some("macro damaged-parcel ")
    );
    assert_eq!(
        enter(&mut app),
        Some(Command::Each(vec![
            tag("T-0004", "damaged"),
            Command::Assign {
                ticket: "T-0004".into(),
                to: Some("me".into()),
            },
            Command::AddNote {
                ticket: "T-0004".into(),
                text: "carrier asked about the damage".into(),
            },
        ]))
    );
    let shown = screen(&app, 120, 36);
    assert!(
        shown.contains("Hello C-0173, we are sorry that parcel KP842713906 of order O-2318"),
        "{shown}"
    );
    insta::assert_snapshot!("desk_macro_120x36", shown);
    insta::assert_snapshot!("desk_macro_80x24", screen(&app, 80, 24));
}

#[test]
fn a_solving_macro_says_so_in_the_editor_and_its_solve_goes_with_the_send() {
    let mut app = app().with_replies(replies());
    let record = record();
    t0004_looked_up(&mut app, &record);
    typed(&mut app, ":macro wrap-up");
    assert_eq!(enter(&mut app), None, "nothing goes before the reply");
    let shown = screen(&app, 120, 36);
    assert!(
        shown.contains("Draft reply · sends and solves (macro wrap-up)"),
        "{shown}"
    );
    assert!(
        shown.contains("parcel KP842713906 shows as delivered"),
        "{shown}"
    );
    insta::assert_snapshot!("desk_macro_solves_120x36", shown);
    insta::assert_snapshot!("desk_macro_solves_80x24", screen(&app, 80, 24));
    let text = "Hello C-0173, parcel KP842713906 shows as delivered, so we are closing this conversation. dana";
    assert_eq!(
        app.on_key(crate::ui_desk::ctrl('s')),
        Some(Command::SendReply {
            ticket: "T-0004".into(),
            text: text.into(),
            override_reason: None,
            solve: true,
        })
    );

    // Closed without sending, the solve is gone: the editor opened again sends only.
    typed(&mut app, ":macro wrap-up");
    enter(&mut app);
    assert!(matches!(
        app.on_key(key(KeyCode::Esc)),
        Some(Command::EditDraft { .. })
    ));
    app.on_key(key(KeyCode::Char('e')));
    let shown = screen(&app, 120, 36);
    assert!(shown.contains("Draft reply"), "{shown}");
    assert!(!shown.contains("solve"), "{shown}");
    app.on_key(key(KeyCode::Char('x')));
    assert!(matches!(
        app.on_key(crate::ui_desk::ctrl('s')),
        Some(Command::SendReply { solve: false, .. })
    ));
}

#[test]
fn a_macro_without_text_acts_at_once_and_a_reply_of_it_says_it_has_none() {
    let mut app = app().with_replies(replies());
    let record = record();
    t0004_looked_up(&mut app, &record);
    typed(&mut app, ":reply spam");
    assert_eq!(enter(&mut app), None);
    assert_eq!(
        app.message.as_deref(),
        Some("spam has no text, only actions: :macro spam does them")
    );
    typed(&mut app, ":macro spam");
    assert_eq!(
        enter(&mut app),
        Some(Command::Each(vec![
            tag("T-0004", "spam"),
            Command::Solve {
                ticket: "T-0004".into(),
                note: None,
            },
        ]))
    );
    assert!(app.modal.is_none(), "no editor opens");
    assert_eq!(app.message.as_deref(), Some(":macro spam on T-0004"));
}
