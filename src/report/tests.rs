use jiff::tz::TimeZone;

use super::*;
use crate::record::{Event, Outcome};

const MIN: i64 = 60_000;
/// Monday 7 December 2026, 00:00 UTC.
const MONDAY: i64 = 1_796_601_600_000;

fn stored(seq: i64, minute: i64, by: &str, event: Event) -> Stored {
    Stored {
        seq,
        at: MONDAY + minute * MIN,
        by: by.to_owned(),
        event,
    }
}

fn started(ticket: &str) -> Event {
    Event::TicketStarted {
        ticket: ticket.into(),
        tools: vec![],
        attached: vec![],
        request: None,
    }
}

fn draft(ticket: &str) -> Event {
    Event::Draft {
        ticket: ticket.into(),
        text: "Your parcel left on Friday.".into(),
        findings: vec![],
    }
}

fn edited(ticket: &str) -> Event {
    Event::DraftEdited {
        ticket: ticket.into(),
        by: "dana".into(),
        text: "Your parcel left on Friday; it arrives tomorrow.".into(),
        findings: vec![],
    }
}

fn sent(ticket: &str) -> Event {
    Event::Sent {
        ticket: ticket.into(),
        by: "dana".into(),
        text: "Your parcel left on Friday.".into(),
        override_reason: None,
        message_id: None,
        answers: None,
    }
}

fn asked(ticket: &str, approval: i64) -> Event {
    Event::ApprovalAsked {
        ticket: ticket.into(),
        turn: 2,
        approval,
        server: "shop".into(),
        tool: "shop.issue_refund".into(),
        message: "Release refund?".into(),
    }
}

fn answered(ticket: &str, approval: i64, by: &str, action: &str, text: &str) -> Event {
    Event::ApprovalAnswered {
        ticket: ticket.into(),
        turn: 2,
        approval,
        by: by.into(),
        tool: "shop.issue_refund".into(),
        action: action.into(),
        content: (action == "accept").then(|| r#"{"release":true}"#.to_owned()),
        outcome: Outcome::Result,
        text: text.into(),
        truncated: false,
    }
}

fn settings(now_minute: i64) -> Settings<'static> {
    Settings {
        now: MONDAY + now_minute * MIN,
        since: None,
        zone: TimeZone::UTC,
        sla: None,
        tickets: &[],
        allow: &[],
        close_after_days: 4,
    }
}

#[test]
fn a_reply_is_the_models_edited_or_by_hand_as_its_draft_was_made() {
    let events = [
        // T-1: the model's draft sent as written.
        stored(1, 0, "dana", started("T-1")),
        stored(2, 1, "dana", draft("T-1")),
        stored(3, 10, "dana", sent("T-1")),
        // T-2: the model's draft, edited, then sent.
        stored(4, 20, "dana", started("T-2")),
        stored(5, 21, "dana", draft("T-2")),
        stored(6, 25, "dana", edited("T-2")),
        stored(7, 50, "dana", sent("T-2")),
        // T-3: a new run dropped the first draft; a person wrote the reply.
        stored(8, 30, "dana", draft("T-3")),
        stored(9, 31, "dana", started("T-3")),
        stored(10, 32, "dana", edited("T-3")),
        stored(11, 90, "dana", sent("T-3")),
        stored(
            12,
            95,
            "dana",
            Event::HandedOver {
                ticket: "T-4".into(),
                by: "dana".into(),
                to: "lee".into(),
                note: "a refund over the limit".into(),
            },
        ),
    ];
    let report = of(&events, &settings(120));
    assert_eq!(
        report.replies,
        Replies {
            sent: 3,
            model_unchanged: 1,
            model_edited: 1,
            by_hand: 1,
            handed_over: 1,
        }
    );
    // Arrival is each ticket's first event: 10, 30 and 60 minutes to the first reply.
    assert_eq!(
        report.first_response,
        Spread {
            count: 3,
            median_seconds: Some(30 * 60),
            p90_seconds: Some(60 * 60),
        }
    );
    assert_eq!(report.tickets, 4);
}

#[test]
fn approvals_wait_from_question_to_answer_and_count_each_leads_answers_and_refunds() {
    let released = r#"{"refund_id":"R-1","amount":"250.00","status":"released","currency":"EUR"}"#;
    let events = [
        stored(1, 0, "ana", asked("T-1", 1)),
        stored(2, 12, "lee", answered("T-1", 1, "lee", "accept", released)),
        stored(3, 20, "ana", asked("T-2", 2)),
        stored(4, 60, "lee", answered("T-2", 2, "lee", "decline", "held")),
        stored(5, 30, "ana", asked("T-3", 3)),
        stored(
            6,
            34,
            "max",
            answered(
                "T-3",
                3,
                "max",
                "accept",
                "Refund R-3 of EUR 12.50 is released.",
            ),
        ),
        stored(7, 40, "ana", asked("T-4", 4)),
        stored(8, 41, "ana", asked("T-5", 5)),
        stored(
            9,
            42,
            "ana",
            Event::ApprovalWithdrawn {
                ticket: "T-5".into(),
                approval: 5,
                by: "ana".into(),
                reason: "the customer changed their mind".into(),
            },
        ),
    ];
    let report = of(&events, &settings(120));
    let answers = |accepted, declined| Answers {
        accepted,
        declined,
        cancelled: 0,
    };
    assert_eq!(
        report.approvals,
        Approvals {
            asked: 5,
            answered: 3,
            withdrawn: 1,
            lapsed: 0,
            open: 1,
            wait: Spread {
                count: 3,
                median_seconds: Some(12 * 60),
                p90_seconds: Some(40 * 60),
            },
            by_lead: [
                ("lee".to_owned(), answers(1, 1)),
                ("max".to_owned(), answers(1, 0)),
            ]
            .into(),
        }
    );
    let euros = |amount: &str| [("EUR".to_owned(), amount.to_owned())].into();
    assert_eq!(
        report.refunds_released,
        [
            (
                "lee".to_owned(),
                Released {
                    count: 1,
                    amounts: euros("250.00"),
                    without_amount: 0,
                }
            ),
            (
                "max".to_owned(),
                Released {
                    count: 1,
                    amounts: euros("12.50"),
                    without_amount: 0,
                }
            ),
        ]
        .into()
    );
}

#[test]
fn since_counts_only_tickets_that_arrived_that_day_or_later_and_days_run_to_now() {
    let events = [
        // Sunday 6 December, 23:00 UTC: before the day asked for.
        stored(1, -60, "dana", started("T-1")),
        stored(2, 30, "dana", draft("T-1")),
        stored(3, 31, "dana", sent("T-1")),
        stored(4, 10, "dana", started("T-2")),
        stored(5, 11, "dana", draft("T-2")),
        // Sent on Tuesday.
        stored(6, 24 * 60 + 5, "dana", sent("T-2")),
        // After the report's moment: left out.
        stored(7, 3 * 24 * 60, "dana", started("T-3")),
    ];
    let mut since = settings(24 * 60 + 60);
    since.since = Some(jiff::civil::date(2026, 12, 7));
    let report = of(&events, &since);
    assert_eq!(report.tickets, 1);
    assert_eq!(report.since.as_deref(), Some("2026-12-07"));
    assert_eq!(
        report.daily,
        [
            Day {
                day: "2026-12-07".into(),
                arrived: 1,
                replies: 0,
            },
            Day {
                day: "2026-12-08".into(),
                arrived: 0,
                replies: 1,
            },
        ]
    );
    // T-2 is pending (answered), 24h50m after it arrived.
    assert_eq!(report.backlog.pending, 1);
    let ages: Vec<(&str, usize)> = report
        .backlog
        .by_age
        .iter()
        .map(|a| (a.age, a.tickets))
        .collect();
    assert_eq!(
        ages,
        [
            ("<1h", 0),
            ("1-4h", 0),
            ("4-24h", 0),
            ("1-3d", 1),
            (">3d", 0)
        ]
    );
}

#[test]
fn an_empty_record_reports_nothing_without_failing() {
    let report = of(&[], &settings(0));
    assert_eq!(report.tickets, 0);
    assert_eq!(report.first_response, Spread::default());
    assert!(report.daily.is_empty());
    assert!(report.to_text().contains("0 tickets"));
}

fn tagged(ticket: &str, tag: &str, removed: bool) -> Event {
    Event::Tagged {
        ticket: ticket.into(),
        by: "dana".into(),
        tag: tag.into(),
        removed,
    }
}

#[test]
fn late_counts_use_the_targets_of_the_tags_a_ticket_carries_as_the_record_stands() {
    // Round the clock in UTC: four hours for a first answer, one for a refund.
    let sla = crate::sla::Sla::new("4h", "8h", "Mon-Sun 00:00-24:00", "UTC", &[], "1h")
        .and_then(|sla| sla.with_tag("refund", Some("1h"), None))
        .expect("settings");
    let files = [Ticket {
        ticket_id: "T-4".into(),
        received_at: "2026-12-07T00:00".into(),
        ..Ticket::default()
    }];
    let events = [
        // T-1, untagged: answered after 1h30m, inside four hours.
        stored(1, 0, "dana", started("T-1")),
        stored(2, 90, "dana", sent("T-1")),
        // T-2, a refund: the same 1h30m is late.
        stored(3, 0, "dana", started("T-2")),
        stored(4, 5, "dana", tagged("T-2", "refund", false)),
        stored(5, 90, "dana", sent("T-2")),
        // T-3 was a refund when its reply went, and is not now: counted on the default.
        stored(6, 0, "dana", started("T-3")),
        stored(7, 5, "dana", tagged("T-3", "refund", false)),
        stored(8, 90, "dana", sent("T-3")),
        stored(9, 100, "dana", tagged("T-3", "refund", true)),
        // T-4 came at midnight by the tickets file, is a refund and waits: late at 02:00,
        // where four hours would not be.
        stored(10, 1, "dana", tagged("T-4", "refund", false)),
    ];
    let at_two = Settings {
        sla: Some(&sla),
        tickets: &files,
        ..settings(120)
    };
    assert_eq!(
        of(&events, &at_two).late,
        Some(Late {
            now: 1,
            now_tickets: vec!["T-4".into()],
            first_reply_late: 1,
            first_reply_in_time: 2,
        })
    );
}
