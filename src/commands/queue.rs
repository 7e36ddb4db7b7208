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
    /// "reason", "sent", "delivery", "from", "messages", "due_at", "due", "assignee", "tags"}]}.
    #[arg(long)]
    pub json: bool,
    /// Only the tickets of a view: one of the config's `[views]`, or mine, unassigned, open,
    /// pending, solved.
    #[arg(long)]
    pub view: Option<String>,
}

pub async fn execute(args: QueueArgs) -> anyhow::Result<()> {
    let config = startup::config(args.common.config.as_deref(), &Overrides::default())?;
    let mut tickets = startup::load_tickets(&config)?;
    let allow = &config.consent.allow;
    let view = args
        .view
        .as_deref()
        .map(|name| crate::views::named(name, &config.views))
        .transpose()
        .map_err(anyhow::Error::msg)?;
    let closing = Closing {
        after_days: config.close_after_days(),
        now: crate::clock::unix_ms(),
    };
    let (mut rows, states, me) = match startup::team_url(&config, args.common.store())? {
        Some(url) => {
            let record = Record::team(&url, allow).await?;
            let me = record.person().to_owned();
            tickets.extend(startup::mail_tickets(&config, &record).await?);
            let owners = record.owners().await?;
            let states = record.states().await?;
            let mut rows = crate::record::queue(&tickets, &states, true, allow, closing);
            crate::record::with_owners(&mut rows, &owners, closing.now);
            (rows, states, me)
        }
        None => {
            let (record, path) = startup::existing_record(args.common.data_dir.as_deref())?;
            let in_use = DeskRecord::in_use(&path);
            let record = Record::Sqlite(record);
            tickets.extend(startup::mail_tickets(&config, &record).await?);
            let states = record.states().await?;
            let rows = crate::record::queue(&tickets, &states, in_use, allow, closing);
            (rows, states, startup::staff())
        }
    };
    if let Some(sla) = config
        .sla
        .as_ref()
        .map(crate::config::SlaConfig::build)
        .transpose()?
    {
        with_due(&mut rows, &tickets, &states, &sla, closing.now);
    }
    if let Some(view) = &view {
        rows.retain(|row| {
            let state = states.iter().find(|s| s.ticket == row.id);
            let fresh = crate::record::TicketState::new(&row.id);
            crate::tickets::find(&tickets, &row.id)
                .is_some_and(|ticket| view.admits(ticket, state.unwrap_or(&fresh), &me))
        });
    }
    let text = if args.json {
        format!("{}\n", serde_json::json!({ "tickets": rows }))
    } else {
        crate::record::queue_text(&rows)
    };
    write_stdout(&text)
}

/// Each row's due time against `sla`, as of `now`.
fn with_due(
    rows: &mut [crate::record::QueueRow],
    tickets: &[crate::tickets::Ticket],
    states: &[crate::record::TicketState],
    sla: &crate::sla::Sla,
    now: i64,
) {
    for row in rows {
        let Some(ticket) = crate::tickets::find(tickets, &row.id) else {
            continue;
        };
        let state = states
            .iter()
            .find(|s| s.ticket == row.id)
            .cloned()
            .unwrap_or_else(|| crate::record::TicketState::new(&row.id));
        if let Some(at) = crate::sla::due_at(sla, ticket, &state) {
            row.due_at = Some(crate::record::rfc3339(at));
            row.due = Some(crate::sla::Due::of(at, now, sla.warn_within).as_str());
        }
    }
}
