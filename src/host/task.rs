//! The host as a background task: `Command` in, `HostEvent` out, questions with one-shot
//! replies. Whoever drives it (the desk, or a script in `run`) holds only these channels.

use std::collections::BTreeMap;
use std::sync::Arc;

use tokio::sync::mpsc;

use super::api::{Command, HostHandle, PersonPrompt, Question};
use super::core::{Host, HostParts};
use super::events::HostEvent;
use crate::record::event::{FORMAT, HostSettings, ModelManifest, ServerManifest};
use crate::record::{EngineError, Manifest};
use crate::recording::summary::{QueueTally, Summary};

/// Who answers the host's questions, for the recording's manifest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answerers {
    pub consent: String,
    pub lead: String,
}

pub struct HostSetup {
    pub parts: HostParts,
    /// For the recording's manifest: who answers the host's questions.
    pub answerers: Answerers,
    pub notes: BTreeMap<String, String>,
    /// For the recording's manifest: the server prompt a scripted person runs for every ticket.
    pub person_prompt: Option<PersonPrompt>,
}

/// Starts the host on a task of its own.
pub fn spawn(setup: HostSetup) -> HostHandle {
    let (commands_tx, commands_rx) = mpsc::channel(32);
    let (events_tx, events_rx) = mpsc::unbounded_channel();
    let (questions_tx, questions_rx) = mpsc::channel(32);
    let task = tokio::spawn(run(setup, commands_rx, events_tx, questions_tx));
    HostHandle {
        commands: commands_tx,
        events: events_rx,
        questions: questions_rx,
        task,
    }
}

async fn run(
    setup: HostSetup,
    mut commands: mpsc::Receiver<Command>,
    events: mpsc::UnboundedSender<HostEvent>,
    questions: mpsc::Sender<Question>,
) {
    let HostSetup {
        parts,
        answerers,
        notes,
        person_prompt,
    } = setup;
    let host = Host::start(parts, questions, events.clone()).await;
    let followed_from = team_position(&host, &events).await;
    host.open_mailroom().await;
    match host.record().states().await {
        Ok(states) => {
            let _ = events.send(HostEvent::Record(states));
        }
        Err(e) => {
            let _ = events.send(HostEvent::Problem(e.to_string()));
        }
    }
    host.record_manifest(manifest(&host, &answerers, notes, person_prompt).await)
        .await;
    let _ = events.send(HostEvent::Prompts(host.prompts().await));
    let _ = events.send(HostEvent::Resources(host.resources().await));
    host.approvals_changed().await;
    let live = followed_from.and_then(|from| host.follow_the_team(from));
    let watch = host.watch_approvals();
    let tasks = Some(host.watch_tasks());
    let mut work = tokio::task::JoinSet::new();
    while let Some(command) = commands.recv().await {
        if command == Command::Shutdown {
            break;
        }
        handle(&host, &events, &mut work, command).await;
    }
    work.abort_all();
    for task in [live, watch, tasks].into_iter().flatten() {
        task.abort();
    }
    host.shutdown().await;
    let _ = events.send(HostEvent::Stopped);
}

/// Where a team's record stood before this desk read its states: the team is followed from
/// there, so an event another desk appends in between reaches this desk as it would have
/// live instead of being missed until a restart. `None` on one person's desk, and when the
/// record cannot say (following from anywhere else would replay the team's history as news
/// or miss part of it; the person is told, and a restart catches up).
async fn team_position(host: &Host, events: &mpsc::UnboundedSender<HostEvent>) -> Option<i64> {
    host.record().team_url()?;
    match host.record().last_seq().await {
        Ok(seq) => Some(seq),
        Err(e) => {
            let _ = events.send(HostEvent::Problem(format!(
                "cannot follow the team's record live: where it stands cannot be read ({e}); other desks' work shows after a restart"
            )));
            None
        }
    }
}

/// One command: a run starts on a task of its own (the host keeps taking commands while it
/// goes); a person's change is carried out at once and reported by the record.
async fn handle(
    host: &Arc<Host>,
    events: &mpsc::UnboundedSender<HostEvent>,
    work: &mut tokio::task::JoinSet<()>,
    command: Command,
) {
    match command {
        Command::WorkTicket(id) => {
            let (host, events) = (Arc::clone(host), events.clone());
            work.spawn(async move {
                match host.ticket(&id) {
                    Some(ticket) => {
                        host.work_claimed(&ticket, None, false).await;
                    }
                    None => {
                        let _ = events.send(HostEvent::Problem(format!("there is no ticket {id}")));
                    }
                }
            });
        }
        Command::WorkQueue { tickets, prompt } => {
            let (host, events) = (Arc::clone(host), events.clone());
            work.spawn(async move { work_queue(&host, &events, &tickets, prompt).await });
        }
        Command::RunPrompt { ticket, prompt } => {
            let (host, events) = (Arc::clone(host), events.clone());
            work.spawn(async move {
                if let Err(problem) = host.run_prompt(&ticket, &prompt).await {
                    let _ = events.send(HostEvent::Problem(problem));
                }
            });
        }
        Command::AttachResource {
            ticket,
            server,
            uri,
        } => {
            if let Err(problem) = host.attach_to_ticket(&ticket, &server, &uri).await {
                let _ = events.send(HostEvent::Problem(format!(
                    "could not attach {uri}: {problem}"
                )));
            }
        }
        Command::SendReply {
            ticket,
            text,
            override_reason,
            solve,
        } => {
            let sent = host
                .send_reply(&ticket, &text, override_reason.as_deref())
                .await;
            if sent.is_ok() {
                // The solve goes with the reply: after its send, the way a person's solve goes.
                if solve {
                    report(events, host.solve(&ticket, None).await);
                }
                host.deliver_if_queued(&ticket).await;
            }
            report(events, sent)
        }
        Command::Solve { ticket, note } => {
            report(events, host.solve(&ticket, note.as_deref()).await)
        }
        Command::Assign { ticket, to } => report(events, host.assign(&ticket, to.as_deref()).await),
        Command::CancelTasks { ticket } => report(events, host.cancel_tasks(&ticket).await),
        Command::Tag {
            ticket,
            tag,
            removed,
        } => report(events, host.tag(&ticket, &tag, removed).await),
        Command::Each(commands) => {
            for command in commands {
                Box::pin(handle(host, events, work, command)).await;
            }
        }
        Command::EditDraft { ticket, text } => {
            report(events, host.edit_draft(&ticket, &text).await)
        }
        Command::HandToPerson { ticket, to, note } => {
            report(events, host.hand_over(&ticket, &to, &note).await)
        }
        Command::AddNote { ticket, text } => report(events, host.add_note(&ticket, &text).await),
        Command::TakeOver { ticket, reason } => {
            report(events, host.take_over(&ticket, &reason).await)
        }
        Command::ListTools(ticket) => {
            let tools = host.tools_for(&ticket).await;
            let next = host.next_steps(&ticket, &tools).await;
            let _ = events.send(HostEvent::Tools {
                ticket,
                tools,
                next,
            });
        }
        Command::CallTool {
            ticket,
            tool,
            answer,
        } => {
            // The call may wait for a server's form and a person: on a task of its own.
            let (host, events) = (Arc::clone(host), events.clone());
            work.spawn(async move {
                let said = match host.person_call(&ticket, &tool, &answer).await {
                    Ok(called) if called.approval.is_some() => {
                        format!("{tool} on {ticket}: its lead's form went to the team's leads")
                    }
                    Ok(called) => format!("{tool} on {ticket}: {}", called.outcome.label()),
                    Err(problem) => problem,
                };
                let _ = events.send(HostEvent::Problem(said));
            });
        }
        Command::Stop(ticket) => report(events, host.stop(&ticket).await),
        Command::StopQueue => report(events, host.stop_queue().await),
        Command::ListResources => {
            let _ = events.send(HostEvent::Resources(host.resources().await));
        }
        Command::ReadResource { server, uri } => {
            let _ = events.send(match host.resource_for_a_person(&server, &uri).await {
                Ok(text) => HostEvent::ResourceText { server, uri, text },
                Err(problem) => HostEvent::Problem(format!("could not read {uri}: {problem}")),
            });
        }
        Command::ListApprovals => host.approvals_changed().await,
        Command::AnswerApproval(id) => {
            // The lead's form waits for the person, so it goes on a task of its own.
            let (host, events) = (Arc::clone(host), events.clone());
            work.spawn(async move {
                if let Err(problem) = host.answer_approval(id, None).await {
                    let _ = events.send(HostEvent::Problem(problem));
                }
            });
        }
        Command::WithdrawApproval { ticket, reason } => {
            report(events, host.withdraw_approval(&ticket, &reason).await)
        }
        Command::SignIn { server } => {
            // The person may take minutes in the browser: the host keeps taking commands.
            let (host, events) = (Arc::clone(host), events.clone());
            work.spawn(async move {
                if let Err(problem) = host.sign_in(&server).await {
                    let _ = events.send(HostEvent::Problem(format!(
                        "signing in to '{server}': {problem}"
                    )));
                }
            });
        }
        Command::Transcript(ticket) => {
            let said = match host.transcript(&ticket).await {
                Ok(events) => HostEvent::Transcript { ticket, events },
                Err(e) => HostEvent::Problem(format!("cannot read {ticket}'s history: {e}")),
            };
            let _ = events.send(said);
        }
        Command::ListTrust => {
            let _ = events.send(HostEvent::Trust(host.trusted().await));
        }
        Command::LeadReport => {
            // A team's whole record is read: the desk keeps taking commands meanwhile.
            let (host, events) = (Arc::clone(host), events.clone());
            work.spawn(async move {
                let _ = events.send(match host.lead_report().await {
                    Ok(report) => HostEvent::LeadReport(Box::new(report)),
                    Err(problem) => HostEvent::Problem(format!("no report: {problem}")),
                });
            });
        }
        Command::RevokeTrust { tool } => report(events, host.revoke_trust(&tool).await),
        Command::Shutdown => {}
    }
}

/// Works a queue and reports its summary, computed from the events it appended.
async fn work_queue(
    host: &Arc<Host>,
    events: &mpsc::UnboundedSender<HostEvent>,
    tickets: &[String],
    prompt: Option<PersonPrompt>,
) {
    let concurrency = host.config.limits.concurrency;
    // Where the record stood before the queue: its summary counts what came after.
    let before = host.record().last_seq().await;
    if let Err(problem) = host.work_queue(tickets, concurrency, prompt.as_ref()).await {
        let _ = events.send(HostEvent::Problem(problem));
    }
    let summary = match before {
        Ok(before) => summarize_after(host, before, tickets).await,
        Err(e) => Err(e),
    };
    let summary = summary.unwrap_or_else(|e| {
        let _ = events.send(HostEvent::Problem(format!(
            "the queue was worked, but its summary cannot be counted ({e}); each ticket's state is in the queue"
        )));
        Summary::default()
    });
    let _ = events.send(HostEvent::QueueFinished(Box::new(summary)));
}

/// The summary of the queue of `tickets` from the events appended after `before`, the record
/// walked a page at a time: a day's queue is summed up without its whole record in memory.
async fn summarize_after(
    host: &Host,
    before: i64,
    tickets: &[String],
) -> Result<Summary, EngineError> {
    let record = host.record();
    let mut tally = QueueTally::new(&host.config.consent.allow, record.person(), tickets);
    record
        .walk_after(before, |stored| tally.add(&stored))
        .await?;
    // Scored only where the data set has an answer key (the bundled queue); the desk shows
    // none of it.
    Ok(tally.finish(&crate::evaluation::for_tickets(&host.tickets())))
}

/// A person's change the host refused is said to the person; one it kept was reported by
/// the record itself.
fn report(events: &mpsc::UnboundedSender<HostEvent>, done: Result<(), String>) {
    if let Err(problem) = done {
        let _ = events.send(HostEvent::Problem(problem));
    }
}

async fn manifest(
    host: &Arc<Host>,
    answerers: &Answerers,
    notes: BTreeMap<String, String>,
    person_prompt: Option<PersonPrompt>,
) -> Manifest {
    let config = &host.config;
    let hashes = host.tool_hashes().await;
    Manifest {
        format: FORMAT,
        created_by: format!("support-desk {}", env!("CARGO_PKG_VERSION")),
        model: ModelManifest {
            source: config.model.source.clone(),
            name: config.model.name.clone(),
            recipe: config.model.recipe.as_str().to_owned(),
            temperature: config.model.temperature,
            max_tokens: config.model.max_tokens,
            seed: config.model.seed,
            file: notes.get("model_file").cloned(),
            sha256: notes.get("model_sha256").cloned(),
            runtime: notes.get("runtime").cloned(),
        },
        prompt_hash: crate::host::run::system_prompt::prompt_hash(&config.desk),
        host: HostSettings {
            model_calls_per_ticket: config.limits.model_calls_per_ticket,
            request_timeout_secs: config.limits.request_timeout_secs,
            input_rounds: config.limits.input_rounds,
            attach_priority: config.limits.attach_priority,
            allow: config.consent.allow.clone(),
            consent: answerers.consent.clone(),
            lead: answerers.lead.clone(),
            concurrency: config.limits.concurrency,
            person_prompt,
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
