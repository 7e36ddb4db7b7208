//! Owners, tags and views through the real binary on both record engines, and the team's
//! database deciding who may give whose ticket away, tried as SQL under each person's own
//! login; saved macros at the desk, and the host sending a reply with a macro's solve.
//! PostgreSQL tests skip in one line where it is missing.

use std::path::Path;
use std::process::Output;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use support_desk::config::DeskConfig;
use support_desk::host::api::{Command, HostEvent, HostHandle};
use support_desk::host::core::Storage;
use support_desk::host::task::{self, Answerers, HostSetup};
use support_desk::model::Model;
use support_desk::model::replay::ReplayModel;
use support_desk::record::postgres::{PgError, PgRecord};
use support_desk::record::{Conversation, Event, Record};
use support_desk::startup::host_parts;

use crate::pg_cluster::{self, Person};
use crate::support::BIN;

/// A config with two saved views beside the embedded default's tables.
const VIEWS: &str = r#"
[views.refunds-of-mine]
tag = "refund"
assignee = "me"

[views.big]
amount = "150"
"#;

#[derive(Clone, Copy)]
struct Desk<'a> {
    /// Where the config is written.
    dir: &'a Path,
    data: &'a Path,
    store: Option<&'a str>,
    person: &'a str,
}

impl Desk<'_> {
    fn run(&self, args: &[&str]) -> Output {
        let config = self.dir.join("views.toml");
        std::fs::write(&config, VIEWS).expect("config written");
        let mut command = std::process::Command::new(BIN);
        command
            .args(args)
            .arg("--config")
            .arg(&config)
            .arg("--data-dir")
            .arg(self.data)
            .env("SUPPORT_DESK_STAFF", self.person);
        if let Some(store) = self.store {
            command.args(["--store", store]);
        }
        command.output().expect("support-desk runs")
    }

    fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).expect("utf-8")
    }

    fn refused(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert!(!out.status.success(), "{args:?} was taken");
        String::from_utf8(out.stderr).expect("utf-8")
    }

    /// The ids `queue --json --view NAME` lists, and the rows of the whole queue.
    fn view(&self, name: &str) -> Vec<String> {
        let out = self.ok(&["queue", "--json", "--view", name]);
        let queue: Value = serde_json::from_str(&out).expect("JSON");
        queue["tickets"]
            .as_array()
            .expect("tickets")
            .iter()
            .map(|row| row["id"].as_str().expect("id").to_owned())
            .collect()
    }

    fn row(&self, id: &str) -> Value {
        let out = self.ok(&["queue", "--json"]);
        let queue: Value = serde_json::from_str(&out).expect("JSON");
        queue["tickets"]
            .as_array()
            .and_then(|rows| rows.iter().find(|r| r["id"] == id).cloned())
            .unwrap_or_else(|| panic!("{id} is in the queue"))
    }
}

/// The same working day on either engine: `ana` takes and tags tickets, gives one to `bo`;
/// the views show what each person should see.
fn a_day_of_owners(ana: &Desk<'_>, bo: &Desk<'_>) {
    let ana_name = ana.person;
    let bo_name = bo.person;
    assert_eq!(
        ana.ok(&["assign", "T-0001", "me"]),
        format!("T-0001 is {ana_name}'s now\n")
    );
    ana.ok(&["tag", "T-0001", "Refund"]);
    ana.ok(&["assign", "T-0002", "me"]);
    ana.ok(&["assign", "T-0003", bo_name]);
    ana.ok(&["tag", "T-0003", "refund"]);
    assert!(
        ana.refused(&["tag", "T-0001", "refund"])
            .contains("already")
    );
    assert!(ana.refused(&["assign", "T-0001", "me"]).contains("already"));
    assert!(ana.refused(&["tag", "T-0001", "two words"]).contains("tag"));
    assert!(
        ana.refused(&["assign", "T-9999", "me"])
            .contains("no ticket T-9999")
    );

    let row = ana.row("T-0001");
    assert_eq!(
        (row["assignee"].clone(), row["tags"].clone()),
        (json!(ana_name), json!(["refund"]))
    );
    assert_eq!(ana.view("mine"), ["T-0001", "T-0002"]);
    assert_eq!(bo.view("mine"), ["T-0003"]);
    assert_eq!(ana.view("refunds-of-mine"), ["T-0001"]);
    assert_eq!(bo.view("refunds-of-mine"), ["T-0003"]);
    let unassigned = ana.view("unassigned");
    assert_eq!(unassigned.len(), 45, "48 tickets, 3 assigned");
    assert!(!unassigned.contains(&"T-0001".to_owned()));

    // Untagged, and given back to nobody: the views follow.
    ana.ok(&["tag", "T-0001", "refund", "--remove"]);
    assert_eq!(
        ana.ok(&["assign", "T-0002", "nobody"]),
        "T-0002 is nobody's now\n"
    );
    assert_eq!(ana.view("mine"), ["T-0001"]);
    assert!(ana.view("refunds-of-mine").is_empty());
    assert!(
        ana.refused(&["queue", "--view", "nonesuch"])
            .contains("no view \"nonesuch\"")
    );
}

/// The bundled tickets that name EUR 150 or more, read by hand: T-0003 (279 eur), T-0008
/// (500 EUR), T-0018 (229 eur); T-0038 names 100 EUR, under the view's least.
const BIG: [&str; 3] = ["T-0003", "T-0008", "T-0018"];

#[test]
fn owners_tags_and_views_on_one_persons_record() {
    let dir = tempfile::tempdir().expect("temp dir");
    let data = dir.path().join("data");
    // One person's record, read by ana and then by bo at the same data dir.
    let ana = Desk {
        dir: dir.path(),
        data: &data,
        store: None,
        person: "ana",
    };
    let bo = Desk {
        person: "bo",
        ..ana
    };
    a_day_of_owners(&ana, &bo);
    assert_eq!(ana.view("big"), BIG);
}

#[tokio::test]
async fn owners_tags_and_views_on_the_teams_record() {
    let Some(pg) = pg_cluster::start().await else {
        return;
    };
    let team = pg.team().await;
    let dir = tempfile::tempdir().expect("temp dir");
    let (ana_data, bo_data) = (dir.path().join("ana"), dir.path().join("bo"));
    let ana = Desk {
        dir: dir.path(),
        data: &ana_data,
        store: Some(&team.ana.url),
        person: &team.ana.name,
    };
    let bo = Desk {
        dir: dir.path(),
        data: &bo_data,
        store: Some(&team.bo.url),
        person: &team.bo.name,
    };
    a_day_of_owners(&ana, &bo);
    assert_eq!(ana.view("big"), BIG);
    // ana's T-0001 is hers: bo cannot give it away.
    let said = bo.refused(&["assign", "T-0001", "me"]);
    assert!(
        said.contains(&format!(
            "T-0001 is {}'s: only {} or a lead",
            ana.person, ana.person
        )),
        "{said}"
    );
}

async fn desk(person: &Person) -> PgRecord {
    PgRecord::connect(&person.url, &[]).await.expect("logs in")
}

fn assigned(ticket: &str, by: &str, to: Option<&str>) -> Event {
    Event::Assigned {
        ticket: ticket.to_owned(),
        by: by.to_owned(),
        to: to.map(str::to_owned),
    }
}

/// Runs `sql` as `person`, as `psql` would: the rows it touched, or the database's words.
async fn as_person(person: &Person, sql: &str) -> Result<u64, String> {
    let client = pg_cluster::connect(&person.url).await;
    client.execute(sql, &[]).await.map_err(|e| {
        e.as_db_error()
            .map(|db| db.message().to_owned())
            .unwrap_or_else(|| e.to_string())
    })
}

fn assign_sql(ticket: &str, by: &str, to: &str) -> String {
    let body = json!({"event": "assigned", "ticket": ticket, "by": by, "to": to});
    format!(
        "INSERT INTO desk.events (ticket, kind, body) VALUES ('{ticket}', 'assigned', '{body}')"
    )
}

#[tokio::test]
async fn staff_cannot_give_away_a_ticket_that_is_someone_elses() {
    let Some(pg) = pg_cluster::start().await else {
        return;
    };
    let team = pg.team().await;
    let (ana, bo, lee) = (&team.ana, &team.bo, &team.lee);
    let lead = desk(lee).await;
    lead.append(&assigned("T-0001", &lee.name, Some(&lee.name)))
        .await
        .expect("a lead takes a ticket");

    // ana moves the lead's ticket to herself: as SQL under her login, and through her desk.
    assert_eq!(
        as_person(ana, &assign_sql("T-0001", &ana.name, &ana.name)).await,
        Err(
            "new row violates row-level security policy \"who_assigns_whom\" for table \"events\""
                .to_owned()
        )
    );
    let staff = desk(ana).await;
    let refused = staff
        .append(&assigned("T-0001", &ana.name, Some(&ana.name)))
        .await
        .expect_err("refused");
    assert!(
        matches!(&refused, PgError::NotYours { ticket, assignee } if ticket == "T-0001" && *assignee == lee.name),
        "{refused}"
    );
    // Nor to nobody, nor to a third person.
    assert!(
        staff
            .append(&assigned("T-0001", &ana.name, None))
            .await
            .is_err()
    );
    assert!(
        staff
            .append(&assigned("T-0001", &ana.name, Some(&bo.name)))
            .await
            .is_err()
    );

    // A ticket that is nobody's she may give to anyone on the team; it is then bo's to give
    // on, not hers.
    staff
        .append(&assigned("T-0002", &ana.name, Some(&bo.name)))
        .await
        .expect("nobody's ticket given to bo");
    assert!(
        staff
            .append(&assigned("T-0002", &ana.name, Some(&ana.name)))
            .await
            .is_err()
    );
    desk(bo)
        .await
        .append(&assigned("T-0002", &bo.name, None))
        .await
        .expect("bo gives his own back");

    // Only to a person of the team: not to a stranger, not to the group roles.
    for stranger in ["mallory", "desk_staff", "postgres"] {
        let refused = staff
            .append(&assigned("T-0003", &ana.name, Some(stranger)))
            .await
            .expect_err("refused");
        assert!(
            matches!(&refused, PgError::NotOnTheTeam { name } if name == stranger),
            "{stranger}: {refused}"
        );
    }
    // Nor in someone else's name.
    assert!(
        as_person(ana, &assign_sql("T-0003", &bo.name, &bo.name))
            .await
            .expect_err("refused")
            .contains("by_is_the_actor")
    );

    // A lead moves anyone's ticket.
    lead.append(&assigned("T-0001", &lee.name, Some(&ana.name)))
        .await
        .expect("the lead gives hers to ana");
    let state = lead.state("T-0001").await.expect("read").expect("state");
    assert_eq!(state.assignee.as_deref(), Some(ana.name.as_str()));
}

/// `queue --json` of the desk's data dir, polled until `done` holds of it (the desk appends
/// on its host task, a moment after the key).
async fn queue_until(data: &Path, done: impl Fn(&Value) -> bool) -> Value {
    for _ in 0..100 {
        let out = std::process::Command::new(BIN)
            .args(["queue", "--json", "--data-dir"])
            .arg(data)
            .env("SUPPORT_DESK_STAFF", "tester")
            .output()
            .expect("queue runs");
        if let Ok(queue) = serde_json::from_slice::<Value>(&out.stdout)
            && done(&queue)
        {
            return queue;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    panic!("the record never came to what the desk was told");
}

fn field<'a>(queue: &'a Value, id: &str, name: &str) -> &'a Value {
    queue["tickets"]
        .as_array()
        .and_then(|rows| rows.iter().find(|r| r["id"] == id))
        .map(|row| &row[name])
        .unwrap_or(&Value::Null)
}

/// The real desk under a pseudo-terminal: `o` takes a ticket, two marked tickets are tagged
/// with one `:tag`, the desk is killed with SIGKILL, and reopened it shows the same owners,
/// tags and views.
#[tokio::test]
async fn owners_and_tags_outlive_a_killed_desk() {
    let data = tempfile::tempdir().expect("temp dir");
    let mut desk = crate::desk_pty::Desk::start_in(data.path(), &[]);
    desk.screen.wait_for("Queue (all) 48/48").await;
    desk.press(b"o");
    desk.screen.wait_for("@me").await;
    desk.press(b"j  ");
    desk.screen.wait_for("2 marked").await;
    desk.press(b":tag refund\r");
    desk.screen.wait_for(":tag refund on 2 tickets").await;
    let queue = queue_until(data.path(), |q| {
        field(q, "T-0003", "tags") == &json!(["refund"])
    })
    .await;
    assert_eq!(field(&queue, "T-0001", "assignee"), &json!("tester"));
    assert_eq!(field(&queue, "T-0002", "tags"), &json!(["refund"]));
    desk.kill().await;

    let mut desk = crate::desk_pty::Desk::start_in(data.path(), &[]);
    desk.screen.wait_for("Queue (all) 48/48").await;
    desk.press(b":view mine\r");
    let shown = desk.screen.wait_for("Queue (mine) 1/48").await;
    assert!(shown.contains("T-0001"), "{shown}");
    desk.press(b":view all\r");
    desk.screen.wait_for("Queue (all) 48/48").await;
    desk.press(b"jj");
    desk.screen.wait_for("#refund").await;
    desk.quit().await;
}

/// A macro under a pseudo-terminal: its text in the editor with the variables filled, sent
/// as the person's reply, its tag, owner and note each recorded once, and its solve recorded
/// once, after the send.
#[tokio::test]
async fn a_macro_fills_the_reply_and_records_each_action_once() {
    let data = tempfile::tempdir().expect("temp dir");
    let config = data.path().join("replies.toml");
    std::fs::write(
        &config,
        r#"
[replies.damaged-parcel]
text = "Hello {customer.id}, thank you for writing about {ticket.id}; we are looking into it."
tags = ["damaged"]
assign = "me"
note = "macro: damaged parcel"
state = "solved"
"#,
    )
    .expect("config");
    let config = config.to_str().expect("utf-8 path");
    let mut desk = crate::desk_pty::Desk::start_in(data.path(), &["--config", config]);
    desk.screen.wait_for("Queue (all) 48/48").await;
    desk.press(b"jjj");
    desk.screen.wait_for("T-0004 · C-0173").await;
    desk.press(b":macro damaged-parcel\r");
    desk.screen
        .wait_for("Hello C-0173, thank you for writing about T-0004; we are looking into it.")
        .await;
    desk.screen
        .wait_for("sends and solves (macro damaged-parcel)")
        .await;
    desk.press(b"\x13"); // Ctrl-S sends, then solves
    desk.screen.wait_for("T-0004 sent").await;
    let queue = queue_until(data.path(), |q| {
        field(q, "T-0004", "conversation") == "solved"
    })
    .await;
    assert_eq!(field(&queue, "T-0004", "state"), &json!("sent"));
    assert_eq!(field(&queue, "T-0004", "tags"), &json!(["damaged"]));
    assert_eq!(field(&queue, "T-0004", "assignee"), &json!("tester"));
    // The lead's report on the same desk counts the reply as the person's own, and the
    // ticket as solved.
    desk.press(b"R");
    let report = desk
        .screen
        .wait_for("1 sent: 0 as drafted · 0 edited · 1 by hand · 0 handed over")
        .await;
    assert!(
        report.contains("open 0 · pending 0 · solved 1 · closed 0"),
        "{report}"
    );
    desk.press(b"q");
    desk.screen.wait_for("Queue (all) 48/48").await;
    desk.quit().await;

    let export = data.path().join("export.jsonl");
    let out = std::process::Command::new(BIN)
        .args(["export", "--data-dir"])
        .arg(data.path())
        .arg(&export)
        .output()
        .expect("export runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let kinds: Vec<String> = std::fs::read_to_string(&export)
        .expect("exported")
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|event| event["ticket"] == "T-0004")
        .map(|event| event["event"].as_str().unwrap_or_default().to_owned())
        .collect();
    for kind in ["tagged", "assigned", "noted", "sent", "solved"] {
        assert_eq!(
            kinds.iter().filter(|k| *k == kind).count(),
            1,
            "one {kind}: {kinds:?}"
        );
    }
    let at = |kind: &str| kinds.iter().position(|k| k == kind);
    assert!(
        at("sent") < at("solved"),
        "the solve follows the send: {kinds:?}"
    );
}

/// The host behind a desk on `data`, with no server: a send and a solve call none.
fn bare_host(data: &Path) -> (HostHandle, Arc<Record>) {
    let mut config = DeskConfig::bundled();
    config.servers.clear();
    let storage =
        Storage::open(data.to_owned(), "tester", &config.consent.allow).expect("the record opens");
    let record = storage.record.clone().expect("a data dir's record");
    let model = Model::Replay(ReplayModel::empty("sends only".to_owned()));
    let parts = host_parts(
        config,
        model,
        support_desk::tickets::bundled(),
        storage,
        None,
    );
    let handle = task::spawn(HostSetup {
        parts,
        answerers: Answerers {
            consent: "person: tester".into(),
            lead: "person: tester".into(),
        },
        notes: Default::default(),
        person_prompt: None,
    });
    (handle, record)
}

/// The host's events until one that `done` holds of, within ten seconds.
async fn events_until(
    handle: &mut HostHandle,
    done: impl Fn(&HostEvent) -> bool,
) -> Vec<HostEvent> {
    let mut seen = Vec::new();
    loop {
        let event = tokio::time::timeout(Duration::from_secs(10), handle.events.recv())
            .await
            .unwrap_or_else(|_| panic!("the host went quiet; it said {seen:?}"))
            .expect("the host runs");
        let last = done(&event);
        seen.push(event);
        if last {
            return seen;
        }
    }
}

/// A reply sent with a macro's solve: refused (a refund promise no tool made, and no
/// override), nothing is solved; taken, the send and then the person's solve are recorded.
#[tokio::test]
async fn a_refused_send_solves_nothing_and_a_taken_one_is_solved_after_it() {
    let data = tempfile::tempdir().expect("temp dir");
    let (mut handle, record) = bare_host(data.path());
    let send = |text: &str| Command::SendReply {
        ticket: "T-0009".into(),
        text: text.into(),
        override_reason: None,
        solve: true,
    };
    handle
        .commands
        .send(send("Your refund of EUR 161.96 is on its way."))
        .await
        .expect("the host takes commands");
    let said = events_until(
        &mut handle,
        |e| matches!(e, HostEvent::Problem(p) if p.contains("T-0009 has open check findings")),
    )
    .await;
    let solved_on_the_way = said
        .iter()
        .any(|e| matches!(e, HostEvent::Happened { state, .. } if state.solved.is_some()));
    assert!(!solved_on_the_way, "{said:?}");
    let state = record.state("T-0009").await.expect("read").expect("edited");
    assert_eq!(
        (state.sent, state.solved, state.conversation),
        (None, None, Conversation::Open)
    );

    handle
        .commands
        .send(send("Hello Hanna, sorry about the cracked mug. We will look up what the refund for the pair would be and write to you with the amount before you send anything back."))
        .await
        .expect("the host takes commands");
    events_until(
        &mut handle,
        |e| matches!(e, HostEvent::Happened { state, .. } if state.solved.is_some()),
    )
    .await;
    let kinds: Vec<&str> = record
        .ticket_events("T-0009")
        .await
        .expect("read")
        .iter()
        .map(|stored| stored.event.kind())
        .collect();
    assert_eq!(kinds, ["draft_edited", "draft_edited", "sent", "solved"]);
    let state = record.state("T-0009").await.expect("read").expect("solved");
    assert_eq!(state.conversation, Conversation::Solved);
    assert_eq!(state.solved.map(|s| s.by), Some("tester".to_owned()));
    handle
        .commands
        .send(Command::Shutdown)
        .await
        .expect("the host takes commands");
    events_until(&mut handle, |e| matches!(e, HostEvent::Stopped)).await;
}
