//! The team's saved replies: the database lets only leads write them, always as themselves,
//! tried as SQL under each person's own login; then through the real binary, a lead's
//! `replies set` listed by a staff member's `replies`, refused to staff in words, and applied
//! with `:reply` at a staff member's desk under a pseudo-terminal. Skipped in one line where
//! PostgreSQL is missing.

use std::path::Path;
use std::process::Output;

use serde_json::{Value, json};

use crate::pg_cluster::{self, Person};
use crate::support::BIN;

/// Runs `setup` and then `sql` on one session of `person`'s, as `psql` would: how many rows
/// it touched, or the database's refusal in its words.
async fn as_person(person: &Person, setup: &str, sql: &str) -> Result<u64, String> {
    let client = pg_cluster::connect(&person.url).await;
    let words = |error: tokio_postgres::Error| {
        error
            .as_db_error()
            .map(|db| db.message().to_owned())
            .unwrap_or_else(|| error.to_string())
    };
    if !setup.is_empty() {
        client.batch_execute(setup).await.map_err(words)?;
    }
    client.execute(sql, &[]).await.map_err(words)
}

fn insert(name: &str, text: &str) -> String {
    let reply = json!({ "text": text });
    format!("INSERT INTO desk.saved_replies (name, reply) VALUES ('{name}', '{reply}')")
}

/// Each saved reply's text and who last changed it, as the lead reads them.
async fn rows(person: &Person) -> Vec<(String, String, String)> {
    pg_cluster::connect(&person.url)
        .await
        .query(
            "SELECT name, reply->>'text', changed_by FROM desk.saved_replies ORDER BY name",
            &[],
        )
        .await
        .expect("read")
        .iter()
        .map(|row| (row.get(0), row.get(1), row.get(2)))
        .collect()
}

#[tokio::test]
async fn only_a_lead_writes_the_teams_saved_replies_and_always_as_themselves() {
    let Some(pg) = pg_cluster::start().await else {
        return;
    };
    let team = pg.team().await;
    let lou = pg.person("lou", true).await;
    let (ana, lee) = (&team.ana, &team.lee);
    let policy = |name: &str| {
        format!("new row violates row-level security policy \"{name}\" for table \"saved_replies\"")
    };
    let denied = "permission denied for table saved_replies".to_owned();

    assert_eq!(
        as_person(ana, "", &insert("thanks", "from ana")).await,
        Err(policy("leads_add"))
    );
    assert_eq!(
        as_person(lee, "", &insert("thanks", "Thanks, {me}")).await,
        Ok(1)
    );
    let upsert = format!(
        "{} ON CONFLICT (name) DO UPDATE SET reply = EXCLUDED.reply",
        insert("thanks", "from ana")
    );
    assert_eq!(
        [
            as_person(ana, "", &upsert).await,
            as_person(
                ana,
                "",
                "UPDATE desk.saved_replies SET reply = '{\"text\": \"from ana\"}'"
            )
            .await,
            as_person(ana, "", "DELETE FROM desk.saved_replies").await,
        ],
        [Err(policy("leads_add")), Ok(0), Ok(0),]
    );
    // Who and when are the database's: nobody names them, a lead neither.
    let forged = format!(
        "INSERT INTO desk.saved_replies (name, reply, changed_by) VALUES ('late', '{{}}', '{}')",
        lee.name
    );
    assert_eq!(
        [
            as_person(ana, "", &forged).await,
            as_person(lee, "", &forged.replace(&lee.name, &ana.name)).await,
            as_person(
                lee,
                "",
                &format!("UPDATE desk.saved_replies SET changed_by = '{}'", lou.name)
            )
            .await,
            as_person(
                lee,
                "",
                "UPDATE desk.saved_replies SET changed_at = now() - interval '1 day'"
            )
            .await,
        ],
        [
            Err(denied.clone()),
            Err(denied.clone()),
            Err(denied.clone()),
            Err(denied),
        ]
    );
    // Staff cannot become the leads' group; a lead who does is nobody here.
    assert_eq!(
        [
            as_person(ana, "SET ROLE desk_leads", &insert("late", "x")).await,
            as_person(ana, "SET ROLE desk_staff", &insert("late", "x")).await,
            as_person(lee, "SET ROLE desk_leads", &insert("late", "x")).await,
            as_person(lee, "SET ROLE desk_leads", "DELETE FROM desk.saved_replies").await,
            as_person(
                lee,
                "SET ROLE desk_leads",
                "UPDATE desk.saved_replies SET reply = '{\"text\": \"the group\"}'"
            )
            .await,
        ],
        [
            Err("permission denied to set role \"desk_leads\"".to_owned()),
            Err(policy("is_the_person")),
            Err(policy("is_the_person")),
            Ok(0),
            Ok(0),
        ]
    );
    assert_eq!(
        rows(ana).await,
        [("thanks".into(), "Thanks, {me}".into(), lee.name.clone())]
    );
    // Another lead's change is theirs, named by the database.
    assert_eq!(
        as_person(
            &lou,
            "",
            "UPDATE desk.saved_replies SET reply = '{\"text\": \"Thank you, {me}\"}'"
        )
        .await,
        Ok(1)
    );
    assert_eq!(
        rows(ana).await,
        [("thanks".into(), "Thank you, {me}".into(), lou.name.clone())]
    );
    assert_eq!(
        as_person(lee, "", "DELETE FROM desk.saved_replies").await,
        Ok(1)
    );
    assert_eq!(rows(ana).await, []);
}

/// `support-desk ARGS… --data-dir DATA [--store URL]` as `person`.
fn run(data: &Path, store: Option<&Person>, args: &[&str]) -> Output {
    let mut command = std::process::Command::new(BIN);
    command
        .args(args)
        .arg("--data-dir")
        .arg(data)
        .env("SUPPORT_DESK_STAFF", "tester");
    if let Some(person) = store {
        command.args(["--store", &person.url]);
    }
    command.output().expect("support-desk runs")
}

fn ok(out: Output) -> String {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8")
}

fn refused(out: Output) -> String {
    assert!(!out.status.success(), "it was taken");
    String::from_utf8(out.stderr).expect("utf-8")
}

#[tokio::test]
async fn a_leads_saved_reply_reaches_a_staff_desk_and_staff_cannot_change_it() {
    let Some(pg) = pg_cluster::start().await else {
        return;
    };
    let team = pg.team().await;
    let (ana, lee) = (&team.ana, &team.lee);
    let dir = tempfile::tempdir().expect("temp dir");
    let (ana_data, lee_data) = (dir.path().join("ana"), dir.path().join("lee"));
    std::fs::create_dir_all(&ana_data).expect("ana's data dir");
    // ana's own file has a reply by the same name: the team's wins.
    std::fs::write(
        ana_data.join("replies.toml"),
        "[replies.received]\ntext = \"ana's own\"\n[replies.mine]\ntext = \"Hi\"\n",
    )
    .expect("ana's replies");
    let file = dir.path().join("received.toml");
    std::fs::write(
        &file,
        "text = \"Hello {customer.id}, we have {ticket.id} and {me} is on it.\"\ntags = [\"received\"]\n",
    )
    .expect("the reply's file");
    let file = file.to_str().expect("utf-8 path");

    let said = ok(run(
        &lee_data,
        Some(lee),
        &["replies", "set", "received", "--file", file],
    ));
    assert!(said.contains("saved reply received is set"), "{said}");

    let listed: Value =
        serde_json::from_str(&ok(run(&ana_data, Some(ana), &["replies", "--json"]))).expect("JSON");
    assert_eq!(
        listed,
        json!({"replies": [
            {"name": "mine", "from": "data_dir", "changed_by": null, "text": "Hi", "tags": [],
             "assign": null, "note": null, "state": null},
            {"name": "received", "from": "team", "changed_by": lee.name,
             "text": "Hello {customer.id}, we have {ticket.id} and {me} is on it.",
             "tags": ["received"], "assign": null, "note": null, "state": null},
        ]})
    );

    let listed = ok(run(&ana_data, Some(ana), &["replies"]));
    assert_eq!(
        listed,
        format!(
            "mine (data dir)\n  Hi\nreceived (team, set by {})  #received\n  Hello {{customer.id}}, we have {{ticket.id}} and {{me}} is on it.\n",
            lee.name
        )
    );

    let not_a_lead = format!(
        "{} is not a lead: only a lead changes the team's saved replies; ask a lead",
        ana.name
    );
    for args in [
        &["replies", "set", "received", "--file", file][..],
        &["replies", "set", "another", "--file", file],
        &["replies", "remove", "received"],
    ] {
        let said = refused(run(&ana_data, Some(ana), args));
        assert!(said.contains(&not_a_lead), "{args:?}: {said}");
    }
    let bad = dir.path().join("bad.toml");
    std::fs::write(&bad, "text = \"Hello {customer.nmae}\"\n").expect("written");
    let said = refused(run(
        &lee_data,
        Some(lee),
        &[
            "replies",
            "set",
            "bad",
            "--file",
            bad.to_str().expect("utf-8"),
        ],
    ));
    assert!(
        said.contains("[replies.bad]: {customer.nmae} is no variable the desk fills"),
        "{said}"
    );
    let said = refused(run(&lee_data, Some(lee), &["replies", "remove", "nothing"]));
    assert!(
        said.contains("the team has no saved reply nothing"),
        "{said}"
    );
    // One person's desk keeps its own in a file.
    let said = refused(run(
        &ana_data,
        None,
        &["replies", "set", "received", "--file", file],
    ));
    assert!(
        said.contains(&format!(
            "edit {} instead",
            ana_data.join("replies.toml").display()
        )),
        "{said}"
    );

    let mut desk = crate::desk_pty::Desk::start_in(&ana_data, &["--store", &ana.url]);
    desk.screen.wait_for("Queue (all) 48/48").await;
    desk.press(b"jjj");
    desk.screen.wait_for("T-0004 · C-0173").await;
    desk.press(b":reply received\r");
    desk.screen
        .wait_for(&format!(
            "Hello C-0173, we have T-0004 and {} is on it.",
            ana.name
        ))
        .await;
    desk.press(b"\x1b"); // Esc keeps the edit
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    desk.quit().await;
}
