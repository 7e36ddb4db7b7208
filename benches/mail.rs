//! How fast mail becomes tickets. Criterion times a pass over a Maildir of 1,000 messages into
//! a fresh SQLite record (`Mailroom::pull`, the path `support-desk mail pull` takes); then the
//! binary itself (`support-desk mail pull`) reads a Maildir of 10,000 messages, timed from
//! start to exit, against the goal of 20 s; then, when Dovecot is installed, a desk follows an
//! IMAP folder (IDLE) while 200 messages are appended one at a time, each timed from the
//! append to its ticket in the record: median and p99 against the goal of 1 s.
//!
//! ```sh
//! cargo bench --bench mail
//! ```

// A benchmark's report is its output.
#![allow(clippy::print_stdout)]

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use criterion::Criterion;
use support_desk::config::MailConfig;
use support_desk::mailroom::follow::Heard;
use support_desk::mailroom::intake::Arrived;
use support_desk::mailroom::{Inbound, MailTickets, Mailroom};
use support_desk::record::Record;
use support_desk::record::store::DeskRecord;
use support_desk::tickets::Customers;

support_desk::global_allocator!();

const PULL_GOAL: Duration = Duration::from_secs(20);
const IDLE_P99_GOAL: Duration = Duration::from_secs(1);

fn message(n: usize) -> String {
    format!(
        "From: Customer {n} <c{n}@example.net>\r\nTo: support@fernbrook.example\r\nSubject: Order {n}\r\nMessage-ID: <m{n}@example.net>\r\nDate: Sat, 05 Dec 2026 09:14:00 +0100\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nHello,\r\n\r\nwhere is my order {n}? It has been a week.\r\n\r\n> On Monday you wrote:\r\n> thanks\r\n"
    )
}

/// A Maildir holding `count` messages in `new/`.
fn maildir(root: &Path, count: usize) -> std::path::PathBuf {
    let dir = root.join("Maildir");
    for sub in ["new", "cur", "tmp"] {
        std::fs::create_dir_all(dir.join(sub)).expect("maildir");
    }
    for n in 0..count {
        std::fs::write(
            dir.join("new")
                .join(format!("{}.{n}.bench", 1_700_000_000 + n)),
            message(n),
        )
        .expect("message");
    }
    dir
}

fn config(maildir: &Path) -> MailConfig {
    let text = format!(
        "address = \"support@fernbrook.example\"\nmaildir = \"{}\"\n",
        maildir.display()
    );
    toml::from_str(&text).expect("a mail config")
}

fn record(dir: &Path) -> Arc<Record> {
    let record =
        DeskRecord::open_for_work(&dir.join("desk.sqlite3"), None, "bench", &[]).expect("a record");
    Arc::new(Record::Sqlite(record))
}

fn main() {
    let mut criterion = Criterion::default().sample_size(10).configure_from_args();
    let quick = std::env::args().any(|a| a == "--test" || a == "--list");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    criterion.bench_function("mail/pull_1000_from_a_maildir", |b| {
        b.iter_batched(
            || {
                let scratch = tempfile::tempdir().expect("scratch");
                let dir = maildir(scratch.path(), if quick { 20 } else { 1_000 });
                let mailroom = Mailroom::from_config(&config(&dir)).expect("mailroom");
                (record(scratch.path()), mailroom, scratch)
            },
            |(record, mailroom, _scratch)| {
                runtime.block_on(async {
                    mailroom.pull(&record).await.expect("a pass");
                })
            },
            criterion::BatchSize::PerIteration,
        )
    });
    criterion.final_summary();
    if quick {
        return;
    }
    pull_with_the_binary(10_000);
    runtime.block_on(idle_latency(200));
}

/// `support-desk mail pull` over a Maildir of `count` messages, start to exit.
fn pull_with_the_binary(count: usize) {
    let scratch = tempfile::tempdir().expect("scratch");
    let dir = maildir(scratch.path(), count);
    let config = scratch.path().join("desk.toml");
    std::fs::write(
        &config,
        format!(
            "[tickets]\nsource = \"none\"\n[mail]\naddress = \"support@fernbrook.example\"\nmaildir = \"{}\"\n",
            dir.display()
        ),
    )
    .expect("config");
    let started = Instant::now();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_support-desk"))
        .args(["mail", "pull", "--config"])
        .arg(&config)
        .arg("--data-dir")
        .arg(scratch.path().join("data"))
        .output()
        .expect("support-desk mail pull");
    let took = started.elapsed();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let said = String::from_utf8_lossy(&out.stdout);
    println!(
        "mail pull, {count} messages in a Maildir: {:.2} s, {:.0} messages/s (goal: under {} s) · {}",
        took.as_secs_f64(),
        count as f64 / took.as_secs_f64(),
        PULL_GOAL.as_secs(),
        said.lines().last().unwrap_or_default()
    );
    println!("{}", load());
}

/// A desk following an IMAP folder: from each append to its ticket in the record.
async fn idle_latency(count: usize) {
    let Some(dovecot) = dovecot::Dovecot::start() else {
        println!("IMAP IDLE latency: skipped (Dovecot is not installed or this is not root)");
        return;
    };
    let dir = tempfile::tempdir().expect("scratch");
    let mailroom = Mailroom {
        inbound: Inbound::Imap(dovecot.account()),
        outbound: None,
        sent_folder: None,
        customers: Customers::default(),
        tickets: Arc::new(Mutex::new(MailTickets::new("support@fernbrook.example"))),
        close_after_days: 4,
        poll_secs: 60,
    };
    let record = record(dir.path());
    let (heard_tx, mut heard) = tokio::sync::mpsc::unbounded_channel();
    let follower = {
        let record = Arc::clone(&record);
        tokio::spawn(async move {
            mailroom
                .follow(&record, |h| {
                    if let Heard::Arrived(arrived) = h {
                        for one in arrived {
                            if let Arrived::Ticket { .. } = one {
                                let _ = heard_tx.send(Instant::now());
                            }
                        }
                    }
                })
                .await
        })
    };
    let mut imap = dovecot.client().await;
    // Let the follower connect and go idle.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let mut latencies = Vec::with_capacity(count);
    for n in 0..count {
        let raw = message(100_000 + n);
        let sent = Instant::now();
        imap.append("INBOX", raw.as_bytes()).await.expect("append");
        let arrived = tokio::time::timeout(Duration::from_secs(10), heard.recv())
            .await
            .expect("the ticket arrives")
            .expect("the follower runs");
        latencies.push(arrived - sent);
    }
    follower.abort();
    latencies.sort();
    let at = |q: f64| latencies[((latencies.len() as f64 * q).ceil() as usize).saturating_sub(1)];
    println!(
        "IMAP IDLE, append to ticket in the record, {count} messages: median {:.1} ms, p99 {:.1} ms, max {:.1} ms (goal: p99 under {} ms)",
        at(0.5).as_secs_f64() * 1e3,
        at(0.99).as_secs_f64() * 1e3,
        latencies.last().copied().unwrap_or_default().as_secs_f64() * 1e3,
        IDLE_P99_GOAL.as_millis()
    );
    println!("{}", load());
}

fn load() -> String {
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    format!(
        "load average: {}",
        load.split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    )
}

/// A throwaway Dovecot on 127.0.0.1 (as ../shared notes describe it and tests/it's fixture
/// does), for the IDLE measurement.
mod dovecot {
    use std::process::Command;

    use support_desk::mail::MailTls;
    use support_desk::mail::imap::{Imap, ImapAccount};

    pub struct Dovecot {
        pub port: u16,
        dir: tempfile::TempDir,
    }

    const PASSWORD: &str = "bench-secret";

    impl Dovecot {
        pub fn start() -> Option<Self> {
            let found = Command::new("sh")
                .args(["-c", "command -v dovecot"])
                .output()
                .ok()?;
            let is_root = Command::new("id").arg("-u").output().ok()?.stdout == b"0\n";
            if !found.status.success() || !is_root {
                return None;
            }
            let dir = tempfile::tempdir().ok()?;
            let root = dir.path();
            Command::new("chmod").arg("755").arg(root).status().ok()?;
            for sub in ["run", "mail", "log"] {
                std::fs::create_dir(root.join(sub)).ok()?;
            }
            Command::new("chown")
                .args(["-R", "dovecot:dovecot"])
                .arg(root.join("mail"))
                .status()
                .ok()?;
            std::fs::write(root.join("users"), format!("support:{{PLAIN}}{PASSWORD}\n")).ok()?;
            let port = std::net::TcpListener::bind("127.0.0.1:0")
                .ok()?
                .local_addr()
                .ok()?
                .port();
            let r = root.display();
            let conf = format!(
                "protocols = imap\nlisten = 127.0.0.1\nbase_dir = {r}/run\nstate_dir = {r}/run\nlog_path = {r}/log/dovecot.log\nssl = no\ndisable_plaintext_auth = no\nauth_mechanisms = plain login\ndefault_internal_user = dovecot\ndefault_internal_group = dovecot\ndefault_login_user = dovenull\nfirst_valid_uid = 1\npassdb {{\n  driver = passwd-file\n  args = scheme=PLAIN username_format=%u {r}/users\n}}\nuserdb {{\n  driver = static\n  args = uid=dovecot gid=dovecot home={r}/mail/%u mail=maildir:{r}/mail/%u/Maildir\n}}\nservice imap-login {{\n  inet_listener imap {{\n    address = 127.0.0.1\n    port = {port}\n  }}\n  inet_listener imaps {{\n    port = 0\n  }}\n}}\n"
            );
            std::fs::write(root.join("dovecot.conf"), conf).ok()?;
            let started = Command::new("dovecot")
                .arg("-c")
                .arg(root.join("dovecot.conf"))
                .status()
                .ok()?;
            if !started.success() {
                return None;
            }
            for _ in 0..100 {
                if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                    return Some(Self { port, dir });
                }
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
            None
        }

        pub fn account(&self) -> ImapAccount {
            ImapAccount {
                host: "127.0.0.1".into(),
                port: self.port,
                tls: MailTls::None,
                user: "support".into(),
                password: PASSWORD.into(),
                folder: "INBOX".into(),
                ca_file: None,
            }
        }

        pub async fn client(&self) -> Imap {
            Imap::connect(&self.account())
                .await
                .expect("an IMAP client")
        }
    }

    impl Drop for Dovecot {
        fn drop(&mut self) {
            if let Ok(pid) = std::fs::read_to_string(self.dir.path().join("run/master.pid")) {
                let _ = Command::new("kill").arg(pid.trim()).status();
            }
        }
    }
}
