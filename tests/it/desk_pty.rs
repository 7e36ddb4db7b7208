//! The real binary under a pseudo-terminal: the desk opens, works a ticket through a
//! consent question and a lead's form, quits, and leaves the terminal and no servers behind.

use std::io::{Read, Write};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use portable_pty::{CommandBuilder, PtySize, native_pty_system};

use crate::mock_model::{MockModel, quote_then_issue};
use crate::support::BIN;

struct Screen {
    parser: Arc<Mutex<vt100::Parser>>,
    raw: Arc<Mutex<Vec<u8>>>,
}

impl Screen {
    fn text(&self) -> String {
        self.parser.lock().expect("parser").screen().contents()
    }

    async fn wait_for(&self, what: &str) -> String {
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_desk_works_a_ticket_through_consent_and_a_lead_form_and_quits_cleanly() {
    let world = support_desk::shop::ShopWorld::bundled();
    let ticket = world.ticket("T-0003").expect("T-0003");
    let order_id = ticket.order_id.clone().expect("T-0003 is about an order");
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
    let dir = tempfile::tempdir().expect("temp dir");
    let mark = format!("{}-{}", std::process::id(), dir.path().display());

    let pty = native_pty_system();
    let pair = pty
        .openpty(PtySize {
            rows: 36,
            cols: 120,
            pixel_width: 0,
            pixel_height: 0,
        })
        .expect("a pty");
    let mut command = CommandBuilder::new(BIN);
    command.args([
        "desk",
        "--model",
        &format!("openai:{}", model.url),
        "--data-dir",
    ]);
    command.arg(dir.path());
    command.cwd(env!("CARGO_MANIFEST_DIR"));
    command.env("TERM", "xterm-256color");
    command.env("SUPPORT_DESK_STAFF", "tester");
    command.env("SUPPORT_DESK_TEST_MARK", &mark);
    let mut child = pair.slave.spawn_command(command).expect("start the desk");
    drop(pair.slave);
    let mut reader = pair.master.try_clone_reader().expect("reader");
    let mut writer = pair.master.take_writer().expect("writer");
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
    let mut press = |keys: &[u8]| {
        writer.write_all(keys).expect("type");
        writer.flush().expect("flush");
    };

    screen.wait_for("Queue (all) 48/48").await;
    screen.wait_for("shop 2026-07-28").await;
    press(b"jj");
    screen.wait_for("T-0003 · C-0156").await;
    press(b"w");

    let consent = screen.wait_for("y approve").await;
    assert!(consent.contains("shop.issue_refund"), "{consent}");
    press(b"\r");
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        screen.text().contains("y approve"),
        "Enter alone does not approve"
    );
    press(b"y");

    let form = screen.wait_for("Release refund").await;
    assert!(
        form.contains("shop"),
        "the form names the server asking: {form}"
    );
    press(b" "); // release: yes
    press(b"\x12"); // Ctrl-R: review what will be sent
    screen.wait_for("Review").await;
    press(b"\r"); // accept and send

    let done = screen.wait_for("Draft reply").await;
    assert!(done.contains("released"), "{done}");
    press(b"q");

    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
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
        !screen
            .parser
            .lock()
            .expect("parser")
            .screen()
            .alternate_screen(),
        "the terminal is back on its main screen"
    );
    let raw = screen.raw.lock().expect("raw").clone();
    assert!(
        raw.windows(8).any(|w| w == b"\x1b[?1049l"),
        "the alternate screen was left"
    );
    assert_eq!(
        processes_marked(&mark),
        Vec::<u32>::new(),
        "no server of the desk is left running"
    );
    let requests = model.requests();
    assert_eq!(requests.len(), 3);
}
