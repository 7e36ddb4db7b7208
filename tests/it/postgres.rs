//! The team's desk record in PostgreSQL: the SQLite record's rules, the same states, and what
//! the database itself decides (who appends what, who holds a ticket, one reply per ticket),
//! plus live updates across a dropped connection. Each test has a cluster of its own
//! (`pg_cluster`), and is skipped in one line where PostgreSQL is missing.

use std::time::Duration;

use serde_json::json;
use support_desk::host::api::Outcome;
use support_desk::model::chat::{Reply, ToolCall};
use support_desk::record::Event;
use support_desk::record::Finding;
use support_desk::record::postgres::{
    Claim, Live, PgError, PgRecord, TakenOver, subscribe, team_init,
};
use support_desk::record::store::{Stored, replay};
use support_desk::record::{Lifecycle, TicketState};
use tokio::sync::mpsc::UnboundedReceiver;

use crate::pg_cluster::{self, PgCluster, Team};

const ALLOW: [&str; 2] = ["shop.get_order_status", "shop.quote_refund"];
/// Generous: a live desk hears an event in milliseconds, a loaded CI machine may take longer.
const HEARING: Duration = Duration::from_secs(10);

fn allow() -> Vec<String> {
    ALLOW.map(String::from).to_vec()
}

async fn desk(url: &str) -> PgRecord {
    PgRecord::connect(url, &allow()).await.expect("logs in")
}

/// A cluster with its team, and ana's and bo's desks.
async fn team() -> Option<(PgCluster, Team, PgRecord, PgRecord)> {
    let pg = pg_cluster::start().await?;
    let team = pg.team().await;
    let (ana, bo) = (desk(&team.ana.url).await, desk(&team.bo.url).await);
    Some((pg, team, ana, bo))
}

pub(crate) fn started(ticket: &str) -> Event {
    Event::TicketStarted {
        ticket: ticket.into(),
        tools: vec!["shop.issue_refund".into()],
        attached: vec![],
        request: None,
    }
}

fn model_call(ticket: &str, turn: u32, reply: Reply) -> Event {
    Event::ModelCall {
        ticket: ticket.into(),
        turn,
        messages_hash: "h".into(),
        reply,
        seconds: 0.1,
        first_visible_seconds: None,
        tool_list_chars: 10,
        context_chars: 0,
        prompt: None,
    }
}

fn asks(tool: &str) -> Reply {
    Reply::Call {
        call: ToolCall {
            id: "call_1".into(),
            name: tool.into(),
            arguments: Default::default(),
        },
        content: String::new(),
        dropped: 0,
    }
}

fn tool_call(ticket: &str, turn: u32, tool: &str) -> Event {
    Event::ToolCall {
        ticket: ticket.into(),
        turn,
        tool: tool.into(),
        arguments: json!({"quote_id": "Q-1", "amount": 12.5})
            .as_object()
            .cloned()
            .unwrap_or_default(),
    }
}

fn outcome(ticket: &str, turn: u32, tool: &str, outcome: Outcome) -> Event {
    Event::Outcome {
        ticket: ticket.into(),
        turn,
        tool: tool.into(),
        outcome,
        text: "{}".into(),
        truncated: false,
    }
}

fn draft(ticket: &str, findings: Vec<Finding>) -> Event {
    Event::Draft {
        ticket: ticket.into(),
        text: "Your order is on its way.".into(),
        findings,
    }
}

fn done(ticket: &str, model_calls: u32, at_limit: bool) -> Event {
    Event::TicketDone {
        ticket: ticket.into(),
        model_calls,
        stopped_at_turn_limit: at_limit,
        error: None,
    }
}

fn sent(ticket: &str, by: &str, override_reason: Option<&str>) -> Event {
    Event::Sent {
        ticket: ticket.into(),
        by: by.into(),
        text: "Your order is on its way.".into(),
        override_reason: override_reason.map(str::to_owned),
        message_id: None,
        answers: None,
    }
}

fn note(ticket: &str, by: &str, text: &str) -> Event {
    Event::Noted {
        ticket: ticket.into(),
        by: by.into(),
        text: text.into(),
    }
}

fn unbacked() -> Finding {
    Finding::RefundPromisedWithoutRefund {
        phrase: "refund is on its way".into(),
    }
}

async fn append_all(desk: &PgRecord, events: &[Event]) {
    for event in events {
        desk.append(event).await.expect("appended");
    }
}

async fn state(desk: &PgRecord, ticket: &str) -> TicketState {
    desk.state(ticket).await.expect("readable").expect("known")
}

/// What the database answers `sql` run as `url`'s role: rows changed, or its error's words.
async fn as_role(url: &str, sql: &str) -> Result<u64, String> {
    let client = pg_cluster::connect(url).await;
    client.execute(sql, &[]).await.map_err(|e| {
        e.as_db_error()
            .map(|db| db.message().to_owned())
            .unwrap_or_else(|| e.to_string())
    })
}

/// Ends `ticket`'s claim as if its desk had stopped renewing it 31 seconds ago.
async fn run_out(pg: &PgCluster, ticket: &str) {
    pg.admin()
        .await
        .execute(
            "UPDATE desk.tickets SET lease_until = now() - interval '1 second' WHERE id = $1",
            &[&ticket],
        )
        .await
        .expect("the claim runs out");
}

async fn next(live: &mut UnboundedReceiver<Live>) -> Live {
    tokio::time::timeout(HEARING, live.recv())
        .await
        .expect("heard in time")
        .expect("the subscription goes on")
}

fn seqs(stored: &[Stored]) -> Vec<i64> {
    stored.iter().map(|s| s.seq).collect()
}

#[tokio::test]
async fn a_clean_draft_is_drafted_and_a_flagged_one_needs_a_person_with_the_reason() {
    let Some((_pg, team, ana, _bo)) = team().await else {
        return;
    };
    assert_eq!(ana.person(), team.ana.name);
    for ticket in ["T-0001", "T-0002"] {
        ana.claim(ticket).await.expect("claimed");
    }
    append_all(
        &ana,
        &[
            started("T-0001"),
            model_call("T-0001", 1, asks("shop.get_order_status")),
            tool_call("T-0001", 1, "shop.get_order_status"),
            outcome("T-0001", 1, "shop.get_order_status", Outcome::Result),
            model_call(
                "T-0001",
                2,
                Reply::Words {
                    content: "x".into(),
                },
            ),
            draft("T-0001", vec![]),
            done("T-0001", 2, false),
            started("T-0002"),
            draft("T-0002", vec![unbacked()]),
            done("T-0002", 1, false),
        ],
    )
    .await;
    let one = state(&ana, "T-0001").await;
    assert_eq!(
        (one.state, one.model_calls, one.run, one.by),
        (Lifecycle::Drafted, 2, None, Some(team.ana.name.clone()))
    );
    let two = state(&ana, "T-0002").await;
    assert_eq!(
        (two.state, two.reason.as_deref(), two.findings),
        (
            Lifecycle::NeedsPerson,
            Some("the checks found 1 problem in the draft"),
            vec![unbacked().reason()]
        )
    );
}

#[tokio::test]
async fn a_run_stopped_at_the_call_limit_needs_a_person_and_is_no_longer_working() {
    let Some((_pg, _team, ana, _bo)) = team().await else {
        return;
    };
    ana.claim("T-0002").await.expect("claimed");
    for turn in 1..=4 {
        ana.append(&model_call("T-0002", turn, asks("shop.get_order_status")))
            .await
            .expect("appended");
    }
    ana.append(&done("T-0002", 4, true))
        .await
        .expect("appended");
    let stopped = state(&ana, "T-0002").await;
    assert_eq!(
        (stopped.state, stopped.reason.as_deref(), stopped.run),
        (
            Lifecycle::NeedsPerson,
            Some(
                "the model used its 4 calls without writing a reply; answer the customer yourself or work the ticket again"
            ),
            None
        )
    );
}

#[tokio::test]
async fn a_sent_ticket_refuses_everything_but_notes() {
    let Some((_pg, team, ana, _bo)) = team().await else {
        return;
    };
    let name = team.ana.name.as_str();
    ana.claim("T-0004").await.expect("claimed");
    ana.append(&draft("T-0004", vec![])).await.expect("drafted");
    ana.append(&sent("T-0004", name, None)).await.expect("sent");
    for refused in [started("T-0004"), draft("T-0004", vec![])] {
        let error = ana.append(&refused).await.expect_err("refused");
        assert_eq!(
            error.to_string(),
            format!("T-0004 was already sent by {name}; its reply cannot be changed or sent again")
        );
    }
    ana.append(&note("T-0004", name, "customer called to say thanks"))
        .await
        .expect("a note is always welcome");
    assert_eq!(state(&ana, "T-0004").await.state, Lifecycle::Sent);
}

#[tokio::test]
async fn a_send_with_open_findings_needs_an_override_reason() {
    let Some((_pg, team, ana, _bo)) = team().await else {
        return;
    };
    let name = team.ana.name.as_str();
    ana.claim("T-0009").await.expect("claimed");
    ana.append(&draft("T-0009", vec![unbacked()]))
        .await
        .expect("drafted");
    for blank in [None, Some("  ")] {
        let refused = ana
            .append(&sent("T-0009", name, blank))
            .await
            .expect_err("refused");
        assert_eq!(
            refused.to_string(),
            format!(
                "T-0009 has open check findings ({}): fix the reply, or send with an override reason",
                unbacked().reason()
            )
        );
    }
    ana.append(&sent("T-0009", name, Some("quoted by phone")))
        .await
        .expect("sent with a reason");
    assert_eq!(
        state(&ana, "T-0009").await.sent.map(|s| s.override_reason),
        Some(Some("quoted by phone".to_owned()))
    );
}

#[tokio::test]
async fn a_run_cut_off_is_settled_for_a_person_only_once_its_claim_has_run_out() {
    let Some((pg, team, ana, bo)) = team().await else {
        return;
    };
    ana.claim("T-0003").await.expect("claimed");
    ana.claim("T-0001").await.expect("claimed");
    append_all(
        &ana,
        &[
            started("T-0003"),
            model_call("T-0003", 1, asks("shop.issue_refund")),
            tool_call("T-0003", 1, "shop.issue_refund"),
            Event::Consent {
                ticket: "T-0003".into(),
                turn: 1,
                tool: "shop.issue_refund".into(),
                reason: "changes something".into(),
                unseen: vec![],
                approved: true,
                by: team.ana.name.clone(),
                shown: None,
                rule: None,
            },
            started("T-0001"),
            model_call("T-0001", 1, asks("shop.get_order_status")),
            tool_call("T-0001", 1, "shop.get_order_status"),
            outcome("T-0001", 1, "shop.get_order_status", Outcome::Result),
        ],
    )
    .await;
    assert_eq!(
        bo.settle_interrupted().await.expect("nothing to settle"),
        []
    );
    run_out(&pg, "T-0003").await;
    run_out(&pg, "T-0001").await;
    let settled = bo.settle_interrupted().await.expect("settled");
    let reasons: Vec<(String, Option<String>, Lifecycle, Option<String>)> = settled
        .into_iter()
        .map(|a| {
            let state = a.state.expect("a ticket's");
            (a.stored.by, state.reason, state.state, Some(state.ticket))
        })
        .collect();
    let bo_name = team.bo.name.clone();
    assert_eq!(
        reasons,
        [
            (
                bo_name.clone(),
                Some("interrupted during model call 2; nothing outside the allow list had run. The desk stopped in the middle of this run and did not work it again.".to_owned()),
                Lifecycle::NeedsPerson,
                Some("T-0001".to_owned())
            ),
            (
                bo_name,
                Some("interrupted after shop.issue_refund: the result is unknown. The desk stopped in the middle of this run and did not work it again.".to_owned()),
                Lifecycle::NeedsPerson,
                Some("T-0003".to_owned())
            ),
        ]
    );
    assert_eq!(ana.settle_interrupted().await.expect("nothing left"), []);
}

#[tokio::test]
async fn the_states_kept_are_the_states_the_events_replay_to() {
    let Some((pg, team, ana, bo)) = team().await else {
        return;
    };
    let (a, b) = (team.ana.name.as_str(), team.bo.name.as_str());
    for ticket in ["T-0001", "T-0002"] {
        ana.claim(ticket).await.expect("claimed");
    }
    bo.claim("T-0003").await.expect("claimed");
    append_all(
        &ana,
        &[
            started("T-0001"),
            draft("T-0001", vec![unbacked()]),
            done("T-0001", 1, false),
            Event::DraftEdited {
                ticket: "T-0001".into(),
                by: a.into(),
                text: "Which item should we refund?".into(),
                findings: vec![],
            },
            sent("T-0001", a, None),
            started("T-0002"),
            Event::HandedOver {
                ticket: "T-0002".into(),
                by: a.into(),
                to: "a person".into(),
                note: "angry customer".into(),
            },
        ],
    )
    .await;
    append_all(
        &bo,
        &[
            started("T-0003"),
            tool_call("T-0003", 1, "shop.issue_refund"),
            note("T-0001", b, "the customer wrote back"),
        ],
    )
    .await;
    run_out(&pg, "T-0003").await;
    ana.settle_interrupted().await.expect("settled");
    let kept = ana.states().await.expect("states");
    let events = bo.events_after(0).await.expect("events");
    assert_eq!(kept, replay(&events, &allow()));
    assert_eq!(
        kept.iter()
            .map(|s| (s.state, s.by.clone()))
            .collect::<Vec<_>>(),
        [
            (Lifecycle::Sent, Some(b.to_owned())),
            (Lifecycle::HandedOver, Some(a.to_owned())),
            (Lifecycle::NeedsPerson, Some(a.to_owned())),
        ]
    );
    // The log reads back as it was written, each event by whoever appended it, in seq order.
    let tool_calls: Vec<&Event> = events
        .iter()
        .filter(|s| s.event.kind() == "tool_call")
        .map(|s| &s.event)
        .collect();
    assert_eq!(tool_calls, [&tool_call("T-0003", 1, "shop.issue_refund")]);
    let last = ana.last_seq().await.expect("last seq");
    assert_eq!(events.last().map(|s| s.seq), Some(last));
    assert!(
        seqs(&events).windows(2).all(|w| w[0] < w[1]),
        "{:?}",
        seqs(&events)
    );
    assert_eq!(
        seqs(&bo.ticket_events("T-0003").await.expect("events")),
        seqs(
            &events
                .iter()
                .filter(|s| s.event.ticket() == Some("T-0003"))
                .cloned()
                .collect::<Vec<_>>()
        )
    );
    assert_eq!(bo.events_after(last).await.expect("none after").len(), 0);
}

#[tokio::test]
async fn writing_as_another_person_or_rewriting_the_log_is_refused_by_the_database() {
    let Some((_pg, team, ana, _bo)) = team().await else {
        return;
    };
    let (a, b) = (team.ana.name.as_str(), team.bo.name.as_str());
    ana.append(&note("T-0001", a, "first"))
        .await
        .expect("noted");
    let body = |by: &str| {
        json!({"event": "noted", "ticket": "T-0001", "by": by, "text": "forged"}).to_string()
    };
    assert_eq!(
        [
            as_role(
                &team.ana.url,
                &format!(
                    "INSERT INTO desk.events (ticket, kind, body, actor) VALUES ('T-0001', 'noted', '{}', '{b}')",
                    body(b)
                )
            )
            .await,
            as_role(
                &team.ana.url,
                &format!(
                    "INSERT INTO desk.events (ticket, kind, body) VALUES ('T-0001', 'noted', '{}')",
                    body(b)
                )
            )
            .await,
            as_role(&team.ana.url, &format!("UPDATE desk.events SET body = '{}'", body(a))).await,
            as_role(&team.ana.url, "DELETE FROM desk.events").await,
            as_role(&team.ana.url, "UPDATE desk.events SET actor = 'x'").await,
        ],
        [
            Err("permission denied for table events".to_owned()),
            Err("new row violates row-level security policy \"by_is_the_actor\" for table \"events\"".to_owned()),
            Err("permission denied for table events".to_owned()),
            Err("permission denied for table events".to_owned()),
            Err("permission denied for table events".to_owned()),
        ]
    );
    let refused = ana
        .append(&note("T-0001", b, "forged"))
        .await
        .expect_err("refused");
    assert_eq!(
        refused.to_string(),
        format!(
            "this event is by {b}, but {a} is logged in; events are by the person logged in (PgRecord::person)"
        )
    );
    let log: Vec<(String, Event)> = ana
        .events_after(0)
        .await
        .expect("events")
        .into_iter()
        .map(|s| (s.by, s.event))
        .collect();
    assert_eq!(log, [(a.to_owned(), note("T-0001", a, "first"))]);
}

#[tokio::test]
async fn a_ticket_someone_holds_cannot_be_changed_by_another_but_a_lead_can_take_it_over() {
    let Some((_pg, team, ana, bo)) = team().await else {
        return;
    };
    let (a, b, l) = (
        team.ana.name.as_str(),
        team.bo.name.as_str(),
        team.lee.name.as_str(),
    );
    let held = ana.claim("T-0001").await.expect("claimed");
    ana.append(&started("T-0001")).await.expect("appended");
    let ana_holds = Some(held.clone());

    // Straight at the tables: bo's change of ana's claim touches nothing; there is no state
    // to write (it is folded from the events).
    assert_eq!(
        [
            as_role(&team.bo.url, "UPDATE desk.tickets SET lease_until = now() WHERE id = 'T-0001'").await,
            as_role(
                &team.bo.url,
                "UPDATE desk.ticket_states SET state = jsonb_set(state, '{state}', '\"sent\"') WHERE ticket = 'T-0001'"
            )
            .await,
            as_role(&team.bo.url, &format!("UPDATE desk.tickets SET owner = '{b}' WHERE id = 'T-0001'")).await,
            as_role(
                &team.bo.url,
                "INSERT INTO desk.events (ticket, kind, body) VALUES ('T-0001', 'draft', '{\"event\": \"draft\", \"ticket\": \"T-0001\", \"text\": \"x\", \"findings\": []}')"
            )
            .await,
        ],
        [
            Ok(0),
            Err("relation \"desk.ticket_states\" does not exist".to_owned()),
            Ok(0),
            Err("new row violates row-level security policy \"needs_the_lease\" for table \"events\"".to_owned()),
        ]
    );
    // Through the desk: the same refusals, saying who holds the ticket.
    let not_holding = format!(
        "T-0001 is held by {a} until {}, not by you; ask them, or a lead, to hand it over",
        support_desk::record::rfc3339(held.until)
    );
    let refused = bo
        .append(&model_call("T-0001", 1, asks("shop.get_order_status")))
        .await;
    assert_eq!(
        refused.map_err(|e| e.to_string()).err(),
        Some(not_holding.clone())
    );
    assert_eq!(
        bo.renew("T-0001").await.map_err(|e| e.to_string()).err(),
        Some(not_holding.clone())
    );
    assert_eq!(
        bo.release("T-0001").await.map_err(|e| e.to_string()).err(),
        Some(not_holding)
    );
    assert_eq!(
        bo.take_over("T-0001", "she is out")
            .await
            .map_err(|e| e.to_string())
            .err(),
        Some(format!(
            "only a lead can take over T-0001 while {a} holds it (until {}); ask a lead, or wait for the claim to run out",
            support_desk::record::rfc3339(held.until)
        ))
    );
    assert_eq!(state(&bo, "T-0001").await.state, Lifecycle::Working);
    assert_eq!(
        bo.owners().await.expect("owners"),
        ana_holds.into_iter().collect::<Vec<_>>()
    );

    // A lead may change any ticket, and takes this one over with a note saying so.
    assert_eq!(
        as_role(
            &team.lee.url,
            "UPDATE desk.tickets SET lease_until = lease_until WHERE id = 'T-0001'"
        )
        .await,
        Ok(1)
    );
    let lee = desk(&team.lee.url).await;
    let TakenOver { claim, from, noted } = lee
        .take_over("T-0001", "she is out today")
        .await
        .expect("taken over");
    assert_eq!(
        (
            claim.owner.as_str(),
            from.as_deref(),
            noted.map(|n| (n.stored.by, n.stored.event))
        ),
        (
            l,
            Some(a),
            Some((
                l.to_owned(),
                note(
                    "T-0001",
                    l,
                    &format!("took the ticket over from {a}: she is out today")
                )
            ))
        )
    );
    assert_eq!(
        lee.owners().await.expect("owners"),
        std::slice::from_ref(&claim)
    );
    let refused = ana
        .append(&draft("T-0001", vec![]))
        .await
        .map_err(|e| e.to_string())
        .err();
    assert_eq!(
        refused,
        Some(format!(
            "T-0001 is held by {l} until {}, not by you; ask them, or a lead, to hand it over",
            support_desk::record::rfc3339(claim.until)
        ))
    );
    lee.append(&draft("T-0001", vec![]))
        .await
        .expect("the lead works it now");
}

#[tokio::test]
async fn two_people_claiming_one_ticket_at_once_one_wins_and_the_other_is_told_who() {
    let Some((_pg, team, ana, bo)) = team().await else {
        return;
    };
    for n in 0..10 {
        let ticket = format!("T-{n:04}");
        let (first, second) = tokio::join!(ana.claim(&ticket), bo.claim(&ticket));
        let (won, lost) = match (first, second) {
            (Ok(won), Err(lost)) | (Err(lost), Ok(won)) => (won, lost),
            (first, second) => panic!("exactly one claim wins: {first:?} {second:?}"),
        };
        assert!(
            [&team.ana.name, &team.bo.name].contains(&&won.owner),
            "{won:?}"
        );
        assert_eq!(
            lost.to_string(),
            format!(
                "{ticket} is being worked by {} until {}; pick another ticket, or ask a lead to take it over",
                won.owner,
                support_desk::record::rfc3339(won.until)
            )
        );
    }
    assert_eq!(ana.owners().await.expect("owners").len(), 10);
}

#[tokio::test]
async fn a_claim_that_ran_out_or_was_released_can_be_claimed_by_someone_else() {
    let Some((pg, team, ana, bo)) = team().await else {
        return;
    };
    let (a, b) = (team.ana.name.as_str(), team.bo.name.as_str());
    let first = ana.claim("T-0001").await.expect("claimed");
    assert!(
        matches!(bo.claim("T-0001").await, Err(PgError::ClaimRefused { ref owner, .. }) if owner == a)
    );
    let renewed = ana.renew("T-0001").await.expect("renewed");
    assert!(renewed.until >= first.until, "{renewed:?} {first:?}");

    run_out(&pg, "T-0001").await;
    assert_eq!(ana.owners().await.expect("owners"), []);
    let taken = bo.claim("T-0001").await.expect("claimed once it ran out");
    assert_eq!((taken.ticket.as_str(), taken.owner.as_str()), ("T-0001", b));
    assert!(matches!(
        ana.renew("T-0001").await,
        Err(PgError::NotHolding { holder: Some(Claim { ref owner, .. }), .. }) if owner == b
    ));
    bo.release("T-0001").await.expect("released");
    bo.release("T-0001")
        .await
        .expect("releasing again changes nothing");
    assert_eq!(
        ana.claim("T-0001").await.map(|c| c.owner).ok(),
        Some(a.to_owned())
    );
}

#[tokio::test]
async fn a_second_send_is_refused_by_the_database_naming_the_first_sender_and_when() {
    let Some((_pg, team, ana, _bo)) = team().await else {
        return;
    };
    let (a, l) = (team.ana.name.as_str(), team.lee.name.as_str());
    ana.claim("T-0005").await.expect("claimed");
    ana.append(&draft("T-0005", vec![])).await.expect("drafted");
    let first = ana.append(&sent("T-0005", a, None)).await.expect("sent");
    let lee = desk(&team.lee.url).await;
    lee.take_over("T-0005", "to send a correction")
        .await
        .expect("taken over");
    let again = lee
        .append(&sent("T-0005", l, None))
        .await
        .map_err(|e| e.to_string())
        .err();
    let first_words = format!(
        "T-0005 was already sent by {a} at {}; its reply cannot be sent again",
        support_desk::record::rfc3339(first.stored.at)
    );
    assert_eq!(again, Some(first_words));
    // Past the desk's own check, straight into the log: the unique index refuses it.
    let body = json!({"event": "sent", "ticket": "T-0005", "by": l, "text": "again", "override_reason": null});
    assert_eq!(
        as_role(
            &team.lee.url,
            &format!(
                "INSERT INTO desk.events (ticket, kind, body) VALUES ('T-0005', 'sent', '{body}')"
            )
        )
        .await,
        Err("duplicate key value violates unique constraint \"one_reply_per_message\"".to_owned())
    );
}

#[tokio::test]
async fn a_subscriber_hears_what_another_person_appends_and_catches_up_after_losing_the_connection()
{
    let Some((pg, team, ana, _bo)) = team().await else {
        return;
    };
    let a = team.ana.name.as_str();
    let before = ana
        .append(&note("T-0001", a, "before"))
        .await
        .expect("noted");
    let mut live = subscribe(&team.lee.url, 0).await.expect("subscribed");
    let heard = |live: Live| match live {
        Live::Event(stored) => (stored.seq, stored.by, stored.event),
        other => panic!("an event, not {other:?}"),
    };
    assert_eq!(
        heard(next(&mut live).await),
        (before.stored.seq, a.to_owned(), before.stored.event)
    );

    let asked = std::time::Instant::now();
    let one = ana.append(&note("T-0001", a, "one")).await.expect("noted");
    assert_eq!(
        heard(next(&mut live).await),
        (one.stored.seq, a.to_owned(), one.stored.event)
    );
    let took = asked.elapsed();
    assert!(took < HEARING, "{took:?}");

    let killed: i64 = pg
        .admin()
        .await
        .query_one(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = 'support-desk live'",
            &[],
        )
        .await
        .expect("terminated")
        .get(0);
    assert_eq!(killed, 1);
    assert!(matches!(next(&mut live).await, Live::Lost(_)));
    let two = ana.append(&note("T-0001", a, "two")).await.expect("noted");
    let three = ana
        .append(&note("T-0002", a, "three"))
        .await
        .expect("noted");
    let mut after = Vec::new();
    for _ in 0..3 {
        after.push(next(&mut live).await);
    }
    assert_eq!(
        after,
        [
            Live::Back,
            Live::Event(two.stored),
            Live::Event(three.stored)
        ]
    );
    assert!(live.try_recv().is_err(), "nothing heard twice");
}

#[tokio::test]
async fn team_init_twice_changes_nothing_and_only_the_team_may_log_in() {
    let Some(pg) = pg_cluster::start().await else {
        return;
    };
    let team = pg.team().await;
    team_init(&pg.admin_url())
        .await
        .expect("a second init is fine");
    let versions: Vec<i32> = pg
        .admin()
        .await
        .query(
            "SELECT version FROM desk.schema_version ORDER BY version",
            &[],
        )
        .await
        .expect("versions")
        .iter()
        .map(|r| r.get(0))
        .collect();
    let every: Vec<i32> = (1..=support_desk::record::postgres::SCHEMA_VERSION).collect();
    assert_eq!(versions, every, "each version applied once");
    assert_eq!(desk(&team.ana.url).await.person(), team.ana.name);

    let admin = pg.admin().await;
    let outsider = pg.name("outsider");
    admin
        .batch_execute(&format!(
            "CREATE ROLE {outsider} LOGIN PASSWORD 'outsider-pw'"
        ))
        .await
        .expect("an outsider");
    let refusals = [
        PgRecord::connect(&pg.url(&outsider, "outsider-pw"), &allow())
            .await
            .err(),
        PgRecord::connect(&pg.url(&team.ana.name, "wrong"), &allow())
            .await
            .err(),
        PgRecord::connect(&pg.admin_url(), &allow()).await.err(),
    ]
    .map(|e| e.map(|e| e.to_string()));
    let at = pg.at();
    assert_eq!(
        refusals,
        [
            Some(format!(
                "{outsider} is not on the desk's team in {at}; ask a lead to add them (team add {outsider})"
            )),
            Some(format!(
                "the desk's database refused {}'s login at {at}; check the password (in the address, PGPASSWORD or ~/.pgpass) or ask a lead to run team add {}",
                team.ana.name, team.ana.name
            )),
            Some(format!(
                "{} is an administrator of {at}, above the desk's rules; log in to the desk as yourself (team add gives you a login)",
                pg.admin_user()
            )),
        ]
    );
    drop(admin);
}

#[tokio::test]
async fn appends_from_two_desks_at_once_leave_the_states_the_events_replay_to() {
    let Some((_pg, team, ana, bo)) = team().await else {
        return;
    };
    let (a, b) = (team.ana.name.as_str(), team.bo.name.as_str());
    let notes = |desk: &'static str, by: &str| -> Vec<Event> {
        (0..15)
            .map(|n| note(["T-0001", "T-0002"][n % 2], by, &format!("{desk} {n}")))
            .collect()
    };
    let (from_ana, from_bo) = (notes("ana", a), notes("bo", b));
    tokio::join!(append_all(&ana, &from_ana), append_all(&bo, &from_bo));
    let events = ana.events_after(0).await.expect("events");
    assert_eq!(events.len(), 30);
    assert_eq!(
        ana.states().await.expect("states"),
        replay(&events, &allow())
    );
    // Read a page at a time, the log is the same, whoever reads it.
    let mut paged: Vec<Stored> = Vec::new();
    loop {
        let after = paged.last().map_or(0, |s| s.seq);
        let page = bo.events_page(after, 7).await.expect("a page");
        assert!(page.len() <= 7);
        if page.is_empty() {
            break;
        }
        paged.extend(page);
    }
    assert_eq!(paged, events);
    // Each desk's events keep their order among everyone's.
    let by_ana: Vec<Event> = events
        .iter()
        .filter(|s| s.by == a)
        .map(|s| s.event.clone())
        .collect();
    assert_eq!(by_ana, from_ana);
}
