use super::*;
use crate::host::api::EntryKind;

/// The entry event `seq` makes in these tests: a note saying its number.
fn note(seq: i64) -> Vec<Entry> {
    vec![Entry {
        by: Some("dana".into()),
        at: None,
        kind: EntryKind::Noted {
            by: "dana".into(),
            text: format!("event {seq}"),
        },
    }]
}

fn history(seqs: &[i64]) -> Events {
    seqs.iter().map(|&seq| (seq, note(seq))).collect()
}

/// The notes a ticket's transcript shows, in order; `None` while it is not read yet.
fn shown(cache: &TranscriptCache, ticket: &str) -> Option<Vec<String>> {
    cache.entries(ticket).map(|entries| {
        entries
            .map(|e| match &e.kind {
                EntryKind::Noted { text, .. } => text.clone(),
                other => panic!("not a test note: {other:?}"),
            })
            .collect()
    })
}

fn texts(seqs: &[i64]) -> Option<Vec<String>> {
    Some(seqs.iter().map(|seq| format!("event {seq}")).collect())
}

#[test]
fn a_ticket_on_screen_is_asked_for_once_and_shown_once_answered() {
    let mut cache = TranscriptCache::default();
    assert!(cache.want("T-0001"));
    assert!(!cache.want("T-0001"), "asked already");
    assert_eq!(shown(&cache, "T-0001"), None, "not read yet");
    cache.loaded("T-0001", history(&[3, 7]));
    assert_eq!(shown(&cache, "T-0001"), texts(&[3, 7]));
    assert!(!cache.want("T-0001"), "held already");
}

#[test]
fn what_happens_while_the_answer_is_on_the_way_is_kept_and_never_shown_twice() {
    let mut cache = TranscriptCache::default();
    cache.want("T-0001");
    // Appended after the host read the history: only here.
    cache.happened("T-0001", 9, note(9));
    // Appended before the host read it: in the answer too.
    cache.happened("T-0001", 8, note(8));
    cache.loaded("T-0001", history(&[3, 8]));
    assert_eq!(shown(&cache, "T-0001"), texts(&[3, 8, 9]));
    // Told again after the answer (the host's report crossed it): shown once.
    cache.happened("T-0001", 8, note(8));
    cache.happened("T-0001", 10, note(10));
    assert_eq!(shown(&cache, "T-0001"), texts(&[3, 8, 9, 10]));
}

#[test]
fn a_ticket_not_held_is_not_followed_and_its_answer_after_it_was_let_go_is_dropped() {
    let mut cache = TranscriptCache::default();
    cache.happened("T-0002", 4, note(4));
    assert!(
        cache.is_empty(),
        "a ticket nobody looked at is left to the record"
    );
    cache.loaded("T-0002", history(&[4]));
    assert!(cache.is_empty(), "nobody asked");
}

#[test]
fn the_desk_holds_the_tickets_looked_at_lately_and_lets_go_of_the_oldest() {
    let mut cache = TranscriptCache::default();
    for n in 0..KEEP {
        let ticket = format!("T-{n:04}");
        assert!(cache.want(&ticket));
        cache.loaded(&ticket, history(&[n as i64 + 1]));
    }
    // Looking at the first again keeps it; the second is now the oldest.
    assert!(!cache.want("T-0000"));
    assert!(cache.want("T-9999"));
    assert_eq!(cache.len(), KEEP);
    assert_eq!(shown(&cache, "T-0000"), texts(&[1]));
    assert_eq!(shown(&cache, "T-0001"), None, "let go of");
    assert!(
        cache.want("T-0001"),
        "asked again when it is back on screen"
    );
}

#[test]
fn a_ticket_asked_again_before_its_first_answer_came_keeps_what_either_answer_holds() {
    let mut cache = TranscriptCache::default();
    cache.want("T-0500");
    for n in 0..KEEP {
        cache.want(&format!("T-{n:04}"));
    }
    // T-0500 was let go of; event 5 happened while nobody held it; then asked again.
    cache.happened("T-0500", 5, note(5));
    assert!(cache.want("T-0500"));
    // The first answer, read before event 5, comes first; then the second.
    cache.loaded("T-0500", history(&[2]));
    assert_eq!(shown(&cache, "T-0500"), texts(&[2]));
    cache.loaded("T-0500", history(&[2, 5]));
    assert_eq!(shown(&cache, "T-0500"), texts(&[2, 5]));
}
