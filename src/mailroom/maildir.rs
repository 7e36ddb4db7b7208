//! A Maildir as a team's MTA, fetchmail or mbsync delivers it: new mail is a file in `new/`;
//! once the record holds it, the file moves to `cur/` marked seen (`:2,S`), as a mail reader
//! would move it. A kill between the two leaves the file in `new/`, and the next pass finds
//! its Message-ID already in the record.

use std::path::{Path, PathBuf};

/// One message waiting in `new/`.
#[derive(Debug)]
pub struct Waiting {
    pub path: PathBuf,
    pub raw: Vec<u8>,
}

#[derive(Debug, thiserror::Error)]
pub enum MaildirError {
    #[error(
        "{} is not a Maildir the desk can read ({source}); check [mail] maildir: it needs new/, cur/ and tmp/",
        path.display()
    )]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "cannot mark {} as read ({source}); check the Maildir's permissions: the desk moves what it took from new/ to cur/",
        path.display()
    )]
    Move {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// The files in `dir/new`, oldest name first (delivery names start with the time), at most
/// `limit` of them.
pub fn waiting(dir: &Path, limit: usize) -> Result<Vec<PathBuf>, MaildirError> {
    let new = dir.join("new");
    let read = |source| MaildirError::Read {
        path: new.clone(),
        source,
    };
    for sub in ["cur", "tmp"] {
        std::fs::metadata(dir.join(sub)).map_err(|source| MaildirError::Read {
            path: dir.join(sub),
            source,
        })?;
    }
    let mut names: Vec<PathBuf> = std::fs::read_dir(&new)
        .map_err(read)?
        .filter_map(Result::ok)
        .filter(|entry| entry.file_type().is_ok_and(|t| t.is_file()))
        .map(|entry| entry.path())
        .filter(|path| !is_hidden(path))
        .collect();
    names.sort();
    names.truncate(limit);
    Ok(names)
}

/// The message at `path`; `None` when another reader took it first.
pub fn read(path: &Path) -> Result<Option<Waiting>, MaildirError> {
    match std::fs::read(path) {
        Ok(raw) => Ok(Some(Waiting {
            path: path.to_owned(),
            raw,
        })),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(MaildirError::Read {
            path: path.to_owned(),
            source,
        }),
    }
}

/// Moves a message the record holds from `new/` to `cur/`, marked seen.
pub fn mark_read(dir: &Path, path: &Path) -> Result<(), MaildirError> {
    let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
        return Ok(());
    };
    let base = name.split(':').next().unwrap_or(name);
    let to = dir.join("cur").join(format!("{base}:2,S"));
    match std::fs::rename(path, &to) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(source) => Err(MaildirError::Move {
            path: path.to_owned(),
            source,
        }),
    }
}

/// Waits for a Maildir's `new/` to change: woken by the kernel (inotify) where it can, and
/// by the poll interval in any case.
pub struct Watch {
    woken: Option<tokio::sync::mpsc::Receiver<()>>,
}

impl Watch {
    /// Watches `dir/new`; without inotify (another system, a file system that lacks it) the
    /// watch only waits out the interval.
    pub fn new(dir: &Path) -> Self {
        let (tx, rx) = tokio::sync::mpsc::channel(1);
        let new = dir.join("new");
        let started = std::thread::Builder::new()
            .name("maildir-watch".into())
            .spawn(move || inotify::follow(&new, &tx));
        Self {
            woken: started.ok().map(|_| rx),
        }
    }

    /// Returns when something landed in `new/`, or after `longest`.
    pub async fn changed(&mut self, longest: std::time::Duration) {
        match &mut self.woken {
            Some(woken) => {
                let _ = tokio::time::timeout(longest, woken.recv()).await;
            }
            None => tokio::time::sleep(longest).await,
        }
    }
}

#[cfg(target_os = "linux")]
mod inotify {
    use std::path::Path;

    use rustix::fs::inotify::{self, CreateFlags, WatchFlags};

    /// Sends on `tx` each time a file is created in or moved into `dir`; ends when the
    /// receiver is gone or the kernel refuses.
    pub(super) fn follow(dir: &Path, tx: &tokio::sync::mpsc::Sender<()>) {
        let Ok(fd) = inotify::init(CreateFlags::CLOEXEC) else {
            return;
        };
        if inotify::add_watch(&fd, dir, WatchFlags::CREATE | WatchFlags::MOVED_TO).is_err() {
            return;
        }
        let mut buffer = [std::mem::MaybeUninit::<u8>::uninit(); 4096];
        loop {
            let mut reader = inotify::Reader::new(&fd, &mut buffer);
            if reader.next().is_err() {
                return;
            }
            // A full channel already holds a wake-up: the pass it starts reads all of new/.
            if tx.is_closed() {
                return;
            }
            let _ = tx.try_send(());
        }
    }
}

#[cfg(not(target_os = "linux"))]
mod inotify {
    pub(super) fn follow(_dir: &std::path::Path, _tx: &tokio::sync::mpsc::Sender<()>) {}
}

fn is_hidden(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with('.'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn maildir() -> tempfile::TempDir {
        let dir = tempfile::tempdir().expect("dir");
        for sub in ["new", "cur", "tmp"] {
            std::fs::create_dir(dir.path().join(sub)).expect("mkdir");
        }
        dir
    }

    #[test]
    fn new_mail_is_read_oldest_first_and_moves_to_cur_marked_seen() {
        let dir = maildir();
        std::fs::write(dir.path().join("new/200.b.host"), b"second").expect("write");
        std::fs::write(dir.path().join("new/100.a.host"), b"first").expect("write");
        std::fs::write(dir.path().join("new/.hidden"), b"no").expect("write");
        let names = waiting(dir.path(), 10).expect("waiting");
        assert_eq!(names.len(), 2);
        let first = read(&names[0]).expect("read").expect("there");
        assert_eq!(first.raw, b"first");
        mark_read(dir.path(), &first.path).expect("moved");
        assert!(dir.path().join("cur/100.a.host:2,S").is_file());
        assert_eq!(waiting(dir.path(), 10).expect("waiting").len(), 1);
        // Taken by someone else meanwhile: nothing to read, nothing to move.
        assert!(read(&first.path).expect("read").is_none());
        mark_read(dir.path(), &first.path).expect("nothing to move");
    }

    #[test]
    fn a_directory_that_is_not_a_maildir_is_said_so() {
        let dir = tempfile::tempdir().expect("dir");
        let error = waiting(dir.path(), 10).expect_err("no cur/");
        assert!(
            error.to_string().contains("needs new/, cur/ and tmp/"),
            "{error}"
        );
    }
}
