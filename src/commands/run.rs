//! `support-desk run`: the host driven without a person, with scripted answers in place of
//! the desk's consent and form modals ([`script`]), and `run --resume` ([`resume`]).

use std::collections::BTreeMap;
use std::path::PathBuf;

use anyhow::{Context, bail};
use clap::Args;

use super::{CommonArgs, pairs, write_stdout};
use crate::config::DeskConfig;
use crate::host::api::{Command, HostHandle, PersonPrompt};
use crate::host::core::Storage;
use crate::host::events::HostEvent;
use crate::host::task::{self, HostSetup};
use crate::model::Model;
use crate::recording::summary::Summary;
use crate::recording::{Recorder, Recording};
use crate::startup::{self, Overrides, build_model, load_tickets};
use crate::tickets::Ticket;

mod resume;
mod script;

pub use resume::{ForPerson, ResumePlan, Resumed, resume, resume_plan};
use script::answerers;
pub use script::{RUN_PERSON, Script, answer_by_script};

pub struct RunOptions {
    pub tickets: Vec<String>,
    /// Work each ticket as a person who ran this server prompt for it.
    pub prompt: Option<PersonPrompt>,
    pub script: Script,
    /// Whether the script's answer to a lead's forms was given (`--lead`): on a team's
    /// record only then, and only for a lead, does the script answer them instead of the
    /// team's leads.
    pub lead_given: bool,
    pub record: Option<PathBuf>,
    /// A team's record (PostgreSQL) to work on instead of a data directory's own.
    pub store: Option<String>,
    pub data_dir: Option<PathBuf>,
    /// Extra facts for the manifest (the model file, its hash, the runtime).
    pub notes: BTreeMap<String, String>,
    /// Work even when a configured server did not connect; otherwise the run starts nothing.
    pub allow_missing: bool,
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

/// A lead running with `--lead` answers a lead's forms by script here, instead of filing them
/// for the team's leads; anyone else is told why not, before anything runs.
async fn answer_lead_forms_here(config: &mut DeskConfig, storage: &Storage) -> anyhow::Result<()> {
    let record = storage
        .record
        .as_ref()
        .expect("a team's storage has a record");
    if record.is_lead().await? != Some(true) {
        bail!(
            "--lead answers a lead's forms, but {} is not a lead; leave --lead out, and a lead's forms go to the team's leads as approvals",
            record.person()
        );
    }
    for server in config.servers.values_mut() {
        server.lead_forms.clear();
    }
    Ok(())
}

/// Waits for the servers as the host connected them; the sign-in a server asks for, in
/// words with the command to run.
/// Why the run must not start: the servers that did not connect, each in its own words, unless
/// a partial start is allowed. A server that asks for a sign-in stops it either way: nobody is
/// here to open a browser, and the person who can runs the command it names.
async fn left_out(
    events: &mut tokio::sync::mpsc::UnboundedReceiver<HostEvent>,
    allow_missing: bool,
) -> Option<String> {
    while let Some(event) = events.recv().await {
        if let HostEvent::Servers(servers) = event {
            let needing: Vec<String> = servers
                .iter()
                .filter(|s| s.sign_in.is_some())
                .filter_map(|s| s.error.clone())
                .collect();
            if !needing.is_empty() {
                return Some(needing.join("; "));
            }
            let missing: Vec<String> = servers.iter().filter_map(|s| s.error.clone()).collect();
            return (!missing.is_empty() && !allow_missing).then(|| {
                format!(
                    "{}; nothing was worked: fix it, or give --allow-missing to work without it",
                    missing.join("; ")
                )
            });
        }
    }
    None
}

/// The config's tickets, after checking that every ID asked for is one of them.
pub(crate) fn checked_tickets(config: &DeskConfig, ids: &[String]) -> anyhow::Result<Vec<Ticket>> {
    let tickets = load_tickets(config)?;
    for id in ids {
        if crate::tickets::find(&tickets, id).is_none() {
            bail!("there is no ticket {id} in {}", config.tickets.source);
        }
    }
    Ok(tickets)
}

/// Drives the host task over `ids` (all tickets when empty) and returns the summary of
/// what it worked.
pub(crate) async fn work(
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
    let mut config = config;
    let storage = match &options.store {
        Some(url) => {
            let storage = Storage::team(url, data_dir, &config.consent.allow).await?;
            if options.lead_given {
                answer_lead_forms_here(&mut config, &storage).await?;
            }
            storage
        }
        None => Storage::open(data_dir, RUN_PERSON, &config.consent.allow)?,
    };
    // The script's decisions are the person's the run works as.
    let person = storage.person();
    // The recording says which tickets the run is scored on, for `summary` to score the same.
    let mut notes = options.notes;
    notes.insert(
        crate::evaluation::SCORED_NOTE.to_owned(),
        crate::evaluation::scored_note(&crate::evaluation::for_tickets(&tickets)),
    );
    let HostHandle {
        commands,
        mut events,
        questions,
        task,
    } = task::spawn(HostSetup {
        parts: crate::startup::host_parts(config, model, tickets, storage, recorder),
        answerers: answerers(options.script),
        notes,
        person_prompt: prompt.clone(),
    });
    let answering = tokio::spawn(answer_by_script(questions, options.script, person));
    if let Some(why) = left_out(&mut events, options.allow_missing).await {
        commands.send(Command::Shutdown).await?;
        while let Some(event) = events.recv().await {
            if matches!(event, HostEvent::Stopped) {
                break;
            }
        }
        task.await?;
        answering.abort();
        bail!("{why}");
    }
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
            HostEvent::Happened { ticket, state, .. }
                if state.state == crate::record::Lifecycle::WaitingForLead =>
            {
                tracing::warn!(%ticket, approval = ?state.approval, "waits for a lead: `support-desk approvals` lists it, and running the ticket again after a lead's answer goes on from it")
            }
            HostEvent::Problem(problem) => tracing::warn!(%problem, "host problem"),
            HostEvent::ToolsChanged {
                server,
                held,
                added,
                gone,
            } => {
                tracing::warn!(%server, ?held, ?added, ?gone, "a server's tools changed; held tools wait for a person")
            }
            HostEvent::QueueFinished(mut done) => {
                done.servers_failed = servers_failed;
                summary = Some(*done);
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
            | HostEvent::SignInOpen { .. }
            | HostEvent::Record(_)
            | HostEvent::Tickets(_)
            | HostEvent::Transcript { .. }
            | HostEvent::Prompts(_)
            | HostEvent::Resources(_)
            | HostEvent::ResourceText { .. }
            | HostEvent::Tools { .. }
            | HostEvent::Writing { .. }
            | HostEvent::Progress { .. }
            | HostEvent::TaskStatus { .. }
            | HostEvent::Approvals(_)
            | HostEvent::Trust(_)
            | HostEvent::LeadReport(_) => {}
        }
    }
    task.await?;
    answering.abort();
    summary.ok_or_else(|| anyhow::anyhow!("the host stopped before the queue was worked"))
}

#[derive(Debug, Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// Work only these tickets (comma-separated IDs).
    #[arg(long, value_delimiter = ',', value_name = "IDS")]
    pub tickets: Vec<String>,
    /// replay:PATH (a recording) or openai:URL (an OpenAI-compatible server).
    #[arg(long, value_name = "SOURCE")]
    pub model: Option<String>,
    /// The model name sent to an OpenAI-compatible server.
    #[arg(long, value_name = "NAME")]
    pub model_name: Option<String>,
    /// How requests are shaped: native_tools, llama_cpp_prefill, text_calls.
    #[arg(long, value_name = "RECIPE")]
    pub recipe: Option<String>,
    /// The scripted person's answer to every consent question: approve runs every call
    /// outside the allow list with nobody asked. Without it, a replay answers as its recording
    /// did, and a live model is refused.
    #[arg(long, value_enum)]
    pub consent: Option<ConsentScript>,
    /// The scripted lead's answer to every form a server asks (decline when not given). On a
    /// team's record a lead's forms go to the team's leads instead, unless this is given and
    /// the person the store logs in as is a lead.
    #[arg(long, value_enum)]
    pub lead: Option<LeadScript>,
    /// Tickets worked at once.
    #[arg(long, value_name = "N")]
    pub concurrency: Option<usize>,
    /// Record the run (append-only JSONL) at PATH (a directory, or a .jsonl file).
    #[arg(long, value_name = "PATH")]
    pub record: Option<PathBuf>,
    /// Continue the recorded run at PATH that was stopped (a crash, kill -9): work only its
    /// tickets without a ticket_done, appending to it, and never again one that may already
    /// have changed something (those go to a person). Give the flags the run was started
    /// with; the summary covers the whole recording.
    #[arg(long, value_name = "PATH", conflicts_with = "record")]
    pub resume: Option<PathBuf>,
    /// Facts for the recording's manifest, as key=value (model_file, model_sha256, runtime, …).
    #[arg(long = "note", value_name = "KEY=VALUE")]
    pub notes: Vec<String>,
    /// Work each ticket as a person at the desk who ran this server prompt for it
    /// (`shop.refund_order`); its arguments come from --prompt-arg.
    #[arg(long, value_name = "PREFIX.PROMPT", conflicts_with = "resume")]
    pub prompt: Option<String>,
    /// An argument for --prompt, as name=value.
    #[arg(long = "prompt-arg", value_name = "NAME=VALUE", requires = "prompt")]
    pub prompt_args: Vec<String>,
    /// Print the summary as one JSON object.
    #[arg(long)]
    pub json: bool,
    /// Work the queue even when a configured server did not connect (without its tools).
    #[arg(long)]
    pub allow_missing: bool,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum ConsentScript {
    Approve,
    Decline,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum LeadScript {
    Accept,
    Decline,
}

pub async fn execute(args: RunArgs) -> anyhow::Result<()> {
    let overrides = Overrides {
        model: args.model,
        model_name: args.model_name,
        recipe: args.recipe,
        concurrency: args.concurrency,
    };
    let config = startup::config(args.common.config.as_deref(), &overrides)?;
    let prompt = match args.prompt {
        Some(name) => Some(PersonPrompt {
            name,
            arguments: pairs("--prompt-arg", &args.prompt_args)?,
        }),
        None => None,
    };
    let options = RunOptions {
        tickets: args.tickets,
        prompt,
        script: Script {
            approve_consent: match args.consent {
                Some(consent) => matches!(consent, ConsentScript::Approve),
                None => recorded_consent(&config)?,
            },
            accept_forms: matches!(args.lead, Some(LeadScript::Accept)),
        },
        lead_given: args.lead.is_some(),
        record: args.record,
        store: startup::team_url(&config, args.common.store())?,
        data_dir: args.common.data_dir.clone(),
        notes: pairs("--note", &args.notes)?,
        allow_missing: args.allow_missing,
    };
    let (summary, for_person) = match &args.resume {
        Some(path) => {
            let resumed = crate::commands::run::resume(config, options, path).await?;
            (resumed.summary, resumed.for_person)
        }
        None => (crate::commands::run::run(config, options).await?, vec![]),
    };
    let text = if args.json {
        serde_json::to_string(&summary)?
    } else {
        let mut text = summary.to_text();
        for person in &for_person {
            text.push_str(&format!(
                "\nhanded to a person: {}: {}",
                person.ticket, person.reason
            ));
        }
        text
    };
    write_stdout(&format!("{text}\n"))
}

/// The answer to consent questions when `--consent` is not given: a replay answers as the
/// recording it replays did (its first batch's manifest), so it reproduces that run; a live
/// model gets no answer by default, since approving must be said.
fn recorded_consent(config: &DeskConfig) -> anyhow::Result<bool> {
    let source = &config.model.source;
    let Some(path) = source.strip_prefix("replay:") else {
        bail!(
            "`run` against a live model ({source}) asks no person, so it needs --consent: \
             `--consent approve` runs every call outside the allow list with nobody asked \
             (refunds below the shop's limit among them), `--consent decline` runs none of them"
        );
    };
    let recording = Recording::read(std::path::Path::new(path))?;
    let answered = recording.manifests.first().map(|m| m.host.consent.as_str());
    Ok(answered.is_some_and(|consent| consent.ends_with("approve")))
}
