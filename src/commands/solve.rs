//! `support-desk solve TICKET [--note N]`: a person's word that a ticket's conversation is
//! done, recorded as them; the customer's next message opens it again.

use anyhow::bail;
use clap::Args;

use super::{CommonArgs, write_stdout};
use crate::record::Event;
use crate::startup::{self, Overrides};

#[derive(Debug, Args)]
pub struct SolveArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// The ticket (M-00012, T-0003).
    pub ticket: String,
    /// A note for the team, kept with the solve.
    #[arg(long)]
    pub note: Option<String>,
}

pub async fn execute(args: SolveArgs) -> anyhow::Result<()> {
    let config = startup::config(args.common.config.as_deref(), &Overrides::default())?;
    let data_dir = startup::desk_data_dir(args.common.data_dir.as_deref())?;
    let storage =
        startup::storage(&config, args.common.store(), data_dir, &startup::staff()).await?;
    let Some(record) = storage.record else {
        bail!("the desk's record could not be opened");
    };
    let mut tickets = startup::load_tickets(&config)?;
    tickets.extend(startup::mail_tickets(&config, &record).await?);
    if crate::tickets::find(&tickets, &args.ticket).is_none() {
        bail!(
            "there is no ticket {} in this desk's queue; `support-desk queue` lists them",
            args.ticket
        );
    }
    let appended = record
        .append(&Event::Solved {
            ticket: args.ticket.clone(),
            by: record.person().to_owned(),
            note: args
                .note
                .as_deref()
                .map(str::trim)
                .filter(|n| !n.is_empty())
                .map(str::to_owned),
        })
        .await?;
    write_stdout(&format!(
        "{} solved by {}; the customer's next message opens it again\n",
        args.ticket, appended.stored.by
    ))
}
