//! The real binary under a pseudo-terminal: the desk opens, works a ticket through a
//! consent question and a lead's form, quits, and leaves the terminal and no servers behind;
//! once with a scripted model, once on the embedded default (the committed recording).

use std::io::{Read, Write};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use portable_pty::{CommandBuilder, PtySize, native_pty_system};

use crate::mock_model::{MockModel, quote_then_issue};
use crate::support::BIN;

pub struct Screen {
    parser: Arc<Mutex<vt100::Parser>>,
    raw: Arc<Mutex<Vec<u8>>>,
}

impl Screen {
    pub fn text(&self) -> String {
        self.parser.lock().expect("parser").screen().contents()
    }

    pub async fn wait_for(&self, what: &str) -> String {
        let started = Instant::now();
        loop {
            let text = self.text();
            if text.contains(what) {
                return text;
            }
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "waited for {what:?}; the screen shows:\n{text}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

impl Screen {
    /// Waits until the terminal has been sent `what` (an escape sequence, the bell), which the
    /// screen's text does not show.
    pub async fn wait_for_bytes(&self, what: &[u8]) {
        let started = Instant::now();
        loop {
            if self
                .raw
                .lock()
                .expect("raw")
                .windows(what.len())
                .any(|w| w == what)
            {
                return;
            }
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "waited for {:?} to be sent; the screen shows:\n{}",
                String::from_utf8_lossy(what),
                self.text()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

/// Processes whose environment carries `mark` (children inherit it).
fn processes_marked(mark: &str) -> Vec<u32> {
    let needle = format!("SUPPORT_DESK_TEST_MARK={mark}");
    std::fs::read_dir("/proc")
        .expect("/proc")
        .flatten()
        .filter_map(|entry| {
            let pid = entry.file_name().to_string_lossy().parse::<u32>().ok()?;
            let environ = std::fs::read(entry.path().join("environ")).ok()?;
            environ
                .split(|b| *b == 0)
                .any(|v| v == needle.as_bytes())
                .then_some(pid)
        })
        .collect()
}

/// The desk binary running under a pseudo-terminal, 120×36, with its own data directory.
pub struct Desk {
    pub screen: Screen,
    writer: Box<dyn Write + Send>,
    child: Box<dyn portable_pty::Child + Send + Sync>,
    mark: String,
    _dir: Option<tempfile::TempDir>,
}

impl Desk {
    /// Starts `support-desk desk --data-dir <temp> <args…>` in the repository, as a person would.
    fn start(args: &[&str]) -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut desk = Self::start_in(dir.path(), args);
        desk._dir = Some(dir);
        desk
    }

    /// Starts the desk on the data directory `dir`, which outlives it (to open it again).
    pub fn start_in(dir: &std::path::Path, args: &[&str]) -> Self {
        Self::start_with_env(dir, args, &[])
    }

    /// [`Desk::start_in`] with `env` set for the desk (a mailbox's password).
    pub fn start_with_env(dir: &std::path::Path, args: &[&str], env: &[(&str, &str)]) -> Self {
        let mark = format!("{}-{}", std::process::id(), dir.display());
        let pair = native_pty_system()
            .openpty(PtySize {
                rows: 36,
                cols: 120,
                pixel_width: 0,
                pixel_height: 0,
            })
            .expect("a pty");
        let mut command = CommandBuilder::new(BIN);
        command.args(["desk", "--data-dir"]);
        command.arg(dir);
        command.args(args);
        command.cwd(env!("CARGO_MANIFEST_DIR"));
        command.env("TERM", "xterm-256color");
        command.env("SUPPORT_DESK_STAFF", "tester");
        command.env("SUPPORT_DESK_TEST_MARK", &mark);
        for (name, value) in env {
            command.env(name, value);
        }
        let child = pair.slave.spawn_command(command).expect("start the desk");
        drop(pair.slave);
        let mut reader = pair.master.try_clone_reader().expect("reader");
        let writer = pair.master.take_writer().expect("writer");
        let screen = Screen {
            parser: Arc::new(Mutex::new(vt100::Parser::new(36, 120, 0))),
            raw: Arc::new(Mutex::new(Vec::new())),
        };
        let (parser, raw) = (Arc::clone(&screen.parser), Arc::clone(&screen.raw));
        std::thread::spawn(move || {
            let mut buffer = [0u8; 8192];
            while let Ok(n) = reader.read(&mut buffer) {
                if n == 0 {
                    break;
                }
                parser.lock().expect("parser").process(&buffer[..n]);
                raw.lock().expect("raw").extend_from_slice(&buffer[..n]);
            }
        });
        Self {
            screen,
            writer,
            child,
            mark,
            _dir: None,
        }
    }

    /// Kills the desk with SIGKILL, as a crash would, and waits until it and its servers
    /// are gone.
    pub async fn kill(mut self) {
        let pid = self.child.process_id().expect("the desk's pid");
        let killed = std::process::Command::new("sh")
            .args(["-c", &format!("kill -9 {pid}")])
            .status()
            .expect("kill");
        assert!(killed.success(), "kill -9 {pid}");
        let started = Instant::now();
        while self.child.try_wait().expect("wait").is_none() {
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "the desk did not die"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        // Its children (the shop) see their pipe close and go; wait for them too, so the
        // next desk on this directory finds its files free.
        while !processes_marked(&self.mark).is_empty() {
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "the desk's servers stayed"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Waits for the queue and the shop, then selects T-0003 (the third ticket).
    async fn select_t0003(&mut self) {
        self.screen.wait_for("Queue (all) 48/48").await;
        self.screen.wait_for("shop 2026-07-28").await;
        self.press(b"jj");
        self.screen.wait_for("T-0003 · C-0156").await;
    }

    /// Waits for the desk to end by itself (one that refused to open): its exit status.
    pub async fn ended(mut self) -> portable_pty::ExitStatus {
        let started = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                return status;
            }
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "the desk did not end; the screen shows:\n{}",
                self.screen.text()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    pub fn press(&mut self, keys: &[u8]) {
        self.writer.write_all(keys).expect("type");
        self.writer.flush().expect("flush");
    }

    /// Presses `q` and checks what quitting leaves: a clean exit, the terminal back on its
    /// main screen, and no server process of this desk still running.
    pub async fn quit(mut self) {
        self.press(b"q");
        let started = Instant::now();
        let status = loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                break status;
            }
            assert!(
                started.elapsed() < Duration::from_secs(15),
                "the desk did not quit"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        };
        assert!(status.success(), "the desk exited with {status:?}");
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert!(
            !self
                .screen
                .parser
                .lock()
                .expect("parser")
                .screen()
                .alternate_screen(),
            "the terminal is back on its main screen"
        );
        let raw = self.screen.raw.lock().expect("raw").clone();
        assert!(
            raw.windows(8).any(|w| w == b"\x1b[?1049l"),
            "the alternate screen was left"
        );
        assert_eq!(
            processes_marked(&self.mark),
            Vec::<u32>::new(),
            "no server of the desk is left running"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_desk_works_a_ticket_through_consent_and_a_lead_form_and_quits_cleanly() {
    let world = support_desk::shop::ShopWorld::bundled();
    let order_id = crate::support::label("T-0003")
        .order_id
        .expect("T-0003 is about an order");
    let order = world
        .orders
        .iter()
        .find(|o| o.order_id == order_id)
        .expect("order");
    let line = order
        .lines
        .iter()
        .find(|l| l.amount() > support_desk::shop::REFUND_LIMIT)
        .expect("a line above the limit");
    let model = MockModel::start(quote_then_issue(
        order_id.clone(),
        line.sku.clone(),
        "Your refund has been released; it reaches your card within 5 working days.",
    ))
    .await;
    let mut desk = Desk::start(&["--model", &format!("openai:{}", model.url)]);

    desk.select_t0003().await;
    desk.press(b"w");

    let consent = desk.screen.wait_for("y approve").await;
    assert!(consent.contains("shop.issue_refund"), "{consent}");
    desk.press(b"\r");
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        desk.screen.text().contains("y approve"),
        "Enter alone does not approve"
    );
    desk.press(b"y");

    let form = desk.screen.wait_for("Release refund").await;
    assert!(
        form.contains("shop"),
        "the form names the server asking: {form}"
    );
    desk.press(b" "); // release: yes
    desk.press(b"\x12"); // Ctrl-R: review what will be sent
    desk.screen.wait_for("will receive:").await;
    desk.press(b"\r"); // accept and send

    let done = desk.screen.wait_for("Draft reply").await;
    assert!(done.contains("released"), "{done}");
    desk.quit().await;
    assert_eq!(model.requests().len(), 3);
}

/// What a new user meets with `cargo run --release`: the embedded default config, whose model
/// is the committed recording. A person runs the shop's `refund_order` prompt for T-0003 (a
/// EUR 279.00 order); the recorded model quotes the whole order and then writes its draft
/// without asking to issue the refund (recordings/ticket-runs/README.md says so and why), so
/// no consent question and no lead's form come up, and the replay follows the recording to
/// the end.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_the_embedded_default_a_persons_refund_prompt_replays_to_the_recorded_draft() {
    let mut desk = Desk::start(&[]);
    desk.select_t0003().await;

    desk.press(b"p");
    desk.screen.wait_for("shop.refund_order").await;
    desk.press(b"j\r");
    let arguments = desk.screen.wait_for("prompt shop.refund_order").await;
    assert!(
        arguments.contains("O-1587"),
        "the order comes from the ticket: {arguments}"
    );
    desk.press(b"\x12"); // Ctrl-R: review the arguments
    desk.screen.wait_for("will receive:").await;
    desk.press(b"\r");

    let done = desk.screen.wait_for("Draft reply").await;
    assert!(
        !done.contains("diverged"),
        "the replay followed the recording: {done}"
    );
    assert!(done.contains("quote_refund"), "the recorded quote: {done}");
    assert!(!done.contains("y approve"), "no consent question: {done}");
    desk.quit().await;
}

/// The desk is left open all day, mostly idle: it and the servers it starts run with the
/// kernel's transparent huge pages off, so what they hold is what they touch
/// (`commands::desk::no_huge_pages`; BENCHMARKS.md, 'The desk's memory on a day's record', shows the growth it stops).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_desk_and_the_servers_it_starts_run_without_transparent_huge_pages() {
    let desk = Desk::start(&[]);
    desk.screen.wait_for("shop 2026-07-28").await;
    let marked = processes_marked(&desk.mark);
    assert!(marked.len() >= 2, "the desk and its shop: {marked:?}");
    for pid in marked {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("status");
        let command = std::fs::read(format!("/proc/{pid}/cmdline")).expect("cmdline");
        assert!(
            status.lines().any(|line| line == "THP_enabled:\t0"),
            "{} runs with huge pages allowed:\n{status}",
            String::from_utf8_lossy(&command).replace('\0', " ")
        );
    }
    desk.quit().await;
}

/// CPU time (user and system, in clock ticks) a process has used, from `/proc/PID/stat`.
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("stat");
    // The command name (field 2) is in parentheses and may hold spaces: count after it.
    let after_name = &stat[stat.rfind(')').expect("a command name") + 2..];
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    // utime and stime are fields 14 and 15 of the whole line, 12 and 13 after the name.
    let tick = |n: usize| fields[n - 3].parse::<u64>().expect("a tick count");
    tick(14) + tick(15)
}

/// An idle desk uses no CPU: busy polling looks at a server's pipe only while a call waits
/// for its answer, and nothing ticks while nobody types. Over 10 s the desk and every server
/// it started use under 1 % of one core between them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_desk_and_the_servers_it_starts_use_no_cpu() {
    let desk = Desk::start(&[]);
    desk.screen.wait_for("shop 2026-07-28").await;
    // Start-up settles: the servers' first lists, the record's first page.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let marked = processes_marked(&desk.mark);
    // The partner runs inside the desk; the shop is a child.
    assert!(marked.len() >= 2, "the desk and its shop: {marked:?}");
    let clock_ticks: u64 = std::process::Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|out| String::from_utf8(out.stdout).ok())
        .and_then(|text| text.trim().parse().ok())
        .unwrap_or(100);
    let before: u64 = marked.iter().map(|pid| cpu_ticks(*pid)).sum();
    tokio::time::sleep(Duration::from_secs(10)).await;
    let after: u64 = marked.iter().map(|pid| cpu_ticks(*pid)).sum();
    let used = after - before;
    assert!(
        used * 100 < clock_ticks * 10,
        "idle for 10 s, the desk and its servers used {used} ticks of CPU ({clock_ticks} a second): over 1 % of a core"
    );
    desk.quit().await;
}

/// A desk whose shop did not connect does not open as if it had: it says which server and
/// why, and exits non-zero before taking the terminal; `--allow-missing` opens it without.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_desk_without_its_shop_does_not_open_unless_told_a_partial_start_is_fine() {
    let dir = tempfile::tempdir().expect("temp dir");
    let config = dir.path().join("desk.toml");
    std::fs::write(
        &config,
        "[servers.shop]\nurl = \"http://127.0.0.1:9/mcp\"\n",
    )
    .expect("config");
    let config = config.to_string_lossy().into_owned();

    let mut refused = Desk::start(&["--config", &config]);
    let said = refused.screen.wait_for("the desk did not open").await;
    assert!(
        said.contains("server 'shop' (http://127.0.0.1:9/mcp) did not complete the handshake")
            && said.contains("give --allow-missing to work without it"),
        "{said}"
    );
    let started = Instant::now();
    let status = loop {
        if let Some(status) = refused.child.try_wait().expect("wait") {
            break status;
        }
        assert!(
            started.elapsed() < Duration::from_secs(15),
            "the desk did not exit"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(!status.success(), "exit non-zero");
    assert!(
        !said.contains("Queue (all)"),
        "the terminal was never taken: {said}"
    );

    let partial = Desk::start(&["--config", &config, "--allow-missing"]);
    partial.screen.wait_for("Queue (all) 48/48").await;
    partial.screen.wait_for("partner 2026-07-28").await;
    partial.quit().await;
}

/// A person reads a policy before giving it to the model: `r` lists the servers' resources,
/// `v` shows the chosen one as the shop wrote it, `a` attaches it to the ticket, which says so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_person_reads_the_shops_refund_policy_and_then_attaches_it() {
    let mut desk = Desk::start(&[]);
    desk.select_t0003().await;
    desk.press(b"r");
    desk.screen.wait_for("shop://policies/refund").await;
    desk.press(b"v");
    let read = desk.screen.wait_for("As the server wrote it").await;
    assert!(
        read.contains("Money goes back to a customer only for goods they have received"),
        "the policy's own text: {read}"
    );
    desk.press(b"a");
    desk.screen
        .wait_for("attached shop://policies/refund from shop")
        .await;
    desk.quit().await;
}

/// A person stops a run while the model takes its time: `s` on the working ticket drops the
/// model's request, and the ticket needs a person, saying who stopped it and where it stood.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s_stops_a_run_while_the_model_thinks_and_the_ticket_says_who() {
    let model = MockModel::with_latency(
        Duration::from_secs(60),
        crate::mock_model::scripted(vec![crate::mock_model::words("Too late.")]),
    )
    .await;
    let mut desk = Desk::start(&["--model", &format!("openai:{}", model.url)]);
    desk.select_t0003().await;
    desk.press(b"w");
    desk.screen.wait_for("T-0003 working").await;
    desk.press(b"s");
    let stopped = desk.screen.wait_for("stopped by tester").await;
    assert!(
        stopped.contains("during model call 1"),
        "where the run stood: {stopped}"
    );
    desk.quit().await;
}

/// On the embedded default a person finishes what the recorded model stops short of: `c` on
/// T-0003 calls `shop.quote_refund` with the order from the ticket, then `shop.issue_refund`
/// with the quote it returned; the refund is above the limit, so the shop's release form
/// appears, naming the shop, as it would for a model's call; accepted, the refund is
/// released, and the ticket's history shows the person's calls, after a crash too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_the_embedded_default_a_person_issues_the_refund_and_the_shops_form_appears() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut desk = Desk::start_in(dir.path(), &[]);
    desk.select_t0003().await;

    desk.press(b"c");
    desk.screen.wait_for("Call a tool yourself").await;
    desk.screen.wait_for("shop.quote_refund").await;
    // partner.track_parcel, shop.find_orders, find_products, get_order_status,
    // issue_refund, quote_refund: the sixth.
    desk.press(b"jjjjj\r");
    let form = desk
        .screen
        .wait_for("You call shop.quote_refund for T-0003")
        .await;
    // The order number the customer wrote is filled in, saying so; the person gives a reason.
    assert!(
        form.contains("order_id O-1587 from T-0003's text"),
        "{form}"
    );
    desk.press(b"\t\tthe motor smells burnt");
    desk.press(b"\x12"); // Ctrl-R: review
    desk.screen.wait_for("will receive:").await;
    desk.press(b"\r");
    let quoted = desk.screen.wait_for("\"quote_id\"").await;
    let quote_id = quoted
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
        .find(|word| {
            word.starts_with("Q-")
                && word.len() > 4
                && word[2..].chars().all(|c| c.is_ascii_hexdigit())
        })
        .unwrap_or_else(|| panic!("a quote id on screen: {quoted}"))
        .to_owned();

    // The quote's result offers the refund next, in one key, filled in from that result.
    desk.press(b"C");
    let form = desk
        .screen
        .wait_for("You call shop.issue_refund for T-0003")
        .await;
    assert!(
        form.contains(&format!("quote_id {quote_id} from shop.quote_refund")),
        "the form says where its value came from: {form}"
    );
    desk.press(b"\x12");
    desk.screen.wait_for("will receive:").await;
    desk.press(b"\r");

    let form = desk.screen.wait_for("Release refund").await;
    assert!(
        form.contains("shop"),
        "the form names the server asking: {form}"
    );
    desk.press(b" "); // release: yes
    desk.press(b"\x12");
    desk.screen.wait_for("will receive:").await;
    desk.press(b"\r");
    let done = desk.screen.wait_for("\"released\"").await;
    assert!(done.contains("shop.issue_refund"), "{done}");

    // Killed and opened again: the record holds the person's calls and the release.
    desk.kill().await;
    let mut desk = Desk::start_in(dir.path(), &[]);
    desk.select_t0003().await;
    let history = desk.screen.wait_for("\"released\"").await;
    assert!(
        history.contains("shop.issue_refund") && history.contains(&quote_id),
        "{history}"
    );
    desk.quit().await;
}
