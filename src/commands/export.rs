//! `support-desk export OUT`: the desk's record written as a JSONL recording: the team's
//! record when a store is named (`--store` or `[desk] store`), else this desk's own file.

use std::path::PathBuf;

use clap::Args;

use super::{CommonArgs, write_stdout};
use crate::record::Record;
use crate::startup::{self, Overrides};

#[derive(Debug, Args)]
pub struct ExportArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// The .jsonl file to write (never overwritten).
    pub out: PathBuf,
}

pub async fn execute(args: ExportArgs) -> anyhow::Result<()> {
    let config = startup::config(args.common.config.as_deref(), &Overrides::default())?;
    let record = match startup::team_url(&config, args.common.store())? {
        Some(url) => Record::team(&url, &config.consent.allow).await?,
        None => Record::Sqlite(startup::existing_record(args.common.data_dir.as_deref())?.0),
    };
    let count = crate::record::export(&record, &args.out).await?;
    write_stdout(&format!(
        "{count} events written to {}\n",
        args.out.display()
    ))
}
