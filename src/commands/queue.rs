//! `support-desk queue [--json]`: every ticket's state as the desk's record has it.

use clap::Args;

use super::{CommonArgs, write_stdout};
use crate::record::{Closing, DeskRecord, Record};
use crate::startup::{self, Overrides};

#[derive(Debug, Args)]
pub struct QueueArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// Print it as one JSON object: {"tickets": [{"id", "state", "conversation", "by", "at",
    /// "reason", "sent", "delivery", "from", "messages"}]}.
    #[arg(long)]
    pub json: bool,
}

pub async fn execute(args: QueueArgs) -> anyhow::Result<()> {
    let config = startup::config(args.common.config.as_deref(), &Overrides::default())?;
    let mut tickets = startup::load_tickets(&config)?;
    let allow = &config.consent.allow;
    let closing = Closing {
        after_days: config.mail.as_ref().map_or(4, |m| m.close_after_days),
        now: crate::clock::unix_ms(),
    };
    let rows = match startup::team_url(&config, args.common.store())? {
        Some(url) => {
            let record = Record::team(&url, allow).await?;
            tickets.extend(startup::mail_tickets(&config, &record).await?);
            let owners = record.owners().await?;
            let mut rows =
                crate::record::queue(&tickets, &record.states().await?, true, allow, closing);
            crate::record::with_owners(&mut rows, &owners, closing.now);
            rows
        }
        None => {
            let (record, path) = startup::existing_record(args.common.data_dir.as_deref())?;
            let in_use = DeskRecord::in_use(&path);
            let record = Record::Sqlite(record);
            tickets.extend(startup::mail_tickets(&config, &record).await?);
            crate::record::queue(&tickets, &record.states().await?, in_use, allow, closing)
        }
    };
    let text = if args.json {
        format!("{}\n", serde_json::json!({ "tickets": rows }))
    } else {
        crate::record::queue_text(&rows)
    };
    write_stdout(&text)
}
