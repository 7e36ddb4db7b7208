//! Appends events, one JSON line each, written through at once.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::event::Event;

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

    /// Continues an existing recording (for `--resume`).
    pub fn append(path: &Path) -> std::io::Result<Self> {
        let path = events_file(path);
        let file = OpenOptions::new().append(true).open(&path)?;
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
