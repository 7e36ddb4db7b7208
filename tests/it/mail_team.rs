//! A team's mailbox on one PostgreSQL: two `mail serve` readers, one holding the mailbox's
//! lease; killed, the other takes over within the lease, and no message is missed or made
//! two tickets. Under each member's own login the database refuses mail from anyone but the
//! holder, a second ticket message of one Message-ID, and a second reply to one message.

use std::collections::BTreeSet;
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::json;
use support_desk::record::Event;
use support_desk::record::postgres::PgRecord;

use crate::mail_servers::Dovecot;
use crate::pg_cluster::{self, Person};
use crate::support::BIN;

const PASSWORD_ENV: &str = "DESK_TEST_MAIL_PASSWORD";

fn config(dir: &std::path::Path, imap: &Dovecot) -> String {
    let text = format!(
        "[tickets]\nsource = \"none\"\n[mail]\naddress = \"support@fernbrook.example\"\ncustomers = \"bundled\"\n\
         [mail.imap]\nhost = \"127.0.0.1\"\nport = {}\ntls = \"none\"\nuser = \"{}\"\npassword_env = \"{PASSWORD_ENV}\"\n",
        imap.port(),
        imap.user()
    );
    let path = dir.join("desk.toml");
    std::fs::write(&path, text).expect("config");
    path.display().to_string()
}

fn serve(
    person: &Person,
    config: &str,
    data: &std::path::Path,
    imap: &Dovecot,
) -> tokio::process::Child {
    tokio::process::Command::new(BIN)
        .args([
            "mail",
            "serve",
            "--config",
            config,
            "--store",
            &person.url,
            "--data-dir",
        ])
        .arg(data)
        .env(PASSWORD_ENV, imap.password())
        .env("RUST_LOG", "warn")
        .stdout(log(data, "out"))
        .stderr(log(data, "err"))
        .kill_on_drop(true)
        .spawn()
        .expect("mail serve")
}

/// Where a reader's output goes, for the failure's message.
fn log(data: &std::path::Path, what: &str) -> Stdio {
    std::fs::create_dir_all(data).expect("data dir");
    Stdio::from(std::fs::File::create(data.join(format!("serve.{what}"))).expect("log file"))
}

fn said(data: &std::path::Path) -> String {
    ["out", "err"]
        .map(|what| std::fs::read_to_string(data.join(format!("serve.{what}"))).unwrap_or_default())
        .join("\n")
}

fn mail(n: usize) -> Vec<u8> {
    format!(
        "From: Customer {n} <c{n}@example.net>\r\nSubject: Order {n}\r\nMessage-ID: <team{n}@example.net>\r\nContent-Type: text/plain\r\n\r\nWhere is order {n}?\r\n"
    )
    .into_bytes()
}

/// The Message-ID of every message_received event, and their tickets.
async fn received(reader: &PgRecord) -> Vec<(String, String)> {
    reader
        .events_after(0)
        .await
        .expect("events")
        .into_iter()
        .filter_map(|stored| match stored.event {
            Event::MessageReceived {
                ticket, message, ..
            } => Some((message.message_id, ticket)),
            _ => None,
        })
        .collect()
}

async fn until_received(
    reader: &PgRecord,
    count: usize,
    limit: Duration,
    logs: &dyn Fn() -> String,
) -> Vec<(String, String)> {
    let started = Instant::now();
    loop {
        let got = received(reader).await;
        if got.len() >= count {
            return got;
        }
        assert!(
            started.elapsed() < limit,
            "{} of {count} arrived: {got:?}\nthe reader said:\n{}",
            got.len(),
            logs()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

async fn holder(admin: &tokio_postgres::Client) -> Option<String> {
    admin
        .query_opt(
            "SELECT holder FROM desk.mail_lease WHERE lease_until > now()",
            &[],
        )
        .await
        .expect("lease")
        .map(|row| row.get(0))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_mail_reader_is_replaced_within_the_lease_and_no_message_is_missed_or_doubled() {
    let Some(pg) = pg_cluster::start().await else {
        return;
    };
    let Some(imap) = Dovecot::start().await else {
        return;
    };
    let team = pg.team().await;
    let admin = pg.admin().await;
    let dir = tempfile::tempdir().expect("dir");
    let config = config(dir.path(), &imap);
    let mut ana = serve(&team.ana, &config, &dir.path().join("ana"), &imap);
    let started = Instant::now();
    while holder(&admin).await.is_none() {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "nobody took the mailbox"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let mut bo = serve(&team.bo, &config, &dir.path().join("bo"), &imap);
    let reader = PgRecord::connect(&team.lee.url, &[]).await.expect("lee");
    for n in 0..5 {
        imap.deliver(&mail(n)).await;
    }
    until_received(&reader, 5, Duration::from_secs(30), &|| {
        said(&dir.path().join("ana"))
    })
    .await;
    let first = holder(&admin).await.expect("a holder");
    assert_eq!(first, team.ana.name, "the first reader holds the mailbox");

    ana.start_kill().expect("kill ana's reader");
    ana.wait().await.expect("gone");
    for n in 5..10 {
        imap.deliver(&mail(n)).await;
    }
    let all = until_received(&reader, 10, Duration::from_secs(75), &|| {
        said(&dir.path().join("bo"))
    })
    .await;
    assert_eq!(holder(&admin).await.as_deref(), Some(team.bo.name.as_str()));
    let ids: BTreeSet<&String> = all.iter().map(|(id, _)| id).collect();
    let tickets: BTreeSet<&String> = all.iter().map(|(_, t)| t).collect();
    assert_eq!(
        (all.len(), ids.len(), tickets.len()),
        (10, 10, 10),
        "{all:?}"
    );

    // The database's own word, under each member's login: mail only from the holder...
    let ana_login = pg_cluster::connect(&team.ana.url).await;
    let message = json!({"message_id": "forged@example.net", "from": {"address": "x@example.net"},
        "subject": "s", "text": "t", "size": 1});
    let forged = json!({"event": "message_received", "ticket": "M-00099", "message": message,
        "mailbox": all_mailbox(&reader).await});
    let refused = ana_login
        .execute(
            "INSERT INTO desk.events (ticket, kind, body) VALUES ('M-00099', 'message_received', $1)",
            &[&forged],
        )
        .await
        .expect_err("not the holder");
    assert!(
        words(&refused).contains("row-level security"),
        "{}",
        words(&refused)
    );
    // ...one Message-ID once, even from the holder...
    let bo_login = pg_cluster::connect(&team.bo.url).await;
    let again = json!({"event": "message_received", "ticket": "M-00098",
        "message": {"message_id": "team3@example.net", "from": {"address": "c3@example.net"},
                    "subject": "s", "text": "t", "size": 1},
        "mailbox": all_mailbox(&reader).await});
    let twice = bo_login
        .execute(
            "INSERT INTO desk.events (ticket, kind, body) VALUES ('M-00098', 'message_received', $1)",
            &[&again],
        )
        .await
        .expect_err("one Message-ID is one message");
    assert!(
        words(&twice).contains("one_message_per_message_id"),
        "{}",
        words(&twice)
    );
    // ...and one reply per customer's message, answering the latest.
    let (_, ticket) = &all[0];
    bo_login
        .execute(
            "INSERT INTO desk.tickets (id) VALUES ($1) ON CONFLICT DO NOTHING",
            &[ticket],
        )
        .await
        .expect("ticket row");
    bo_login
        .execute(
            "UPDATE desk.tickets SET owner = current_user, lease_until = now() + interval '20 seconds' WHERE id = $1",
            &[ticket],
        )
        .await
        .expect("claim");
    let reply = |answers: &str| {
        json!({"event": "sent", "ticket": ticket, "by": team.bo.name, "text": "Hello",
               "override_reason": null, "message_id": format!("r-{answers}@fernbrook.example"),
               "answers": answers})
    };
    let send = "INSERT INTO desk.events (ticket, kind, body) VALUES ($1, 'sent', $2)";
    let wrong = bo_login
        .execute(send, &[ticket, &reply("team9@example.net")])
        .await
        .expect_err("another ticket's message");
    assert!(
        words(&wrong).contains("row-level security"),
        "{}",
        words(&wrong)
    );
    bo_login
        .execute(send, &[ticket, &reply(&all[0].0)])
        .await
        .expect("the reply");
    let second = bo_login
        .execute(send, &[ticket, &reply(&all[0].0)])
        .await
        .expect_err("one reply per message");
    assert!(
        words(&second).contains("one_reply_per_message"),
        "{}",
        words(&second)
    );
    bo.start_kill().expect("stop bo");
}

/// The mailbox name the readers record their mail under.
async fn all_mailbox(reader: &PgRecord) -> String {
    reader
        .events_after(0)
        .await
        .expect("events")
        .into_iter()
        .find_map(|stored| match stored.event {
            Event::MessageReceived { mailbox, .. } => Some(mailbox),
            _ => None,
        })
        .expect("a message")
}

/// The database's words for a refusal.
fn words(error: &tokio_postgres::Error) -> String {
    error
        .as_db_error()
        .map(|db| db.message().to_owned())
        .unwrap_or_else(|| error.to_string())
}
