//! The host itself: its servers, the tools they offer under the host's names, the consent
//! gate, the model, and the bounded loop that works one ticket.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use rmcp::model::{ReadResourceRequestParams, ResourceContents, Role, Tool};
use serde_json::{Map, Value};
use tokio::sync::{Mutex, RwLock, Semaphore, mpsc};

use super::api::{
    ConsentAnswer, ConsentAsk, Outcome, Pending, PersonPrompt, Question, ServerSummary,
};
use super::calls::{self, CallPlan};
use super::checks::{self, CallFact, Finding};
use super::consent::{self, ConsentGate, Pins, Verdict};
use super::events::HostEvent;
use super::names::{NameTable, ToolName};
use super::prompt::{self, Attached};
use super::servers::ServerConn;
use crate::config::DeskConfig;
use crate::model::Model;
use crate::model::chat::{ChatRequest, Message, Reply, ToolCall, ToolSpec, tool_response_block};
use crate::record::transcript::{display_arguments, entries_of};
use crate::record::{DeskRecord, RecordError, TicketState};
use crate::recording::{Event, Recorder};
use crate::shop::data::Ticket;

/// The tools of one server, as last listed.
struct Offered {
    conn: Arc<ServerConn>,
    tool: Tool,
}

pub struct Host {
    pub config: DeskConfig,
    servers: Vec<Arc<ServerConn>>,
    summaries: Vec<ServerSummary>,
    tools: RwLock<(NameTable, BTreeMap<ToolName, Offered>)>,
    pins: Mutex<Pins>,
    gate: ConsentGate,
    model: Model,
    recorder: Option<Recorder>,
    questions: mpsc::Sender<Question>,
    events: mpsc::UnboundedSender<HostEvent>,
    attached: Vec<Attached>,
    extra: Mutex<BTreeMap<String, Vec<Attached>>>,
    /// The desk's record: every event is appended here before anyone is shown it.
    record: Arc<DeskRecord>,
    tickets: Vec<Ticket>,
    request_counter: std::sync::atomic::AtomicU64,
    /// How each tool compared with its pin at the last listing.
    pin_report: Mutex<BTreeMap<String, consent::PinStatus>>,
}

/// Where the host keeps what outlives it: pins, remembered server revisions, the desk's record.
#[derive(Clone, Default)]
pub struct Storage {
    pub data_dir: Option<PathBuf>,
    /// The desk's record; without one the host keeps a record in memory for its own life.
    pub record: Option<Arc<DeskRecord>>,
}

impl Storage {
    /// The data directory's record (created when new, migrated when older), or the reason it
    /// cannot be used, naming the file.
    pub fn open(data_dir: PathBuf, person: &str, allow: &[String]) -> Result<Self, RecordError> {
        let record = DeskRecord::open_for_work(
            &data_dir.join(crate::record::RECORD_FILE),
            Some(&data_dir.join(crate::record::OUTBOX_FILE)),
            person,
            allow,
        )?;
        Ok(Self {
            data_dir: Some(data_dir),
            record: Some(Arc::new(record)),
        })
    }
}

/// How one ticket went.
#[derive(Debug, Clone, PartialEq)]
pub struct TicketRun {
    pub ticket: String,
    pub model_calls: u32,
    pub draft: Option<String>,
    pub findings: Vec<Finding>,
    pub stopped_at_turn_limit: bool,
    pub error: Option<String>,
}

impl Host {
    /// Connects every enabled server; a server that fails is reported and left out, and the
    /// rest of the desk keeps working.
    pub async fn start(
        config: DeskConfig,
        model: Model,
        tickets: Vec<Ticket>,
        storage: Storage,
        recorder: Option<Recorder>,
        questions: mpsc::Sender<Question>,
        events: mpsc::UnboundedSender<HostEvent>,
    ) -> Arc<Self> {
        let mut servers = Vec::new();
        let mut summaries = Vec::new();
        for (prefix, server) in config.enabled_servers() {
            let server = &server.in_data_dir(storage.data_dir.as_deref());
            match ServerConn::connect_within(
                prefix,
                server,
                questions.clone(),
                storage.data_dir.clone(),
                config.limits.connect_timeout(),
            )
            .await
            {
                Ok(conn) => servers.push(Arc::new(conn)),
                Err(e) => {
                    tracing::error!(server = %prefix, error = %e, "server left out");
                    summaries.push(ServerSummary {
                        prefix: prefix.clone(),
                        origin: server.origin(),
                        name: None,
                        revision: None,
                        tools: vec![],
                        error: Some(e.to_string()),
                    });
                }
            }
        }
        let pins = Pins::load(storage.data_dir.as_ref().map(|d| d.join("pins.json")));
        let record = storage.record.clone().unwrap_or_else(|| {
            Arc::new(
                DeskRecord::in_memory("desk", &config.consent.allow)
                    .expect("an in-memory SQLite database always opens"),
            )
        });
        // Runs cut off when a desk on this record stopped are settled before any new work,
        // so none of them is ever taken up again by itself.
        match record.settle_interrupted() {
            Ok(settled) => {
                for appended in settled {
                    tracing::warn!(ticket = ?appended.state.as_ref().map(|s| &s.ticket), "a run was cut off; the ticket needs a person");
                }
            }
            Err(e) => tracing::error!(error = %e, "could not settle interrupted runs"),
        }
        let host = Self {
            gate: ConsentGate::new(config.consent.allow.iter().cloned()),
            config,
            servers,
            summaries,
            tools: RwLock::new((NameTable::default(), BTreeMap::new())),
            pins: Mutex::new(pins),
            model,
            recorder,
            questions,
            events,
            attached: Vec::new(),
            extra: Mutex::new(BTreeMap::new()),
            record,
            tickets,
            request_counter: Default::default(),
            pin_report: Mutex::new(BTreeMap::new()),
        };
        let mut host = host;
        host.refresh_tools().await;
        host.attached = host.attach_marked_resources().await;
        for conn in &host.servers {
            let live = conn.current().await;
            host.summaries.push(ServerSummary {
                prefix: conn.prefix.clone(),
                origin: conn.origin.clone(),
                name: live.as_ref().and_then(|l| l.name.clone()),
                revision: live.as_ref().map(|l| l.revision.clone()),
                tools: live
                    .as_ref()
                    .map(|l| l.tools.iter().map(|t| t.name.to_string()).collect())
                    .unwrap_or_default(),
                error: None,
            });
        }
        host.summaries.sort_by(|a, b| a.prefix.cmp(&b.prefix));
        let _ = host.events.send(HostEvent::Servers(host.summaries.clone()));
        Arc::new(host)
    }

    pub fn servers(&self) -> &[ServerSummary] {
        &self.summaries
    }

    pub fn tickets(&self) -> &[Ticket] {
        &self.tickets
    }

    pub fn attached(&self) -> &[Attached] {
        &self.attached
    }

    pub fn recorder(&self) -> Option<&Recorder> {
        self.recorder.as_ref()
    }

    pub fn model(&self) -> &Model {
        &self.model
    }

    /// Lists every server's tools again and rebuilds the names. Called between tickets, so
    /// a changed list never changes the tools under a ticket being worked.
    pub async fn refresh_tools(&self) {
        let mut offered = BTreeMap::new();
        let mut lists = Vec::new();
        let mut pins = self.pins.lock().await;
        let mut report = BTreeMap::new();
        for conn in &self.servers {
            let tools = match conn.live().await {
                Ok(live) => match live.service.list_all_tools().await {
                    Ok(tools) => tools,
                    Err(e) => {
                        tracing::warn!(server = %conn.prefix, error = %e, "listing tools failed; keeping the last list");
                        live.tools.clone()
                    }
                },
                Err(e) => {
                    tracing::warn!(server = %conn.prefix, error = %e, "server unavailable; its tools are left out");
                    continue;
                }
            };
            tracing::info!(server = %conn.prefix, tools = tools.len(), "tool list");
            lists.push((
                conn.prefix.as_str(),
                tools.iter().map(|t| t.name.to_string()).collect(),
            ));
            for tool in tools {
                let name = ToolName::new(conn.prefix.clone(), tool.name.to_string());
                let status = pins.check(&name, &tool);
                if let consent::PinStatus::Changed(_) = &status {
                    tracing::warn!(tool = %name, "tool definition changed since it was pinned; blocked until approved");
                }
                report.insert(name.to_string(), status);
                offered.insert(
                    name,
                    Offered {
                        conn: Arc::clone(conn),
                        tool,
                    },
                );
            }
        }
        drop(pins);
        *self.pin_report.lock().await = report;
        *self.tools.write().await = (NameTable::new(lists), offered);
    }

    async fn attach_marked_resources(&self) -> Vec<Attached> {
        let limits = &self.config.limits;
        let mut attached = Vec::new();
        for conn in &self.servers {
            let trusted = self
                .config
                .servers
                .get(&conn.prefix)
                .is_some_and(|s| s.attach_resources);
            let Ok(live) = conn.live().await else {
                continue;
            };
            if !trusted
                || live
                    .service
                    .peer_info()
                    .and_then(|i| i.capabilities.resources.clone())
                    .is_none()
            {
                continue;
            }
            let resources = match live.service.list_all_resources().await {
                Ok(resources) => resources,
                Err(e) => {
                    tracing::warn!(server = %conn.prefix, error = %e, "listing resources failed");
                    continue;
                }
            };
            for resource in resources {
                let Some(annotations) = &resource.annotations else {
                    continue;
                };
                let for_assistant = annotations
                    .audience
                    .as_ref()
                    .is_some_and(|a| a.contains(&Role::Assistant));
                if !for_assistant || annotations.priority.unwrap_or(0.0) < limits.attach_priority {
                    continue;
                }
                match self.read_resource(conn, &resource.uri).await {
                    Ok(text) if text.len() <= limits.attach_max_bytes => attached.push(Attached {
                        server: conn.prefix.clone(),
                        uri: resource.uri.clone(),
                        title: resource
                            .title
                            .clone()
                            .unwrap_or_else(|| resource.name.clone()),
                        text,
                    }),
                    Ok(text) => tracing::warn!(
                        uri = %resource.uri, bytes = text.len(), cap = limits.attach_max_bytes,
                        "resource marked for the assistant is over the size cap; not attached"
                    ),
                    Err(e) => {
                        tracing::warn!(uri = %resource.uri, error = %e, "reading a resource failed")
                    }
                }
            }
        }
        attached
    }

    /// Reads a resource as text, through the client's cache.
    pub async fn read_resource(&self, conn: &ServerConn, uri: &str) -> Result<String, String> {
        let live = conn.live().await.map_err(|e| e.to_string())?;
        let result = live
            .service
            .read_resource(ReadResourceRequestParams::new(uri.to_owned()))
            .await
            .map_err(|e| e.to_string())?;
        Ok(result
            .contents
            .iter()
            .map(|c| match c {
                ResourceContents::TextResourceContents { text, .. } => text.clone(),
                _ => "[binary content]".to_owned(),
            })
            .collect::<Vec<_>>()
            .join("\n"))
    }

    /// Every server's resources.
    pub async fn resources(&self) -> Vec<super::events::ResourceInfo> {
        let mut all = Vec::new();
        for conn in &self.servers {
            let Ok(live) = conn.live().await else {
                continue;
            };
            let capable = live
                .service
                .peer_info()
                .and_then(|i| i.capabilities.resources.clone());
            if capable.is_none() {
                continue;
            }
            if let Ok(list) = live.service.list_all_resources().await {
                all.extend(list.into_iter().map(|r| super::events::ResourceInfo {
                    server: conn.prefix.clone(),
                    title: r.title.clone().unwrap_or_else(|| r.name.clone()),
                    description: r.description.clone().unwrap_or_default(),
                    size: r.size,
                    priority: r.annotations.as_ref().and_then(|a| a.priority),
                    uri: r.uri.clone(),
                }));
            }
        }
        all
    }

    /// The desk's record.
    pub fn record(&self) -> &DeskRecord {
        &self.record
    }

    /// Every ticket the record knows, with its state and its whole history as transcript
    /// entries.
    pub fn history(
        &self,
    ) -> Result<Vec<(TicketState, Vec<crate::record::transcript::Entry>)>, RecordError> {
        let mut by_ticket: BTreeMap<String, Vec<crate::record::transcript::Entry>> =
            BTreeMap::new();
        for stored in self.record.events_after(0)? {
            if let Some(ticket) = stored.event.ticket() {
                by_ticket
                    .entry(ticket.to_owned())
                    .or_default()
                    .extend(entries_of(&stored.event, Some(&stored.by), Some(stored.at)));
            }
        }
        Ok(self
            .record
            .states()?
            .into_iter()
            .map(|state| {
                let entries = by_ticket.remove(&state.ticket).unwrap_or_default();
                (state, entries)
            })
            .collect())
    }

    /// Adds one resource to one ticket's context; returns its size in bytes.
    pub async fn attach_to_ticket(
        &self,
        ticket: &str,
        server: &str,
        uri: &str,
    ) -> Result<usize, String> {
        let conn = self
            .server(server)
            .ok_or_else(|| format!("there is no server '{server}'"))?;
        let text = self.read_resource(&conn, uri).await?;
        let text = calls::cap(text, self.config.limits.attach_max_bytes).0;
        let bytes = text.len();
        let attached = Attached {
            server: server.to_owned(),
            uri: uri.to_owned(),
            title: uri.to_owned(),
            text,
        };
        self.report(Event::Attached {
            ticket: ticket.to_owned(),
            by: self.record.person().to_owned(),
            server: server.to_owned(),
            uri: uri.to_owned(),
            bytes,
        })
        .map_err(|e| e.to_string())?;
        self.extra
            .lock()
            .await
            .entry(ticket.to_owned())
            .or_default()
            .push(attached);
        Ok(bytes)
    }

    fn server(&self, prefix: &str) -> Option<Arc<ServerConn>> {
        self.servers.iter().find(|s| s.prefix == prefix).cloned()
    }

    /// Reports one happening: appended to the desk's record first (a kill after this loses
    /// nothing), then to the recording when there is one, then handed to whoever listens.
    /// Refused when the ticket's state forbids the event (a sent ticket stays sent).
    fn report(&self, event: Event) -> Result<(), RecordError> {
        let appended = self.record.append(&event)?;
        if let Some(recorder) = &self.recorder
            && let Err(e) = recorder.write(&event)
        {
            tracing::error!(error = %e, "could not write to the recording");
        }
        if let (Some(ticket), Some(state)) = (event.ticket(), appended.state) {
            let stored = &appended.stored;
            let _ = self.events.send(HostEvent::Happened {
                ticket: ticket.to_owned(),
                entries: entries_of(&event, Some(&stored.by), Some(stored.at)),
                state,
            });
        }
        Ok(())
    }

    /// Records an event of a run under way; a failure is logged, and the run goes on (its
    /// effects are real whether or not the record could keep them).
    fn report_in_run(&self, event: Event) {
        if let Err(e) = self.report(event) {
            tracing::error!(error = %e, "the desk's record did not take an event");
            let _ = self.events.send(HostEvent::Problem(e.to_string()));
        }
    }

    async fn tool_specs(&self) -> Vec<ToolSpec> {
        let tools = self.tools.read().await;
        let (names, offered) = &*tools;
        names
            .canonical()
            .filter_map(|name| {
                let offered = offered.get(name)?;
                Some(ToolSpec {
                    name: name.to_string(),
                    wire_name: names.wire_name(name)?.to_owned(),
                    description: offered
                        .tool
                        .description
                        .as_deref()
                        .unwrap_or_default()
                        .to_owned(),
                    input_schema: Value::Object((*offered.tool.input_schema).clone()),
                })
            })
            .collect()
    }

    /// Works a list of tickets (all when empty), `concurrency` at a time.
    /// With `prompt`, every ticket is worked as a person who ran that server prompt for it.
    pub async fn work_queue(
        self: &Arc<Self>,
        ids: &[String],
        concurrency: usize,
        prompt: Option<&PersonPrompt>,
    ) -> Result<Vec<TicketRun>, String> {
        let request = match prompt {
            Some(prompt) => Some(self.person_request(prompt).await?),
            None => None,
        };
        let tickets: Vec<Ticket> = if ids.is_empty() {
            self.tickets.clone()
        } else {
            ids.iter()
                .filter_map(|id| self.tickets.iter().find(|t| &t.ticket_id == id).cloned())
                .collect()
        };
        // The queue takes only tickets nobody has touched: a sent, handed-over or interrupted
        // ticket is a person's to take up again. A person's prompt is their own request.
        let tickets: Vec<Ticket> = if prompt.is_some() {
            tickets
        } else {
            let states = self.record.states().map_err(|e| e.to_string())?;
            tickets
                .into_iter()
                .filter(|t| {
                    states
                        .iter()
                        .find(|s| s.ticket == t.ticket_id)
                        .is_none_or(|s| s.state == crate::record::Lifecycle::New)
                })
                .collect()
        };
        let gate = Arc::new(Semaphore::new(concurrency.max(1)));
        let mut tasks = tokio::task::JoinSet::new();
        for (index, ticket) in tickets.into_iter().enumerate() {
            // Taking the permit before the task starts keeps tickets starting in queue order,
            // so a run at concurrency 1 is the same sequence every time (a replay needs that).
            let permit = Arc::clone(&gate)
                .acquire_owned()
                .await
                .expect("the queue's semaphore is never closed");
            let host = Arc::clone(self);
            let request = request.clone();
            tasks.spawn(async move {
                let _permit = permit;
                (index, host.work_ticket(&ticket, request).await)
            });
        }
        let mut runs: Vec<(usize, TicketRun)> = Vec::new();
        while let Some(done) = tasks.join_next().await {
            match done {
                Ok(run) => runs.push(run),
                Err(e) => tracing::error!(error = %e, "a ticket's task failed"),
            }
        }
        runs.sort_by_key(|(index, _)| *index);
        Ok(runs.into_iter().map(|(_, run)| run).collect())
    }

    /// Works one ticket: at most `model_calls_per_ticket` model calls, every tool call routed,
    /// gated and timed, every outcome back to the model, the last words checked as a draft.
    /// `extra_prompt` is a server prompt a person chose to run for this ticket.
    pub async fn work_ticket(&self, ticket: &Ticket, extra_prompt: Option<String>) -> TicketRun {
        let id = ticket.ticket_id.as_str();
        if extra_prompt.is_none() || self.tools.read().await.0.is_empty() {
            self.refresh_tools().await;
        }
        let limits = self.config.limits.clone();
        let specs = self.tool_specs().await;
        let mut attached = self.attached.clone();
        attached.extend(self.extra.lock().await.get(id).cloned().unwrap_or_default());
        let system = prompt::system_prompt(&specs, &attached, limits.model_calls_per_ticket);
        let tool_list_chars: usize = specs
            .iter()
            .map(|s| s.name.len() + s.description.len() + s.input_schema.to_string().len())
            .sum();
        let context_chars: usize = attached.iter().map(|a| a.text.len()).sum();
        let mut messages = vec![
            Message::System { content: system },
            Message::User {
                content: prompt::ticket_message(ticket),
            },
        ];
        if let Some(extra) = &extra_prompt {
            messages.push(Message::User {
                content: extra.clone(),
            });
        }
        let mut run = TicketRun {
            ticket: id.to_owned(),
            model_calls: 0,
            draft: None,
            findings: vec![],
            stopped_at_turn_limit: false,
            error: None,
        };
        let started = self.report(Event::TicketStarted {
            ticket: id.to_owned(),
            tools: specs.iter().map(|s| s.name.clone()).collect(),
            attached: attached.iter().map(|a| a.uri.clone()).collect(),
            request: extra_prompt,
        });
        if let Err(refused) = started {
            let _ = self.events.send(HostEvent::Problem(refused.to_string()));
            run.error = Some(refused.to_string());
            return run;
        }

        let ticket_text = format!("{}\n{}", ticket.subject, ticket.body);
        let mut seen: Vec<String> = vec![ticket_text.clone(), ticket.customer_id.clone()];
        let mut facts: Vec<CallFact> = Vec::new();
        for turn in 1..=limits.model_calls_per_ticket {
            let request = ChatRequest {
                messages: messages.clone(),
                tools: specs.clone(),
            };
            tracing::info!(
                ticket = id,
                turn,
                tools = specs.len(),
                tool_list_chars,
                context_chars,
                "model call"
            );
            let started = Instant::now();
            let reply =
                tokio::time::timeout(limits.model_timeout(), self.model.reply(id, turn, &request))
                    .await;
            run.model_calls = turn;
            // The host names each call after its turn. A model's own call IDs are random,
            // and two conversations that differ only in them must read as one to a replay.
            let reply = match reply {
                Ok(Ok(reply)) => reply.with_call_id(format!("call_{turn}")),
                Ok(Err(e)) => {
                    run.error = Some(e.to_string());
                    break;
                }
                Err(_) => {
                    run.error = Some(format!(
                        "the model did not answer within {} s",
                        limits.model_timeout_secs
                    ));
                    break;
                }
            };
            self.report_in_run(Event::ModelCall {
                ticket: id.to_owned(),
                turn,
                messages_hash: request.hash(),
                reply: reply.clone(),
                seconds: started.elapsed().as_secs_f64(),
                tool_list_chars,
                context_chars,
            });
            // An empty answer is no draft: tell the model, within the same turn budget.
            let reply = match reply {
                Reply::Words { content } if content.trim().is_empty() => Reply::Malformed {
                    raw: content,
                    problem: "your answer was empty".to_owned(),
                },
                other => other,
            };
            match reply {
                Reply::Words { content } => {
                    run.draft = Some(content);
                    break;
                }
                Reply::Malformed { raw, problem } => {
                    messages.push(Message::Assistant {
                        content: raw,
                        tool_call: None,
                    });
                    messages.push(Message::User {
                        content: tool_response_block(
                            "",
                            Outcome::Failed.label(),
                            &format!("Your last answer could not be used: {problem}. Write one tool call as <tool_call>{{\"name\": <tool name>, \"arguments\": {{…}}}}</tool_call>, or the reply to the customer in plain words."),
                        ),
                    });
                }
                Reply::Call { call, content } => {
                    messages.push(Message::Assistant {
                        content,
                        tool_call: Some(call.clone()),
                    });
                    let last_turn = turn == limits.model_calls_per_ticket;
                    let (outcome, text, tool) = if last_turn {
                        self.refuse_at_limit(id, turn, &call)
                    } else {
                        self.run_call(ticket, turn, &call, &seen).await
                    };
                    if matches!(outcome, Outcome::Result | Outcome::ToolError) {
                        seen.push(text.clone());
                    }
                    facts.push(CallFact {
                        tool: tool.clone(),
                        outcome,
                        arguments: call.arguments.clone(),
                        result: text.clone(),
                    });
                    messages.push(Message::Tool {
                        call_id: call.id.clone(),
                        name: call.name.clone(),
                        content: tool_response_block(&tool, outcome.label(), &text),
                    });
                }
            }
        }
        if run.draft.is_none() && run.error.is_none() {
            run.stopped_at_turn_limit = true;
        }
        if let Some(draft) = &run.draft {
            let checked = checks::check_reply(draft, &facts, &ticket_text);
            run.findings = checked.findings.clone();
            run.draft = Some(checked.text.clone());
            self.report_in_run(Event::Draft {
                ticket: id.to_owned(),
                text: checked.text.clone(),
                findings: checked.findings,
            });
        }
        self.report_in_run(Event::TicketDone {
            ticket: id.to_owned(),
            model_calls: run.model_calls,
            stopped_at_turn_limit: run.stopped_at_turn_limit,
            error: run.error.clone(),
        });
        run
    }

    /// What the latest run of `ticket` really did, as the record holds it: each call with
    /// its outcome, for checking a draft against.
    fn call_log(&self, ticket: &str) -> Result<Vec<CallFact>, RecordError> {
        let events = self.record.ticket_events(ticket)?;
        let run_start = events
            .iter()
            .rposition(|s| matches!(s.event, Event::TicketStarted { .. }))
            .unwrap_or(0);
        let mut facts: Vec<CallFact> = Vec::new();
        let mut asked: BTreeMap<u32, Map<String, Value>> = BTreeMap::new();
        for stored in &events[run_start..] {
            match &stored.event {
                Event::ToolCall {
                    turn, arguments, ..
                } => {
                    asked.insert(*turn, arguments.clone());
                }
                Event::Outcome {
                    turn,
                    tool,
                    outcome,
                    text,
                    ..
                } => facts.push(CallFact {
                    tool: tool.clone(),
                    outcome: *outcome,
                    arguments: asked.remove(turn).unwrap_or_default(),
                    result: text.clone(),
                }),
                _ => {}
            }
        }
        Ok(facts)
    }

    /// Checks a reply a person wrote (or edited) against the ticket's call log as the record
    /// holds it, as the model's draft was checked: after a restart too.
    pub fn check_text(&self, ticket: &str, text: &str) -> Result<checks::Checked, String> {
        let facts = self.call_log(ticket).map_err(|e| e.to_string())?;
        let ticket_text = self
            .tickets
            .iter()
            .find(|t| t.ticket_id == ticket)
            .map(|t| format!("{}\n{}", t.subject, t.body))
            .ok_or_else(|| format!("there is no ticket {ticket}"))?;
        Ok(checks::check_reply(text, &facts, &ticket_text))
    }

    /// A person's edit of a ticket's reply, checked and recorded.
    pub fn edit_draft(&self, ticket: &str, text: &str) -> Result<(), String> {
        let checked = self.check_text(ticket, text)?;
        self.report(Event::DraftEdited {
            ticket: ticket.to_owned(),
            by: self.record.person().to_owned(),
            text: checked.text,
            findings: checked.findings,
        })
        .map_err(|e| e.to_string())
    }

    /// Sends a ticket's reply: the text is checked against the call log first (and the check
    /// recorded when it changed anything), then refused while findings are open unless
    /// `override_reason` says why. The reply goes to the outbox.
    pub fn send_reply(
        &self,
        ticket: &str,
        text: &str,
        override_reason: Option<&str>,
    ) -> Result<(), String> {
        let checked = self.check_text(ticket, text)?;
        let state = self.record.state(ticket).map_err(|e| e.to_string())?;
        let reasons: Vec<String> = checked.findings.iter().map(Finding::reason).collect();
        let unchanged = state.as_ref().is_some_and(|s| {
            s.draft.as_deref() == Some(checked.text.as_str()) && s.findings == reasons
        });
        if !unchanged {
            self.edit_draft(ticket, text)?;
        }
        self.report(Event::Sent {
            ticket: ticket.to_owned(),
            by: self.record.person().to_owned(),
            text: checked.text,
            override_reason: override_reason
                .map(str::trim)
                .filter(|r| !r.is_empty())
                .map(str::to_owned),
        })
        .map_err(|e| e.to_string())
    }

    pub fn hand_over(&self, ticket: &str, to: &str, note: &str) -> Result<(), String> {
        self.report(Event::HandedOver {
            ticket: ticket.to_owned(),
            by: self.record.person().to_owned(),
            to: to.to_owned(),
            note: note.to_owned(),
        })
        .map_err(|e| e.to_string())
    }

    /// An internal note on a ticket: kept in the record, never sent, never shown to the model.
    pub fn add_note(&self, ticket: &str, text: &str) -> Result<(), String> {
        self.report(Event::Noted {
            ticket: ticket.to_owned(),
            by: self.record.person().to_owned(),
            text: text.to_owned(),
        })
        .map_err(|e| e.to_string())
    }

    /// The model asked for a tool on its last allowed turn: nothing would read the result.
    fn refuse_at_limit(
        &self,
        ticket: &str,
        turn: u32,
        call: &ToolCall,
    ) -> (Outcome, String, String) {
        let text = format!(
            "not run: the ticket reached its limit of {} model calls, so nothing could read the result",
            self.config.limits.model_calls_per_ticket
        );
        self.report_in_run(Event::ToolCall {
            ticket: ticket.to_owned(),
            turn,
            tool: call.name.clone(),
            arguments: call.arguments.clone(),
        });
        self.finish_call(ticket, turn, &call.name, Outcome::Failed, &text, false);
        (Outcome::Failed, text, call.name.clone())
    }

    fn finish_call(
        &self,
        ticket: &str,
        turn: u32,
        tool: &str,
        outcome: Outcome,
        text: &str,
        truncated: bool,
    ) {
        self.report_in_run(Event::Outcome {
            ticket: ticket.to_owned(),
            turn,
            tool: tool.to_owned(),
            outcome,
            text: text.to_owned(),
            truncated,
        });
    }

    /// Route → consent → call. Returns the outcome, the text for the model, and the tool's
    /// canonical name (or the name as the model wrote it, when unknown).
    async fn run_call(
        &self,
        ticket: &Ticket,
        turn: u32,
        call: &ToolCall,
        seen: &[String],
    ) -> (Outcome, String, String) {
        let id = ticket.ticket_id.as_str();
        let tools = self.tools.read().await;
        let (names, offered) = &*tools;
        let routed = names.route(&call.name);
        let canonical = routed
            .as_ref()
            .map(ToString::to_string)
            .unwrap_or_else(|_| call.name.clone());
        self.report_in_run(Event::ToolCall {
            ticket: id.to_owned(),
            turn,
            tool: canonical.clone(),
            arguments: call.arguments.clone(),
        });
        let name = match routed {
            Ok(name) => name,
            Err(e) => {
                let listed: Vec<String> = names.canonical().map(ToString::to_string).collect();
                let text = format!("{e}. The tools are: {}.", listed.join(", "));
                drop(tools);
                self.finish_call(id, turn, &canonical, Outcome::UnknownTool, &text, false);
                return (Outcome::UnknownTool, text, canonical);
            }
        };
        let Some(Offered { conn, tool }) = offered.get(&name) else {
            let text = format!("there is no tool \"{canonical}\" right now");
            drop(tools);
            self.finish_call(id, turn, &canonical, Outcome::UnknownTool, &text, false);
            return (Outcome::UnknownTool, text, canonical);
        };
        let (conn, tool) = (Arc::clone(conn), tool.clone());
        drop(tools);

        let changed = self.pins.lock().await.changed(&name, &tool);
        if let Verdict::Ask { reason } = self.gate.check(&name, changed.is_some()) {
            let seen_refs: Vec<&str> = seen.iter().map(String::as_str).collect();
            let ask = ConsentAsk {
                ticket: id.to_owned(),
                server: conn.prefix.clone(),
                origin: conn.origin.clone(),
                tool: canonical.clone(),
                hints: consent::hints(&tool),
                arguments: display_arguments(&call.arguments),
                unseen: consent::unseen_values(&call.arguments, &seen_refs),
                changed_definition: changed.clone(),
                reason: reason.clone(),
            };
            let unseen: Vec<String> = ask
                .unseen
                .iter()
                .map(|u| format!("{}={}", u.argument, u.value))
                .collect();
            let (pending, answer) = Pending::new(ask);
            let answer = if self
                .questions
                .send(Question::Consent(pending))
                .await
                .is_ok()
            {
                answer.await.unwrap_or(ConsentAnswer {
                    approved: false,
                    by: "nobody (the question was dropped)".into(),
                })
            } else {
                ConsentAnswer {
                    approved: false,
                    by: "nobody (no one is answering)".into(),
                }
            };
            self.report_in_run(Event::Consent {
                ticket: id.to_owned(),
                turn,
                tool: canonical.clone(),
                reason,
                unseen,
                approved: answer.approved,
                by: answer.by.clone(),
            });
            if !answer.approved {
                let text = format!(
                    "{} declined this call at the desk; it did not run. Tell the customer what you can without it.",
                    answer.by
                );
                self.finish_call(id, turn, &canonical, Outcome::Declined, &text, false);
                return (Outcome::Declined, text, canonical);
            }
            if changed.is_some() {
                self.pins.lock().await.approve(&name, &tool);
            }
        }

        let request_id = format!(
            "{id}-{}",
            self.request_counter
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
                + 1
        );
        let limits = &self.config.limits;
        let run = calls::call(
            &conn,
            CallPlan {
                ticket: id.to_owned(),
                tool: name.tool.clone(),
                arguments: call.arguments.clone(),
                request_id,
                retry_if_lost: tool.annotations.as_ref().and_then(|a| a.read_only_hint)
                    == Some(true),
                timeout: limits.request_timeout(),
                max_rounds: limits.input_rounds,
                max_result_bytes: limits.result_max_bytes,
            },
        )
        .await;
        for exchange in &run.exchanges {
            self.report_in_run(Event::InputRequest {
                ticket: id.to_owned(),
                turn,
                server: conn.prefix.clone(),
                message: exchange.message.clone(),
                action: exchange.action.clone(),
                content: exchange.content.clone(),
            });
        }
        self.finish_call(id, turn, &canonical, run.outcome, &run.text, run.truncated);
        (run.outcome, run.text, canonical)
    }

    /// Every server's prompts, named `prefix.prompt`.
    pub async fn prompts(&self) -> Vec<super::events::PromptInfo> {
        let mut prompts = Vec::new();
        for conn in &self.servers {
            let Ok(live) = conn.live().await else {
                continue;
            };
            if live
                .service
                .peer_info()
                .and_then(|i| i.capabilities.prompts.clone())
                .is_none()
            {
                continue;
            }
            if let Ok(list) = live.service.list_all_prompts().await {
                prompts.extend(list.into_iter().map(|p| {
                    super::events::PromptInfo {
                        name: format!("{}.{}", conn.prefix, p.name),
                        description: p.description.unwrap_or_default(),
                        arguments: p
                            .arguments
                            .unwrap_or_default()
                            .into_iter()
                            .map(|a| {
                                (
                                    a.name,
                                    a.description.unwrap_or_default(),
                                    a.required.unwrap_or(false),
                                )
                            })
                            .collect(),
                    }
                }));
            }
        }
        prompts
    }

    /// Runs a server's prompt for a ticket: its messages join the ticket as the person's request.
    pub async fn run_prompt(
        &self,
        ticket: &str,
        prompt: &PersonPrompt,
    ) -> Result<TicketRun, String> {
        let ticket = self
            .tickets
            .iter()
            .find(|t| t.ticket_id == ticket)
            .cloned()
            .ok_or_else(|| format!("there is no ticket {ticket}"))?;
        let request = self.person_request(prompt).await?;
        Ok(self.work_ticket(&ticket, Some(request)).await)
    }

    /// A server prompt's messages, as the person's request that joins a ticket.
    async fn person_request(&self, prompt: &PersonPrompt) -> Result<String, String> {
        let name = &prompt.name;
        let (prefix, bare) = name
            .split_once('.')
            .ok_or_else(|| format!("\"{name}\" is not prefix.prompt"))?;
        let conn = self
            .server(prefix)
            .ok_or_else(|| format!("there is no server '{prefix}'"))?;
        let live = conn.live().await.map_err(|e| e.to_string())?;
        let args: Map<String, Value> = prompt
            .arguments
            .iter()
            .map(|(k, v)| (k.clone(), Value::String(v.clone())))
            .collect();
        let result = live
            .service
            .get_prompt(
                rmcp::model::GetPromptRequestParams::new(bare.to_owned()).with_arguments(args),
            )
            .await
            .map_err(|e| format!("{name} failed: {e}"))?;
        let text = result
            .messages
            .iter()
            .filter_map(|m| serde_json::to_value(&m.content).ok())
            .map(|v| {
                v.get("text")
                    .and_then(Value::as_str)
                    .map(str::to_owned)
                    .unwrap_or_else(|| v.to_string())
            })
            .collect::<Vec<_>>()
            .join("\n\n");
        Ok(format!("The support team asks ({name}):\n{text}"))
    }

    /// Each tool's pin status at the last listing, by `prefix.tool`.
    pub async fn pin_report(&self) -> BTreeMap<String, consent::PinStatus> {
        self.pin_report.lock().await.clone()
    }

    /// Every event of the desk's record, in order (this run's and earlier ones').
    pub fn events(&self) -> Vec<Event> {
        match self.record.events_after(0) {
            Ok(events) => events.into_iter().map(|s| s.event).collect(),
            Err(e) => {
                tracing::error!(error = %e, "the desk's record could not be read");
                vec![]
            }
        }
    }

    /// Writes an event that is not a ticket's (the manifest) to the recording.
    pub fn record_manifest(&self, manifest: crate::recording::Manifest) {
        self.report_in_run(Event::Manifest(Box::new(manifest)));
    }

    /// sha256 of each offered tool's pinned definition, by server.
    pub async fn tool_hashes(&self) -> BTreeMap<String, BTreeMap<String, String>> {
        use sha2::Digest;
        let tools = self.tools.read().await;
        let mut hashes: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
        for (name, offered) in &tools.1 {
            let digest =
                sha2::Sha256::digest(consent::definition(&offered.tool).to_string().as_bytes());
            hashes
                .entry(name.prefix.clone())
                .or_default()
                .insert(name.tool.clone(), hex::encode(digest));
        }
        hashes
    }

    /// Closes every connection (child servers are stopped).
    pub async fn shutdown(&self) {
        for conn in &self.servers {
            conn.forget().await;
        }
    }
}
