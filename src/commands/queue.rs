//! `support-desk queue [--json]`: every ticket's state as the desk's record has it.

use clap::Args;

use super::{CommonArgs, write_stdout};
use crate::record::DeskRecord;
use crate::startup::{self, Overrides};

#[derive(Debug, Args)]
pub struct QueueArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// Print it as one JSON object: {"tickets": [{"id", "state", "by", "at", "reason", "sent"}]}.
    #[arg(long)]
    pub json: bool,
}

pub async fn execute(args: QueueArgs) -> anyhow::Result<()> {
    let config = startup::config(args.common.config.as_deref(), &Overrides::default())?;
    let tickets = startup::load_tickets(&config)?;
    let allow = &config.consent.allow;
    let rows = match startup::team_url(&config, args.common.store())? {
        Some(url) => {
            let record = crate::record::Record::team(&url, allow).await?;
            let owners = record.owners().await?;
            let mut rows = crate::record::queue(&tickets, &record.states().await?, true, allow);
            crate::record::with_owners(&mut rows, &owners, crate::clock::unix_ms());
            rows
        }
        None => {
            let (record, path) = startup::existing_record(args.common.data_dir.as_deref())?;
            let in_use = DeskRecord::in_use(&path);
            crate::record::queue(&tickets, &record.states()?, in_use, allow)
        }
    };
    let text = if args.json {
        format!("{}\n", serde_json::json!({ "tickets": rows }))
    } else {
        crate::record::queue_text(&rows)
    };
    write_stdout(&text)
}
