//! An IMAP reader of one folder: connect (TLS through the desk's rustls stack), log in, select
//! the folder, fetch what is new by UID without marking it seen, and wait for more with IDLE.
//! It also appends a message to a folder, for the copy of a sent reply.
//!
//! The caller keeps the folder's UIDVALIDITY and the last UID it has taken: a message is new
//! when its UID is above that one, and only while UIDVALIDITY is unchanged. After any error
//! for which [`MailError::is_transient`] holds, the connection is gone: drop this reader and
//! connect again.
//!
//! `async-imap` runs the commands whose answers it parses well (LOGIN, CAPABILITY, IDLE,
//! LOGOUT); NOOP, SEARCH, FETCH, SELECT and APPEND go through this module's own command loop,
//! which reads every answer itself: the crate's versions drop a tagged NO, or its words.

mod answers;

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use async_imap::extensions::idle::IdleResponse;
use async_imap::imap_proto::{MailboxDatum, Outcome, RequestId, Response, ResponseCode, Status};
use async_imap::types::UnsolicitedResponse;
use async_imap::{Client, Session};
use rustls::pki_types::ServerName;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::{Instant, timeout};
use tokio_rustls::client::TlsStream;

use super::{MailError, MailTls, io_words, refuse_plain_to_remote, tls_refused};
use crate::tls::CertProblem;
use answers::{fetched, imap_words, outcome_text, quoted, refusal, server_text, uid_set};

/// How long the TCP connection to the server may take.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(20);
/// How long one exchange (the handshake and login together, one SEARCH and FETCH, one APPEND)
/// may take before the connection counts as lost.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(60);
/// How often [`Imap::wait`] asks a server without IDLE whether anything arrived.
const POLL_INTERVAL: Duration = Duration::from_secs(60);
const LOGOUT_TIMEOUT: Duration = Duration::from_secs(5);

/// Where the desk reads mail: one folder of one account.
#[derive(Clone)]
pub struct ImapAccount {
    pub host: String,
    pub port: u16,
    pub tls: MailTls,
    pub user: String,
    pub password: String,
    pub folder: String,
    /// A PEM file of CA certificates to trust besides the system's.
    pub ca_file: Option<PathBuf>,
}

impl fmt::Debug for ImapAccount {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ImapAccount")
            .field("host", &self.host)
            .field("port", &self.port)
            .field("tls", &self.tls)
            .field("user", &self.user)
            .field("password", &"(hidden)")
            .field("folder", &self.folder)
            .field("ca_file", &self.ca_file)
            .finish()
    }
}

/// One message as the server keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fetched {
    pub uid: u32,
    pub raw: Vec<u8>,
}

/// A logged-in connection with its folder selected.
#[derive(Debug)]
pub struct Imap {
    /// `None` once the connection broke: every later call says so.
    session: Option<Session<Stream>>,
    /// `host:port`, for messages.
    server: String,
    host: String,
    uid_validity: u32,
    /// Whether the server offers IDLE.
    idle: bool,
    /// Whether the server told of a message (EXISTS) since the last fetch began.
    news: bool,
}

/// Why a step failed, before it is put in words for its command.
enum Failure {
    /// The connection broke, timed out or said something unreadable: it cannot be used again.
    Lost(String),
    /// The server answered NO or BAD; `missing` when it said the folder does not exist.
    Refused { text: String, missing: bool },
}

impl Imap {
    /// Connects, secures the connection as `account.tls` says, logs in and selects the folder.
    pub async fn connect(account: &ImapAccount) -> Result<Imap, MailError> {
        refuse_plain_to_remote(account.tls, &account.host)?;
        let folder = quoted(&account.folder)?;
        let server = format!("{}:{}", account.host, account.port);
        // A bad ca_file is reported before anything goes on the wire.
        let tls = match account.tls {
            MailTls::Implicit | MailTls::StartTls => Some(Arc::new(crate::tls::client_config(
                account.ca_file.as_deref(),
            )?)),
            MailTls::None => None,
        };
        let tcp = open_tcp(&account.host, account.port, &server).await?;
        let started = timeout(COMMAND_TIMEOUT, start(account, tcp, tls, &server)).await;
        let (session, idle) = started.unwrap_or_else(|_| {
            Err(MailError::Timeout {
                server: server.clone(),
                secs: COMMAND_TIMEOUT.as_secs(),
            })
        })?;
        let mut imap = Imap {
            session: Some(session),
            server,
            host: account.host.clone(),
            uid_validity: 0,
            idle,
            news: false,
        };
        let select = format!("SELECT {folder}");
        let selected = timed(imap.command(&select, |answer| match answer {
            Response::Data {
                status: Status::Ok,
                outcome:
                    Outcome {
                        code: Some(ResponseCode::UidValidity(validity)),
                        ..
                    },
            } => Some(*validity),
            _ => None,
        }))
        .await;
        let validities = selected.map_err(|f| imap.failed(f, "SELECT", Some(&account.folder)))?;
        imap.uid_validity = validities.first().copied().unwrap_or(0);
        imap.news = false;
        tracing::debug!(server = %imap.server, folder = %account.folder, uid_validity = imap.uid_validity, idle, "IMAP folder selected");
        Ok(imap)
    }

    /// The folder's UIDVALIDITY: while it stays the same, a UID names the same message. When it
    /// changes, every UID the caller kept is void and the folder must be read again from UID 0.
    /// 0 when the server did not say (it must, by RFC 3501).
    pub fn uid_validity(&self) -> u32 {
        self.uid_validity
    }

    /// Up to `limit` messages whose UID is above `uid`, oldest first, without marking them
    /// seen. NOOP, then UID SEARCH finds them (a range `N:*` also names the last message when
    /// all are below N, so the UIDs are filtered), and UID FETCH of `BODY.PEEK[]` reads them.
    pub async fn fetch_after(&mut self, uid: u32, limit: usize) -> Result<Vec<Fetched>, MailError> {
        let Some(first) = uid.checked_add(1) else {
            return Ok(Vec::new());
        };
        if limit == 0 {
            return Ok(Vec::new());
        }
        self.drain_told();
        self.news = false;
        let result = timed(self.fetch_from(first, limit)).await;
        result.map_err(|f| self.failed(f, "UID SEARCH/FETCH", None))
    }

    async fn fetch_from(&mut self, first: u32, limit: usize) -> Result<Vec<Fetched>, Failure> {
        // A server shows a session what arrived since its last command only when a command
        // ends (Dovecot's SEARCH does not see it): NOOP first, so SEARCH does.
        self.command("NOOP", |_| None::<()>).await?;
        let search = format!("UID SEARCH UID {first}:*");
        let found = self
            .command(&search, |answer| match answer {
                Response::MailboxData(MailboxDatum::Search(uids)) => Some(uids.clone()),
                _ => None,
            })
            .await?;
        let mut uids: Vec<u32> = found
            .into_iter()
            .flatten()
            .filter(|uid| *uid >= first)
            .collect();
        uids.sort_unstable();
        uids.dedup();
        uids.truncate(limit);
        let Some(last) = uids.last().copied() else {
            return Ok(Vec::new());
        };
        let fetch = format!("UID FETCH {} (UID BODY.PEEK[])", uid_set(&uids));
        let mut fetched: Vec<Fetched> = self
            .command(&fetch, fetched)
            .await?
            .into_iter()
            .filter(|message| (first..=last).contains(&message.uid))
            .collect();
        fetched.sort_by_key(|message| message.uid);
        fetched.dedup_by_key(|message| message.uid);
        Ok(fetched)
    }

    /// Returns when the server says a message arrived (IDLE's EXISTS), or after `longest`
    /// (re-issue IDLE well within 29 minutes: servers log idle clients out after 30). Without
    /// IDLE, it sleeps the poll interval (at most `longest`) and asks with NOOP. Returns at
    /// once when a message was announced since the last fetch began. Either way the caller
    /// fetches next.
    pub async fn wait(&mut self, longest: Duration) -> Result<(), MailError> {
        self.drain_told();
        if std::mem::take(&mut self.news) {
            return Ok(());
        }
        if !self.idle {
            tokio::time::sleep(POLL_INTERVAL.min(longest)).await;
            let result = timed(self.command("NOOP", |_| None::<()>)).await;
            self.news = false;
            return result.map(drop).map_err(|f| self.failed(f, "NOOP", None));
        }
        let Some(session) = self.session.take() else {
            return Err(self.gone());
        };
        match idle(session, longest).await {
            Ok(session) => {
                self.session = Some(session);
                self.drain_told();
                self.news = false;
                Ok(())
            }
            Err(detail) => Err(MailError::Lost {
                server: self.server.clone(),
                detail,
            }),
        }
    }

    /// Stores `raw` as a new message at the end of `folder`. Creates nothing: a folder that
    /// does not exist is [`MailError::NoFolder`].
    pub async fn append(&mut self, folder: &str, raw: &[u8]) -> Result<(), MailError> {
        let name = quoted(folder)?;
        let result = timed(self.append_to(&name, raw)).await;
        result.map_err(|f| self.failed(f, "APPEND", Some(folder)))
    }

    async fn append_to(&mut self, name: &str, raw: &[u8]) -> Result<(), Failure> {
        let Imap { session, news, .. } = self;
        let session = session.as_mut().ok_or_else(gone)?;
        let line = format!("APPEND {name} {{{}}}", raw.len());
        let tag = session.run_command(&line).await.map_err(lost)?;
        // The server either asks for the message or refuses at once (a missing folder).
        loop {
            let answer = match session.read_response().await {
                Ok(Some(answer)) => answer,
                Ok(None) => return Err(closed()),
                Err(e) => return Err(Failure::Lost(io_words(&e))),
            };
            match answer.parsed() {
                Response::Continue { .. } => break,
                Response::Done {
                    tag: done,
                    status,
                    outcome,
                } if done == &tag => {
                    return Err(match status {
                        Status::No | Status::Bad => refusal(outcome),
                        Status::Ok | Status::PreAuth | Status::Bye => Failure::Lost(
                            "the server ended APPEND before taking the message".into(),
                        ),
                    });
                }
                Response::MailboxData(MailboxDatum::Exists(_)) => *news = true,
                _ => {}
            }
        }
        let wire = session.get_mut();
        let written = async {
            wire.write_all(raw).await?;
            wire.write_all(b"\r\n").await?;
            wire.flush().await
        };
        written.await.map_err(|e| Failure::Lost(io_words(&e)))?;
        finish(session, &tag, news, |_| None::<()>).await.map(drop)
    }

    /// Says goodbye to the server (LOGOUT), waiting briefly for its answer.
    pub async fn logout(mut self) {
        if let Some(mut session) = self.session.take() {
            let _ = timeout(LOGOUT_TIMEOUT, session.logout()).await;
        }
    }

    /// Sends one command and reads every answer up to its tagged end, keeping what `keep`
    /// takes from the untagged ones.
    async fn command<T>(
        &mut self,
        line: &str,
        keep: impl FnMut(&Response<'_>) -> Option<T>,
    ) -> Result<Vec<T>, Failure> {
        let session = self.session.as_mut().ok_or_else(gone)?;
        let tag = session.run_command(line).await.map_err(lost)?;
        finish(session, &tag, &mut self.news, keep).await
    }

    /// Notes an EXISTS that reached async-imap's channel of unasked answers (during LOGIN,
    /// CAPABILITY or IDLE), and keeps that bounded channel from filling up.
    fn drain_told(&mut self) {
        if let Some(session) = &self.session {
            while let Ok(told) = session.unsolicited_responses.try_recv() {
                if matches!(told, UnsolicitedResponse::Exists(_)) {
                    self.news = true;
                }
            }
        }
    }

    /// A failure in words for `command`; a broken connection is forgotten.
    fn failed(
        &mut self,
        failure: Failure,
        command: &'static str,
        folder: Option<&str>,
    ) -> MailError {
        match (failure, folder) {
            (Failure::Lost(detail), _) => {
                self.session = None;
                MailError::Lost {
                    server: self.server.clone(),
                    detail,
                }
            }
            (Failure::Refused { missing: true, .. }, Some(folder)) => MailError::NoFolder {
                folder: folder.to_owned(),
                host: self.host.clone(),
            },
            (Failure::Refused { text, .. }, _) => MailError::ImapRefused {
                server: self.server.clone(),
                command,
                detail: text,
            },
        }
    }

    fn gone(&self) -> MailError {
        MailError::Lost {
            server: self.server.clone(),
            detail: GONE.to_owned(),
        }
    }
}

const GONE: &str = "an earlier error ended the connection";

fn gone() -> Failure {
    Failure::Lost(GONE.to_owned())
}

fn lost(error: async_imap::error::Error) -> Failure {
    Failure::Lost(imap_words(&error))
}

/// Runs one exchange with [`COMMAND_TIMEOUT`]; a server that stops answering is lost.
async fn timed<T>(step: impl Future<Output = Result<T, Failure>>) -> Result<T, Failure> {
    timeout(COMMAND_TIMEOUT, step).await.unwrap_or_else(|_| {
        Err(Failure::Lost(format!(
            "no answer within {} s",
            COMMAND_TIMEOUT.as_secs()
        )))
    })
}

fn closed() -> Failure {
    Failure::Lost("the server closed the connection".into())
}

/// Reads answers up to the one tagged `tag`, keeping what `keep` takes from the untagged
/// ones; an EXISTS among them sets `news`. (async-imap does not export the type of an answer,
/// so answers are read here, where it need not be named.)
async fn finish<T>(
    session: &mut Session<Stream>,
    tag: &RequestId,
    news: &mut bool,
    mut keep: impl FnMut(&Response<'_>) -> Option<T>,
) -> Result<Vec<T>, Failure> {
    let mut kept = Vec::new();
    loop {
        let answer = match session.read_response().await {
            Ok(Some(answer)) => answer,
            Ok(None) => return Err(closed()),
            Err(e) => return Err(Failure::Lost(io_words(&e))),
        };
        match answer.parsed() {
            Response::Done {
                tag: done,
                status,
                outcome,
            } if done == tag => {
                return match status {
                    Status::Ok => Ok(kept),
                    Status::No | Status::Bad | Status::PreAuth | Status::Bye => {
                        Err(refusal(outcome))
                    }
                };
            }
            Response::Data {
                status: Status::Bye,
                outcome,
            } => {
                return Err(Failure::Lost(format!(
                    "the server ended the session: {}",
                    outcome_text(outcome)
                )));
            }
            Response::MailboxData(MailboxDatum::Exists(_)) => *news = true,
            other => kept.extend(keep(other)),
        }
    }
}

/// IDLE until an EXISTS, a lapse of `longest`, or a broken connection (its words).
async fn idle(session: Session<Stream>, longest: Duration) -> Result<Session<Stream>, String> {
    let told = session.unsolicited_responses.clone();
    let mut handle = session.idle();
    let no_answer = || format!("no answer within {} s", COMMAND_TIMEOUT.as_secs());
    timeout(COMMAND_TIMEOUT, handle.init())
        .await
        .map_err(|_| no_answer())?
        .map_err(|e| imap_words(&e))?;
    // An EXISTS that came before the server's go-ahead is already in the channel.
    let mut arrived = std::iter::from_fn(|| told.try_recv().ok())
        .any(|answer| matches!(answer, UnsolicitedResponse::Exists(_)));
    let deadline = Instant::now() + longest;
    while !arrived {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        // Dropping the stop source would end the wait at once: keep it for the whole wait.
        let (waiting, _stop) = handle.wait_with_timeout(left);
        // The crate's own timeout restarts with every keep-alive ("* OK Still here").
        match timeout(left, waiting).await {
            Err(_) | Ok(Ok(IdleResponse::Timeout)) => break,
            Ok(Ok(IdleResponse::ManualInterrupt)) => {
                return Err("the server closed the connection".into());
            }
            Ok(Ok(IdleResponse::NewData(answer))) => match answer.parsed() {
                Response::MailboxData(MailboxDatum::Exists(_)) => arrived = true,
                Response::Data {
                    status: Status::Bye,
                    outcome,
                } => {
                    return Err(format!(
                        "the server ended the session: {}",
                        outcome_text(outcome)
                    ));
                }
                // Flags, expunges and RECENT are no new message: keep waiting.
                _ => {}
            },
            Ok(Err(e)) => return Err(imap_words(&e)),
        }
    }
    timeout(COMMAND_TIMEOUT, handle.done())
        .await
        .map_err(|_| no_answer())?
        .map_err(|e| imap_words(&e))
}

/// TCP to the server, within [`CONNECT_TIMEOUT`].
async fn open_tcp(host: &str, port: u16, server: &str) -> Result<TcpStream, MailError> {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    match timeout(CONNECT_TIMEOUT, TcpStream::connect((host, port))).await {
        Err(_) => Err(MailError::Timeout {
            server: server.to_owned(),
            secs: CONNECT_TIMEOUT.as_secs(),
        }),
        Ok(Err(e)) => Err(MailError::Unreachable {
            server: server.to_owned(),
            detail: io_words(&e),
        }),
        Ok(Ok(tcp)) => Ok(tcp),
    }
}

/// Greeting, TLS as configured, LOGIN and CAPABILITY: a session and whether it offers IDLE.
async fn start(
    account: &ImapAccount,
    tcp: TcpStream,
    tls: Option<Arc<rustls::ClientConfig>>,
    server: &str,
) -> Result<(Session<Stream>, bool), MailError> {
    let lost = |detail: String| MailError::Lost {
        server: server.to_owned(),
        detail,
    };
    let client = match (account.tls, tls) {
        (MailTls::Implicit, Some(tls)) => {
            let wire = handshake(account, tcp, tls, server).await?;
            let mut client = Client::new(Box::new(wire) as Stream);
            greeting(&mut client).await.map_err(lost)?;
            client
        }
        (MailTls::StartTls, Some(tls)) => {
            let mut client = Client::new(tcp);
            greeting(&mut client).await.map_err(lost)?;
            client
                .run_command_and_check_ok("STARTTLS", None)
                .await
                .map_err(|e| match e {
                    async_imap::error::Error::No(text) | async_imap::error::Error::Bad(text) => {
                        MailError::NoStartTls {
                            server: server.to_owned(),
                            detail: server_text(&text),
                        }
                    }
                    other => lost(imap_words(&other)),
                })?;
            // Whatever the server sent after its OK is dropped with the plain stream.
            let wire = handshake(account, client.into_inner(), tls, server).await?;
            Client::new(Box::new(wire) as Stream)
        }
        (MailTls::None, _) | (MailTls::Implicit | MailTls::StartTls, None) => {
            let mut client = Client::new(Box::new(tcp) as Stream);
            greeting(&mut client).await.map_err(lost)?;
            client
        }
    };
    let mut session = client
        .login(&account.user, &account.password)
        .await
        .map_err(|(error, _)| {
            let detail = match error {
                async_imap::error::Error::No(text) | async_imap::error::Error::Bad(text) => {
                    server_text(&text)
                }
                async_imap::error::Error::Validate(_) => {
                    "the user or the password holds a line break".to_owned()
                }
                other => return lost(imap_words(&other)),
            };
            MailError::LoginRefused {
                protocol: "IMAP",
                server: server.to_owned(),
                user: account.user.clone(),
                detail,
            }
        })?;
    let capabilities = session
        .capabilities()
        .await
        .map_err(|e| lost(imap_words(&e)))?;
    Ok((session, capabilities.has_str("IDLE")))
}

/// The TLS handshake, its refusal in words.
async fn handshake(
    account: &ImapAccount,
    tcp: TcpStream,
    tls: Arc<rustls::ClientConfig>,
    server: &str,
) -> Result<TlsStream<TcpStream>, MailError> {
    let host = account.host.trim_start_matches('[').trim_end_matches(']');
    let name = match host.parse::<std::net::IpAddr>() {
        Ok(ip) => ServerName::IpAddress(ip.into()),
        Err(_) => ServerName::try_from(host.to_owned()).map_err(|_| MailError::Unreachable {
            server: server.to_owned(),
            detail: "the host is not a valid name or address".to_owned(),
        })?,
    };
    tokio_rustls::TlsConnector::from(tls)
        .connect(name, tcp)
        .await
        .map_err(|e| match CertProblem::find(&e) {
            Some(problem) => tls_refused(server, &problem, account.ca_file.as_deref()),
            None => MailError::Lost {
                server: server.to_owned(),
                detail: format!("the TLS handshake failed: {}", io_words(&e)),
            },
        })
}

/// Reads the server's greeting; a BYE (the server will not serve us) is an error.
async fn greeting<T>(client: &mut Client<T>) -> Result<(), String>
where
    T: AsyncRead + AsyncWrite + Unpin + fmt::Debug + Send,
{
    match client.read_response().await {
        Err(e) => Err(io_words(&e)),
        Ok(None) => Err("the server closed the connection before its greeting".into()),
        Ok(Some(answer)) => match answer.parsed() {
            Response::Data {
                status: Status::Bye,
                outcome,
            } => Err(format!(
                "the server turned the desk away: {}",
                outcome_text(outcome)
            )),
            _ => Ok(()),
        },
    }
}

/// The connection under the IMAP session: TLS over TCP, or plain TCP on loopback.
trait Wire: AsyncRead + AsyncWrite + Unpin + Send + fmt::Debug {}

impl<T: AsyncRead + AsyncWrite + Unpin + Send + fmt::Debug> Wire for T {}

type Stream = Box<dyn Wire>;
