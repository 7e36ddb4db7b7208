//! Running the host without a person: the `run` and `servers` commands, with scripted
//! answers in place of the desk's consent and form modals.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, bail};
use tokio::sync::mpsc;

use crate::config::DeskConfig;
use crate::host::api::{ConsentAnswer, FieldKind, FieldValue, FormAnswer, FormKind, Question};
use crate::host::core::{Host, Storage};
use crate::host::events::HostEvent;
use crate::host::summary::Summary;
use crate::model::Model;
use crate::model::openai::OpenAiChat;
use crate::model::replay::ReplayModel;
use crate::recording::event::{FORMAT, HostSettings, ModelManifest, ServerManifest};
use crate::recording::{Manifest, Recorder, Recording};
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
        let model = ReplayModel::open(Path::new(path))
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

/// Works the queue headless and returns its summary.
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
    let (questions_tx, questions_rx) = mpsc::channel(16);
    let (events_tx, mut events_rx) = mpsc::unbounded_channel();
    let answering = tokio::spawn(answer_by_script(questions_rx, options.script));
    let draining = tokio::spawn(async move {
        while let Some(event) = events_rx.recv().await {
            if let HostEvent::Done {
                ticket,
                error: Some(error),
                ..
            } = &event
            {
                tracing::warn!(%ticket, %error, "ticket ended with an error");
            }
        }
    });
    let storage = Storage {
        data_dir: options.data_dir.clone(),
    };
    let host = Host::start(
        config.clone(),
        model,
        tickets,
        storage,
        recorder,
        questions_tx,
        events_tx,
    )
    .await;
    host.record_manifest(manifest(&host, &config, options.script, options.notes).await);
    let runs = host
        .work_queue(&options.tickets, config.limits.concurrency)
        .await;
    tracing::info!(tickets = runs.len(), "queue worked");
    let summary = Summary::from_events(&host.events(), host.tickets(), &config.consent.allow);
    host.shutdown().await;
    drop(host);
    answering.abort();
    draining.abort();
    Ok(summary)
}

async fn manifest(
    host: &Arc<Host>,
    config: &DeskConfig,
    script: Script,
    notes: BTreeMap<String, String>,
) -> Manifest {
    let hashes = host.tool_hashes().await;
    Manifest {
        format: FORMAT,
        created_by: format!("support-desk {}", env!("CARGO_PKG_VERSION")),
        model: ModelManifest {
            source: config.model.source.clone(),
            name: config.model.name.clone(),
            recipe: config.model.recipe.as_str().to_owned(),
            temperature: config.model.temperature,
            seed: config.model.seed,
            file: notes.get("model_file").cloned(),
            sha256: notes.get("model_sha256").cloned(),
            runtime: notes.get("runtime").cloned(),
        },
        prompt_hash: crate::host::prompt::prompt_hash(),
        host: HostSettings {
            model_calls_per_ticket: config.limits.model_calls_per_ticket,
            request_timeout_secs: config.limits.request_timeout_secs,
            input_rounds: config.limits.input_rounds,
            attach_priority: config.limits.attach_priority,
            allow: config.consent.allow.clone(),
            consent: if script.approve_consent {
                "approve"
            } else {
                "decline"
            }
            .to_owned(),
            lead: if script.accept_forms {
                "accept"
            } else {
                "decline"
            }
            .to_owned(),
            concurrency: config.limits.concurrency,
        },
        servers: host
            .servers()
            .iter()
            .map(|s| ServerManifest {
                prefix: s.prefix.clone(),
                origin: s.origin.clone(),
                name: s.name.clone(),
                revision: s.revision.clone().unwrap_or_default(),
                tools: hashes.get(&s.prefix).cloned().unwrap_or_default(),
            })
            .collect(),
        notes,
    }
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
    let mut out = String::new();
    for server in host.servers() {
        out.push_str(&format!("{}  ({})\n", server.prefix, server.origin));
        match &server.error {
            Some(error) => out.push_str(&format!("  not connected: {error}\n")),
            None => {
                out.push_str(&format!(
                    "  server: {}  revision: {}  tools: {}\n  {}\n  pins: {}\n",
                    server.name.as_deref().unwrap_or("(unnamed)"),
                    server.revision.as_deref().unwrap_or("?"),
                    server.tools.len(),
                    server.tools.join(", "),
                    "checked against the pins kept in the data directory"
                ));
            }
        }
    }
    host.shutdown().await;
    answering.abort();
    Ok(out)
}
