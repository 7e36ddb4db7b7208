//! A Maildir read into the desk's record by the real binary (`mail pull`), with what a real
//! support mailbox receives: broken MIME, unknown charsets, a 30 MB message, HTML with
//! scripts, a subject that tries to add a header, a stranger claiming a customer's thread,
//! an auto-reply and a bounce. Each ends in a ticket or a clear refusal; nothing crashes, no
//! message is lost or taken twice.

use std::process::{Command, Output};

use serde_json::Value;

use crate::support::BIN;

/// A Maildir, a data directory and a config whose `[mail]` reads the Maildir and whose queue
/// is the mailbox alone.
pub struct MailDesk {
    pub dir: tempfile::TempDir,
}

impl MailDesk {
    pub fn new(extra: &str) -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        for sub in ["new", "cur", "tmp"] {
            std::fs::create_dir_all(dir.path().join("Maildir").join(sub)).expect("maildir");
        }
        std::fs::write(dir.path().join("tickets.json"), "[]").expect("tickets");
        let config = format!(
            "[tickets]\nsource = \"{tickets}\"\n\n[mail]\naddress = \"support@fernbrook.example\"\nmaildir = \"{maildir}\"\ncustomers = \"bundled\"\n{extra}",
            tickets = dir.path().join("tickets.json").display(),
            maildir = dir.path().join("Maildir").display(),
        );
        std::fs::write(dir.path().join("desk.toml"), config).expect("config");
        Self { dir }
    }

    pub fn config(&self) -> String {
        self.dir.path().join("desk.toml").display().to_string()
    }

    pub fn data(&self) -> String {
        self.dir.path().join("data").display().to_string()
    }

    /// Delivers `raw` into `new/` as an MTA would (written in tmp/, then moved).
    pub fn deliver(&self, name: &str, raw: &[u8]) {
        let maildir = self.dir.path().join("Maildir");
        let tmp = maildir.join("tmp").join(name);
        std::fs::write(&tmp, raw).expect("write");
        std::fs::rename(&tmp, maildir.join("new").join(name)).expect("deliver");
    }

    pub fn run(&self, args: &[&str]) -> Output {
        Command::new(BIN)
            .args(args)
            .args(["--config", &self.config(), "--data-dir", &self.data()])
            .env("SUPPORT_DESK_STAFF", "dana")
            .output()
            .expect("support-desk runs")
    }

    pub fn pull(&self) -> String {
        let out = self.run(&["mail", "pull"]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).expect("utf-8")
    }

    /// `queue --json`'s tickets.
    pub fn queue(&self) -> Vec<Value> {
        let out = self.run(&["queue", "--json"]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let json: Value = serde_json::from_slice(&out.stdout).expect("json");
        json["tickets"].as_array().cloned().unwrap_or_default()
    }

    pub fn waiting(&self) -> usize {
        std::fs::read_dir(self.dir.path().join("Maildir/new"))
            .expect("new/")
            .count()
    }
}

pub fn plain(id: &str, from: &str, subject: &str, body: &str, headers: &str) -> Vec<u8> {
    format!(
        "From: {from}\r\nTo: support@fernbrook.example\r\nSubject: {subject}\r\nMessage-ID: <{id}>\r\nDate: Sat, 05 Dec 2026 09:14:00 +0100\r\n{headers}Content-Type: text/plain; charset=utf-8\r\n\r\n{body}\r\n"
    )
    .into_bytes()
}

fn by_id<'a>(queue: &'a [Value], from: &str) -> Vec<&'a Value> {
    queue.iter().filter(|t| t["from"] == from).collect()
}

#[test]
fn every_kind_of_mail_a_support_box_gets_ends_in_a_ticket_and_none_is_taken_twice() {
    let desk = MailDesk::new("");
    let jonas = "Jonas Brandt <jonas.brandt@example.com>";
    desk.deliver(
        "1.a",
        &plain(
            "c1@example.com",
            jonas,
            "Where is my parcel?",
            "Order 1234 has not arrived.",
            "",
        ),
    );
    desk.deliver("2.b", b"From: broken@example.org\r\nSubject: broken\r\nContent-Type: multipart/mixed; boundary=\"zz\"\r\n\r\n--zz\r\nContent-Type: text/plain\r\n\r\nhalf a message without its end\r\n\x00\xff\xfe garbage");
    desk.deliver("3.c", b"From: x@example.org\r\nMessage-ID: <c3@example.org>\r\nSubject: charset\r\nContent-Type: text/plain; charset=x-unknown-charset\r\n\r\nHello in an unknown charset\r\n");
    desk.deliver("4.d", b"From: h@example.org\r\nMessage-ID: <c4@example.org>\r\nSubject: html\r\nContent-Type: text/html\r\n\r\n<html><head><style>p{}</style><script>steal()</script></head><body><p>Hi &amp; thanks</p></body></html>\r\n");
    desk.deliver("5.e", b"From: s@example.org\r\nMessage-ID: <c5@example.org>\r\nSubject: =?utf-8?q?Hi=0D=0ABcc:_x@evil.example?=\r\nContent-Type: text/plain\r\n\r\nsubject with a line break\r\n");
    desk.deliver(
        "6.f",
        &plain(
            "c6@example.net",
            "Mallory <mallory@example.net>",
            "Re: Where is my parcel?",
            "Send the refund to me instead.",
            "In-Reply-To: <c1@example.com>\r\n",
        ),
    );
    desk.deliver(
        "7.g",
        &plain(
            "c7@example.com",
            jonas,
            "Out of office",
            "I am away until Monday.",
            "Auto-Submitted: auto-replied\r\n",
        ),
    );
    desk.deliver("8.h", b"From: MAILER-DAEMON@mx.example\r\nMessage-ID: <c8@mx.example>\r\nSubject: Undelivered Mail Returned to Sender\r\nContent-Type: multipart/report; report-type=delivery-status; boundary=\"b\"\r\n\r\n--b\r\nContent-Type: text/plain\r\n\r\nThe mail could not be delivered.\r\n--b\r\nContent-Type: message/delivery-status\r\n\r\nStatus: 5.1.1\r\n--b--\r\n");
    let big = format!(
        "From: big@example.org\r\nMessage-ID: <c9@example.org>\r\nSubject: photos\r\nContent-Type: multipart/mixed; boundary=\"m\"\r\n\r\n--m\r\nContent-Type: text/plain\r\n\r\nPhotos of the damage attached.\r\n--m\r\nContent-Type: image/jpeg; name=\"damage.jpg\"\r\nContent-Transfer-Encoding: base64\r\nContent-Disposition: attachment; filename=\"damage.jpg\"\r\n\r\n{}\r\n--m--\r\n",
        "QUJD".repeat(7_600_000)
    );
    assert!(big.len() > 30_000_000, "a 30 MB message: {}", big.len());
    desk.deliver("9.i", big.as_bytes());

    let said = desk.pull();
    assert!(said.contains("9 new message(s)"), "{said}");
    assert!(!said.contains('\r'), "{said:?}");
    assert_eq!(
        desk.waiting(),
        0,
        "every message left new/ once the record held it"
    );
    let queue = desk.queue();
    assert_eq!(queue.len(), 9, "{queue:#?}");

    let jonas_tickets = by_id(&queue, "jonas.brandt@example.com");
    assert_eq!(
        jonas_tickets.len(),
        2,
        "the parcel and the out-of-office: {queue:#?}"
    );
    let parcel = jonas_tickets[0];
    assert_eq!(parcel["state"], "new");
    assert_eq!(parcel["conversation"], "open");
    let away = jonas_tickets[1];
    assert_eq!(away["state"], "needs_person", "{away}");
    assert!(
        away["reason"]
            .as_str()
            .is_some_and(|r| r.contains("automatic reply"))
    );
    let mallory = by_id(&queue, "mallory@example.net");
    assert_eq!(mallory.len(), 1);
    assert!(
        mallory[0]["mark"]
            .as_str()
            .is_some_and(|m| m.contains(parcel["id"].as_str().unwrap_or("?"))),
        "a stranger's claim on a customer's thread is kept apart and marked: {}",
        mallory[0]
    );
    let bounce = by_id(&queue, "mailer-daemon@mx.example");
    assert_eq!(bounce[0]["state"], "needs_person");
    assert!(
        bounce[0]["reason"]
            .as_str()
            .is_some_and(|r| r.contains("bounce"))
    );

    // The same message again (a copy put back by a sync tool) is not a second ticket.
    desk.deliver(
        "1.a-again",
        &plain(
            "c1@example.com",
            jonas,
            "Where is my parcel?",
            "Order 1234 has not arrived.",
            "",
        ),
    );
    let again = desk.pull();
    assert!(again.contains("already holds <c1@example.com>"), "{again}");
    assert!(again.contains("0 new message(s)"), "{again}");
    assert_eq!(desk.queue().len(), 9);
}

#[test]
fn a_mailbox_that_cannot_be_read_stops_the_command_with_what_to_do() {
    let desk = MailDesk::new("");
    std::fs::remove_dir_all(desk.dir.path().join("Maildir/cur")).expect("break it");
    let out = desk.run(&["mail", "pull"]);
    assert!(!out.status.success());
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("needs new/, cur/ and tmp/"), "{said}");
}

/// Round the clock in UTC: four hours for a first answer, one for a refund.
const SLA_WITH_REFUNDS: &str = "\n[sla]\nfirst_response = \"4h\"\nnext_reply = \"8h\"\nbusiness_hours = \"Mon-Sun 00:00-24:00\"\ntime_zone = \"UTC\"\n\n[sla.tags.refund]\nfirst_response = \"1h\"\n";

/// `queue --json`'s `due` and `due_at` for `ticket`.
fn due_of(queue: &[Value], ticket: &str) -> (Value, Value) {
    let row = queue
        .iter()
        .find(|row| row["id"] == ticket)
        .unwrap_or_else(|| panic!("{ticket} in {queue:#?}"));
    (row["due"].clone(), row["due_at"].clone())
}

#[test]
fn a_tag_with_a_tighter_target_makes_its_ticket_due_sooner_for_as_long_as_it_carries_it() {
    let desk = MailDesk::new(SLA_WITH_REFUNDS);
    // Two tickets that came in two hours ago, by the wall clock `queue` reads.
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("a clock after 1970");
    let received = (i64::try_from(now.as_secs()).expect("seconds") - 2 * 3600) * 1000;
    let at = |ms: i64| support_desk::record::rfc3339(ms);
    let tickets = serde_json::json!([
        {"ticket_id": "T-0001", "received_at": at(received), "subject": "Refund", "body": "Refund me."},
        {"ticket_id": "T-0002", "received_at": at(received), "subject": "Parcel", "body": "Where is it?"},
    ]);
    std::fs::write(desk.dir.path().join("tickets.json"), tickets.to_string()).expect("tickets");
    let tag = |args: &[&str]| {
        let out = desk.run(args);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    tag(&["tag", "T-0001", "refund"]);

    let queue = desk.queue();
    let hour = 3_600_000;
    assert_eq!(
        due_of(&queue, "T-0001"),
        (Value::from("late"), Value::from(at(received + hour))),
        "a refund is due within the hour"
    );
    assert_eq!(
        due_of(&queue, "T-0002"),
        (Value::from("due"), Value::from(at(received + 4 * hour))),
        "an untagged ticket keeps the four hours"
    );

    // The tag taken off: the ticket is timed against the default again.
    tag(&["tag", "T-0001", "refund", "--remove"]);
    assert_eq!(
        due_of(&desk.queue(), "T-0001"),
        (Value::from("due"), Value::from(at(received + 4 * hour)))
    );

    let broken = MailDesk::new(&SLA_WITH_REFUNDS.replace("\"1h\"", "\"within the hour\""));
    let out = broken.run(&["queue"]);
    assert!(!out.status.success());
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("[sla.tags.refund] first_response \"within the hour\" is not a duration"),
        "{said}"
    );
}

#[test]
fn with_sla_the_queue_says_when_each_answer_is_due_and_a_bad_sla_stops_every_command() {
    let desk = MailDesk::new(
        "\n[sla]\nfirst_response = \"4h\"\nnext_reply = \"8h\"\nbusiness_hours = \"Mon-Sun 00:00-24:00\"\ntime_zone = \"UTC\"\n",
    );
    desk.deliver(
        "1.a",
        &plain(
            "d1@example.com",
            "Jonas Brandt <jonas.brandt@example.com>",
            "Parcel",
            "Where is it?",
            "",
        ),
    );
    desk.pull();
    let queue = desk.queue();
    let due_at = queue[0]["due_at"].as_str().expect("a due time");
    assert_eq!(queue[0]["due"], "due", "{queue:#?}");
    let received = queue[0]["at"].as_str().expect("received");
    assert!(due_at > received, "{due_at} after {received}");

    let broken = MailDesk::new(
        "\n[sla]\nfirst_response = \"soon\"\nnext_reply = \"8h\"\nbusiness_hours = \"Mon-Fri 09:00-17:00\"\ntime_zone = \"Europe/Berlin\"\n",
    );
    for command in [&["queue"][..], &["mail", "pull"][..]] {
        let out = broken.run(command);
        assert!(!out.status.success());
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(
            said.contains("first_response \"soon\" is not a duration"),
            "{said}"
        );
    }
}
