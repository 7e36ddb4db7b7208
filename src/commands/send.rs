//! `support-desk send TICKET [--reason R]`: a ticket's reply (its draft as the record holds
//! it) sent as the person the desk runs as, checked against the ticket's call log as at the
//! desk: refused while findings are open unless `--reason` says why. A ticket that came by
//! mail goes back by mail when `[mail.smtp]` is set; the command waits for the mail server's
//! first answer.

use anyhow::bail;
use clap::Args;

use super::{CommonArgs, write_stdout};
use crate::host::core::Host;
use crate::model::Model;
use crate::model::replay::ReplayModel;
use crate::startup::{self, Overrides, host_parts, load_tickets};

#[derive(Debug, Args)]
pub struct SendArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// The ticket whose draft to send (M-00012, T-0003).
    pub ticket: String,
    /// Why the reply goes with check findings open.
    #[arg(long)]
    pub reason: Option<String>,
}

pub async fn execute(args: SendArgs) -> anyhow::Result<()> {
    let config = startup::config(args.common.config.as_deref(), &Overrides::default())?;
    let data_dir = startup::desk_data_dir(args.common.data_dir.as_deref())?;
    let person = startup::staff();
    let storage = startup::storage(&config, args.common.store(), data_dir, &person).await?;
    let tickets = load_tickets(&config)?;
    let mut parts = host_parts(
        config.clone(),
        Model::Replay(ReplayModel::empty("send (asks no model)".to_owned())),
        tickets,
        storage,
        None,
    );
    parts.mailroom = startup::mailroom(&config)?;
    let (questions, _asked) = tokio::sync::mpsc::channel(1);
    let (events, _told) = tokio::sync::mpsc::unbounded_channel();
    let host = Host::start(parts, questions, events).await;
    host.load_mail_tickets().await;
    let outcome = send(&host, &args).await;
    host.shutdown().await;
    write_stdout(&outcome?)
}

async fn send(host: &Host, args: &SendArgs) -> anyhow::Result<String> {
    let ticket = &args.ticket;
    let state = host.record().state(ticket).await?;
    let Some(draft) = state.as_ref().and_then(|s| s.draft.clone()) else {
        bail!("{ticket} has no reply to send: write one at the desk (e) first");
    };
    host.send_reply(ticket, &draft, args.reason.as_deref())
        .await
        .map_err(anyhow::Error::msg)?;
    let Some(state) = host.record().state(ticket).await? else {
        bail!("{ticket} is not in the record after its send");
    };
    let Some(delivery) = &state.delivery else {
        return Ok(format!("{ticket} sent; the reply is in the outbox\n"));
    };
    let _ = host.deliver_once(ticket, delivery.attempts + 1).await;
    let after = host.record().state(ticket).await?;
    match after.and_then(|s| s.delivery) {
        Some(d) if d.state == "delivered" => Ok(format!(
            "{ticket} sent by mail as <{}>: {}\n",
            d.message_id,
            d.words.unwrap_or_default()
        )),
        Some(d) => bail!(
            "{ticket}'s reply <{}> is recorded but the mail server has not taken it ({}); the open desk or `support-desk mail serve` tries again",
            d.message_id,
            d.words.unwrap_or_default()
        ),
        None => {
            bail!("{ticket}'s reply is recorded, but how it stands with the mail server is not")
        }
    }
}
