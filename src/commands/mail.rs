//! `support-desk mail pull|serve`: the support mailbox read into the desk's record without
//! the full-screen desk. `pull` reads what waits and prints a line for each message; `serve`
//! stays, reading mail as it arrives and delivering the replies that wait for the mail
//! server, for a desk that is not open all day.

use std::sync::Arc;

use anyhow::bail;
use clap::{Args, Subcommand};

use super::{CommonArgs, write_stdout};
use crate::host::api::{EntryKind, HostEvent};
use crate::host::core::{Host, Storage};
use crate::mailroom::Mailroom;
use crate::mailroom::intake::{self, Arrived};
use crate::model::Model;
use crate::model::replay::ReplayModel;
use crate::record::Record;
use crate::startup::{self, Overrides};
use crate::ui::sanitize::one_line;

#[derive(Debug, Subcommand)]
pub enum MailCommand {
    /// Read the mail that waits into the record, once, and say what arrived.
    Pull(MailArgs),
    /// Stay, reading mail into the record as it arrives (IMAP IDLE or a watched Maildir).
    Serve(MailArgs),
}

#[derive(Debug, Args)]
pub struct MailArgs {
    #[command(flatten)]
    pub common: CommonArgs,
}

pub async fn execute(command: MailCommand) -> anyhow::Result<()> {
    let (args, serve) = match command {
        MailCommand::Pull(args) => (args, false),
        MailCommand::Serve(args) => (args, true),
    };
    if serve {
        return serve_mail(&args.common).await;
    }
    let (mailroom, record) = open(&args.common).await?;
    let arrived = mailroom.pull(&record).await?;
    let mut text = lines(&arrived);
    let new = arrived
        .iter()
        .filter(|a| matches!(a, Arrived::Ticket { .. }))
        .count();
    text.push_str(&format!("{new} new message(s) in the record\n"));
    write_stdout(&text)
}

/// The desk's host without a person: the mailbox followed into the record and the replies
/// that wait delivered (retried as the desk retries them), each said as one line.
async fn serve_mail(common: &CommonArgs) -> anyhow::Result<()> {
    let (config, mailroom, storage) = mailbox_and_record(common).await?;
    let tickets = startup::load_tickets(&config)?;
    let mut parts = startup::host_parts(
        config,
        Model::Replay(ReplayModel::empty("mail serve (asks no model)".to_owned())),
        tickets,
        storage,
        None,
    );
    parts.mailroom = Some(mailroom);
    let (questions, _asked) = tokio::sync::mpsc::channel(1);
    let (events, mut told) = tokio::sync::mpsc::unbounded_channel();
    let host = Host::start(parts, questions, events).await;
    host.open_mailroom().await;
    let mut known = std::collections::HashMap::new();
    while let Some(event) = told.recv().await {
        let line = match event {
            HostEvent::Tickets(tickets) => tickets
                .iter()
                .filter(|t| {
                    known.insert(t.ticket_id.clone(), t.thread.len()) != Some(t.thread.len())
                })
                .filter_map(|t| t.thread.last().map(|last| (t, last)))
                .map(|(t, last)| {
                    format!(
                        "{} {}: {} \"{}\"\n",
                        t.ticket_id,
                        if last.ours { "replied" } else { "from" },
                        one_line(&last.message.from.display()),
                        one_line(&last.message.subject)
                    )
                })
                .collect(),
            HostEvent::Problem(problem) => format!("{}\n", one_line(&problem)),
            HostEvent::Happened {
                ticket, entries, ..
            } => entries
                .iter()
                .filter_map(|entry| match &entry.kind {
                    EntryKind::Delivery {
                        message_id,
                        delivered: true,
                        ..
                    } => Some(format!(
                        "{ticket}: the mail server took <{}>\n",
                        one_line(message_id)
                    )),
                    _ => None,
                })
                .collect(),
            _ => String::new(),
        };
        if !line.is_empty() {
            write_stdout(&line)?;
        }
    }
    Ok(())
}

/// The mailroom the config names, over the record the desk works on, with the record's mail
/// tickets folded in.
pub async fn open(common: &CommonArgs) -> anyhow::Result<(Arc<Mailroom>, Arc<Record>)> {
    let (_, mailroom, storage) = mailbox_and_record(common).await?;
    let Some(record) = storage.record else {
        bail!("the desk's record could not be opened");
    };
    intake::load(&record, &mailroom.tickets).await?;
    Ok((mailroom, record))
}

/// The config, its mailroom (checked: the mailbox can be read) and the desk's storage.
async fn mailbox_and_record(
    common: &CommonArgs,
) -> anyhow::Result<(crate::config::DeskConfig, Arc<Mailroom>, Storage)> {
    let config = startup::config(common.config.as_deref(), &Overrides::default())?;
    let Some(mailroom) = startup::mailroom(&config)? else {
        bail!(
            "the config names no mailbox: add a [mail] table (README, 'Your mailbox'), or pass --config FILE"
        );
    };
    let data_dir = startup::desk_data_dir(common.data_dir.as_deref())?;
    let storage = startup::storage(&config, common.store(), data_dir, &startup::staff()).await?;
    startup::check_mailbox(&mailroom).await?;
    Ok((config, mailroom, storage))
}

/// A line for each message, cleaned for the terminal.
fn lines(arrived: &[Arrived]) -> String {
    arrived
        .iter()
        .map(|one| format!("{}\n", one_line(&one.line())))
        .collect()
}
