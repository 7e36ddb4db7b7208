//! Reads a recording back, per ticket.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::writer::events_file;
use crate::model::replay::{RecordedCall, ReplayModel};
use crate::record::event::{Event, Manifest};

#[derive(Debug, Clone, Default)]
pub struct Recording {
    /// One manifest per batch (events file) read.
    pub manifests: Vec<Manifest>,
    pub events: Vec<Event>,
    /// A last line was cut off mid-write (a crash); everything before it was read.
    pub truncated: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error(
        "no recording at {0}: record one with `support-desk run --record PATH`, or check the path"
    )]
    Missing(String),
    #[error("cannot read {path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error(
        "{path} line {line} is not a recording event ({message}); the file is damaged before its end"
    )]
    Damaged {
        path: String,
        line: usize,
        message: String,
    },
}

impl Recording {
    /// The model this recording answers as: every recorded model call, by the messages it saw.
    pub fn replay_model(&self, source: String) -> ReplayModel {
        let calls = self.events.iter().filter_map(|event| match event {
            Event::ModelCall {
                ticket,
                turn,
                messages_hash,
                reply,
                ..
            } => Some(RecordedCall {
                ticket: ticket.clone(),
                turn: *turn,
                messages_hash: messages_hash.clone(),
                reply: reply.clone(),
            }),
            _ => None,
        });
        ReplayModel::new(source, calls)
    }

    /// Reads the recording at `path` and answers as its model.
    pub fn open_model(path: &Path) -> Result<ReplayModel, ReadError> {
        Ok(Self::read(path)?.replay_model(path.display().to_string()))
    }

    /// Reads a recording: a `.jsonl` file, or a directory whose `*.jsonl` files are batches
    /// read in name order. [`BUNDLED`] is the recording built into the binary wherever no such
    /// file or directory is, so the embedded default replays from any directory.
    pub fn read(path: &Path) -> Result<Self, ReadError> {
        if !path.exists() && names_bundled(path) {
            return Self::bundled();
        }
        let files = batch_files(path)?;
        let mut recording = Recording::default();
        for file in files {
            let bytes = std::fs::read(&file).map_err(|source| ReadError::Io {
                path: file.display().to_string(),
                source,
            })?;
            recording.add_bytes(&file, &bytes)?;
        }
        Ok(recording)
    }

    /// Adds one batch as it lies on disk. A write cut short may have cut a character in two:
    /// the line it was in cannot be whole, so it is dropped like any other cut line. Bytes
    /// that are not UTF-8 anywhere else are damage.
    pub fn add_bytes(&mut self, file: &Path, bytes: &[u8]) -> Result<(), ReadError> {
        let error = match std::str::from_utf8(bytes) {
            Ok(text) => return self.add(file, text),
            Err(error) => error,
        };
        let valid = &bytes[..error.valid_up_to()];
        if error.error_len().is_some() {
            return Err(ReadError::Damaged {
                path: file.display().to_string(),
                line: valid.iter().filter(|&&b| b == b'\n').count() + 1,
                message: "the line is not UTF-8 text".to_owned(),
            });
        }
        let whole_lines = valid.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        let text = std::str::from_utf8(&valid[..whole_lines])
            .expect("a prefix of the valid part that ends at a newline is valid UTF-8");
        self.add(file, text)?;
        self.truncated = true;
        Ok(())
    }

    /// Adds one batch's text. Only the very last line may be broken.
    pub fn add(&mut self, file: &Path, text: &str) -> Result<(), ReadError> {
        let lines: Vec<&str> = text.split('\n').collect();
        for (index, line) in lines.iter().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            match serde_json::from_str::<Event>(line) {
                Ok(Event::Manifest(manifest)) => self.manifests.push(*manifest),
                Ok(event) => self.events.push(event),
                // The last line without its newline is a write cut short.
                Err(_) if index == lines.len() - 1 => self.truncated = true,
                Err(e) => {
                    return Err(ReadError::Damaged {
                        path: file.display().to_string(),
                        line: index + 1,
                        message: e.to_string(),
                    });
                }
            }
        }
        Ok(())
    }

    /// Events grouped by ticket, tickets in order.
    pub fn by_ticket(&self) -> BTreeMap<&str, Vec<&Event>> {
        let mut tickets: BTreeMap<&str, Vec<&Event>> = BTreeMap::new();
        for event in &self.events {
            if let Some(ticket) = event.ticket() {
                tickets.entry(ticket).or_default().push(event);
            }
        }
        tickets
    }

    /// Each time a ticket was worked, in the order the runs started: a `ticket_started`
    /// begins a run, so a ticket worked twice (a person's prompt, a resumed run) gives two.
    pub fn runs(&self) -> Vec<(&str, Vec<&Event>)> {
        let mut runs: Vec<(&str, Vec<&Event>)> = Vec::new();
        let mut open: BTreeMap<&str, usize> = BTreeMap::new();
        for event in &self.events {
            let Some(ticket) = event.ticket() else {
                continue;
            };
            let index = match (event, open.get(ticket)) {
                (Event::TicketStarted { .. }, _) | (_, None) => {
                    runs.push((ticket, Vec::new()));
                    open.insert(ticket, runs.len() - 1);
                    runs.len() - 1
                }
                (_, Some(&index)) => index,
            };
            runs[index].1.push(event);
        }
        runs
    }

    /// Tickets whose run finished (a `ticket_done` event).
    pub fn finished_tickets(&self) -> Vec<&str> {
        self.events
            .iter()
            .filter_map(|e| match e {
                Event::TicketDone { ticket, .. } => Some(ticket.as_str()),
                _ => None,
            })
            .collect()
    }
}

/// The recording of a real local model working the bundled queue, which the embedded default
/// replays (`replay:recordings/ticket-runs`).
pub const BUNDLED: &str = "recordings/ticket-runs";

/// [`BUNDLED`]'s batches as they lie in the source tree, in name order (as [`batch_files`]
/// reads a directory).
const BUNDLED_BATCHES: [(&str, &str); 4] = [
    (
        "events.jsonl",
        include_str!("../../recordings/ticket-runs/events.jsonl"),
    ),
    (
        "refund-order-consent-declined.jsonl",
        include_str!("../../recordings/ticket-runs/refund-order-consent-declined.jsonl"),
    ),
    (
        "refund-order-lead-accepts.jsonl",
        include_str!("../../recordings/ticket-runs/refund-order-lead-accepts.jsonl"),
    ),
    (
        "refund-order-lead-declines.jsonl",
        include_str!("../../recordings/ticket-runs/refund-order-lead-declines.jsonl"),
    ),
];

impl Recording {
    /// The recording built into the binary, read as [`Recording::read`] reads its directory.
    pub fn bundled() -> Result<Self, ReadError> {
        let mut recording = Recording::default();
        for (name, text) in BUNDLED_BATCHES {
            recording.add(&Path::new(BUNDLED).join(name), text)?;
        }
        Ok(recording)
    }
}

/// Whether `path` names the bundled recording (`recordings/ticket-runs`, `./…/`).
fn names_bundled(path: &Path) -> bool {
    let parts = path
        .components()
        .filter(|c| *c != std::path::Component::CurDir);
    path.is_relative() && parts.eq(Path::new(BUNDLED).components())
}

fn batch_files(path: &Path) -> Result<Vec<PathBuf>, ReadError> {
    if path.is_file() {
        return Ok(vec![path.to_path_buf()]);
    }
    if !path.is_dir() {
        return Err(ReadError::Missing(path.display().to_string()));
    }
    let single = events_file(path);
    let entries = std::fs::read_dir(path).map_err(|source| ReadError::Io {
        path: path.display().to_string(),
        source,
    })?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    files.sort();
    if files.is_empty() {
        return Err(ReadError::Missing(single.display().to_string()));
    }
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bundled_recording_is_the_committed_one_and_its_name_reads_it_anywhere() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(BUNDLED);
        let mut committed: Vec<String> = std::fs::read_dir(&dir)
            .expect("the committed recording")
            .filter_map(|entry| entry.ok()?.file_name().into_string().ok())
            .filter(|name| name.ends_with(".jsonl"))
            .collect();
        committed.sort();
        let built_in: Vec<&str> = BUNDLED_BATCHES.iter().map(|(name, _)| *name).collect();
        assert_eq!(committed, built_in, "every batch of {BUNDLED} is built in");
        let on_disk = Recording::read(&dir).expect("reads");
        let bundled = Recording::bundled().expect("built in");
        assert_eq!(bundled.manifests, on_disk.manifests);
        assert_eq!(bundled.events, on_disk.events);
        assert!(!bundled.truncated);

        for name in ["recordings/ticket-runs", "./recordings/ticket-runs/"] {
            assert!(names_bundled(Path::new(name)), "{name}");
        }
        for name in [
            "/srv/recordings/ticket-runs",
            "recordings/ticket-runs/events.jsonl",
            "recordings/other",
        ] {
            assert!(!names_bundled(Path::new(name)), "{name}");
        }
    }

    const DONE: &str = r#"{"event":"ticket_done","ticket":"T-0001","model_calls":1,"stopped_at_turn_limit":false,"error":null}"#;

    #[test]
    fn a_line_cut_off_at_the_end_is_dropped_and_noted() {
        let mut recording = Recording::default();
        let text = format!("{DONE}\n{{\"event\":\"ticket_do");
        recording
            .add(Path::new("x.jsonl"), &text)
            .expect("readable");
        assert_eq!(recording.events.len(), 1);
        assert!(recording.truncated);
    }

    #[test]
    fn a_character_cut_in_two_at_the_end_drops_its_line() {
        let mut recording = Recording::default();
        let draft = r#"{"event":"draft","ticket":"T-0001","text":"EUR 5 €"#;
        let text = format!("{DONE}\n{draft}");
        let cut = &text.as_bytes()[..text.len() - 1];
        recording
            .add_bytes(Path::new("x.jsonl"), cut)
            .expect("readable");
        assert_eq!(recording.events.len(), 1);
        assert!(recording.truncated);
    }

    #[test]
    fn bytes_that_are_not_utf8_before_the_end_are_damage() {
        let mut recording = Recording::default();
        let text = [DONE.as_bytes(), b"\n\xff\n", DONE.as_bytes()].concat();
        let error = recording
            .add_bytes(Path::new("x.jsonl"), &text)
            .expect_err("damaged");
        assert!(matches!(error, ReadError::Damaged { line: 2, .. }));
    }

    #[test]
    fn a_broken_line_in_the_middle_is_damage() {
        let mut recording = Recording::default();
        let text = format!("{DONE}\nnot json\n{DONE}\n");
        let error = recording
            .add(Path::new("x.jsonl"), &text)
            .expect_err("damaged");
        assert!(matches!(error, ReadError::Damaged { line: 2, .. }));
    }
}
