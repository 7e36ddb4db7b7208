//! `support-desk call TICKET PREFIX.TOOL [--arg NAME=VALUE]… [--lead accept|decline]`: a
//! person calls a tool on a ticket without the full-screen desk, as the person the desk runs
//! as, through the same gate, lead routing and record as `c` at the desk. On one person's desk
//! `--lead` answers the server's form (the shop's release form); on a team that form goes to
//! the team's leads as an approval.

use anyhow::bail;
use clap::Args;

use super::run::{LeadScript, Script, answer_by_script};
use super::{CommonArgs, pairs, write_stdout};
use crate::host::api::{FormAnswer, FormKind, from_text, in_words, validate};
use crate::host::core::Host;
use crate::model::Model;
use crate::model::replay::ReplayModel;
use crate::startup::{self, Overrides, host_parts, load_tickets};

#[derive(Debug, Args)]
pub struct CallArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// The ticket the call is for (T-0003).
    pub ticket: String,
    /// The tool, as the desk names it (shop.quote_refund).
    pub tool: String,
    /// One of the tool's arguments, as name=value (typed by the tool's schema).
    #[arg(long = "arg", value_name = "NAME=VALUE")]
    pub args: Vec<String>,
    /// The answer to a server's form the call brings up (decline when not given). Only on one
    /// person's desk: on a team a lead's form goes to the team's leads.
    #[arg(long, value_enum)]
    pub lead: Option<LeadScript>,
}

pub async fn execute(args: CallArgs) -> anyhow::Result<()> {
    let config = startup::config(args.common.config.as_deref(), &Overrides::default())?;
    let data_dir = startup::desk_data_dir(args.common.data_dir.as_deref())?;
    let person = startup::staff();
    let storage = startup::storage(&config, args.common.store(), data_dir, &person).await?;
    let on_team = storage
        .record
        .as_ref()
        .is_some_and(|r| r.team_url().is_some());
    if on_team && args.lead.is_some() {
        bail!(
            "on a team a lead's form goes to the team's leads as an approval: --lead answers it only on one person's desk"
        );
    }
    let person = storage.person();
    let tickets = load_tickets(&config)?;
    // A person's call asks no model: the host gets one that has nothing to say.
    let model = Model::Replay(ReplayModel::empty("call (asks no model)".to_owned()));
    let (questions_tx, questions) = tokio::sync::mpsc::channel(4);
    let (events_tx, _events) = tokio::sync::mpsc::unbounded_channel();
    let host = Host::start(
        host_parts(config, model, tickets, storage, None),
        questions_tx,
        events_tx,
    )
    .await;
    let script = Script {
        approve_consent: false,
        accept_forms: matches!(args.lead, Some(LeadScript::Accept)),
    };
    let answering = tokio::spawn(answer_by_script(questions, script, person));
    let called = match answer_for(&host, &args).await {
        Ok(answer) => host.person_call(&args.ticket, &args.tool, &answer).await,
        Err(problem) => Err(problem),
    };
    answering.abort();
    host.shutdown().await;
    let called = called.map_err(anyhow::Error::msg)?;
    let said = match called.approval {
        Some(id) => format!(
            "{} · {}: its lead's form went to the team's leads as approval {id}\n",
            args.ticket, called.tool
        ),
        None => format!(
            "{} · {} → {}: {}\n",
            args.ticket,
            called.tool,
            called.outcome.label(),
            called.text
        ),
    };
    write_stdout(&said)
}

/// The `--arg` values as the answer to the tool's arguments' form, typed and checked by it.
async fn answer_for(host: &Host, args: &CallArgs) -> Result<FormAnswer, String> {
    let tools = host.tools_for_people().await;
    let Some(tool) = tools.iter().find(|t| t.name == args.tool) else {
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
        return Err(format!(
            "there is no tool {} on this desk's servers; they offer {}",
            args.tool,
            names.join(", ")
        ));
    };
    let FormKind::Fields(fields) = &tool.form else {
        return Err(format!(
            "{} takes no arguments this desk can write",
            args.tool
        ));
    };
    let given = pairs("--arg", &args.args).map_err(|e| e.to_string())?;
    let values = from_text(fields, given)?;
    validate(fields, &values).map_err(|problems| {
        format!(
            "the arguments do not fit {} ({}); give each with --arg name=value",
            args.tool,
            in_words(&problems)
        )
    })?;
    Ok(FormAnswer::Accept(values))
}
