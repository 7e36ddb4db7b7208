use super::*;

/// What a desk killed after these appends returned, and before its thread brought the tables
/// up to date, leaves behind: the events in the journal only, each line as `append` writes it.
fn left_in_the_journal(dir: &Path, after: &[Event]) {
    let record = DeskRecord::open(&dir.join(RECORD_FILE), None, "dana", &allow()).expect("opens");
    let mut seq = record.last_seq().expect("readable");
    let mut states: std::collections::HashMap<String, TicketState> = record
        .states()
        .expect("readable")
        .into_iter()
        .map(|s| (s.ticket.clone(), s))
        .collect();
    drop(record);
    let mut text = Vec::new();
    for event in after {
        seq += 1;
        let ticket = event.ticket().expect("a ticket's event");
        let state = states
            .entry(ticket.to_owned())
            .or_insert_with(|| TicketState::new(ticket));
        let stamp = state::Stamp {
            by: "dana",
            at: clock(),
        };
        state.apply(event, &stamp, &allow());
        text.extend(journal::line(
            seq,
            clock(),
            "\"dana\"",
            &serde_json::to_string(event).expect("json"),
            Some(&serde_json::to_string(state).expect("json")),
        ));
    }
    std::fs::write(journal::path_for(&dir.join(RECORD_FILE)), text).expect("written");
}

/// The record at `path` as `queue`, `export` and review open it.
fn open_to_read(path: &Path) -> DeskRecord {
    DeskRecord::open(path, None, "reader", &[]).expect("opens for reading")
}

fn journal_len(dir: &Path) -> u64 {
    std::fs::metadata(journal::path_for(&dir.join(RECORD_FILE))).map_or(0, |m| m.len())
}

#[test]
fn events_a_killed_desk_left_in_the_journal_are_in_the_tables_when_the_record_opens_again() {
    let dir = tempfile::tempdir().expect("temp dir");
    let record = record_in(dir.path());
    record.append(&started("T-0003")).expect("appended");
    drop(record);
    assert_eq!(
        journal_len(dir.path()),
        0,
        "a desk that closes leaves nothing in its journal"
    );
    let lost = [
        model_call("T-0003", 1, asks("shop.issue_refund")),
        tool_call("T-0003", 1, "shop.issue_refund"),
        started("T-0004"),
    ];
    left_in_the_journal(dir.path(), &lost);

    // A reader (queue, export, review) with no desk at work applies them first.
    let reader = open_to_read(&dir.path().join(RECORD_FILE));
    let events = reader.events_after(0).expect("events");
    assert_eq!(
        events.iter().map(|e| e.seq).collect::<Vec<_>>(),
        [1, 2, 3, 4]
    );
    assert_eq!(
        events[1..].iter().map(|e| &e.event).collect::<Vec<_>>(),
        lost.iter().collect::<Vec<_>>()
    );
    assert_eq!(reader.states().expect("states"), replay(&events, &allow()));
    assert_eq!(journal_len(dir.path()), 0);
    drop(reader);

    // The next desk goes on from there: both cut-off runs are settled, and numbers continue.
    let desk = record_in(dir.path());
    let settled = desk.settle_interrupted().expect("settled");
    let settled: Vec<(i64, &str, Lifecycle)> = settled
        .iter()
        .filter_map(|a| {
            Some((
                a.stored.seq,
                a.stored.event.ticket()?,
                a.state.as_ref()?.state,
            ))
        })
        .collect();
    assert_eq!(
        settled,
        [
            (5, "T-0003", Lifecycle::NeedsPerson),
            (6, "T-0004", Lifecycle::NeedsPerson)
        ]
    );
}

#[test]
fn a_desk_at_work_applies_a_journal_before_its_first_append() {
    let dir = tempfile::tempdir().expect("temp dir");
    record_in(dir.path())
        .append(&started("T-0000"))
        .expect("appended");
    left_in_the_journal(
        dir.path(),
        &[
            started("T-0001"),
            draft("T-0001", vec![]),
            sent("T-0001", None),
        ],
    );
    let desk = record_in(dir.path());
    // The state came back with the journal: the reply was sent, so a second send is refused.
    let refused = desk
        .append(&sent("T-0001", None))
        .expect_err("already sent");
    assert_eq!(
        refused.to_string(),
        "T-0001 was already sent by dana; its reply cannot be changed or sent again"
    );
    assert_eq!(desk.last_seq().expect("readable"), 4);
}

#[test]
fn a_reader_leaves_the_journal_of_a_desk_at_work_alone() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join(RECORD_FILE);
    drop(record_in(dir.path()));
    left_in_the_journal(dir.path(), &[started("T-0001")]);
    let held = std::fs::OpenOptions::new()
        .write(true)
        .open(dir.path().join("desk.lock"))
        .expect("the lock file");
    held.lock().expect("locked, as a desk at work holds it");
    let reader = open_to_read(&path);
    assert_eq!(reader.last_seq().expect("readable"), 0);
    assert!(
        journal_len(dir.path()) > 0,
        "the desk at work applies its own journal"
    );
    drop(reader);
    drop(held);
    let reader = open_to_read(&path);
    assert_eq!(reader.last_seq().expect("readable"), 1);
}

#[test]
fn a_record_opened_for_reading_refuses_to_append_and_says_so() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join(RECORD_FILE);
    drop(record_in(dir.path()));
    let reader = open_to_read(&path);
    let refused = reader.append(&started("T-0001")).expect_err("read only");
    assert_eq!(
        refused.to_string(),
        format!(
            "{} was opened for reading; only the desk working on it may add to it",
            path.display()
        )
    );
}

#[test]
fn when_the_tables_stop_following_nothing_acknowledged_is_lost() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join(RECORD_FILE);
    let desk = record_in(dir.path());
    desk.append(&started("T-0001")).expect("appended");
    assert_eq!(desk.last_seq().expect("readable"), 1);
    // Something else breaks the tables under the desk.
    let other = rusqlite::Connection::open(&path).expect("opens");
    other
        .execute_batch(
            "CREATE TRIGGER broken BEFORE INSERT ON events BEGIN SELECT RAISE(ABORT, 'disk trouble'); END;",
        )
        .expect("a trigger");
    let kept = desk.append(&started("T-0002")).expect("in the journal");
    assert_eq!(kept.stored.seq, 2);
    let behind = desk.last_seq().expect_err("the tables are behind");
    let message = behind.to_string();
    assert!(
        message.starts_with("the desk's record stopped bringing its tables up to date ("),
        "{message}"
    );
    assert!(message.contains("disk trouble"), "{message}");
    assert!(message.ends_with("every event it took is kept in its journal and applied when a desk opens it again: quit and restart the desk"), "{message}");
    let refused = desk
        .append(&started("T-0003"))
        .expect_err("refused once behind");
    assert_eq!(refused.to_string(), message);
    drop(desk);
    assert!(
        journal_len(dir.path()) > 0,
        "the journal is kept while the tables lack its events"
    );

    other.execute_batch("DROP TRIGGER broken").expect("mended");
    let desk = record_in(dir.path());
    let events = desk.events_after(0).expect("events");
    assert_eq!(events.iter().map(|e| e.seq).collect::<Vec<_>>(), [1, 2]);
    assert_eq!(desk.states().expect("states"), replay(&events, &allow()));
}

#[test]
fn a_ticket_not_touched_for_a_thousand_others_is_checked_against_its_state_all_the_same() {
    let dir = tempfile::tempdir().expect("temp dir");
    let record = record_in(dir.path());
    for event in [
        started("T-0000"),
        draft("T-0000", vec![]),
        sent("T-0000", None),
    ] {
        record.append(&event).expect("appended");
    }
    for n in 1..=1_500 {
        record
            .append(&started(&format!("T-{n:04}")))
            .expect("appended");
    }
    let refused = record
        .append(&sent("T-0000", None))
        .expect_err("already sent");
    assert!(matches!(refused, RecordError::Refused(_)), "{refused}");
    let noted = record
        .append(&Event::Noted {
            ticket: "T-0000".into(),
            by: "dana".into(),
            text: "customer called back".into(),
        })
        .expect("a note is always taken");
    assert_eq!(noted.state.map(|s| s.state), Some(Lifecycle::Sent));
    drop(record);
    // And on a desk opened afresh, where nothing is at hand yet.
    let reopened = record_in(dir.path());
    assert!(reopened.append(&sent("T-0000", None)).is_err());
    assert_eq!(
        reopened
            .append(&started("T-0007"))
            .expect("appended")
            .state
            .map(|s| s.state),
        Some(Lifecycle::Working)
    );
    let events = reopened.events_after(0).expect("events");
    assert_eq!(
        reopened.states().expect("states"),
        replay(&events, &allow())
    );
}

#[test]
fn a_second_desk_on_the_same_data_directory_is_refused_with_what_to_do() {
    let dir = tempfile::tempdir().expect("temp dir");
    let first = record_in(dir.path());
    assert!(DeskRecord::in_use(&dir.path().join(RECORD_FILE)));
    let second = DeskRecord::open_for_work(&dir.path().join(RECORD_FILE), None, "sam", &allow());
    let message = second.err().map(|e| e.to_string()).unwrap_or_default();
    assert_eq!(
        message,
        format!(
            "another desk is open on {}; close it first, or give this desk its own --data-dir",
            dir.path().display()
        )
    );
    drop(first);
    assert!(!DeskRecord::in_use(&dir.path().join(RECORD_FILE)));
}

#[test]
fn a_desk_file_of_the_older_schema_is_migrated_into_events_that_give_the_same_states() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join(RECORD_FILE);
    {
        let conn = rusqlite::Connection::open(&path).expect("open");
        conn.execute_batch(
            "CREATE TABLE tickets (ticket TEXT PRIMARY KEY, status TEXT NOT NULL, draft TEXT,
                findings TEXT NOT NULL DEFAULT '[]', model_calls INTEGER NOT NULL DEFAULT 0,
                sent TEXT, handed_to TEXT, note TEXT, updated_at INTEGER NOT NULL);
             INSERT INTO tickets VALUES ('T-0005', 'sent', 'Hello', '[]', 2,
                '{\"text\":\"Hello\",\"by\":\"sam\",\"override_reason\":null,\"at\":1}', NULL, NULL, 100);
             INSERT INTO tickets VALUES ('T-0007', 'handed_to_person', 'Hi', '[]', 1, NULL, 'sam', 'call her', 200);
             INSERT INTO tickets VALUES ('T-0001', 'working', NULL, '[]', 2, NULL, NULL, NULL, 300);
             INSERT INTO tickets VALUES ('T-0009', 'flagged', 'Refund sent!', '[\"unbacked\"]', 3, NULL, NULL, NULL, 400);
             PRAGMA user_version = 1;",
        )
        .expect("an old desk file");
    }
    let record = record_in(dir.path());
    let states: Vec<(String, Lifecycle)> = record
        .states()
        .expect("states")
        .into_iter()
        .map(|s| (s.ticket, s.state))
        .collect();
    assert_eq!(
        states,
        [
            ("T-0001".to_owned(), Lifecycle::NeedsPerson),
            ("T-0005".to_owned(), Lifecycle::Sent),
            ("T-0007".to_owned(), Lifecycle::HandedOver),
            ("T-0009".to_owned(), Lifecycle::NeedsPerson),
        ]
    );
    assert_eq!(
        state(&record, "T-0005").sent.map(|s| s.by),
        Some("sam".into())
    );
    assert_eq!(
        state(&record, "T-0009").findings,
        vec!["unbacked".to_owned()]
    );
    assert_eq!(
        record.states().expect("states"),
        replay(&record.events_after(0).expect("events"), &allow())
    );
}

#[test]
fn a_record_of_a_newer_schema_is_refused_naming_the_file() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join(RECORD_FILE);
    rusqlite::Connection::open(&path)
        .expect("open")
        .pragma_update(None, "user_version", 9)
        .expect("bumped");
    let refused = DeskRecord::open(&path, None, "dana", &allow()).err();
    assert_eq!(
        refused.map(|e| e.to_string()),
        Some(format!(
            "{} holds a desk record of schema 9, newer than this desk's (2); use a newer support-desk, or another --data-dir",
            path.display()
        ))
    );
}

#[test]
fn the_queue_shows_a_run_no_desk_is_working_on_as_needing_a_person() {
    let record = DeskRecord::in_memory("dana", &allow()).expect("record");
    record.append(&started("T-0001")).expect("appended");
    let tickets = crate::tickets::bundled();
    let states = record.states().expect("states");
    let live = queue(&tickets[..2], &states, true, &allow(), NO_CLOSING);
    assert_eq!(
        live.iter().map(|r| r.state).collect::<Vec<_>>(),
        [Lifecycle::Working, Lifecycle::New]
    );
    let dead = queue(&tickets[..1], &states, false, &allow(), NO_CLOSING);
    assert_eq!(dead[0].state, Lifecycle::NeedsPerson);
    assert!(
        dead[0]
            .reason
            .as_deref()
            .is_some_and(|r| r.starts_with("interrupted during model call 1")),
        "{dead:?}"
    );
}

#[test]
fn times_are_written_as_rfc3339_in_utc() {
    assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
    assert_eq!(rfc3339(1_796_112_563_000), "2026-12-01T08:09:23Z");
    assert_eq!(rfc3339(951_782_400_000), "2000-02-29T00:00:00Z");
}

const NO_CLOSING: crate::record::Closing = crate::record::Closing {
    after_days: 4,
    now: 0,
};
