//! The desk's mail wire against real servers on 127.0.0.1: a Dovecot read over IMAP (new
//! messages by UID, unseen left unseen, IDLE, TLS with a private CA) and an aiosmtpd that a
//! reply is submitted to. Refusals come back in words. Skips without the servers (see
//! `mail_servers`).

use std::time::{Duration, Instant, SystemTime};

use support_desk::mail::imap::{Fetched, Imap, ImapAccount};
use support_desk::mail::message::Address;
use support_desk::mail::smtp::{Outgoing, SmtpAccount, make_message_id, submit};
use support_desk::mail::{MailError, MailTls};

use crate::mail_servers::{Dovecot, Smtpd, free_port};

/// A generous bound for "soon": these tests share two cores with other builds.
const SOON: Duration = Duration::from_secs(10);

fn mail(subject: &str) -> Vec<u8> {
    format!(
        "From: Ann <ann@example.com>\r\nTo: support@shop.example\r\nSubject: {subject}\r\n\
         Message-ID: <{subject}@example.com>\r\n\r\nAbout {subject}.\r\n"
    )
    .into_bytes()
}

fn subjects(fetched: &[Fetched]) -> Vec<String> {
    fetched
        .iter()
        .map(|message| {
            let text = String::from_utf8_lossy(&message.raw);
            let line = text
                .lines()
                .find(|line| line.starts_with("Subject: "))
                .expect("a subject");
            line["Subject: ".len()..].to_owned()
        })
        .collect()
}

fn uids(fetched: &[Fetched]) -> Vec<u32> {
    fetched.iter().map(|message| message.uid).collect()
}

async fn connect(account: &ImapAccount) -> Imap {
    Imap::connect(account).await.expect("connect")
}

#[tokio::test]
async fn imap_logs_in_selects_the_folder_and_reports_its_uidvalidity() {
    let Some(dovecot) = Dovecot::start().await else {
        return;
    };
    let mut imap = connect(&dovecot.account("INBOX")).await;
    assert_ne!(imap.uid_validity(), 0);
    assert_eq!(imap.fetch_after(0, 10).await.expect("fetch"), []);
    imap.logout().await;
}

#[tokio::test]
async fn new_messages_come_oldest_first_by_uid_and_stay_unseen() {
    let Some(dovecot) = Dovecot::start().await else {
        return;
    };
    for subject in ["first", "second", "third"] {
        dovecot.deliver(&mail(subject)).await;
    }
    let mut imap = connect(&dovecot.account("INBOX")).await;
    let all = imap.fetch_after(0, 10).await.expect("fetch");
    assert_eq!(subjects(&all), ["first", "second", "third"]);
    assert!(uids(&all).is_sorted_by(|a, b| a < b), "{:?}", uids(&all));
    assert_eq!(all[0].raw, mail("first"));

    let [first, _, last] = uids(&all)[..] else {
        panic!("three UIDs");
    };
    // `UID FETCH last+1:*` would name the last message again: nothing is new.
    assert_eq!(imap.fetch_after(last, 10).await.expect("fetch"), []);
    assert_eq!(
        subjects(&imap.fetch_after(first, 10).await.expect("fetch")),
        ["second", "third"]
    );
    assert_eq!(
        subjects(&imap.fetch_after(0, 2).await.expect("fetch")),
        ["first", "second"]
    );
    assert_eq!(
        dovecot.seen("INBOX").await,
        0,
        "fetching marks nothing seen"
    );

    dovecot.deliver(&mail("fourth")).await;
    let newer = imap.fetch_after(last, 10).await.expect("fetch");
    assert_eq!(subjects(&newer), ["fourth"]);
    assert!(newer[0].uid > last);
    imap.logout().await;
}

#[tokio::test]
async fn wait_returns_soon_after_another_connection_appends() {
    let Some(dovecot) = Dovecot::start().await else {
        return;
    };
    let mut imap = connect(&dovecot.account("INBOX")).await;
    assert_eq!(imap.fetch_after(0, 10).await.expect("fetch"), []);
    let started = Instant::now();
    let (waited, ()) = tokio::join!(imap.wait(Duration::from_secs(120)), async {
        tokio::time::sleep(Duration::from_millis(500)).await;
        dovecot.deliver(&mail("during-idle")).await;
    });
    waited.expect("wait");
    assert!(
        started.elapsed() < SOON,
        "IDLE woke after {:?}",
        started.elapsed()
    );
    assert_eq!(
        subjects(&imap.fetch_after(0, 10).await.expect("fetch")),
        ["during-idle"]
    );
    imap.logout().await;
}

#[tokio::test]
async fn wait_returns_after_its_longest_when_nothing_arrives() {
    let Some(dovecot) = Dovecot::start().await else {
        return;
    };
    let mut imap = connect(&dovecot.account("INBOX")).await;
    let started = Instant::now();
    imap.wait(Duration::from_millis(1500)).await.expect("wait");
    let waited = started.elapsed();
    assert!(
        waited >= Duration::from_millis(1400) && waited < SOON,
        "{waited:?}"
    );
    // The connection is still good after IDLE ended.
    dovecot.deliver(&mail("after-idle")).await;
    assert_eq!(
        subjects(&imap.fetch_after(0, 10).await.expect("fetch")),
        ["after-idle"]
    );
    imap.logout().await;
}

#[tokio::test]
async fn without_idle_wait_polls_within_its_longest() {
    let Some(dovecot) = Dovecot::start_without_idle().await else {
        return;
    };
    let mut imap = connect(&dovecot.account("INBOX")).await;
    dovecot.deliver(&mail("polled")).await;
    let started = Instant::now();
    imap.wait(Duration::from_millis(1500)).await.expect("wait");
    // IDLE would have told of the message at once; a poll sleeps first, bounded by longest.
    let waited = started.elapsed();
    assert!(
        waited >= Duration::from_millis(1400) && waited < SOON,
        "{waited:?}"
    );
    assert_eq!(
        subjects(&imap.fetch_after(0, 10).await.expect("fetch")),
        ["polled"]
    );
    imap.logout().await;
}

#[tokio::test]
async fn a_wrong_password_is_refused_in_words() {
    let Some(dovecot) = Dovecot::start().await else {
        return;
    };
    let account = ImapAccount {
        password: format!("{}-not", dovecot.password()),
        ..dovecot.account("INBOX")
    };
    let error = Imap::connect(&account).await.expect_err("refused");
    assert!(matches!(error, MailError::LoginRefused { .. }), "{error:?}");
    assert!(!error.is_transient());
    let words = error.to_string();
    let expected = format!(
        "the IMAP server 127.0.0.1:{} refused the login for {}",
        dovecot.port(),
        dovecot.user()
    );
    assert!(words.starts_with(&expected), "{words}");
    assert!(words.contains("check the user and the password"), "{words}");
}

#[tokio::test]
async fn a_missing_folder_is_named_in_words() {
    let Some(dovecot) = Dovecot::start().await else {
        return;
    };
    let error = Imap::connect(&dovecot.account("INBOX2"))
        .await
        .expect_err("refused");
    assert!(!error.is_transient());
    assert_eq!(
        error.to_string(),
        "the folder INBOX2 does not exist on 127.0.0.1: check the folder names under \
         [mail.imap] (the desk creates no folder)"
    );
    let mut imap = connect(&dovecot.account("INBOX")).await;
    let error = imap
        .append("Sent", &mail("copy"))
        .await
        .expect_err("refused");
    assert!(matches!(&error, MailError::NoFolder { folder, .. } if folder == "Sent"));
    // The refusal left the connection usable.
    assert_eq!(imap.fetch_after(0, 10).await.expect("fetch"), []);
    imap.logout().await;
}

#[tokio::test]
async fn append_keeps_a_copy_in_an_existing_folder() {
    let Some(dovecot) = Dovecot::start_with(&["Sent"]).await else {
        return;
    };
    let mut imap = connect(&dovecot.account("INBOX")).await;
    imap.append("Sent", &mail("our-reply"))
        .await
        .expect("append");
    imap.logout().await;
    let mut sent = connect(&dovecot.account("Sent")).await;
    assert_eq!(
        subjects(&sent.fetch_after(0, 10).await.expect("fetch")),
        ["our-reply"]
    );
    sent.logout().await;
}

#[tokio::test]
async fn uidvalidity_changes_when_the_folder_is_made_again() {
    let Some(dovecot) = Dovecot::start_with(&["Tickets"]).await else {
        return;
    };
    let before = connect(&dovecot.account("Tickets")).await;
    let validity = before.uid_validity();
    before.logout().await;
    dovecot.recreate_folder("Tickets").await;
    let after = connect(&dovecot.account("Tickets")).await;
    // Every UID kept for the old folder is void now: reading again is the caller's concern.
    assert_ne!(after.uid_validity(), validity);
    after.logout().await;
}

#[tokio::test]
async fn implicit_tls_with_the_ca_file_works_and_without_it_is_refused_in_words() {
    let Some(dovecot) = Dovecot::start_tls().await else {
        return;
    };
    dovecot.deliver(&mail("over-tls")).await;
    let mut imap = connect(&dovecot.account("INBOX")).await;
    assert_eq!(
        subjects(&imap.fetch_after(0, 10).await.expect("fetch")),
        ["over-tls"]
    );
    imap.logout().await;

    let untrusting = ImapAccount {
        ca_file: None,
        ..dovecot.account("INBOX")
    };
    let error = Imap::connect(&untrusting).await.expect_err("refused");
    assert!(matches!(error, MailError::Tls { .. }), "{error:?}");
    assert!(!error.is_transient());
    let words = error.to_string();
    let expected = format!(
        "the TLS connection to 127.0.0.1:{} failed: its certificate",
        dovecot.tls_port()
    );
    assert!(words.starts_with(&expected), "{words}");
    assert!(words.contains("ca_file"), "{words}");
}

#[tokio::test]
async fn starttls_upgrades_the_plain_port_before_the_login() {
    let Some(dovecot) = Dovecot::start_tls().await else {
        return;
    };
    let account = ImapAccount {
        port: dovecot.port(),
        tls: MailTls::StartTls,
        ca_file: Some(dovecot.ca_file()),
        ..dovecot.account("INBOX")
    };
    let mut imap = connect(&account).await;
    assert_eq!(imap.fetch_after(0, 10).await.expect("fetch"), []);
    imap.logout().await;

    // Implicit TLS at the plain port: the server greets in plain text.
    let error = Imap::connect(&ImapAccount {
        tls: MailTls::Implicit,
        ..account
    })
    .await
    .expect_err("refused");
    assert!(
        error.to_string().contains("did not answer in TLS"),
        "{error}"
    );
}

#[tokio::test]
async fn a_closed_imap_port_is_a_transient_error_in_words() {
    let port = free_port();
    let account = ImapAccount {
        host: "127.0.0.1".into(),
        port,
        tls: MailTls::None,
        user: "support".into(),
        password: "x".into(),
        folder: "INBOX".into(),
        ca_file: None,
    };
    let error = Imap::connect(&account).await.expect_err("refused");
    assert!(error.is_transient());
    assert_eq!(
        error.to_string(),
        format!("cannot reach 127.0.0.1:{port} (connection refused): check host and port")
    );
}

fn reply(subject: &str) -> Outgoing {
    Outgoing {
        from: Address {
            address: "support@shop.example".into(),
            name: Some("Shop Support".into()),
        },
        to: Address {
            address: "ann@example.com".into(),
            name: Some("Ann".into()),
        },
        subject: subject.into(),
        message_id: make_message_id("shop.example"),
        in_reply_to: Some("question-2@example.com".into()),
        references: vec!["question-1@example.com".into()],
        text: "Your refund is on its way.\n".into(),
        date: SystemTime::now(),
    }
}

/// A received message's headers, unfolded, one per entry.
fn headers(raw: &[u8]) -> Vec<String> {
    let text = String::from_utf8_lossy(raw).replace("\r\n", "\n");
    let head = text.split("\n\n").next().unwrap_or_default();
    let mut headers: Vec<String> = Vec::new();
    for line in head.lines() {
        match (line.starts_with([' ', '\t']), headers.last_mut()) {
            (true, Some(last)) => last.push_str(line),
            _ => headers.push(line.to_owned()),
        }
    }
    headers
}

fn header<'a>(headers: &'a [String], name: &str) -> Vec<&'a str> {
    headers
        .iter()
        .filter_map(|h| h.split_once(": "))
        .filter(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, value)| value)
        .collect()
}

#[tokio::test]
async fn a_reply_reaches_the_smtp_server_with_its_threading_headers() {
    let Some(smtpd) = Smtpd::start().await else {
        return;
    };
    let outgoing = reply("Where is my order?");
    let words = submit(&smtpd.account(), &outgoing).await.expect("submit");
    assert!(words.starts_with("250"), "{words}");
    let received = smtpd.wait_for(1, SOON).await;
    let headers = headers(&received[0]);
    assert_eq!(
        header(&headers, "From"),
        ["\"Shop Support\" <support@shop.example>"]
    );
    assert_eq!(header(&headers, "To"), ["Ann <ann@example.com>"]);
    assert_eq!(header(&headers, "Subject"), ["Re: Where is my order?"]);
    let id = format!("<{}>", outgoing.message_id);
    assert_eq!(header(&headers, "Message-ID"), [id.as_str()]);
    assert_eq!(
        header(&headers, "In-Reply-To"),
        ["<question-2@example.com>"]
    );
    assert_eq!(
        header(&headers, "References"),
        ["<question-1@example.com> <question-2@example.com>"]
    );
    assert_eq!(header(&headers, "X-RcptTo"), ["ann@example.com"]);
}

#[tokio::test]
async fn a_subject_with_cr_lf_arrives_as_one_header() {
    let Some(smtpd) = Smtpd::start().await else {
        return;
    };
    let mut outgoing = reply("Refund\r\nBcc: everyone@example.com");
    outgoing.to.name = Some("Ann\r\nX-Injected: yes".into());
    submit(&smtpd.account(), &outgoing).await.expect("submit");
    let received = smtpd.wait_for(1, SOON).await;
    let headers = headers(&received[0]);
    assert_eq!(header(&headers, "Subject").len(), 1, "{headers:?}");
    assert!(header(&headers, "Bcc").is_empty(), "{headers:?}");
    assert!(header(&headers, "X-Injected").is_empty(), "{headers:?}");
    assert_eq!(header(&headers, "X-RcptTo"), ["ann@example.com"]);
}

#[tokio::test]
async fn a_message_the_server_refuses_for_good_is_not_transient() {
    let Some(smtpd) = Smtpd::start_limited(200).await else {
        return;
    };
    let mut outgoing = reply("A long answer");
    outgoing.text = "All the details. ".repeat(100);
    let error = submit(&smtpd.account(), &outgoing)
        .await
        .expect_err("refused");
    assert!(matches!(error, MailError::SmtpRejected { .. }), "{error:?}");
    assert!(!error.is_transient());
    assert!(
        error
            .to_string()
            .contains("refused the message for good (552"),
        "{error}"
    );
    assert_eq!(smtpd.received(), Vec::<Vec<u8>>::new());
}

#[tokio::test]
async fn submitting_over_implicit_tls_trusts_the_ca_file() {
    let Some(smtpd) = Smtpd::start_tls().await else {
        return;
    };
    submit(&smtpd.account(), &reply("Over TLS"))
        .await
        .expect("submit");
    let received = smtpd.wait_for(1, SOON).await;
    assert_eq!(header(&headers(&received[0]), "Subject"), ["Re: Over TLS"]);

    let untrusting = SmtpAccount {
        host: "127.0.0.1".into(),
        port: smtpd.port(),
        tls: MailTls::Implicit,
        user: None,
        password: None,
        ca_file: None,
    };
    let error = submit(&untrusting, &reply("Not sent"))
        .await
        .expect_err("refused");
    assert!(matches!(error, MailError::Tls { .. }), "{error:?}");
    assert!(error.to_string().contains("ca_file"), "{error}");
}

#[tokio::test]
async fn submitting_to_a_closed_port_is_a_transient_error_in_words() {
    let port = free_port();
    let account = SmtpAccount {
        host: "127.0.0.1".into(),
        port,
        tls: MailTls::None,
        user: None,
        password: None,
        ca_file: None,
    };
    let error = submit(&account, &reply("Nobody home"))
        .await
        .expect_err("refused");
    assert!(error.is_transient(), "{error:?}");
    assert_eq!(
        error.to_string(),
        format!("cannot reach 127.0.0.1:{port} (connection refused): check host and port")
    );
}
