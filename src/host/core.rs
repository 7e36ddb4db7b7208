//! The host itself: the `Host` and its state (connections, offered tools, pins, the consent
//! gate, trust, the model, the record, the channels), `Storage`, `HostParts`, and starting a
//! host. The loop that works a ticket is [`crate::host::run`]'s.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use tokio::sync::{Mutex, RwLock, mpsc};

/// A document the host put into the context, with where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Attached {
    pub server: String,
    pub uri: String,
    pub title: String,
    pub text: String,
}

use super::api::{Question, ServerSummary};
use super::events::HostEvent;
use crate::config::DeskConfig;
use crate::host::gate::consent::{self, ConsentGate, Pins};
use crate::host::gate::names::{NameTable, ToolName};
use crate::host::gate::tools::Offered;
use crate::host::servers::connect::{InProcessServers, Reach, ServerConn};
use crate::mailroom::{MailTickets, Mailroom};
use crate::model::Model;
use crate::record::transcript::entries_of;
use crate::record::{DeskRecord, EngineError, Record, RecordError};
use crate::record::{Event, Finding};
use crate::recording::Recorder;
use crate::tickets::Ticket;

pub struct Host {
    pub config: DeskConfig,
    /// The servers connected, one more after a person signs in to one that asked.
    pub(super) servers: std::sync::RwLock<Vec<Arc<ServerConn>>>,
    pub(super) summaries: std::sync::RwLock<Vec<ServerSummary>>,
    /// Where pins, remembered revisions and sign-in grants live.
    pub(super) data_dir: Option<PathBuf>,
    /// The servers `in_process` may name.
    pub(super) builtins: InProcessServers,
    pub(super) tools: RwLock<(NameTable, BTreeMap<ToolName, Offered>)>,
    pub(super) pins: Mutex<Pins>,
    pub(super) gate: ConsentGate,
    pub(super) model: Model,
    pub(super) recorder: Option<Recorder>,
    pub(super) questions: mpsc::Sender<Question>,
    pub(super) events: mpsc::UnboundedSender<HostEvent>,
    /// The documents every run starts with; one its server says changed is read again
    /// before the next run ([`Host::resource_updated`]).
    pub(super) attached: std::sync::RwLock<Vec<Attached>>,
    /// Attached documents their servers said changed, by server and URI, not read again yet.
    pub(super) updated: std::sync::Mutex<std::collections::BTreeSet<(String, String)>>,
    /// The identifiers `[[desk.identifiers]]` names, compiled once.
    pub(super) identifiers: Vec<crate::host::gate::identifiers::Identifier>,
    pub(super) extra: Mutex<BTreeMap<String, Vec<Attached>>>,
    /// The desk's record: every event is appended here before anyone is shown it.
    pub(super) record: Arc<Record>,
    /// The desk's queue: the config's tickets, then the mailbox's as they arrive.
    pub(super) tickets: std::sync::RwLock<Vec<Ticket>>,
    /// The support mailbox, when `[mail]` names one.
    pub(super) mailroom: Option<Arc<Mailroom>>,
    /// The record's mail tickets (the mailroom's, when there is one): a desk without
    /// `[mail]` shows the ones a team's mail reader brings in.
    pub(super) mail_tickets: Arc<std::sync::Mutex<MailTickets>>,
    pub(super) request_counter: std::sync::atomic::AtomicU64,
    /// How each tool compared with its pin at the last listing.
    pub(super) pin_report: Mutex<BTreeMap<String, consent::PinStatus>>,
    /// The tools people trust, for the session or always.
    pub(super) trust: Mutex<crate::host::gate::trust::Trust>,
    /// Held tools already put to a person in this session, by name and definition.
    pub(super) reviewed: Mutex<std::collections::BTreeSet<String>>,
    /// On a team's record: the events this desk appended and told its driver of, which the
    /// live follower then passes over. The same person's other desks and commands are not
    /// this desk: their events are followed like anyone's.
    pub(super) told: std::sync::Mutex<std::collections::HashSet<i64>>,
    /// The runs a person may stop, and the queue's.
    pub(super) stops: Stops,
    /// Where each connection sends its server's word that its tools or a resource changed.
    pub(super) notices: mpsc::UnboundedSender<crate::host::servers::notices::ServerNotice>,
    /// The servers' tasks this desk follows now.
    pub(super) tasks_followed: crate::host::servers::tasks::Followed,
}

/// Where the host keeps what outlives it: pins, remembered server revisions, the desk's record.
#[derive(Clone, Default)]
pub struct Storage {
    pub data_dir: Option<PathBuf>,
    /// The desk's record; without one the host keeps a record in memory for its own life.
    pub record: Option<Arc<Record>>,
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
            record: Some(Arc::new(Record::Sqlite(record))),
        })
    }

    /// Who this desk's events are by: the record's word (on a team's record, the role it
    /// logged in as).
    pub fn person(&self) -> String {
        self.record
            .as_ref()
            .map_or_else(|| "desk".to_owned(), |r| r.person().to_owned())
    }

    /// The team's record at `url` (PostgreSQL), with `data_dir` for this desk's own files
    /// (pins, logs, the bundled shop's database).
    pub async fn team(url: &str, data_dir: PathBuf, allow: &[String]) -> Result<Self, EngineError> {
        Ok(Self {
            data_dir: Some(data_dir),
            record: Some(Arc::new(Record::team(url, allow).await?)),
        })
    }
}

/// Everything a host is made of, besides the channels to whoever drives it.
pub struct HostParts {
    pub config: DeskConfig,
    pub model: Model,
    /// The desk's queue.
    pub tickets: Vec<Ticket>,
    pub storage: Storage,
    /// A JSONL recording to write besides the desk's record.
    pub recorder: Option<Recorder>,
    /// The built-in servers the config's `in_process` may name (the binary's own).
    pub servers: InProcessServers,
    /// The support mailbox, when `[mail]` names one.
    pub mailroom: Option<Arc<Mailroom>>,
}

/// Connects every enabled server: the connections, and a summary of each server that could
/// not be reached (why, in words), for the status bar.
async fn connect_all(
    config: &DeskConfig,
    storage: &Storage,
    builtins: &InProcessServers,
    questions: &mpsc::Sender<Question>,
    notices: &mpsc::UnboundedSender<crate::host::servers::notices::ServerNotice>,
) -> (Vec<Arc<ServerConn>>, Vec<ServerSummary>) {
    let mut servers = Vec::new();
    let mut summaries = Vec::new();
    for (prefix, server) in config.enabled_servers() {
        let server = &server.in_data_dir(storage.data_dir.as_deref());
        let reach = Reach {
            data_dir: storage.data_dir.clone(),
            connect_timeout: config.limits.connect_timeout(),
            builtins: builtins.clone(),
            notices: Some(notices.clone()),
            ..Reach::default()
        };
        match ServerConn::connect_with(prefix, server, questions.clone(), reach).await {
            Ok(conn) => servers.push(Arc::new(conn)),
            Err(e) => {
                tracing::error!(server = %prefix, error = %e, "server left out");
                summaries.push(ServerSummary {
                    prefix: prefix.clone(),
                    origin: server.origin(),
                    name: None,
                    instructions: None,
                    revision: None,
                    tools: vec![],
                    error: Some(e.to_string()),
                    sign_in: e.sign_in_command().map(str::to_owned),
                });
            }
        }
    }
    (servers, summaries)
}

/// How much of a server's instructions people are shown, in characters.
const INSTRUCTIONS_SHOWN: usize = 4_000;

/// A connected server as the desk shows it.
pub(super) async fn summary_of(conn: &ServerConn) -> ServerSummary {
    let live = conn.current().await;
    ServerSummary {
        prefix: conn.prefix.clone(),
        origin: conn.origin.clone(),
        name: live.as_ref().and_then(|l| l.name.clone()),
        instructions: live
            .as_ref()
            .and_then(|l| l.instructions.as_deref())
            .map(|text| crate::text::cut(text, INSTRUCTIONS_SHOWN)),
        revision: live.as_ref().map(|l| l.revision.clone()),
        tools: live
            .as_ref()
            .map(|l| l.tools.iter().map(|t| t.name.to_string()).collect())
            .unwrap_or_default(),
        error: None,
        sign_in: None,
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
    /// The approval the run stopped for: the ticket waits for a lead's answer.
    pub waiting_for: Option<i64>,
}

impl Host {
    /// Connects every enabled server; a server that fails is reported and left out, and the
    /// rest of the desk keeps working.
    pub async fn start(
        parts: HostParts,
        questions: mpsc::Sender<Question>,
        events: mpsc::UnboundedSender<HostEvent>,
    ) -> Arc<Self> {
        let HostParts {
            config,
            model,
            tickets,
            storage,
            recorder,
            servers: builtins,
            mailroom,
        } = parts;
        let (notices, changes_said) = mpsc::unbounded_channel();
        let (servers, mut summaries) =
            connect_all(&config, &storage, &builtins, &questions, &notices).await;
        let pins = Pins::load(storage.data_dir.as_ref().map(|d| d.join("pins.json")));
        let record = storage.record.clone().unwrap_or_else(|| {
            Arc::new(Record::Sqlite(
                DeskRecord::in_memory("desk", &config.consent.allow)
                    .expect("an in-memory SQLite database always opens"),
            ))
        });
        // Runs cut off when a desk on this record stopped are settled before any new work,
        // so none of them is ever taken up again by itself.
        match record.settle_interrupted().await {
            Ok(settled) => {
                for appended in settled {
                    tracing::warn!(ticket = ?appended.state.as_ref().map(|s| &s.ticket), "a run was cut off; the ticket needs a person");
                }
            }
            Err(e) => tracing::error!(error = %e, "could not settle interrupted runs"),
        }
        let host = Self {
            gate: ConsentGate::new(config.consent.allow.iter().cloned()),
            identifiers: crate::host::gate::identifiers::Identifier::compile(
                &config.desk.identifiers,
            ),
            config,
            servers: std::sync::RwLock::new(servers),
            summaries: Default::default(),
            data_dir: storage.data_dir.clone(),
            builtins,
            tools: RwLock::new((NameTable::default(), BTreeMap::new())),
            pins: Mutex::new(pins),
            model,
            recorder,
            questions,
            events,
            attached: Default::default(),
            updated: Default::default(),
            extra: Mutex::new(BTreeMap::new()),
            record,
            tickets: std::sync::RwLock::new(tickets),
            mail_tickets: mailroom.as_ref().map_or_else(
                || Arc::new(std::sync::Mutex::new(MailTickets::new(""))),
                |m| Arc::clone(&m.tickets),
            ),
            mailroom,
            request_counter: Default::default(),
            pin_report: Mutex::new(BTreeMap::new()),
            reviewed: Mutex::new(Default::default()),
            told: Default::default(),
            stops: Default::default(),
            notices,
            tasks_followed: Default::default(),
            trust: Mutex::new(crate::host::gate::trust::Trust::load(
                storage.data_dir.as_ref().map(|d| d.join("trust.json")),
            )),
        };
        // The first listing of each connection is the one pinned: a server that changes its
        // tools when listed again is a change, never the pin.
        host.list_tools(true).await;
        let attached = host.attach_marked_resources().await;
        *host.attached.write().unwrap_or_else(|p| p.into_inner()) = attached;
        for conn in host.connected() {
            summaries.push(summary_of(&conn).await);
        }
        summaries.sort_by(|a, b| a.prefix.cmp(&b.prefix));
        let _ = host.events.send(HostEvent::Servers(summaries.clone()));
        *host.summaries.write().unwrap_or_else(|p| p.into_inner()) = summaries;
        let host = Arc::new(host);
        // From now on a server that says its tools changed is listed again at once.
        host.follow_notices(changes_said);
        host.follow_resource_updates();
        host
    }

    /// Every server as last reported: connected, or left out and why.
    pub fn servers(&self) -> Vec<ServerSummary> {
        self.summaries
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// The servers connected now.
    pub(super) fn connected(&self) -> Vec<Arc<ServerConn>> {
        self.servers
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// The desk's queue as it is now.
    pub fn tickets(&self) -> Vec<Ticket> {
        self.tickets
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// The ticket `id` of this desk's queue.
    pub fn ticket(&self, id: &str) -> Option<Ticket> {
        let tickets = self.tickets.read().unwrap_or_else(|p| p.into_inner());
        crate::tickets::find(&tickets, id).cloned()
    }

    /// Puts `ticket` in the queue, or in the place of the one of its ID.
    pub(super) fn put_ticket(&self, ticket: Ticket) {
        let mut tickets = self.tickets.write().unwrap_or_else(|p| p.into_inner());
        match tickets.iter_mut().find(|t| t.ticket_id == ticket.ticket_id) {
            Some(known) => *known = ticket,
            None => tickets.push(ticket),
        }
    }

    pub fn mailroom(&self) -> Option<&Arc<Mailroom>> {
        self.mailroom.as_ref()
    }

    /// The documents every run starts with, as they are now.
    pub fn attached(&self) -> Vec<Attached> {
        self.attached
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    pub fn recorder(&self) -> Option<&Recorder> {
        self.recorder.as_ref()
    }

    pub fn model(&self) -> &Model {
        &self.model
    }

    /// The desk's record.
    pub fn record(&self) -> &Record {
        &self.record
    }

    /// One ticket's whole history: each of its events' `seq`, in order, with the transcript
    /// entries it makes.
    pub async fn transcript(
        &self,
        ticket: &str,
    ) -> Result<Vec<(i64, Vec<crate::record::transcript::Entry>)>, EngineError> {
        Ok(self
            .record
            .ticket_events(ticket)
            .await?
            .into_iter()
            .map(|stored| {
                let entries = entries_of(&stored.event, Some(&stored.by), Some(stored.at));
                (stored.seq, entries)
            })
            .collect())
    }

    pub(super) fn server(&self, prefix: &str) -> Option<Arc<ServerConn>> {
        self.connected().into_iter().find(|s| s.prefix == prefix)
    }

    /// Reports one happening: appended to the desk's record first (a kill after this loses
    /// nothing), then to the recording when there is one, then handed to whoever listens.
    /// Refused when the ticket's state forbids the event (a sent ticket stays sent).
    pub(super) async fn report(&self, event: Event) -> Result<(), EngineError> {
        let appended = self.record.append(&event).await?;
        self.announce(appended);
        Ok(())
    }

    /// Passes an event the record has appended to the recording and the driver: every
    /// happening is told once, as the record holds it.
    pub(super) fn announce(&self, appended: crate::record::store::Appended) {
        self.told_of(appended.stored.seq);
        let stored = appended.stored;
        if let Some(recorder) = &self.recorder
            && let Err(e) = recorder.write(&stored.event)
        {
            tracing::error!(error = %e, "could not write to the recording");
        }
        if let Some(happened) = appended
            .state
            .and_then(|state| HostEvent::happened(&stored, state))
        {
            let _ = self.events.send(happened);
        }
    }

    /// Notes that this desk told its driver of event `seq`, so following the team passes it
    /// over (nothing to note on one person's desk, which follows nobody).
    pub(super) fn told_of(&self, seq: i64) {
        if self.record.team_url().is_some() {
            self.told
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert(seq);
        }
    }

    /// Records an event of a run under way; a failure is logged, and the run goes on (its
    /// effects are real whether or not the record could keep them).
    pub(super) async fn report_in_run(&self, event: Event) {
        if let Err(e) = self.report(event).await {
            tracing::error!(error = %e, "the desk's record did not take an event");
            let _ = self.events.send(HostEvent::Problem(e.to_string()));
        }
    }

    /// Every event of the desk's record, in order (this run's and earlier ones').
    pub async fn events(&self) -> Vec<Event> {
        match self.record.events_after(0).await {
            Ok(events) => events.into_iter().map(|s| s.event).collect(),
            Err(e) => {
                tracing::error!(error = %e, "the desk's record could not be read");
                vec![]
            }
        }
    }

    /// Writes an event that is not a ticket's (the manifest) to the recording.
    pub async fn record_manifest(&self, manifest: crate::record::Manifest) {
        self.report_in_run(Event::Manifest(Box::new(manifest)))
            .await;
    }

    /// Closes every connection (child servers are stopped).
    pub async fn shutdown(&self) {
        for conn in self.connected() {
            conn.forget().await;
        }
        // Another desk of the team may read the mailbox at once.
        if let Some(mailroom) = &self.mailroom
            && let Err(e) = self
                .record
                .let_go_of_mailbox(&mailroom.inbound.name())
                .await
        {
            tracing::warn!(error = %e, "could not let go of the mailbox");
        }
    }
}

/// The runs under way on this desk that a person may stop, and the queue's run.
#[derive(Debug, Default)]
pub struct Stops {
    runs: std::sync::Mutex<BTreeMap<String, tokio_util::sync::CancellationToken>>,
    queue: std::sync::Mutex<Option<tokio_util::sync::CancellationToken>>,
}

impl Stops {
    pub(in crate::host) fn runs(
        &self,
    ) -> std::sync::MutexGuard<'_, BTreeMap<String, tokio_util::sync::CancellationToken>> {
        self.runs.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Takes the queue's stop, leaving none.
    pub(in crate::host) fn queue_taken(&self) -> Option<tokio_util::sync::CancellationToken> {
        self.queue.lock().unwrap_or_else(|p| p.into_inner()).take()
    }

    /// The queue run has ended: there is no queue to stop.
    pub(in crate::host) fn queue_ends(&self) {
        *self.queue.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }

    /// A queue run begins: the token that stops it from starting another ticket.
    pub(in crate::host) fn queue_begins(&self) -> tokio_util::sync::CancellationToken {
        let token = tokio_util::sync::CancellationToken::new();
        *self.queue.lock().unwrap_or_else(|p| p.into_inner()) = Some(token.clone());
        token
    }
}
