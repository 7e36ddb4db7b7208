//! `support-desk summary PATH [--json]`: a recorded run's figures, from the recording alone,
//! scored with the labels the run itself was scored with (`evaluation::SCORED_NOTE`).

use std::path::{Path, PathBuf};

use clap::Args;

use super::write_stdout;
use crate::recording::Recording;
use crate::recording::summary::Summary;

#[derive(Debug, Args)]
pub struct SummaryArgs {
    /// The recording (a directory of .jsonl batches, or one .jsonl file).
    pub path: PathBuf,
    /// Print it as one JSON object.
    #[arg(long)]
    pub json: bool,
}

pub async fn execute(args: SummaryArgs) -> anyhow::Result<()> {
    let summary = summarize(&args.path)?;
    let text = if args.json {
        serde_json::to_string(&summary)?
    } else {
        summary.to_text()
    };
    write_stdout(&format!("{text}\n"))
}

/// The summary of a recorded run, read from the recording alone.
pub fn summarize(path: &Path) -> anyhow::Result<Summary> {
    let recording = Recording::read(path)?;
    let allow = recording
        .manifests
        .first()
        .map(|m| m.host.allow.clone())
        .unwrap_or_default();
    Ok(Summary::from_events(
        &recording.events,
        &scored_with(&recording),
        &allow,
    ))
}

/// The data set's labels the recorded run was scored with, as its manifests note them: a
/// run on a ticket file of one's own is scored only on the bundled tickets it held unchanged.
pub fn scored_with(recording: &Recording) -> Vec<crate::evaluation::Label> {
    let notes: Vec<_> = recording.manifests.iter().map(|m| &m.notes).collect();
    crate::evaluation::recorded(&notes)
}
