//! Running the host without a person: the `run` and `servers` commands, with scripted
//! answers in place of the desk's consent and form modals.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};

use crate::config::DeskConfig;
use crate::host::api::{Command, PersonPrompt};
use crate::host::core::Storage;
use crate::host::events::HostEvent;
use crate::host::summary::Summary;
use crate::host::task::{self, HostHandle, HostSetup};
use crate::model::Model;
use crate::recording::{Recorder, Recording};
use crate::tickets::Ticket;

mod resume;
mod script;
mod servers;

use crate::startup::{build_model, load_tickets};
pub use resume::{ForPerson, ResumePlan, Resumed, resume, resume_plan};
use script::answerers;
pub use script::{RUN_PERSON, Script, answer_by_script};
pub use servers::servers;

/// The summary of a recorded run, read from the recording alone.
pub fn summarize(path: &Path) -> anyhow::Result<Summary> {
    let recording = Recording::read(path)?;
    let allow = recording
        .manifests
        .first()
        .map(|m| m.host.allow.clone())
        .unwrap_or_default();
    Ok(Summary::from_events(
        &recording.events,
        &crate::tickets::bundled(),
        &allow,
    ))
}

pub struct RunOptions {
    pub tickets: Vec<String>,
    /// Work each ticket as a person who ran this server prompt for it.
    pub prompt: Option<PersonPrompt>,
    pub script: Script,
    pub record: Option<PathBuf>,
    /// A team's record (PostgreSQL) to work on instead of a data directory's own.
    pub store: Option<String>,
    pub data_dir: Option<PathBuf>,
    /// Extra facts for the manifest (the model file, its hash, the runtime).
    pub notes: BTreeMap<String, String>,
}

/// Works the queue headless, driving the host task through its channels, and returns the
/// run's summary.
pub async fn run(config: DeskConfig, options: RunOptions) -> anyhow::Result<Summary> {
    let model = build_model(&config)?;
    let tickets = checked_tickets(&config, &options.tickets)?;
    let recorder = match &options.record {
        Some(path) => Some(Recorder::create(path)?),
        None => None,
    };
    let ids = options.tickets.clone();
    work(config, model, tickets, ids, recorder, options).await
}

/// The config's tickets, after checking that every ID asked for is one of them.
pub(super) fn checked_tickets(config: &DeskConfig, ids: &[String]) -> anyhow::Result<Vec<Ticket>> {
    let tickets = load_tickets(config)?;
    for id in ids {
        if !tickets.iter().any(|t| &t.ticket_id == id) {
            bail!("there is no ticket {id} in {}", config.tickets.source);
        }
    }
    Ok(tickets)
}

/// Drives the host task over `ids` (all tickets when empty) and returns the summary of
/// what it worked.
pub(super) async fn work(
    config: DeskConfig,
    model: Model,
    tickets: Vec<Ticket>,
    ids: Vec<String>,
    recorder: Option<Recorder>,
    options: RunOptions,
) -> anyhow::Result<Summary> {
    let prompt = options.prompt;
    // A model that cannot be reached would fail every ticket one by one: say so at once.
    model.reachable().await?;
    // A run continues the desk whose data directory it is given (only tickets nobody touched
    // are worked); without one it starts from nothing, so a replay can be run again and again.
    let fresh;
    let data_dir = match &options.data_dir {
        Some(dir) => dir.clone(),
        None => {
            fresh = tempfile::tempdir().context("creating a temporary data directory")?;
            fresh.path().to_owned()
        }
    };
    std::fs::create_dir_all(&data_dir)
        .with_context(|| format!("creating the data directory {}", data_dir.display()))?;
    let storage = match &options.store {
        Some(url) => Storage::team(url, data_dir, &config.consent.allow).await?,
        None => Storage::open(data_dir, RUN_PERSON, &config.consent.allow)?,
    };
    let HostHandle {
        commands,
        mut events,
        questions,
        task,
    } = task::spawn(HostSetup {
        parts: crate::startup::host_parts(config, model, tickets, storage, recorder),
        answerers: answerers(options.script),
        notes: options.notes,
        person_prompt: prompt.clone(),
    });
    let answering = tokio::spawn(answer_by_script(questions, options.script));
    commands
        .send(Command::WorkQueue {
            tickets: ids,
            prompt,
        })
        .await?;
    let mut summary: Option<Summary> = None;
    let mut servers_failed = 0;
    while let Some(event) = events.recv().await {
        match event {
            HostEvent::Happened { ticket, state, .. }
                if state.state == crate::record::Lifecycle::NeedsPerson =>
            {
                tracing::info!(%ticket, reason = ?state.reason, "needs a person")
            }
            HostEvent::Problem(problem) => tracing::warn!(%problem, "host problem"),
            HostEvent::QueueFinished(mut done) => {
                done.servers_failed = servers_failed;
                summary = Some(done);
                commands.send(Command::Shutdown).await?;
            }
            HostEvent::Stopped => break,
            HostEvent::Servers(servers) => {
                servers_failed = servers.iter().filter(|s| s.error.is_some()).count();
                for server in servers.iter().filter(|s| s.error.is_some()) {
                    tracing::error!(server = %server.prefix, error = ?server.error, "server not connected");
                }
            }
            HostEvent::Happened { .. }
            | HostEvent::Record(_)
            | HostEvent::Prompts(_)
            | HostEvent::Resources(_)
            | HostEvent::Trust(_) => {}
        }
    }
    task.await?;
    answering.abort();
    summary.ok_or_else(|| anyhow::anyhow!("the host stopped before the queue was worked"))
}
