//! A working day on a real mailbox: Dovecot (IMAP) and an SMTP server that keeps what it
//! receives, both throwaway on 127.0.0.1, and the real desk under a pseudo-terminal. A
//! customer's mail appears on the open desk, is worked and answered by mail in its thread;
//! the customer's answer opens the same ticket again with the whole conversation; a person
//! solves it. A desk killed while the mail server has not answered sends that reply again
//! after a restart, with the same Message-ID, once.

use std::path::Path;
use std::time::Duration;

use serde_json::Value;

use crate::desk_pty::Desk;
use crate::mail_servers::{Dovecot, Smtpd};
use crate::mock_model::{MockModel, scripted, words};
use crate::support::BIN;

const PASSWORD_ENV: &str = "DESK_TEST_MAIL_PASSWORD";

const FIRST_REPLY: &str = "Dear Jonas, thank you for writing to us about your parcel. I am sorry it has not reached you yet; a colleague from our warehouse team is looking into it.";
const SECOND_REPLY: &str = "Dear Jonas, thank you for your patience and for the photo of the label. Our warehouse team has your message and is checking the parcel's route for you.";

/// A config whose queue is the mailbox alone: IMAP in, SMTP out, both plain on loopback.
fn mail_config(dir: &Path, imap: &Dovecot, smtp_port: u16) -> String {
    std::fs::write(dir.join("tickets.json"), "[]").expect("tickets");
    let config = format!(
        "[tickets]\nsource = \"{tickets}\"\n\n\
         [mail]\naddress = \"support@fernbrook.example\"\nname = \"Fernbrook Support\"\ncustomers = \"bundled\"\n\n\
         [mail.imap]\nhost = \"127.0.0.1\"\nport = {imap_port}\ntls = \"none\"\nuser = \"{user}\"\npassword_env = \"{PASSWORD_ENV}\"\nsent_folder = \"Sent\"\n\n\
         [mail.smtp]\nhost = \"127.0.0.1\"\nport = {smtp_port}\ntls = \"none\"\n",
        tickets = dir.join("tickets.json").display(),
        imap_port = imap.port(),
        user = imap.user(),
    );
    let path = dir.join("desk.toml");
    std::fs::write(&path, config).expect("config");
    path.display().to_string()
}

fn customer_mail(id: &str, subject: &str, body: &str, answers: &[&str]) -> Vec<u8> {
    let mut headers = String::new();
    if let Some(last) = answers.last() {
        headers.push_str(&format!("In-Reply-To: <{last}>\r\n"));
        let references: Vec<String> = answers.iter().map(|a| format!("<{a}>")).collect();
        headers.push_str(&format!("References: {}\r\n", references.join(" ")));
    }
    format!(
        "From: Jonas Brandt <jonas.brandt@example.com>\r\nTo: support@fernbrook.example\r\nSubject: {subject}\r\nMessage-ID: <{id}>\r\nDate: Sat, 05 Dec 2026 09:14:00 +0100\r\n{headers}Content-Type: text/plain; charset=utf-8\r\n\r\n{body}\r\n"
    )
    .into_bytes()
}

/// A header's value in a message as the SMTP server kept it (unfolded).
fn header(raw: &[u8], name: &str) -> String {
    let text = String::from_utf8_lossy(raw)
        .replace("\r\n", "\n")
        .replace("\n ", " ")
        .replace("\n\t", " ");
    let prefix = format!("{}:", name.to_lowercase());
    text.lines()
        .take_while(|l| !l.is_empty())
        .find(|l| l.to_lowercase().starts_with(&prefix))
        .map(|l| l[prefix.len()..].trim().to_owned())
        .unwrap_or_default()
}

fn queue(config: &str, data: &Path) -> Vec<Value> {
    let out = std::process::Command::new(BIN)
        .args(["queue", "--json", "--config", config, "--data-dir"])
        .arg(data)
        .env(PASSWORD_ENV, "unused")
        .output()
        .expect("queue");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: Value = serde_json::from_slice(&out.stdout).expect("json");
    json["tickets"].as_array().cloned().unwrap_or_default()
}

/// Works the selected ticket and sends the model's draft as it is.
async fn work_and_send(desk: &mut Desk) {
    desk.press(b"w");
    desk.screen.wait_for("M-00001 drafted").await;
    desk.press(b"e");
    desk.screen.wait_for("Ctrl-S").await;
    desk.press(b"\x13");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_customers_mail_is_answered_in_its_thread_and_their_answer_opens_the_same_ticket() {
    let Some(imap) = Dovecot::start_with(&["Sent"]).await else {
        return;
    };
    let Some(smtp) = Smtpd::start().await else {
        return;
    };
    let model = MockModel::start(scripted(vec![words(FIRST_REPLY), words(SECOND_REPLY)])).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let config = mail_config(dir.path(), &imap, smtp.port());
    let data = dir.path().join("data");
    let mut desk = Desk::start_with_env(
        &data,
        &[
            "--config",
            &config,
            "--model",
            &format!("openai:{}", model.url),
        ],
        &[(PASSWORD_ENV, imap.password())],
    );
    desk.screen.wait_for("Queue (all) 0/0").await;

    // Mail comes in while the desk is open and idle.
    imap.deliver(&customer_mail(
        "c1@example.com",
        "Where is my parcel?",
        "Order 1234 has not arrived.",
        &[],
    ))
    .await;
    let arrived = desk.screen.wait_for("M-00001").await;
    assert!(
        arrived.contains("C-0104"),
        "a known sender is the shop's customer: {arrived}"
    );
    work_and_send(&mut desk).await;
    let sent = smtp.wait_for(1, Duration::from_secs(30)).await;
    let first = &sent[0];
    assert!(header(first, "From").contains("support@fernbrook.example"));
    assert!(header(first, "To").contains("jonas.brandt@example.com"));
    assert_eq!(header(first, "Subject"), "Re: Where is my parcel?");
    assert_eq!(header(first, "In-Reply-To"), "<c1@example.com>");
    assert_eq!(header(first, "References"), "<c1@example.com>");
    let ours = header(first, "Message-ID");
    let ours = ours.trim_matches(['<', '>']).to_owned();
    assert!(ours.ends_with("@fernbrook.example"), "{ours}");
    desk.screen.wait_for("pending").await;

    // The customer answers in the thread: the same ticket opens again.
    imap.deliver(&customer_mail(
        "c2@example.com",
        "Re: Where is my parcel?",
        "Still nothing. Here is the label.",
        &["c1@example.com", &ours],
    ))
    .await;
    desk.screen.wait_for("M-00001 new").await;
    work_and_send(&mut desk).await;
    let sent = smtp.wait_for(2, Duration::from_secs(30)).await;
    assert_eq!(header(&sent[1], "In-Reply-To"), "<c2@example.com>");
    assert_eq!(
        header(&sent[1], "References"),
        format!("<c1@example.com> <{ours}> <c2@example.com>")
    );
    let requests = model.requests();
    let second_run = requests.last().expect("a second run").to_string();
    assert!(
        second_run.contains("The customer wrote again") && second_run.contains("Still nothing"),
        "the second run reads the whole thread: {second_run}"
    );

    desk.press(b"d");
    desk.screen.wait_for("Solve this conversation").await;
    desk.press(b"\x13");
    desk.screen.wait_for("solved").await;
    desk.quit().await;

    // A copy of each reply is filed in the Sent folder.
    let mut sent_folder = support_desk::mail::imap::Imap::connect(&imap.account("Sent"))
        .await
        .expect("the Sent folder");
    let copies = sent_folder.fetch_after(0, 10).await.expect("fetch");
    assert_eq!(copies.len(), 2);
    assert_eq!(
        header(&copies[1].raw, "Message-ID"),
        header(&sent[1], "Message-ID")
    );

    let tickets = queue_until(&config, &data, |t| t["conversation"] == "solved").await;
    assert_eq!(tickets.len(), 1, "{tickets:#?}");
    let ticket = &tickets[0];
    assert_eq!(ticket["id"], "M-00001");
    assert_eq!(ticket["conversation"], "solved");
    assert!(
        ticket["delivery"]
            .as_str()
            .is_some_and(|d| d.starts_with("delivered")),
        "{ticket}"
    );
    assert_eq!(
        ticket["messages"].as_array().map(Vec::len),
        Some(4),
        "{ticket}"
    );
}

/// The queue once its first ticket satisfies `ready` (the record's tables follow the
/// desk's journal a moment later).
async fn queue_until(config: &str, data: &Path, ready: impl Fn(&Value) -> bool) -> Vec<Value> {
    let started = std::time::Instant::now();
    loop {
        let tickets = queue(config, data);
        if tickets.first().is_some_and(&ready) {
            return tickets;
        }
        assert!(started.elapsed() < Duration::from_secs(15), "{tickets:#?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn accept_within(listener: &std::net::TcpListener, limit: Duration) -> std::net::TcpStream {
    listener.set_nonblocking(true).expect("nonblocking");
    let started = std::time::Instant::now();
    loop {
        match listener.accept() {
            Ok((stream, _)) => return stream,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                assert!(
                    started.elapsed() < limit,
                    "the desk never reached the mail server"
                );
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            Err(e) => panic!("accept: {e}"),
        }
    }
}

/// Accepts SMTP connections and never answers: a mail server the desk waits on.
fn silent_server() -> (std::net::TcpListener, u16) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    (listener, port)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_desk_killed_before_the_mail_server_answers_sends_the_same_reply_once_after_a_restart() {
    let Some(imap) = Dovecot::start_with(&["Sent"]).await else {
        return;
    };
    let Some(smtp) = Smtpd::start().await else {
        return;
    };
    let model = MockModel::start(scripted(vec![words(FIRST_REPLY)])).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let data = dir.path().join("data");
    let (silent, silent_port) = silent_server();
    let config = mail_config(dir.path(), &imap, silent_port);
    imap.deliver(&customer_mail(
        "k1@example.com",
        "Where is my parcel?",
        "Order 1234 has not arrived.",
        &[],
    ))
    .await;
    let mut desk = Desk::start_with_env(
        &data,
        &[
            "--config",
            &config,
            "--model",
            &format!("openai:{}", model.url),
        ],
        &[(PASSWORD_ENV, imap.password())],
    );
    desk.screen.wait_for("M-00001").await;
    work_and_send(&mut desk).await;
    // The desk has connected and waits for the server's greeting: the reply is queued.
    let _held = accept_within(&silent, Duration::from_secs(30)).await;
    let queued = queue_until(&config, &data, |t| {
        t["delivery"]
            .as_str()
            .is_some_and(|d| d.starts_with("queued"))
    })
    .await;
    let message_id = queued[0]["messages"][1]
        .as_str()
        .expect("our reply's id")
        .to_owned();
    desk.kill().await;

    // Back up on a mail server that answers.
    let config = mail_config(dir.path(), &imap, smtp.port());
    let desk = Desk::start_with_env(
        &data,
        &[
            "--config",
            &config,
            "--model",
            &format!("openai:{}", model.url),
        ],
        &[(PASSWORD_ENV, imap.password())],
    );
    let sent = smtp.wait_for(1, Duration::from_secs(30)).await;
    assert_eq!(header(&sent[0], "Message-ID"), format!("<{message_id}>"));
    desk.screen.wait_for("M-00001").await;
    desk.quit().await;
    // Opened again, the desk has nothing left to send.
    let desk = Desk::start_with_env(
        &data,
        &[
            "--config",
            &config,
            "--model",
            &format!("openai:{}", model.url),
        ],
        &[(PASSWORD_ENV, imap.password())],
    );
    desk.screen.wait_for("M-00001").await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    desk.quit().await;
    assert_eq!(smtp.received().len(), 1, "the reply went once");
    queue_until(&config, &data, |t| {
        t["delivery"]
            .as_str()
            .is_some_and(|d| d.starts_with("delivered"))
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_desk_whose_mailbox_refuses_its_password_does_not_open_and_says_why() {
    let Some(imap) = Dovecot::start_with(&["Sent"]).await else {
        return;
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let config = mail_config(dir.path(), &imap, 25);
    let desk = Desk::start_with_env(
        &dir.path().join("data"),
        &["--config", &config],
        &[(PASSWORD_ENV, "not-the-password")],
    );
    let screen = desk.screen.wait_for("refused the login").await;
    assert!(screen.contains("password_env"), "{screen}");
    assert!(!desk.ended().await.success());
}
