//! `support-desk review [PATH] [--against OTHER]`: a recorded run, read-only, turn by turn.
//!
//! Each draft shows its findings as the recording holds them, and under them what today's
//! check finds otherwise in the same words (`host::checks::recheck`): a recording is evidence
//! of what the model said, and a check that widened since is not taken for the model's doing.

use std::path::{Path, PathBuf};

use clap::Args;

use crate::record::transcript::EntryKind;
use crate::recording::Recording;
use crate::recording::review::Review;
use crate::tickets::Ticket;

#[derive(Debug, Args)]
pub struct ReviewArgs {
    /// The recording (a directory of .jsonl batches, or one .jsonl file).
    #[arg(default_value = crate::recording::reader::BUNDLED)]
    pub path: PathBuf,
    /// Another recording to hold it against: the two runs of each ticket side by side
    /// (`c`), and both runs' figures as a chart (`g`).
    #[arg(long)]
    pub against: Option<PathBuf>,
}

pub async fn execute(args: ReviewArgs) -> anyhow::Result<()> {
    crate::ui::theme::set(crate::ui::theme::chosen(
        false,
        std::env::var_os("NO_COLOR"),
    ));
    let screen = match &args.against {
        Some(other) => crate::ui::review::ReviewScreen::against(open(&args.path)?, open(other)?),
        None => crate::ui::review::ReviewScreen::new(open(&args.path)?),
    };
    crate::ui::terminal::run_review(screen).await
}

/// The recording at `path` for review, against the bundled tickets, each draft's findings
/// as recorded and as today's check finds them.
pub fn open(path: &Path) -> anyhow::Result<Review> {
    let recording = Recording::read(path)?;
    let tickets = crate::tickets::bundled();
    let mut review = Review::from_recording(&path.display().to_string(), &recording, &tickets);
    with_findings_now(&mut review, &recording, &tickets);
    Ok(review)
}

/// Adds, under each draft whose recorded findings today's check would not make, a line for
/// each finding it adds and each it no longer makes. `review` is `recording`'s.
pub fn with_findings_now(review: &mut Review, recording: &Recording, tickets: &[Ticket]) {
    let mut rechecked = super::compare::rechecked_runs(recording, tickets);
    // A review lists a ticket's runs in the order they ran, as the comparison counts them.
    let mut runs_seen: std::collections::BTreeMap<String, usize> = Default::default();
    for ticket in &mut review.tickets {
        let run = runs_seen.entry(ticket.ticket.clone()).or_default();
        *run += 1;
        let Some(now) = rechecked.remove(&(ticket.ticket.clone(), *run)) else {
            continue;
        };
        if !now.differs() {
            continue;
        }
        let draft = ticket
            .entries
            .iter_mut()
            .find_map(|entry| match &mut entry.kind {
                EntryKind::Draft { findings, .. } => Some(findings),
                _ => None,
            });
        if let Some(findings) = draft {
            findings.extend(
                now.added()
                    .into_iter()
                    .map(|f| format!("today's check also finds: {}", f.reason())),
            );
            findings.extend(
                now.dropped()
                    .into_iter()
                    .map(|f| format!("today's check no longer finds: {}", f.reason())),
            );
        }
    }
}
