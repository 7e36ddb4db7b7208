//! The desk's record killed with SIGKILL while it appends as fast as it can. The child is this
//! test binary run again on one test of its own: it appends events in a loop and prints each
//! sequence number once `append` has returned. The parent kills it after a given number of
//! them, at once, and opens the record as the next desk would: every event the child was told
//! was appended must be there, in order, with the states its events replay to; and the next
//! desk goes on from the last one.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};

use support_desk::record::Event;
use support_desk::record::store::replay;
use support_desk::record::{DeskRecord, RECORD_FILE};

/// Set for the child: the data directory it appends in.
const CHILD_DIR: &str = "DESK_RECORD_KILL_CHILD_DIR";
const CHILD_TEST: &str = "record_kill::appending_child";

fn allow() -> Vec<String> {
    vec!["shop.get_order_status".into()]
}

/// The `n`th event the child appends: tickets in turn, each started, then calls and notes.
fn event(n: u64) -> Event {
    let ticket = format!("T-{:04}", n % 40);
    match n / 40 % 3 {
        0 => Event::TicketStarted {
            ticket,
            tools: vec!["shop.get_order_status".into()],
            attached: vec![],
            request: None,
        },
        1 => Event::ToolCall {
            ticket,
            turn: (n / 120) as u32 + 1,
            tool: "shop.get_order_status".into(),
            arguments: Default::default(),
        },
        _ => Event::Noted {
            ticket,
            by: "dana".into(),
            text: format!("note {n}"),
        },
    }
}

/// The child's body, run by the test below (with `--ignored`) and by nothing else.
#[test]
#[ignore = "the child process of a_record_killed_while_appending_keeps_every_event_it_acknowledged"]
fn appending_child() {
    let Some(dir) = std::env::var_os(CHILD_DIR) else {
        return;
    };
    let path = Path::new(&dir).join(RECORD_FILE);
    let record = DeskRecord::open_for_work(&path, None, "dana", &allow()).expect("opens");
    let mut out = std::io::stdout().lock();
    for n in 0.. {
        let appended = record.append(&event(n)).expect("appended");
        writeln!(out, "appended {}", appended.stored.seq).expect("the parent reads");
        out.flush().expect("the parent reads");
    }
}

/// Runs the child until it has said `kill_after` appends returned, kills it, and gives the
/// highest sequence number it said it had appended.
fn append_until_killed(dir: &Path, kill_after: i64) -> i64 {
    let mut child = Command::new(std::env::current_exe().expect("this test binary"))
        .args([
            CHILD_TEST,
            "--exact",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_DIR, dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the child starts");
    let stdout = child.stdout.take().expect("piped");
    let mut acknowledged = 0;
    let mut lines = BufReader::new(stdout).lines();
    for line in lines.by_ref() {
        let line = line.expect("a line");
        if let Some(seq) = line.strip_prefix("appended ") {
            acknowledged = seq.parse().expect("a number");
            if acknowledged >= kill_after {
                break;
            }
        }
    }
    child.kill().expect("SIGKILL");
    child.wait().expect("reaped");
    // What it printed before the kill landed counts as acknowledged too.
    for line in lines {
        let Ok(line) = line else { break };
        if let Some(seq) = line.strip_prefix("appended ") {
            acknowledged = seq.parse().expect("a number");
        }
    }
    acknowledged
}

#[test]
fn a_record_killed_while_appending_keeps_every_event_it_acknowledged() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let path = dir.path().join(RECORD_FILE);
    let mut expected_next = 1;
    // Killed early, and killed again on the same record after thousands more.
    for kill_after in [1, 40, 700, 4_000] {
        let acknowledged = append_until_killed(dir.path(), expected_next - 1 + kill_after);
        let record = DeskRecord::open(&path, None, "checker", &allow()).expect("opens");
        let events = record.events_after(0).expect("events");
        let seqs: Vec<i64> = events.iter().map(|e| e.seq).collect();
        let last = *seqs.last().expect("events");
        assert!(
            last >= acknowledged,
            "appended {acknowledged} events, the record has {last}"
        );
        assert_eq!(
            seqs,
            (1..=last).collect::<Vec<_>>(),
            "in order, none missing"
        );
        assert_eq!(record.states().expect("states"), replay(&events, &allow()));
        drop(record);
        expected_next = last + 1;
    }
    let desk = DeskRecord::open_for_work(&path, None, "dana", &allow()).expect("opens");
    let next = desk.append(&event(0)).expect("appended");
    assert_eq!(next.stored.seq, expected_next);
}
