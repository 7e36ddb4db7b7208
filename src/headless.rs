//! Running the host without a person: the `run` and `servers` commands, with scripted
//! answers in place of the desk's consent and form modals.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use tokio::sync::mpsc;

use crate::config::{DeskConfig, Transport};
use crate::host::api::{
    Command, ConsentAnswer, FieldKind, FieldValue, FormAnswer, FormKind, PersonPrompt, Question,
};
use crate::host::consent::PinStatus;
use crate::host::core::{Host, Storage};
use crate::host::events::HostEvent;
use crate::host::summary::Summary;
use crate::host::task::{self, Answerers, HostHandle, HostSetup};
use crate::model::Model;
use crate::model::openai::OpenAiChat;
use crate::model::replay::ReplayModel;
use crate::recording::{Event, Manifest, Recorder, Recording};
use crate::tickets::Ticket;

/// Who a scripted run's events are by, in the desk's record.
pub const RUN_PERSON: &str = "script";

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
    let mut values = crate::host::form_checks::defaults(fields);
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
            config.model.ca_file.as_deref(),
        )?));
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
        &crate::tickets::bundled(),
        &allow,
    ))
}

/// The tickets a config names.
pub fn load_tickets(config: &DeskConfig) -> anyhow::Result<Vec<Ticket>> {
    Ok(crate::tickets::load(&config.tickets.source)?)
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

/// Who answers the host's questions under a script, as the recording's manifest names them.
fn answerers(script: Script) -> Answerers {
    let consent = if script.approve_consent {
        "script: approve"
    } else {
        "script: decline"
    };
    let lead = if script.accept_forms {
        "script: accept"
    } else {
        "script: decline"
    };
    Answerers {
        consent: consent.to_owned(),
        lead: lead.to_owned(),
    }
}

pub struct RunOptions {
    pub tickets: Vec<String>,
    /// Work each ticket as a person who ran this server prompt for it.
    pub prompt: Option<PersonPrompt>,
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
    let tickets = checked_tickets(&config, &options.tickets)?;
    let recorder = match &options.record {
        Some(path) => Some(Recorder::create(path)?),
        None => None,
    };
    let ids = options.tickets.clone();
    work(config, model, tickets, ids, recorder, options).await
}

/// The config's tickets, after checking that every ID asked for is one of them.
fn checked_tickets(config: &DeskConfig, ids: &[String]) -> anyhow::Result<Vec<Ticket>> {
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
async fn work(
    config: DeskConfig,
    model: Model,
    tickets: Vec<Ticket>,
    ids: Vec<String>,
    recorder: Option<Recorder>,
    options: RunOptions,
) -> anyhow::Result<Summary> {
    let prompt = options.prompt;
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
    let storage = Storage::open(data_dir, RUN_PERSON, &config.consent.allow)?;
    let HostHandle {
        commands,
        mut events,
        questions,
        task,
    } = task::spawn(HostSetup {
        config,
        model,
        tickets,
        storage,
        recorder,
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
    let mut summary = None;
    while let Some(event) = events.recv().await {
        match event {
            HostEvent::Happened { ticket, state, .. }
                if state.state == crate::record::Lifecycle::NeedsPerson =>
            {
                tracing::info!(%ticket, reason = ?state.reason, "needs a person")
            }
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
            HostEvent::Happened { .. }
            | HostEvent::Record(_)
            | HostEvent::Prompts(_)
            | HostEvent::Resources(_) => {}
        }
    }
    task.await?;
    answering.abort();
    summary.ok_or_else(|| anyhow::anyhow!("the host stopped before the queue was worked"))
}

/// A ticket left unfinished after a call outside the allow list may already have changed
/// something (a refund made). It is not worked again; a person looks at it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForPerson {
    pub ticket: String,
    /// What may have happened, in words for that person.
    pub reason: String,
}

/// What a stopped run leaves to do, read from its recording alone.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ResumePlan {
    /// Unfinished tickets that changed nothing yet, in queue order: worked again from the start.
    pub to_work: Vec<String>,
    /// Unfinished tickets that may have changed something: settled as handed to a person.
    pub for_person: Vec<ForPerson>,
}

/// Splits the tickets of `queue` that have no `ticket_done` in `recording` into those that
/// can be worked again and those a person must look at. `allow` is the recording's own list
/// of tools that change nothing.
pub fn resume_plan(recording: &Recording, queue: &[String], allow: &[String]) -> ResumePlan {
    let finished: std::collections::BTreeSet<&str> =
        recording.finished_tickets().into_iter().collect();
    let by_ticket = recording.by_ticket();
    let mut plan = ResumePlan::default();
    for id in queue.iter().filter(|id| !finished.contains(id.as_str())) {
        let events = by_ticket.get(id.as_str()).map_or(&[][..], Vec::as_slice);
        match side_effect(events, allow) {
            Some(reason) => plan.for_person.push(ForPerson {
                ticket: id.clone(),
                reason,
            }),
            None => plan.to_work.push(id.clone()),
        }
    }
    plan
}

/// The first call outside the allow list that may have reached its server: one that came
/// back with anything but a refusal by the desk itself (a tool error can still leave a held
/// refund behind; a failed call may have run), or one a person approved whose outcome the
/// recording never got.
fn side_effect(events: &[&Event], allow: &[String]) -> Option<String> {
    use crate::host::api::Outcome;
    let mut approved: Vec<(u32, &str)> = Vec::new();
    for event in events {
        match event {
            Event::Consent {
                turn,
                tool,
                approved: true,
                ..
            } if !allow.contains(tool) => approved.push((*turn, tool)),
            Event::Outcome {
                turn,
                tool,
                outcome,
                ..
            } => {
                approved.retain(|&(t, name)| (t, name) != (*turn, tool.as_str()));
                let reached = match outcome {
                    Outcome::Result => Some("returned a result"),
                    Outcome::ToolError => Some("ran and returned an error"),
                    Outcome::Failed => Some("may have run before it failed"),
                    Outcome::Declined | Outcome::UnknownTool => None,
                };
                if let Some(what) = reached.filter(|_| !allow.contains(tool)) {
                    return Some(interrupted(&format!("{tool} {what} (turn {turn})")));
                }
            }
            _ => {}
        }
    }
    approved.first().map(|(turn, tool)| {
        interrupted(&format!(
            "{tool} was approved and sent (turn {turn}) but the run stopped before it answered"
        ))
    })
}

fn interrupted(what: &str) -> String {
    format!(
        "the run stopped in the middle of this ticket after {what}; it was not worked again so nothing happens twice: check what the call did before answering the customer"
    )
}

/// A resumed run: the summary of the whole recording, and the tickets handed to a person.
#[derive(Debug, Clone, PartialEq)]
pub struct Resumed {
    pub summary: Summary,
    pub for_person: Vec<ForPerson>,
}

/// Continues the recorded run at `path` that was stopped (a crash, a kill): works only the
/// tickets without a `ticket_done`, in queue order, appending to the same recording, and
/// never works again a ticket that may already have changed something (see [`resume_plan`]).
/// The settings must be the recording's own. Returns the summary of the whole recording.
pub async fn resume(
    config: DeskConfig,
    options: RunOptions,
    path: &Path,
) -> anyhow::Result<Resumed> {
    let recording = Recording::read(path)?;
    if recording.truncated {
        tracing::warn!(path = %path.display(), "the last line was cut off mid-write; continuing after the last whole event");
    }
    let allow = match recording.manifests.first() {
        Some(manifest) => {
            same_settings(manifest, &config, options.script, path)?;
            manifest.host.allow.clone()
        }
        // Stopped before its servers were up: nothing ran, so everything is still to do.
        None if recording.events.is_empty() => config.consent.allow.clone(),
        None => bail!(
            "{} has events but no manifest, so it was not written by `support-desk run --record` and cannot be continued",
            path.display()
        ),
    };
    let model = build_model(&config)?;
    let tickets = checked_tickets(&config, &options.tickets)?;
    let queue: Vec<String> = if options.tickets.is_empty() {
        tickets.iter().map(|t| t.ticket_id.clone()).collect()
    } else {
        options.tickets.clone()
    };
    let plan = resume_plan(&recording, &queue, &allow);
    if !plan.for_person.is_empty() || !plan.to_work.is_empty() {
        let recorder = Recorder::append(path)?;
        // Settled before any work, so the recording says so even if this run is stopped too.
        for person in &plan.for_person {
            tracing::warn!(ticket = %person.ticket, reason = %person.reason, "handed to a person");
            let model_calls = recording
                .events
                .iter()
                .filter(
                    |e| matches!(e, Event::ModelCall { ticket, .. } if *ticket == person.ticket),
                )
                .count();
            recorder.write(&Event::TicketDone {
                ticket: person.ticket.clone(),
                model_calls: u32::try_from(model_calls).unwrap_or(u32::MAX),
                stopped_at_turn_limit: false,
                error: Some(person.reason.clone()),
            })?;
        }
        if !plan.to_work.is_empty() {
            tracing::info!(tickets = plan.to_work.len(), "resuming");
            let ids = plan.to_work.clone();
            work(config, model, tickets.clone(), ids, Some(recorder), options).await?;
        }
    }
    let whole = Recording::read(path)?;
    Ok(Resumed {
        summary: Summary::from_events(&whole.events, &tickets, &allow),
        for_person: plan.for_person,
    })
}

/// Refuses to continue a recording with another model or other scripted answers: its
/// summary would mix two runs that cannot be compared.
fn same_settings(
    manifest: &Manifest,
    config: &DeskConfig,
    script: Script,
    path: &Path,
) -> anyhow::Result<()> {
    let here = answerers(script);
    let recipe = config.model.recipe.as_str();
    let pairs = [
        ("--model", &manifest.model.source, &config.model.source),
        ("--model-name", &manifest.model.name, &config.model.name),
        ("--recipe", &manifest.model.recipe, &recipe.to_owned()),
        ("--consent", &manifest.host.consent, &here.consent),
        ("--lead", &manifest.host.lead, &here.lead),
    ];
    let differences: Vec<String> = pairs
        .iter()
        .filter(|(_, recorded, now)| recorded != now)
        .map(|(flag, recorded, now)| {
            format!("{flag}: \"{recorded}\" in the recording, \"{now}\" now")
        })
        .collect();
    if differences.is_empty() {
        return Ok(());
    }
    bail!(
        "cannot resume {} with other settings than it was recorded with ({}); give the flags the run was started with, or start a new recording with --record",
        path.display(),
        differences.join("; ")
    )
}

/// Connects to every configured server and describes it.
pub async fn servers(config: DeskConfig, data_dir: Option<PathBuf>) -> anyhow::Result<String> {
    // How each server is reached, and for https what its certificate says, read from one
    // TLS handshake of its own.
    let mut reached = BTreeMap::new();
    for (prefix, server) in config.enabled_servers() {
        let Ok(transport) = server.transport(prefix) else {
            continue;
        };
        let mut lines = vec![format!("  transport: {}", transport_words(&transport))];
        if let Transport::Http { url, ca_file, .. } = &transport
            && url.starts_with("https://")
        {
            lines.push(format!(
                "  certificate: {}",
                certificate_words(url, ca_file.as_deref()).await
            ));
        }
        reached.insert(prefix.clone(), lines);
    }
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
        Storage {
            data_dir,
            record: None,
        },
        None,
        questions_tx,
        events_tx,
    )
    .await;
    let pins = host.pin_report().await;
    let mut out = String::new();
    for server in host.servers() {
        out.push_str(&format!("{}  ({})\n", server.prefix, server.origin));
        for line in reached.get(&server.prefix).into_iter().flatten() {
            out.push_str(line);
            out.push('\n');
        }
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

/// How a transport reaches its server, in words.
fn transport_words(transport: &Transport) -> &'static str {
    match transport {
        Transport::Stdio { .. } => "stdio (a child process)",
        Transport::InProcess(_) => "in-process pipe (built into this binary)",
        Transport::Http { url, .. } if url.starts_with("https://") => {
            "Streamable HTTP over TLS (https)"
        }
        Transport::Http { .. } => "Streamable HTTP, plain http (not encrypted)",
    }
}

/// The certificate an https server presents: subject, names, issuer and expiry, and
/// whether the desk trusts it (the connection line says why not).
async fn certificate_words(url: &str, ca_file: Option<&Path>) -> String {
    match crate::tls::inspect(url, ca_file).await {
        Err(e) => format!("not read ({e})"),
        Ok(inspection) => {
            let refused = if inspection.verdict.is_ok() {
                ""
            } else {
                "REFUSED: "
            };
            match inspection.certificate {
                Some(Ok(summary)) => format!("{refused}{}", summary.line()),
                Some(Err(e)) => format!("{refused}{e}"),
                None => match inspection.verdict {
                    Err(problem) => format!("none ({})", problem.advice("", ca_file)),
                    Ok(()) => "none".to_owned(),
                },
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::api::Outcome;

    const ALLOW: [&str; 1] = ["shop.quote_refund"];

    fn consent(ticket: &str, turn: u32, tool: &str, approved: bool) -> Event {
        Event::Consent {
            ticket: ticket.into(),
            turn,
            tool: tool.into(),
            reason: String::new(),
            unseen: vec![],
            approved,
            by: "script".into(),
        }
    }

    fn outcome(ticket: &str, turn: u32, tool: &str, outcome: Outcome) -> Event {
        Event::Outcome {
            ticket: ticket.into(),
            turn,
            tool: tool.into(),
            outcome,
            text: String::new(),
            truncated: false,
        }
    }

    fn done(ticket: &str) -> Event {
        Event::TicketDone {
            ticket: ticket.into(),
            model_calls: 2,
            stopped_at_turn_limit: false,
            error: None,
        }
    }

    fn plan(events: Vec<Event>) -> ResumePlan {
        let recording = Recording {
            events,
            ..Recording::default()
        };
        let queue: Vec<String> = ["T-1", "T-2", "T-3", "T-4"].map(String::from).into();
        let allow: Vec<String> = ALLOW.map(String::from).into();
        resume_plan(&recording, &queue, &allow)
    }

    fn tickets(plan: &ResumePlan) -> (Vec<&str>, Vec<&str>) {
        let to_work = plan.to_work.iter().map(String::as_str).collect();
        let for_person = plan.for_person.iter().map(|p| p.ticket.as_str()).collect();
        (to_work, for_person)
    }

    #[test]
    fn unfinished_tickets_that_changed_nothing_are_worked_again_in_queue_order() {
        let plan = plan(vec![
            done("T-2"),
            outcome("T-3", 1, "shop.quote_refund", Outcome::Result),
            consent("T-4", 1, "shop.issue_refund", false),
            outcome("T-4", 1, "shop.issue_refund", Outcome::Declined),
        ]);
        assert_eq!(tickets(&plan), (vec!["T-1", "T-3", "T-4"], vec![]));
    }

    #[test]
    fn a_ticket_stopped_after_a_side_effect_goes_to_a_person() {
        let plan = plan(vec![
            consent("T-1", 2, "shop.issue_refund", true),
            outcome("T-1", 2, "shop.issue_refund", Outcome::Result),
            consent("T-3", 1, "shop.issue_refund", true),
        ]);
        assert_eq!(tickets(&plan), (vec!["T-2", "T-4"], vec!["T-1", "T-3"]));
        assert!(
            plan.for_person[0]
                .reason
                .contains("shop.issue_refund returned a result"),
            "{:?}",
            plan.for_person
        );
        assert!(
            plan.for_person[1]
                .reason
                .contains("the run stopped before it answered"),
            "{:?}",
            plan.for_person
        );
    }

    #[test]
    fn a_finished_ticket_is_never_planned_again() {
        let plan = plan(vec![
            outcome("T-1", 2, "shop.issue_refund", Outcome::Result),
            done("T-1"),
        ]);
        assert_eq!(tickets(&plan), (vec!["T-2", "T-3", "T-4"], vec![]));
    }
}
