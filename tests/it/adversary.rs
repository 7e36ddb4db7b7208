//! The team's record against its own members: each attack is SQL under the attacker's own
//! login (through `tokio-postgres`, as `psql` would send it), and each is refused or has no
//! effect. The database keeps these promises, not the desk. Skipped in one line where
//! PostgreSQL is missing, like every test on a real cluster.

use std::time::{Duration, Instant};

use serde_json::{Map, json};
use support_desk::record::Event;
use support_desk::record::postgres::{NewApproval, PgError, PgRecord, team_add};

use crate::pg_cluster::{self, Person, PgCluster, Team};
use crate::postgres::started;

fn allow() -> Vec<String> {
    vec!["shop.quote_refund".to_owned()]
}

async fn desk(person: &Person) -> PgRecord {
    PgRecord::connect(&person.url, &allow())
        .await
        .expect("logs in")
}

async fn team() -> Option<(PgCluster, Team)> {
    let pg = pg_cluster::start().await?;
    let team = pg.team().await;
    Some((pg, team))
}

/// Runs `setup` and then `sql` on one session of `person`'s: how many rows it touched, or the
/// database's refusal in its words.
async fn attack(person: &Person, setup: &str, sql: &str) -> Result<u64, String> {
    let client = pg_cluster::connect(&person.url).await;
    if !setup.is_empty() {
        client.batch_execute(setup).await.map_err(words)?;
    }
    client.execute(sql, &[]).await.map_err(words)
}

fn words(error: tokio_postgres::Error) -> String {
    error
        .as_db_error()
        .map(|db| db.message().to_owned())
        .unwrap_or_else(|| error.to_string())
}

fn note(ticket: &str, by: &str, text: &str) -> String {
    let body = json!({"event": "noted", "ticket": ticket, "by": by, "text": text});
    format!("INSERT INTO desk.events (ticket, kind, body) VALUES ('{ticket}', 'noted', '{body}')")
}

/// `asker` works `ticket` and files an approval for the team's leads: its id.
async fn file_approval(asker: &PgRecord, ticket: &str) -> i64 {
    file_approval_saying(asker, ticket, "Release?").await
}

/// The same, with the form's message as the asker's desk stored it.
async fn file_approval_saying(asker: &PgRecord, ticket: &str, message: &str) -> i64 {
    file_approval_as(asker, ticket, message, None)
        .await
        .expect("filed")
}

/// The same, with the asker's fallback: the record's answer.
async fn file_approval_as(
    asker: &PgRecord,
    ticket: &str,
    message: &str,
    fallback: Option<(Duration, Option<String>)>,
) -> Result<i64, PgError> {
    asker.claim(ticket).await.expect("claimed");
    asker.append(&started(ticket)).await.expect("started");
    let (approval, _) = asker
        .ask_approval(&NewApproval {
            ticket: ticket.into(),
            turn: 1,
            server: "shop".into(),
            origin: "http://127.0.0.1:1/mcp".into(),
            tool: "issue_refund".into(),
            canonical: "shop.issue_refund".into(),
            arguments: Map::new(),
            request_key: "release".into(),
            form: json!({"message": message, "requestedSchema": {"type": "object", "properties": {}}}),
            message: message.into(),
            request_state: Some("state".into()),
            task: None,
            fallback,
        })
        .await?;
    Ok(approval.id)
}

fn answered(ticket: &str, approval: i64, by: &str) -> String {
    let body = json!({
        "event": "approval_answered", "ticket": ticket, "turn": 1, "approval": approval,
        "by": by, "tool": "shop.issue_refund", "action": "accept", "content": null,
        "outcome": "result", "text": "{\"status\": \"released\"}", "truncated": false,
    });
    format!(
        "INSERT INTO desk.events (ticket, kind, body) VALUES ('{ticket}', 'approval_answered', '{body}')"
    )
}

/// A member who becomes the team's group role writes nothing and reads nothing as it; and
/// nobody but a superuser may become another person.
#[tokio::test]
async fn a_member_acting_as_the_group_role_is_nobody_to_the_record() {
    let Some((_pg, team)) = team().await else {
        return;
    };
    let (ana, lee) = (&team.ana, &team.lee);
    let as_staff = "SET ROLE desk_staff";
    let body_by_group = note("T-0001", "desk_staff", "who wrote this?");
    assert_eq!(
        [
            attack(ana, as_staff, &body_by_group).await,
            attack(ana, as_staff, "INSERT INTO desk.tickets (id) VALUES ('T-0001')").await,
            attack(lee, "SET ROLE desk_leads", &note("T-0002", "desk_leads", "x")).await,
            attack(lee, "SET ROLE desk_leads", "UPDATE desk.tickets SET owner = 'desk_leads'").await,
        ],
        [
            Err("new row violates row-level security policy \"is_the_person\" for table \"events\"".to_owned()),
            Err("new row violates row-level security policy \"is_the_person\" for table \"tickets\"".to_owned()),
            Err("new row violates row-level security policy \"is_the_person\" for table \"events\"".to_owned()),
            Ok(0),
        ]
    );
    let client = pg_cluster::connect(&ana.url).await;
    client
        .batch_execute(&note("T-0003", &ana.name, "mine"))
        .await
        .expect("as herself");
    client
        .batch_execute(as_staff)
        .await
        .expect("PostgreSQL allows the SET ROLE itself");
    let seen: i64 = client
        .query_one("SELECT count(*) FROM desk.events", &[])
        .await
        .expect("count")
        .get(0);
    assert_eq!(seen, 0, "the group role reads nothing either");
    assert_eq!(
        attack(
            ana,
            "",
            &format!("SET SESSION AUTHORIZATION {}", team.bo.name)
        )
        .await,
        Err(format!(
            "permission denied to set session authorization \"{}\"",
            team.bo.name
        )),
    );
    assert_eq!(
        attack(ana, "", &format!("SET ROLE {}", team.bo.name)).await,
        Err(format!(
            "permission denied to set role \"{}\"",
            team.bo.name
        )),
    );
}

/// An approval is answered on its ticket only by the lead whose desk holds it, for someone
/// else's request, as it closes: not by its asker (a lead), not by a lead who never took it,
/// not as the group role.
#[tokio::test]
async fn nobody_answers_an_approval_in_the_record_but_the_lead_closing_it() {
    let Some((pg, team)) = team().await else {
        return;
    };
    let lou = pg.person("lou", true).await;
    let (lee_desk, ana_desk) = (desk(&team.lee).await, desk(&team.ana).await);
    let own = file_approval(&lee_desk, "T-0004").await;
    let refused =
        "new row violates row-level security policy \"answered_as_it_closes\" for table \"events\"";
    // lee asked it: he may not answer it, as himself or as the leads' group.
    assert_eq!(
        attack(&team.lee, "", &answered("T-0004", own, &team.lee.name)).await,
        Err(refused.to_owned())
    );
    assert_eq!(
        attack(
            &team.lee,
            "SET ROLE desk_leads",
            &format!("UPDATE desk.approvals SET answering_by = 'desk_leads', answering_until = now(), closed = 'accepted', closed_by = 'desk_leads', closed_at = now() WHERE id = {own}")
        )
        .await,
        Ok(0)
    );
    // lou may answer it, but only by taking it and closing it in the same transaction.
    assert_eq!(
        attack(&lou, "", &answered("T-0004", own, &lou.name)).await,
        Err(refused.to_owned())
    );
    let client = pg_cluster::connect(&lou.url).await;
    client
        .batch_execute(&format!(
            "UPDATE desk.approvals SET answering_by = current_user, answering_until = now() + interval '1 minute' WHERE id = {own}"
        ))
        .await
        .expect("lou takes it");
    assert_eq!(
        client
            .execute(&answered("T-0004", own, &lou.name), &[])
            .await
            .map_err(words),
        Err(refused.to_owned()),
        "holding it is not closing it"
    );
    let lee_record = desk(&team.lee).await;
    let approval = lee_record.approval(own).await.expect("read");
    assert_eq!(approval.closed, None, "still open");

    // Staff file one too: ana may not answer her own, nor may anyone for a closed one.
    let hers = file_approval(&ana_desk, "T-0005").await;
    let refused = attack(&team.ana, "", &answered("T-0005", hers, &team.ana.name)).await;
    assert!(
        refused
            .as_ref()
            .is_err_and(|e| e.starts_with("new row violates row-level security policy")),
        "{refused:?}"
    );
    // Through the desk, the lead's answer goes in as it closes.
    let lee_desk2 = desk(&team.lee).await;
    lee_desk2.take_approval(hers).await.expect("lee takes it");
    let event = Event::ApprovalAnswered {
        ticket: "T-0005".into(),
        turn: 1,
        approval: hers,
        by: team.lee.name.clone(),
        tool: "shop.issue_refund".into(),
        action: "decline".into(),
        content: None,
        outcome: support_desk::host::api::Outcome::Result,
        text: "{\"status\": \"held\"}".into(),
        truncated: false,
    };
    lee_desk2
        .answer_approval(&event)
        .await
        .expect("answered as it closes");
}

/// While a lead's desk holds an approval (sending the answer to the shop), its asker cannot
/// withdraw it: one of the two happens, never both.
#[tokio::test]
async fn a_withdraw_never_crosses_a_leads_answer() {
    let Some((_pg, team)) = team().await else {
        return;
    };
    let (ana, lee) = (desk(&team.ana).await, desk(&team.lee).await);
    let id = file_approval(&ana, "T-0006").await;
    lee.take_approval(id).await.expect("lee answers");
    let refused = ana
        .withdraw_approval(id, "the customer changed their mind")
        .await
        .expect_err("refused while lee answers");
    assert!(
        matches!(refused, PgError::WithdrawWhileAnswered { ref lead, .. } if *lead == team.lee.name),
        "{refused}"
    );
    // A withdrawn event appended by hand, without closing it, is refused too.
    let body = json!({"event": "approval_withdrawn", "ticket": "T-0006", "approval": id,
                      "by": team.ana.name, "reason": "x"});
    assert_eq!(
        attack(
            &team.ana,
            "",
            &format!("INSERT INTO desk.events (ticket, kind, body) VALUES ('T-0006', 'approval_withdrawn', '{body}')")
        )
        .await,
        Err("new row violates row-level security policy \"withdrawn_as_it_closes\" for table \"events\"".to_owned())
    );
    // Once lee lets go without an answer, ana may withdraw it.
    lee.let_go_of_approval(id).await.expect("let go");
    ana.withdraw_approval(id, "the customer changed their mind")
        .await
        .expect("withdrawn");
}

/// There is no ticket state to write: each desk folds it from the events. An event nobody can
/// read costs its own ticket, never the queue.
#[tokio::test]
async fn the_state_is_derived_and_one_bad_event_costs_only_its_ticket() {
    let Some((_pg, team)) = team().await else {
        return;
    };
    let ana = desk(&team.ana).await;
    ana.claim("T-0008").await.expect("claimed");
    ana.append(&started("T-0008")).await.expect("started");
    assert_eq!(
        attack(
            &team.bo,
            "",
            "INSERT INTO desk.ticket_states (ticket, seq, state) VALUES ('T-0008', 1, '{}')"
        )
        .await,
        Err("relation \"desk.ticket_states\" does not exist".to_owned())
    );
    // bo writes a note the desk cannot read (no text), on another ticket.
    let body = json!({"event": "noted", "ticket": "T-0009", "by": team.bo.name});
    assert_eq!(
        attack(
            &team.bo,
            "",
            &format!(
                "INSERT INTO desk.events (ticket, kind, body) VALUES ('T-0009', 'noted', '{body}')"
            )
        )
        .await,
        Ok(1)
    );
    let states = ana.states().await.expect("the queue still reads");
    let tickets: Vec<&str> = states.iter().map(|s| s.ticket.as_str()).collect();
    assert_eq!(tickets, ["T-0008"], "T-0009 is left out, alone");
    assert!(ana.state("T-0009").await.is_err(), "its own read says why");

    // A leader's lease is capped like anyone's: 'infinity' is refused.
    assert_eq!(
        attack(
            &team.lee,
            "",
            "INSERT INTO desk.tickets (id) VALUES ('T-0010')"
        )
        .await,
        Ok(1)
    );
    assert_eq!(
        attack(
            &team.lee,
            "",
            "UPDATE desk.tickets SET owner = current_user, lease_until = 'infinity' WHERE id = 'T-0010'"
        )
        .await,
        Err("new row violates row-level security policy \"lease_at_most_30_s\" for table \"tickets\"".to_owned())
    );

    // A model's U+0000 is kept as U+FFFD rather than losing the event.
    let appended = ana
        .append(&Event::Noted {
            ticket: "T-0008".into(),
            by: team.ana.name.clone(),
            text: "before\0after".into(),
        })
        .await
        .expect("kept");
    let Event::Noted { text, .. } = &appended.stored.event else {
        panic!("a note");
    };
    assert_eq!(text, "before\u{fffd}after");
}

/// A transaction someone leaves open holding the append lock is ended by the database for
/// them; everyone else's appends go on.
#[tokio::test]
async fn a_lock_held_by_one_person_times_out_for_them_not_for_the_team() {
    let Some((_pg, team)) = team().await else {
        return;
    };
    let staller = pg_cluster::connect(&team.ana.url).await;
    let limit: String = staller
        .query_one("SHOW idle_in_transaction_session_timeout", &[])
        .await
        .expect("show")
        .get(0);
    assert_eq!(limit, "1s");
    staller
        .batch_execute(&format!(
            "BEGIN; {}",
            note("T-0011", &team.ana.name, "holding the lock")
        ))
        .await
        .expect("ana takes the append lock and waits");
    let bo = desk(&team.bo).await;
    let started = Instant::now();
    bo.append(&Event::Noted {
        ticket: "T-0012".into(),
        by: team.bo.name.clone(),
        text: "mine goes in".into(),
    })
    .await
    .expect("bo's append goes through");
    let waited = started.elapsed();
    assert!(waited < Duration::from_secs(5), "bo waited {waited:?}");
    assert!(
        staller.batch_execute("COMMIT").await.is_err(),
        "ana's open transaction was ended, not bo's"
    );
}

/// `team add` makes people; it never takes over a role it did not make, nor one above the
/// rules (the cluster's superuser, a role that may create roles).
#[tokio::test]
async fn team_add_never_takes_over_a_role_it_did_not_make() {
    let Some((pg, team)) = team().await else {
        return;
    };
    let admin = pg.admin().await;
    let (shop_login, role_maker) = (pg.name("shop_login"), pg.name("role_maker"));
    admin
        .batch_execute(&format!(
            "CREATE ROLE {shop_login} LOGIN PASSWORD 'shop'; CREATE ROLE {role_maker} CREATEROLE"
        ))
        .await
        .expect("roles of the cluster's own");
    let refusals = [
        team_add(&pg.admin_url(), pg.admin_user(), false, None).await,
        team_add(&pg.admin_url(), &shop_login, false, None).await,
        team_add(&pg.admin_url(), &role_maker, true, None).await,
    ];
    assert!(
        matches!(refusals[0], Err(PgError::PrivilegedRole { .. })),
        "{:?}",
        refusals[0]
    );
    assert!(
        matches!(refusals[1], Err(PgError::NotATeamRole { .. })),
        "{:?}",
        refusals[1]
    );
    assert!(
        matches!(refusals[2], Err(PgError::PrivilegedRole { .. })),
        "{:?}",
        refusals[2]
    );
    let still_super: bool = admin
        .query_one(
            "SELECT rolsuper FROM pg_roles WHERE rolname = current_user",
            &[],
        )
        .await
        .expect("read")
        .get(0);
    assert!(still_super);
    // A person of the team is changed as asked: bo becomes a lead.
    team_add(&pg.admin_url(), &team.bo.name, true, Some("bo-new".into()))
        .await
        .expect("bo is a member");
}

/// What a staff member wrote reaches a lead's terminal through the command line as the desk's
/// screen shows it: no escape sequence (a hidden amount, a rewritten line, the clipboard).
#[tokio::test]
async fn staff_text_reaches_the_command_line_cleaned() {
    let Some((_pg, team)) = team().await else {
        return;
    };
    let ana = desk(&team.ana).await;
    let sly = "Release EUR \u{1b}[8m202.90\u{1b}[0m12.00?\u{1b}]52;c;cHduZWQ=\u{7}\u{9b}2K";
    file_approval_saying(&ana, "T-0013", sly).await;
    ana.append(&Event::HandedOver {
        ticket: "T-0013".into(),
        by: team.ana.name.clone(),
        to: "a person".into(),
        note: sly.into(),
    })
    .await
    .ok();
    for args in [["approvals"], ["queue"]] {
        let output = tokio::process::Command::new(crate::support::BIN)
            .args(args)
            .args(["--store", &team.lee.url])
            .env("RUST_LOG", "off")
            .output()
            .await
            .expect("runs");
        let out = String::from_utf8_lossy(&output.stdout).into_owned();
        assert!(
            output.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        assert!(out.contains("T-0013"), "{args:?}: {out}");
        assert!(
            !out.chars().any(|c| c.is_control() && c != '\n'),
            "{args:?} prints no control character: {out:?}"
        );
    }
}

/// `export --store` writes the team's record, not whatever file this machine has.
#[tokio::test]
async fn export_with_a_store_writes_the_teams_record() {
    let Some((_pg, team)) = team().await else {
        return;
    };
    let ana = desk(&team.ana).await;
    for text in ["first", "second"] {
        ana.append(&Event::Noted {
            ticket: "T-0014".into(),
            by: team.ana.name.clone(),
            text: text.into(),
        })
        .await
        .expect("noted");
    }
    let dir = tempfile::tempdir().expect("dir");
    let out = dir.path().join("team.jsonl");
    let output = tokio::process::Command::new(crate::support::BIN)
        .arg("export")
        .arg(&out)
        .args(["--store", &team.lee.url, "--data-dir"])
        .arg(dir.path().join("nothing-here"))
        .output()
        .await
        .expect("runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(&out)
        .expect("written")
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON"))
        .collect();
    let texts: Vec<&str> = lines.iter().filter_map(|l| l["text"].as_str()).collect();
    assert_eq!(texts, ["first", "second"]);
    assert!(lines.iter().all(|l| l["by"] == team.ana.name.as_str()));
}

fn fell_back(ticket: &str, approval: i64, to: Option<&str>) -> String {
    let body = json!({
        "event": "approval_fell_back", "ticket": ticket, "approval": approval, "after": "30m",
        "to": to,
    });
    format!(
        "INSERT INTO desk.events (ticket, kind, body) VALUES ('{ticket}', 'approval_fell_back', '{body}')"
    )
}

/// An approval falls back only when its asker's wait is over, once, as filed: nobody lapses
/// one early or writes its event by hand; the fallback's reach lends nobody a withdraw; one
/// lapsed is answered by no lead; and a fallback names only a lead of the team.
#[tokio::test]
async fn an_approval_falls_back_only_when_due_once_and_as_filed() {
    let Some((pg, team)) = team().await else {
        return;
    };
    let (ana, bo, lee) = (
        desk(&team.ana).await,
        desk(&team.bo).await,
        desk(&team.lee).await,
    );
    let declined = Some((Duration::from_secs(1800), None));
    let id = file_approval_as(&ana, "T-0006", "Release?", declined)
        .await
        .expect("filed");
    let lapse = format!(
        "UPDATE desk.approvals SET fell_back_at = now(), closed = 'lapsed', closed_by = current_user, closed_at = now() WHERE id = {id}"
    );
    // Not due: nothing to lapse, no event to write, nothing for a desk to do.
    assert_eq!(attack(&team.bo, "", &lapse).await, Ok(0));
    let refused = attack(&team.bo, "", &fell_back("T-0006", id, None)).await;
    assert!(
        refused
            .as_ref()
            .is_err_and(|e| e.contains("\"fell_back_as_it_falls\"")),
        "{refused:?}"
    );
    assert!(bo.fall_back_due().await.expect("looked").is_empty());

    // Due, by the test's clock.
    pg.admin()
        .await
        .execute(
            "UPDATE desk.approvals SET asked_at = now() - interval '31 minutes' WHERE id = $1",
            &[&id],
        )
        .await
        .expect("aged");
    // bo may carry out the fallback, but not withdraw ana's request through it, nor pass it
    // to anyone, nor close it otherwise.
    for attempt in [
        format!(
            "UPDATE desk.approvals SET fell_back_at = now(), closed = 'withdrawn', closed_by = current_user, closed_at = now() WHERE id = {id}"
        ),
        format!(
            "UPDATE desk.approvals SET closed = 'withdrawn', closed_by = current_user, closed_at = now() WHERE id = {id}"
        ),
        format!(
            "UPDATE desk.approvals SET fell_back_at = now(), closed = 'accepted', closed_by = current_user, closed_at = now() WHERE id = {id}"
        ),
        format!("UPDATE desk.approvals SET fell_back_at = now() WHERE id = {id}"),
    ] {
        let refused = attack(&team.bo, "", &attempt).await;
        assert!(
            refused
                .as_ref()
                .is_err_and(|e| e.starts_with("new row violates row-level security policy")),
            "{attempt}: {refused:?}"
        );
    }
    // Through bo's desk: once, with its event; a second look and a second event find nothing.
    let done = bo.fall_back_due().await.expect("fell back");
    assert_eq!(done.len(), 1);
    assert!(matches!(
        &done[0].stored.event,
        Event::ApprovalFellBack { approval, to: None, after, .. } if *approval == id && after == "30m"
    ));
    assert!(bo.fall_back_due().await.expect("looked").is_empty());
    assert!(ana.fall_back_due().await.expect("looked").is_empty());
    let again = attack(&team.bo, "", &fell_back("T-0006", id, None)).await;
    assert!(again.is_err(), "a second fallback event: {again:?}");
    let approval = lee.approval(id).await.expect("read");
    assert_eq!(
        approval.closed,
        Some(("lapsed".to_owned(), team.bo.name.clone()))
    );
    assert!(matches!(
        lee.take_approval(id).await,
        Err(PgError::ApprovalClosed { .. })
    ));

    // A fallback goes to a lead, never to staff.
    let to_staff = file_approval_as(
        &ana,
        "T-0007",
        "Release?",
        Some((Duration::from_secs(1800), Some(team.bo.name.clone()))),
    )
    .await;
    assert!(
        to_staff
            .as_ref()
            .is_err_and(|e| e.to_string().contains("falls_back_to_a_lead")),
        "{to_staff:?}"
    );
    let to_lead = file_approval_as(
        &ana,
        "T-0008",
        "Release?",
        Some((Duration::from_secs(1800), Some(team.lee.name.clone()))),
    )
    .await
    .expect("filed for lee");
    assert_eq!(
        lee.approval(to_lead).await.expect("read").fallback,
        Some((Duration::from_secs(1800), Some(team.lee.name.clone())))
    );
}

fn task_event(ticket: &str, kind: &str, task: &str) -> String {
    let body = match kind {
        "task_started" => json!({"event": kind, "ticket": ticket, "turn": 1, "server": "shop",
            "tool": "shop.file_damage_claim", "task": task}),
        _ => json!({"event": kind, "ticket": ticket, "server": "shop", "task": task,
            "status": "completed", "outcome": "result", "text": "accepted"}),
    };
    format!("INSERT INTO desk.events (ticket, kind, body) VALUES ('{ticket}', '{kind}', '{body}')")
}

/// A server's task on a ticket starts only within a run (under the ticket's lease), and ends
/// once, and only if it started: nobody hides a task the desk follows by writing its end
/// twice or inventing one, whoever's login they use.
#[tokio::test]
async fn a_task_starts_within_a_run_and_ends_once_and_only_if_it_started() {
    let Some((_pg, team)) = team().await else {
        return;
    };
    let ana = desk(&team.ana).await;
    ana.claim("T-0011").await.expect("claimed");
    ana.append(&started("T-0011")).await.expect("started");
    let refused = attack(
        &team.bo,
        "",
        &task_event("T-0011", "task_started", "claim-1"),
    )
    .await;
    assert!(
        refused
            .as_ref()
            .is_err_and(|e| e.contains("row-level security")),
        "bo holds no lease on T-0011: {refused:?}"
    );
    assert_eq!(
        attack(
            &team.ana,
            "",
            &task_event("T-0011", "task_started", "claim-1")
        )
        .await,
        Ok(1)
    );
    let invented = attack(&team.bo, "", &task_event("T-0011", "task_ended", "claim-2")).await;
    assert!(
        invented
            .as_ref()
            .is_err_and(|e| e.contains("row-level security")),
        "no task claim-2 started: {invented:?}"
    );
    assert_eq!(
        attack(&team.bo, "", &task_event("T-0011", "task_ended", "claim-1")).await,
        Ok(1),
        "whoever follows a task may record its end"
    );
    let twice = attack(
        &team.ana,
        "",
        &task_event("T-0011", "task_ended", "claim-1"),
    )
    .await;
    assert!(
        twice
            .as_ref()
            .is_err_and(|e| e.contains("one_end_per_task")),
        "a task ends once: {twice:?}"
    );
    let state = ana.state("T-0011").await.expect("read").expect("T-0011");
    assert!(state.tasks.is_empty(), "{:?}", state.tasks);
}
