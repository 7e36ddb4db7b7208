//! `support-desk approve ID --accept|--decline|--cancel`: answers one open approval as the
//! person the store address logs in as, through this desk's own server connections (so the
//! server sees that person, with their own token).

use std::collections::BTreeMap;
use std::path::PathBuf;

use anyhow::{Context, bail};
use clap::Args;

use super::approvals::needs_store;
use super::{CommonArgs, pairs, write_stdout};
use crate::config::DeskConfig;
use crate::host::api::{Field, FormAnswer, Question, from_text, in_words, validate};
use crate::host::core::{Host, Storage};
use crate::model::Model;
use crate::model::replay::ReplayModel;
use crate::startup::{self, Overrides, host_parts, load_tickets};

#[derive(Debug, Args)]
#[group(id = "answer", required = true, args = ["accept", "decline", "cancel"])]
pub struct ApproveArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// The approval's ID, as `approvals` lists it.
    pub id: i64,
    /// Accept, with the form's fields from --field (its defaults fill the rest).
    #[arg(long)]
    pub accept: bool,
    /// Decline the form: the server is told no (the shop keeps the refund held).
    #[arg(long)]
    pub decline: bool,
    /// Close the form without an answer: never a yes (the shop keeps the refund held, and the
    /// run that asked goes on from there).
    #[arg(long)]
    pub cancel: bool,
    /// A field of the form, as name=value (with --accept).
    #[arg(long = "field", value_name = "NAME=VALUE", requires = "accept")]
    pub fields: Vec<String>,
}

pub async fn execute(args: ApproveArgs) -> anyhow::Result<()> {
    let config = startup::config(args.common.config.as_deref(), &Overrides::default())?;
    let store = needs_store(&config, &args.common)?;
    let answer = if args.accept {
        Answer::Accept(pairs("--field", &args.fields)?)
    } else if args.decline {
        Answer::Decline
    } else {
        Answer::Cancel
    };
    let said = approve(
        config,
        &store,
        args.common.data_dir.clone(),
        args.id,
        answer,
    )
    .await?;
    write_stdout(&said)
}

/// How a lead answers an approval from a script.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// Accept with these `name=value` fields (the form's defaults fill the rest).
    Accept(BTreeMap<String, String>),
    Decline,
    Cancel,
}

/// Answers approval `id` as the person `store` logs in as; what the server said, in words.
pub async fn approve(
    config: DeskConfig,
    store: &str,
    data_dir: Option<PathBuf>,
    id: i64,
    answer: Answer,
) -> anyhow::Result<String> {
    let fresh;
    let data_dir = match data_dir {
        Some(dir) => dir,
        None => {
            fresh = tempfile::tempdir().context("creating a temporary data directory")?;
            fresh.path().to_owned()
        }
    };
    std::fs::create_dir_all(&data_dir)
        .with_context(|| format!("creating the data directory {}", data_dir.display()))?;
    let storage = Storage::team(store, data_dir, &config.consent.allow).await?;
    let record = storage
        .record
        .clone()
        .expect("a team's storage has a record");
    let approval = record.approval(id).await?;
    let view = crate::host::people::approvals::view(&approval);
    let answer = form_answer(&view.fields, answer)?;
    // Answering asks no model: the host gets one that has nothing to say.
    let model = Model::Replay(ReplayModel::empty("approve (asks no model)".to_owned()));
    let tickets = load_tickets(&config)?;
    let (questions_tx, mut questions) = tokio::sync::mpsc::channel(4);
    let (events_tx, mut events) = tokio::sync::mpsc::unbounded_channel();
    let host = Host::start(
        host_parts(config, model, tickets, storage, None),
        questions_tx,
        events_tx,
    )
    .await;
    // A server that asks again within the call (a further round) gets the same answer.
    let again = answer.clone();
    let answering = tokio::spawn(async move {
        while let Some(question) = questions.recv().await {
            match question {
                Question::Form(pending) => {
                    pending.answer(again.clone());
                }
                Question::Consent(pending) => {
                    pending.answer(crate::host::api::ConsentAnswer {
                        approved: false,
                        by: "approve".to_owned(),
                        trust: None,
                        rule: None,
                    });
                }
            }
        }
    });
    let answered = host.answer_approval(id, Some(answer)).await;
    answering.abort();
    host.shutdown().await;
    // What the host said on the way (a server that asked again), before the outcome.
    let mut said = String::new();
    while let Ok(event) = events.try_recv() {
        if let crate::host::events::HostEvent::Problem(problem) = event {
            said.push_str(&format!("note: {problem}\n"));
        }
    }
    let run = answered.map_err(anyhow::Error::msg)?;
    said.push_str(&format!(
        "approval {id} answered: {} → {}: {}\n",
        view.tool,
        run.outcome.label(),
        run.text
    ));
    Ok(said)
}

/// The script's answer as the form's typed values.
fn form_answer(fields: &[Field], answer: Answer) -> anyhow::Result<FormAnswer> {
    let given = match answer {
        Answer::Decline => return Ok(FormAnswer::Decline),
        Answer::Cancel => return Ok(FormAnswer::Cancel),
        Answer::Accept(given) => given,
    };
    let values = from_text(fields, given).map_err(anyhow::Error::msg)?;
    if let Err(problems) = validate(fields, &values) {
        bail!(
            "the answer does not fit the form ({}); give each with --field name=value",
            in_words(&problems)
        );
    }
    Ok(FormAnswer::Accept(values))
}
