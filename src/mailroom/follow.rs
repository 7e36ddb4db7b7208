//! The mailbox followed for as long as someone listens: a pass, then a wait until mail
//! arrives (IMAP IDLE, or the kernel's word that a Maildir's `new/` changed), and again. A
//! lost connection is said and tried again, waiting longer each time.

use std::time::Duration;

use super::intake::Arrived;
use super::maildir::Watch;
use super::{Inbound, Mailroom};
use crate::mail::imap::Imap;
use crate::record::Record;

/// The longest an IMAP IDLE lasts before the desk asks again (servers drop one after 30
/// minutes of silence).
const IDLE: Duration = Duration::from_secs(25 * 60);
/// The first and the longest wait before reconnecting to a mailbox that failed.
const RECONNECT: (Duration, Duration) = (Duration::from_secs(2), Duration::from_secs(300));

/// What following the mailbox tells its listener.
#[derive(Debug)]
pub enum Heard {
    /// A pass read these (possibly none).
    Arrived(Vec<Arrived>),
    /// The mailbox failed, in words; the next try is after `retry`.
    Failed { problem: String, retry: Duration },
}

impl Mailroom {
    /// Follows the mailbox into `record` forever, telling `heard` what each pass read and
    /// each failure. Ends only when the task running it is dropped.
    pub async fn follow(&self, record: &Record, mut heard: impl FnMut(Heard)) {
        let mut wait = RECONNECT.0;
        loop {
            let problem = match &self.inbound {
                Inbound::Maildir(dir) => self.follow_maildir(record, dir, &mut heard).await,
                Inbound::Imap(account) => match Imap::connect(account).await {
                    Ok(imap) => {
                        wait = RECONNECT.0;
                        self.follow_imap(record, imap, &mut heard).await
                    }
                    Err(e) => e.to_string(),
                },
            };
            heard(Heard::Failed {
                problem,
                retry: wait,
            });
            tokio::time::sleep(wait).await;
            wait = (wait * 2).min(RECONNECT.1);
        }
    }

    async fn follow_imap(
        &self,
        record: &Record,
        mut imap: Imap,
        heard: &mut impl FnMut(Heard),
    ) -> String {
        let name = self.inbound.name();
        loop {
            match self.intake(record).pull_imap(&mut imap, &name).await {
                Ok(arrived) => heard(Heard::Arrived(arrived)),
                Err(e) => return e.to_string(),
            }
            if let Err(e) = imap.wait(IDLE).await {
                return e.to_string();
            }
        }
    }

    async fn follow_maildir(
        &self,
        record: &Record,
        dir: &std::path::Path,
        heard: &mut impl FnMut(Heard),
    ) -> String {
        let mut watch = Watch::new(dir);
        loop {
            match self.intake(record).pull_maildir(dir).await {
                Ok(arrived) => heard(Heard::Arrived(arrived)),
                Err(e) => return e.to_string(),
            }
            watch.changed(Duration::from_secs(self.poll_secs)).await;
        }
    }

    /// One pass over the mailbox: what it read.
    pub async fn pull(&self, record: &Record) -> Result<Vec<Arrived>, super::intake::IntakeError> {
        match &self.inbound {
            Inbound::Maildir(dir) => self.intake(record).pull_maildir(dir).await,
            Inbound::Imap(account) => {
                let mut imap = Imap::connect(account).await?;
                let arrived = self
                    .intake(record)
                    .pull_imap(&mut imap, &self.inbound.name())
                    .await;
                imap.logout().await;
                arrived
            }
        }
    }
}
