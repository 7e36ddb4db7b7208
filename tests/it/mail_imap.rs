//! `support-desk mail pull` against a real Dovecot: it resumes by UID, takes a folder whose
//! UIDVALIDITY changed from the start without making a ticket twice, leaves the mail unread
//! on the server, and a wrong password or a missing folder is one sentence and a failed exit.

use std::process::{Command, Output};

use crate::mail_servers::Dovecot;
use crate::support::BIN;

const PASSWORD_ENV: &str = "DESK_TEST_MAIL_PASSWORD";

fn mail(id: &str) -> Vec<u8> {
    format!(
        "From: Aoife Gallagher <agallagher@example.org>\r\nSubject: Skillet {id}\r\nMessage-ID: <{id}@example.org>\r\nContent-Type: text/plain\r\n\r\nDoes the skillet come in 28 cm?\r\n"
    )
    .into_bytes()
}

struct Setup {
    dir: tempfile::TempDir,
}

impl Setup {
    fn new(imap: &Dovecot, folder: &str) -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let config = format!(
            "[tickets]\nsource = \"none\"\n[mail]\naddress = \"support@fernbrook.example\"\ncustomers = \"bundled\"\n\
             [mail.imap]\nhost = \"127.0.0.1\"\nport = {}\ntls = \"none\"\nuser = \"{}\"\npassword_env = \"{PASSWORD_ENV}\"\nfolder = \"{folder}\"\n",
            imap.port(),
            imap.user()
        );
        std::fs::write(dir.path().join("desk.toml"), config).expect("config");
        Self { dir }
    }

    fn run(&self, args: &[&str], password: &str) -> Output {
        Command::new(BIN)
            .args(args)
            .arg("--config")
            .arg(self.dir.path().join("desk.toml"))
            .arg("--data-dir")
            .arg(self.dir.path().join("data"))
            .env(PASSWORD_ENV, password)
            .output()
            .expect("support-desk runs")
    }

    fn pull(&self, password: &str) -> String {
        let out = self.run(&["mail", "pull"], password);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).expect("utf-8")
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pull_resumes_by_uid_and_a_new_uidvalidity_makes_no_ticket_twice() {
    let Some(imap) = Dovecot::start_with(&["Support"]).await else {
        return;
    };
    let setup = Setup::new(&imap, "Support");
    imap.deliver_to("Support", &mail("a")).await;
    imap.deliver_to("Support", &mail("b")).await;
    let first = setup.pull(imap.password());
    assert!(
        first.contains("M-00001 opened") && first.contains("M-00002 opened"),
        "{first}"
    );
    assert!(
        first.contains("C-0112") || first.contains("Aoife Gallagher"),
        "{first}"
    );
    assert_eq!(
        imap.seen("Support").await,
        0,
        "the desk reads with PEEK: nothing marked seen"
    );
    let again = setup.pull(imap.password());
    assert!(
        again.contains("0 new message(s)") && !again.contains("already holds"),
        "resumed after the last UID: {again}"
    );

    // Another client deletes and makes the folder again, and puts the same mail back.
    imap.recreate_folder("Support").await;
    imap.deliver_to("Support", &mail("a")).await;
    imap.deliver_to("Support", &mail("b")).await;
    imap.deliver_to("Support", &mail("c")).await;
    let after = setup.pull(imap.password());
    assert!(after.contains("already holds <a@example.org>"), "{after}");
    assert!(after.contains("already holds <b@example.org>"), "{after}");
    assert!(after.contains("M-00003 opened"), "{after}");
    assert!(after.contains("1 new message(s)"), "{after}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_password_or_a_missing_folder_is_one_sentence_and_a_failed_exit() {
    let Some(imap) = Dovecot::start().await else {
        return;
    };
    let setup = Setup::new(&imap, "INBOX");
    let out = setup.run(&["mail", "pull"], "not-the-password");
    assert!(!out.status.success());
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("refused the login for support") && said.contains("password_env"),
        "{said}"
    );
    assert_eq!(said.trim().lines().count(), 1, "{said}");

    let setup = Setup::new(&imap, "Nowhere");
    let out = setup.run(&["mail", "pull"], imap.password());
    assert!(!out.status.success());
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("the folder Nowhere does not exist"), "{said}");
}
