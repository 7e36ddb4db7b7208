//! `support-desk replies [--json]`: the saved replies and macros the desk would load, each with
//! where it comes from (the config, the data directory's `replies.toml`, the team's record);
//! and on a team, `replies set NAME --file FILE` and `replies remove NAME`, which change the
//! team's (only a lead may: the database decides).

use std::path::PathBuf;

use anyhow::bail;
use clap::{Args, Subcommand};
use serde_json::{Value, json};

use super::{CommonArgs, write_stdout};
use crate::config::DeskConfig;
use crate::record::Record;
use crate::record::postgres::TeamReply;
use crate::replies::{self, SOLVED, SavedReply, Source};
use crate::startup::{self, Overrides};

#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct RepliesArgs {
    #[command(subcommand)]
    pub command: Option<RepliesCommand>,
    #[command(flatten)]
    pub list: ListArgs,
}

#[derive(Debug, Args)]
pub struct ListArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// Print them as one JSON object: {"replies": [{"name", "from", "text", "tags", …}]}.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Subcommand)]
pub enum RepliesCommand {
    /// Add or change one of the team's saved replies (leads only; needs --store).
    Set(SetArgs),
    /// Remove one of the team's saved replies (leads only; needs --store).
    Remove(RemoveArgs),
}

#[derive(Debug, Args)]
pub struct SetArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// The name `:reply NAME` and `:macro NAME` find it by.
    pub name: String,
    /// A TOML file holding the one reply: text = "…", and any of tags, assign, note, state.
    #[arg(long, value_name = "FILE")]
    pub file: PathBuf,
}

#[derive(Debug, Args)]
pub struct RemoveArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    pub name: String,
}

pub async fn execute(args: RepliesArgs) -> anyhow::Result<()> {
    match args.command {
        None => list(args.list).await,
        Some(RepliesCommand::Set(args)) => set(args).await,
        Some(RepliesCommand::Remove(args)) => remove(args).await,
    }
}

async fn list(args: ListArgs) -> anyhow::Result<()> {
    let config = startup::config(args.common.config.as_deref(), &Overrides::default())?;
    let rows = match startup::team_url(&config, args.common.store())? {
        Some(url) => {
            Record::team(&url, &config.consent.allow)
                .await?
                .team_replies()
                .await?
        }
        None => vec![],
    };
    let data_dir = startup::data_dir(args.common.data_dir.as_deref());
    let loaded = replies::layered(
        &config.replies,
        data_dir.as_deref(),
        &replies::team_layer(&rows)?,
    )?;
    let by = |name: &str| {
        rows.iter()
            .find(|row| row.name == name)
            .map(|row: &TeamReply| row.changed_by.as_str())
    };
    if args.json {
        let listed: Vec<Value> = loaded
            .iter()
            .map(|(reply, from)| reply_json(reply, *from, by(&reply.name)))
            .collect();
        return write_stdout(&format!("{}\n", json!({ "replies": listed })));
    }
    if loaded.is_empty() {
        return write_stdout(
            "no saved replies: add [replies.NAME] to the config or to replies.toml in the data directory (on a team, a lead adds the team's with support-desk replies set)\n",
        );
    }
    let mut text = String::new();
    for (reply, from) in &loaded {
        let from = match (from, by(&reply.name)) {
            (Source::Config, _) => "config".to_owned(),
            (Source::DataDir, _) => "data dir".to_owned(),
            (Source::Team, Some(lead)) => format!("team, set by {lead}"),
            (Source::Team, None) => "team".to_owned(),
        };
        let actions = Some(reply.actions())
            .filter(|a| !a.is_empty())
            .map(|a| format!("  {a}"))
            .unwrap_or_default();
        text.push_str(&format!("{} ({from}){actions}\n", reply.name));
        for line in reply.text.as_deref().unwrap_or_default().lines() {
            text.push_str(format!("  {line}").trim_end());
            text.push('\n');
        }
    }
    write_stdout(&text)
}

fn reply_json(reply: &SavedReply, from: Source, changed_by: Option<&str>) -> Value {
    json!({
        "name": reply.name,
        "from": from.key(),
        "changed_by": changed_by.filter(|_| from == Source::Team),
        "text": reply.text,
        "tags": reply.tags,
        "assign": reply.assign,
        "note": reply.note,
        "state": reply.solves.then_some(SOLVED),
    })
}

async fn set(args: SetArgs) -> anyhow::Result<()> {
    let (config, url) = team_only(&args.common)?;
    let reply = replies::read_one(&args.file)?;
    // The same rules as the config's, before any desk of the team loads it.
    replies::checked(&args.name, &reply)?;
    let record = Record::team(&url, &config.consent.allow).await?;
    record
        .set_team_reply(&args.name, &replies::stored_form(&reply))
        .await?;
    write_stdout(&format!(
        "the team's saved reply {} is set; each desk of the team loads it when it opens\n",
        args.name
    ))
}

async fn remove(args: RemoveArgs) -> anyhow::Result<()> {
    let (config, url) = team_only(&args.common)?;
    let record = Record::team(&url, &config.consent.allow).await?;
    record.remove_team_reply(&args.name).await?;
    write_stdout(&format!(
        "the team's saved reply {} is removed; each desk of the team drops it when it opens\n",
        args.name
    ))
}

/// The config and the team's address: changing saved replies from here is for a team's; one
/// person's are a file they edit.
fn team_only(common: &CommonArgs) -> anyhow::Result<(DeskConfig, String)> {
    let config = startup::config(common.config.as_deref(), &Overrides::default())?;
    let Some(url) = startup::team_url(&config, common.store())? else {
        let file = startup::data_dir(common.data_dir.as_deref())
            .map(|dir| dir.join(replies::REPLIES_FILE).display().to_string())
            .unwrap_or_else(|| format!("{} in the data directory", replies::REPLIES_FILE));
        bail!(
            "replies set and remove change a team's saved replies (give --store postgres://NAME@HOST:PORT/DB); on one person's desk, edit {file} instead ([replies.NAME] tables, as in the config)"
        );
    };
    Ok((config, url))
}
