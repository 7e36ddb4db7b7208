//! `support-desk assign TICKET PERSON` and `support-desk tag TICKET TAG [--remove]`: whose a
//! ticket is and how it is tagged, recorded as the person logged in (on a team, the database
//! decides who may give whose ticket away).

use anyhow::bail;
use clap::Args;

use super::{CommonArgs, write_stdout};
use crate::record::owners::{assignment, tagging};
use crate::record::{Event, Record, TicketState};
use crate::startup::{self, Overrides};

#[derive(Debug, Args)]
pub struct AssignArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// The ticket (T-0003, M-00012).
    pub ticket: String,
    /// A person's name, `me`, or `nobody`.
    pub person: String,
}

#[derive(Debug, Args)]
pub struct TagArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// The ticket (T-0003, M-00012).
    pub ticket: String,
    /// The tag: letters, digits, - and _.
    pub tag: String,
    /// Take the tag off instead.
    #[arg(long)]
    pub remove: bool,
}

pub async fn assign(args: AssignArgs) -> anyhow::Result<()> {
    let (record, state) = open(&args.common, &args.ticket).await?;
    let event =
        assignment(&state, record.person(), Some(&args.person)).map_err(anyhow::Error::msg)?;
    let Event::Assigned { to, .. } = &event else {
        unreachable!("an assignment is an Assigned event");
    };
    let said = match to {
        Some(to) => format!("{} is {to}'s now\n", args.ticket),
        None => format!("{} is nobody's now\n", args.ticket),
    };
    record.append(&event).await?;
    write_stdout(&said)
}

pub async fn tag(args: TagArgs) -> anyhow::Result<()> {
    let (record, state) = open(&args.common, &args.ticket).await?;
    let event =
        tagging(&state, record.person(), &args.tag, args.remove).map_err(anyhow::Error::msg)?;
    record.append(&event).await?;
    let Event::Tagged { tag, .. } = &event else {
        unreachable!("a tagging is a Tagged event");
    };
    let done = if args.remove { "untagged" } else { "tagged" };
    write_stdout(&format!("{} {done} {tag}\n", args.ticket))
}

/// The desk's record and the ticket's state in it; refused for a ticket the queue lacks.
async fn open(
    common: &CommonArgs,
    ticket: &str,
) -> anyhow::Result<(std::sync::Arc<Record>, TicketState)> {
    let config = startup::config(common.config.as_deref(), &Overrides::default())?;
    let data_dir = startup::desk_data_dir(common.data_dir.as_deref())?;
    let storage = startup::storage(&config, common.store(), data_dir, &startup::staff()).await?;
    let Some(record) = storage.record else {
        bail!("the desk's record could not be opened");
    };
    let mut tickets = startup::load_tickets(&config)?;
    tickets.extend(startup::mail_tickets(&config, &record).await?);
    if crate::tickets::find(&tickets, ticket).is_none() {
        bail!("there is no ticket {ticket} in this desk's queue; `support-desk queue` lists them");
    }
    let state = record
        .state(ticket)
        .await?
        .unwrap_or_else(|| TicketState::new(ticket));
    Ok((record, state))
}
