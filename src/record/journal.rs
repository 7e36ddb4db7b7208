//! The record's journal (`desk.journal` beside the SQLite file): every event a working desk
//! appends, as one JSON line written with one `write` before the append returns, with the
//! state it left its ticket in.
//!
//! Once `write` has returned, the line belongs to the kernel: killing the desk cannot lose it,
//! just as it cannot lose an SQLite commit under `synchronous = NORMAL` (neither survives a
//! power cut unsynced). The SQLite tables are brought up to date from the same events by the
//! record's own thread (`store/tables.rs`), and whoever opens the record next with no
//! desk working on it applies the lines the tables do not have yet, then empties the journal.
//! A line cut short by a kill or a power cut has no newline, or does not parse: it and
//! anything after it were never acknowledged, and are dropped.

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::state::TicketState;
use crate::record::Event;

/// The journal beside the record at `record`.
pub(super) fn path_for(record: &Path) -> PathBuf {
    record.with_extension("journal")
}

pub(super) struct Journal {
    file: File,
    path: PathBuf,
    /// Bytes of whole lines in the file; a failed write is cut back to this.
    len: u64,
}

/// One line of the journal, as recovery reads it.
#[derive(Debug, Deserialize)]
pub(super) struct Line {
    pub seq: i64,
    /// Unix milliseconds.
    pub at: i64,
    pub by: String,
    pub event: Event,
    /// The state the event left its ticket in (`None` for the manifest).
    pub state: Option<TicketState>,
}

impl Journal {
    /// Opens (or creates) the journal at `path` and reads its whole lines; a torn tail is cut
    /// off the file, so that the next line starts on a line of its own.
    pub(super) fn open(path: &Path) -> std::io::Result<(Self, Vec<Line>)> {
        let mut file = OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .open(path)?;
        let mut text = Vec::new();
        file.read_to_end(&mut text)?;
        let (lines, whole) = parse(&text);
        if whole < text.len() {
            tracing::warn!(
                journal = %path.display(),
                dropped_bytes = text.len() - whole,
                "the record's journal ended in a line that was never acknowledged; dropped it"
            );
            file.set_len(whole as u64)?;
        }
        let journal = Self {
            file,
            path: path.to_owned(),
            len: whole as u64,
        };
        Ok((journal, lines))
    }

    pub(super) fn path(&self) -> &Path {
        &self.path
    }

    pub(super) fn len(&self) -> u64 {
        self.len
    }

    /// Writes one whole line. A write that fails part way is cut back off the file, so the
    /// journal never holds half a line before a whole one.
    pub(super) fn append(&mut self, line: &[u8]) -> std::io::Result<()> {
        debug_assert!(line.ends_with(b"\n"));
        match self.file.write_all(line) {
            Ok(()) => {
                self.len += line.len() as u64;
                Ok(())
            }
            Err(error) => {
                // O_APPEND: the next write goes to the end, wherever this one stopped.
                if let Err(cut) = self.file.set_len(self.len) {
                    tracing::error!(journal = %self.path.display(), %cut, "could not cut a failed journal write back off");
                }
                Err(error)
            }
        }
    }

    /// Empties the journal: call it only when the SQLite tables hold every line.
    pub(super) fn clear(&mut self) -> std::io::Result<()> {
        self.file.set_len(0)?;
        self.len = 0;
        Ok(())
    }
}

/// One journal line: `{"seq":…,"at":…,"by":…,"event":…,"state":…}` and a newline. `by` is
/// already JSON (a quoted string), `event` and `state` too, as the SQLite tables keep them.
pub(super) fn line(
    seq: i64,
    at: i64,
    by_json: &str,
    event_json: &str,
    state_json: Option<&str>,
) -> Vec<u8> {
    let state_json = state_json.unwrap_or("null");
    let mut line = Vec::with_capacity(48 + by_json.len() + event_json.len() + state_json.len());
    // Writing into a Vec cannot fail.
    let _ = writeln!(
        line,
        "{{\"seq\":{seq},\"at\":{at},\"by\":{by_json},\"event\":{event_json},\"state\":{state_json}}}"
    );
    line
}

/// The whole, readable lines at the start of `text`, and how many bytes they take.
fn parse(text: &[u8]) -> (Vec<Line>, usize) {
    let mut lines = Vec::new();
    let mut whole = 0;
    for raw in text.split_inclusive(|b| *b == b'\n') {
        if !raw.ends_with(b"\n") {
            break;
        }
        match serde_json::from_slice::<Line>(raw) {
            Ok(line) => lines.push(line),
            Err(error) => {
                tracing::warn!(%error, "a journal line does not parse; it and what follows were never acknowledged");
                break;
            }
        }
        whole += raw.len();
    }
    (lines, whole)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn noted(ticket: &str, text: &str) -> Event {
        Event::Noted {
            ticket: ticket.into(),
            by: "dana".into(),
            text: text.into(),
        }
    }

    fn line_of(seq: i64, event: &Event) -> Vec<u8> {
        let mut state = TicketState::new(event.ticket().unwrap_or_default());
        state.model_calls = seq as u32;
        line(
            seq,
            1_000 + seq,
            "\"dana\"",
            &serde_json::to_string(event).expect("json"),
            Some(&serde_json::to_string(&state).expect("json")),
        )
    }

    #[test]
    fn whole_lines_read_back_as_written() {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let path = dir.path().join("desk.journal");
        let events = [
            noted("T-0001", "first"),
            noted("T-0002", "a \"quoted\"\nline"),
        ];
        {
            let (mut journal, lines) = Journal::open(&path).expect("opens");
            assert!(lines.is_empty());
            for (n, event) in events.iter().enumerate() {
                journal
                    .append(&line_of(n as i64 + 1, event))
                    .expect("writes");
            }
        }
        let (journal, lines) = Journal::open(&path).expect("opens again");
        assert_eq!(
            journal.len(),
            std::fs::metadata(&path).expect("there").len()
        );
        let read: Vec<(i64, i64, &str, &Event, u32)> = lines
            .iter()
            .map(|l| {
                let state = l.state.as_ref().expect("a state");
                (l.seq, l.at, l.by.as_str(), &l.event, state.model_calls)
            })
            .collect();
        assert_eq!(
            read,
            vec![
                (1, 1_001, "dana", &events[0], 1),
                (2, 1_002, "dana", &events[1], 2)
            ]
        );
    }

    #[test]
    fn a_line_cut_short_is_dropped_and_cut_off_the_file_so_the_next_one_starts_clean() {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let path = dir.path().join("desk.journal");
        let whole = line_of(1, &noted("T-0001", "kept"));
        let torn = line_of(2, &noted("T-0001", "never acknowledged"));
        for cut in [1, torn.len() / 2, torn.len() - 1] {
            let mut text = whole.clone();
            text.extend_from_slice(&torn[..cut]);
            std::fs::write(&path, &text).expect("written");
            let (mut journal, lines) = Journal::open(&path).expect("opens");
            assert_eq!(
                lines.iter().map(|l| l.seq).collect::<Vec<_>>(),
                vec![1],
                "cut at {cut}"
            );
            assert_eq!(std::fs::read(&path).expect("read"), whole, "cut at {cut}");
            journal
                .append(&line_of(2, &noted("T-0001", "next")))
                .expect("writes");
            let (_, lines) = Journal::open(&path).expect("opens again");
            assert_eq!(
                lines.iter().map(|l| l.seq).collect::<Vec<_>>(),
                vec![1, 2],
                "cut at {cut}"
            );
        }
    }

    #[test]
    fn a_line_that_does_not_parse_ends_what_is_read_even_with_a_newline() {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let path = dir.path().join("desk.journal");
        let mut text = line_of(1, &noted("T-0001", "kept"));
        // What a power cut can leave: a block of zeros where a line's middle was.
        let mut zeroed = line_of(2, &noted("T-0001", "lost"));
        let middle = zeroed.len() / 2;
        zeroed[middle - 4..middle + 4].fill(0);
        text.extend_from_slice(&zeroed);
        text.extend_from_slice(&line_of(3, &noted("T-0001", "after the hole")));
        std::fs::write(&path, &text).expect("written");
        let (journal, lines) = Journal::open(&path).expect("opens");
        assert_eq!(lines.iter().map(|l| l.seq).collect::<Vec<_>>(), vec![1]);
        assert_eq!(
            journal.len(),
            line_of(1, &noted("T-0001", "kept")).len() as u64
        );
    }

    #[test]
    fn clearing_empties_the_file_and_appends_start_again_at_its_start() {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let path = dir.path().join("desk.journal");
        let (mut journal, _) = Journal::open(&path).expect("opens");
        journal
            .append(&line_of(1, &noted("T-0001", "applied")))
            .expect("writes");
        journal.clear().expect("clears");
        journal
            .append(&line_of(2, &noted("T-0001", "pending")))
            .expect("writes");
        let (_, lines) = Journal::open(&path).expect("opens again");
        assert_eq!(lines.iter().map(|l| l.seq).collect::<Vec<_>>(), vec![2]);
    }
}
