//! `support-desk export OUT`: the desk's record written as a JSONL recording.

use std::path::PathBuf;

use clap::Args;

use super::{CommonArgs, write_stdout};
use crate::startup;

#[derive(Debug, Args)]
pub struct ExportArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// The .jsonl file to write (never overwritten).
    pub out: PathBuf,
}

pub async fn execute(args: ExportArgs) -> anyhow::Result<()> {
    let (record, _) = startup::existing_record(args.common.data_dir.as_deref())?;
    let count = crate::record::export(&record, &args.out)?;
    write_stdout(&format!(
        "{count} events written to {}\n",
        args.out.display()
    ))
}
