//! Running the host without a person: the `run` and `servers` commands, with scripted
//! answers in place of the desk's consent and form modals.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use tokio::sync::mpsc;

use crate::config::DeskConfig;
use crate::host::api::{
    Command, ConsentAnswer, FieldKind, FieldValue, FormAnswer, FormKind, Question,
};
use crate::host::consent::PinStatus;
use crate::host::core::{Host, Storage};
use crate::host::events::HostEvent;
use crate::host::summary::Summary;
use crate::host::task::{self, Answerers, HostHandle, HostSetup};
use crate::model::Model;
use crate::model::openai::OpenAiChat;
use crate::model::replay::ReplayModel;
use crate::recording::{Recorder, Recording};
use crate::shop::data::Ticket;

/// How the scripted person answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Script {
    pub approve_consent: bool,
    pub accept_forms: bool,
}

/// Answers every question by the script, until the host stops asking.
pub async fn answer_by_script(mut questions: mpsc::Receiver<Question>, script: Script) {
    while let Some(question) = questions.recv().await {
        match question {
            Question::Consent(pending) => {
                pending.answer(ConsentAnswer {
                    approved: script.approve_consent,
                    by: "script".to_owned(),
                });
            }
            Question::Form(pending) => {
                let answer = if script.accept_forms {
                    scripted_accept(&pending.ask.kind)
                } else {
                    FormAnswer::Decline
                };
                pending.answer(answer);
            }
        }
    }
}

/// A scripted yes: every default, every yes/no as yes, the first choice where required.
fn scripted_accept(kind: &FormKind) -> FormAnswer {
    let FormKind::Fields(fields) = kind else {
        return FormAnswer::Accept(BTreeMap::new());
    };
    let mut values = crate::host::form::defaults(fields);
    for field in fields {
        if values.contains_key(&field.name) {
            continue;
        }
        let value = match &field.kind {
            FieldKind::Boolean { .. } => Some(FieldValue::Boolean(true)),
            FieldKind::Choice { options, .. } if field.required => {
                options.first().map(|o| FieldValue::Choice(o.value.clone()))
            }
            FieldKind::Integer { minimum, .. } if field.required => {
                Some(FieldValue::Integer(minimum.unwrap_or(0)))
            }
            FieldKind::Number { minimum, .. } if field.required => {
                Some(FieldValue::Number(minimum.unwrap_or(0.0)))
            }
            FieldKind::Text { .. } if field.required => {
                Some(FieldValue::Text("answered by script".to_owned()))
            }
            _ => None,
        };
        if let Some(value) = value {
            values.insert(field.name.clone(), value);
        }
    }
    FormAnswer::Accept(values)
}

/// The model a config names: `replay:PATH` or `openai:URL`.
pub fn build_model(config: &DeskConfig) -> anyhow::Result<Model> {
    let source = config.model.source.as_str();
    if let Some(path) = source.strip_prefix("replay:") {
        let model = ReplayModel::open(&recording_path(path))
            .with_context(|| format!("loading the recording for {source}"))?;
        return Ok(Model::Replay(model));
    }
    if let Some(url) = source.strip_prefix("openai:") {
        let key = config
            .model
            .api_key_env
            .as_deref()
            .and_then(|var| std::env::var(var).ok());
        return Ok(Model::OpenAi(OpenAiChat::new(
            url,
            &config.model.name,
            key,
            config.model.recipe,
            config.model.sampling(),
            config.limits.model_timeout(),
        )));
    }
    bail!("model.source \"{source}\" is neither replay:PATH nor openai:URL")
}

/// A recording's path: as given, or, when relative and not found from here, inside the
/// source tree this binary was built from (so `cargo run` finds the bundled recording from
/// any directory).
pub fn recording_path(path: &str) -> PathBuf {
    let given = PathBuf::from(path);
    if given.exists() || given.is_absolute() {
        return given;
    }
    let bundled = Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
    if bundled.exists() { bundled } else { given }
}

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
        &crate::shop::ShopWorld::bundled().tickets,
        &allow,
    ))
}

/// The tickets a config names.
pub fn load_tickets(config: &DeskConfig) -> anyhow::Result<Vec<Ticket>> {
    match config.tickets.source.as_str() {
        "bundled" => Ok(crate::shop::ShopWorld::bundled().tickets),
        path => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("reading tickets from {path}"))?;
            serde_json::from_str(&text).with_context(|| format!("{path} is not a tickets.json"))
        }
    }
}

/// Where the desk keeps its state: `--data-dir`, `SUPPORT_DESK_DATA_DIR`, or the user's data dir.
pub fn data_dir(explicit: Option<&Path>) -> Option<PathBuf> {
    explicit
        .map(Path::to_path_buf)
        .or_else(|| std::env::var_os("SUPPORT_DESK_DATA_DIR").map(PathBuf::from))
        .or_else(|| {
            directories::ProjectDirs::from("", "", "support-desk")
                .map(|d| d.data_dir().to_path_buf())
        })
}

pub struct RunOptions {
    pub tickets: Vec<String>,
    pub script: Script,
    pub record: Option<PathBuf>,
    pub data_dir: Option<PathBuf>,
    /// Extra facts for the manifest (the model file, its hash, the runtime).
    pub notes: BTreeMap<String, String>,
}

/// Works the queue headless, driving the host task through its channels, and returns the
/// run's summary.
pub async fn run(config: DeskConfig, options: RunOptions) -> anyhow::Result<Summary> {
    let model = build_model(&config)?;
    let tickets = load_tickets(&config)?;
    for id in &options.tickets {
        if !tickets.iter().any(|t| &t.ticket_id == id) {
            bail!("there is no ticket {id} in {}", config.tickets.source);
        }
    }
    let recorder = match &options.record {
        Some(path) => Some(Recorder::create(path)?),
        None => None,
    };
    let answerers = Answerers {
        consent: if options.script.approve_consent {
            "script: approve"
        } else {
            "script: decline"
        }
        .to_owned(),
        lead: if options.script.accept_forms {
            "script: accept"
        } else {
            "script: decline"
        }
        .to_owned(),
    };
    let HostHandle {
        commands,
        mut events,
        questions,
        task,
    } = task::spawn(HostSetup {
        config,
        model,
        tickets,
        storage: Storage {
            data_dir: options.data_dir.clone(),
        },
        recorder,
        answerers,
        notes: options.notes,
    });
    let answering = tokio::spawn(answer_by_script(questions, options.script));
    commands
        .send(Command::WorkQueue(options.tickets.clone()))
        .await?;
    let mut summary = None;
    while let Some(event) = events.recv().await {
        match event {
            HostEvent::Done {
                ticket,
                error: Some(error),
                ..
            } => tracing::warn!(%ticket, %error, "ticket ended with an error"),
            HostEvent::Problem(problem) => tracing::warn!(%problem, "host problem"),
            HostEvent::QueueFinished(done) => {
                summary = Some(done);
                commands.send(Command::Shutdown).await?;
            }
            HostEvent::Stopped => break,
            HostEvent::Servers(servers) => {
                for server in servers.iter().filter(|s| s.error.is_some()) {
                    tracing::error!(server = %server.prefix, error = ?server.error, "server not connected");
                }
            }
            HostEvent::Started { .. }
            | HostEvent::Turn { .. }
            | HostEvent::Done { .. }
            | HostEvent::Prompts(_)
            | HostEvent::Resources(_)
            | HostEvent::States(_)
            | HostEvent::Attached { .. } => {}
        }
    }
    task.await?;
    answering.abort();
    summary.ok_or_else(|| anyhow::anyhow!("the host stopped before the queue was worked"))
}

/// Connects to every configured server and describes it.
pub async fn servers(config: DeskConfig, data_dir: Option<PathBuf>) -> anyhow::Result<String> {
    let (questions_tx, questions_rx) = mpsc::channel(1);
    let (events_tx, _events_rx) = mpsc::unbounded_channel();
    let answering = tokio::spawn(answer_by_script(
        questions_rx,
        Script {
            approve_consent: false,
            accept_forms: false,
        },
    ));
    let model = Model::Replay(ReplayModel::from_recording(
        "none".into(),
        &Recording::default(),
    ));
    let host = Host::start(
        config,
        model,
        vec![],
        Storage { data_dir },
        None,
        questions_tx,
        events_tx,
    )
    .await;
    let pins = host.pin_report().await;
    let mut out = String::new();
    for server in host.servers() {
        out.push_str(&format!("{}  ({})\n", server.prefix, server.origin));
        match &server.error {
            Some(error) => out.push_str(&format!("  not connected: {error}\n")),
            None => {
                out.push_str(&format!(
                    "  server: {}  revision: {}  tools: {}\n",
                    server.name.as_deref().unwrap_or("(unnamed)"),
                    server.revision.as_deref().unwrap_or("?"),
                    server.tools.len(),
                ));
                for tool in &server.tools {
                    let name = format!("{}.{tool}", server.prefix);
                    let pin = match pins.get(&name) {
                        Some(PinStatus::New) => "pinned now (first seen)",
                        Some(PinStatus::Same) => "matches its pin",
                        Some(PinStatus::Changed(_)) => {
                            "CHANGED since pinned: blocked until a person approves it"
                        }
                        None => "not listed",
                    };
                    out.push_str(&format!("    {name}: {pin}\n"));
                }
            }
        }
    }
    host.shutdown().await;
    answering.abort();
    Ok(out)
}
