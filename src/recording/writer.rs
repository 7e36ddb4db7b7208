//! Appends events, one JSON line each, written through at once.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::record::event::Event;

pub struct Recorder {
    path: PathBuf,
    file: Mutex<File>,
}

/// The events file of a recording: PATH itself when it ends in `.jsonl`, else
/// `PATH/events.jsonl`.
pub fn events_file(path: &Path) -> PathBuf {
    if path.extension().is_some_and(|e| e == "jsonl") {
        path.to_path_buf()
    } else {
        path.join("events.jsonl")
    }
}

impl Recorder {
    /// Starts a new recording at `path`; refuses to overwrite one.
    pub fn create(path: &Path) -> std::io::Result<Self> {
        let path = events_file(path);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let file = OpenOptions::new()
            .create_new(true)
            .append(true)
            .open(&path)
            .map_err(|e| {
                std::io::Error::new(
                    e.kind(),
                    format!("cannot start a recording at {}: {e}", path.display()),
                )
            })?;
        Ok(Self {
            path,
            file: Mutex::new(file),
        })
    }

    /// Continues an existing recording (for `--resume`). A last line cut off mid-write is
    /// dropped first, as the reader drops it, so the next event starts on a line of its own
    /// instead of turning the cut line into damage in the middle of the file.
    pub fn append(path: &Path) -> std::io::Result<Self> {
        let path = events_file(path);
        let mut file = OpenOptions::new().append(true).open(&path).map_err(|e| {
            std::io::Error::new(
                e.kind(),
                format!("cannot continue the recording at {}: {e}", path.display()),
            )
        })?;
        let bytes = std::fs::read(&path)?;
        let whole_lines = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        let tail = &bytes[whole_lines..];
        if serde_json::from_slice::<Event>(tail).is_ok() {
            // A whole event that only lost its newline: the reader keeps it, and so do we.
            file.write_all(b"\n")?;
        } else if !tail.is_empty() {
            file.set_len(whole_lines as u64)?;
            tracing::info!(
                path = %path.display(),
                bytes = tail.len(),
                "dropped a last line cut off mid-write"
            );
        }
        Ok(Self {
            path,
            file: Mutex::new(file),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes one event as one line; the line reaches the file before this returns.
    pub fn write(&self, event: &Event) -> std::io::Result<()> {
        let mut line = serde_json::to_vec(event)?;
        line.push(b'\n');
        let mut file = self.file.lock().unwrap_or_else(|p| p.into_inner());
        file.write_all(&line)?;
        file.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recording::Recording;

    fn done(ticket: &str) -> Event {
        Event::done_for_test(ticket)
    }

    fn line(event: &Event) -> String {
        serde_json::to_string(event).expect("events serialize")
    }

    fn continued(written: &str) -> Recording {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("run.jsonl");
        std::fs::write(&path, written).expect("write");
        Recorder::append(&path)
            .expect("append")
            .write(&done("T-0003"))
            .expect("write");
        Recording::read(&path).expect("readable after continuing")
    }

    #[test]
    fn continuing_drops_a_line_cut_off_mid_write() {
        let written = format!(
            "{}\n{}",
            line(&done("T-0001")),
            &line(&done("T-0002"))[..20]
        );
        let recording = continued(&written);
        assert_eq!(recording.events, [done("T-0001"), done("T-0003")]);
        assert!(!recording.truncated);
    }

    #[test]
    fn continuing_keeps_a_whole_last_event_that_lost_its_newline() {
        let written = format!("{}\n{}", line(&done("T-0001")), line(&done("T-0002")));
        let recording = continued(&written);
        assert_eq!(
            recording.events,
            [done("T-0001"), done("T-0002"), done("T-0003")]
        );
    }
}
