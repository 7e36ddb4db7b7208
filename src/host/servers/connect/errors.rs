//! A connection's failures in words: why a server could not be reached, started or shaken
//! hands with (its certificate, a sign-in, no common revision), whether an error means the
//! connection is gone, and each cause without the names of the types that carried it.

use rmcp::model::{ErrorCode, ProtocolVersion};
use rmcp::service::ServiceError;

use super::ServerConn;
use crate::config::Transport;
use crate::tls::{self, CertProblem};

#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    #[error("server '{prefix}' ({origin}) could not be started: {message}")]
    Start {
        prefix: String,
        origin: String,
        message: String,
    },
    #[error(
        "server '{prefix}' ({origin}) speaks no protocol revision the desk speaks: the desk offers {ours}, the server {theirs}"
    )]
    NoCommonVersion {
        prefix: String,
        origin: String,
        ours: String,
        theirs: String,
    },
    #[error("server '{prefix}' ({origin}) did not complete the handshake: {message}")]
    Handshake {
        prefix: String,
        origin: String,
        message: String,
    },
    /// The TLS handshake refused the server (its certificate, or no TLS at all).
    #[error("server '{prefix}' ({origin}): {advice}")]
    Certificate {
        prefix: String,
        origin: String,
        advice: String,
    },
    /// The server asks for a sign-in the desk may not start by itself.
    #[error("server '{prefix}' ({origin}) asks you to sign in: run `{command}`, then start again")]
    SignIn {
        prefix: String,
        origin: String,
        command: String,
    },
    #[error("server '{prefix}' ({origin}) connected but listing its tools failed: {message}")]
    Tools {
        prefix: String,
        origin: String,
        message: String,
    },
}

impl ConnectError {
    /// The command that signs in to the server, when signing in is what it needs.
    pub fn sign_in_command(&self) -> Option<&str> {
        match self {
            ConnectError::SignIn { command, .. } => Some(command),
            _ => None,
        }
    }
}

impl ServerConn {
    /// A failed handshake in words. For an `https://` server the TLS error is looked for in
    /// the transport's error; when rmcp kept only words, one handshake of our own says
    /// whether the certificate was the problem.
    pub(super) async fn handshake_failed(
        &self,
        error: rmcp::service::ClientInitializeError,
    ) -> ConnectError {
        if let Some(problem) = tls_problem(&error) {
            return self.certificate_error(&problem);
        }
        if error.auth_challenge().is_some() {
            return self.sign_in_needed();
        }
        if let Some(Transport::Http {
            url, ca_file: ca, ..
        }) = self.config.transport(&self.prefix).ok()
            && url.starts_with("https://")
            && let Ok(inspection) = tls::inspect(&url, ca.as_deref()).await
            && let Err(problem) = inspection.verdict
        {
            return self.certificate_error(&problem);
        }
        self.handshake_error(error)
    }

    pub(super) fn sign_in_needed(&self) -> ConnectError {
        ConnectError::SignIn {
            prefix: self.prefix.clone(),
            origin: self.origin.clone(),
            command: crate::auth::login_command(&self.prefix),
        }
    }

    fn certificate_error(&self, problem: &CertProblem) -> ConnectError {
        ConnectError::Certificate {
            prefix: self.prefix.clone(),
            origin: self.origin.clone(),
            advice: problem.advice(
                &format!("[servers.{}]", self.prefix),
                self.config.ca_file.as_deref(),
            ),
        }
    }

    fn handshake_error(&self, error: rmcp::service::ClientInitializeError) -> ConnectError {
        use rmcp::service::ClientInitializeError as E;
        let (prefix, origin) = (self.prefix.clone(), self.origin.clone());
        match error {
            E::NoCompatibleProtocolVersion {
                client_supported,
                server_supported,
            } => ConnectError::NoCommonVersion {
                prefix,
                origin,
                ours: list(&client_supported),
                theirs: list(&server_supported),
            },
            other => ConnectError::Handshake {
                prefix,
                origin,
                message: if self.config.url.is_some() {
                    format!(
                        "{}; is it running there, and is the url in [servers.{}] right?",
                        cause_in_words(&other),
                        self.prefix
                    )
                } else {
                    cause_in_words(&other)
                },
            },
        }
    }
}

/// The TLS problem inside a failed handshake, if that is what failed it.
fn tls_problem(error: &rmcp::service::ClientInitializeError) -> Option<CertProblem> {
    use rmcp::transport::streamable_http_client::StreamableHttpError;
    type HttpError = StreamableHttpError<reqwest::Error>;
    fn peel<'a>(
        error: &'a (dyn std::error::Error + 'static),
    ) -> Option<&'a (dyn std::error::Error + 'static)> {
        match error.downcast_ref::<HttpError>() {
            // rmcp keeps the client's error out of `source()`.
            Some(StreamableHttpError::Client(inner)) => Some(inner),
            _ => None,
        }
    }
    match error {
        rmcp::service::ClientInitializeError::TransportError { error, .. } => {
            CertProblem::find_with(error, peel)
        }
        _ => None,
    }
}

fn list(versions: &[ProtocolVersion]) -> String {
    versions
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Whether an error means the connection is gone (so the server should be started again).
pub fn connection_lost(error: &ServiceError) -> bool {
    matches!(
        error,
        ServiceError::TransportClosed | ServiceError::TransportSend(_)
    ) || matches!(error, ServiceError::Cancelled { .. })
}

/// A -32021: the server needs a client capability the desk did not declare.
pub fn missing_capability(error: &ServiceError) -> Option<String> {
    match error {
        ServiceError::McpError(e) if e.code == ErrorCode(-32021) => Some(match &e.data {
            Some(data) => format!("{} ({data})", e.message),
            None => e.message.to_string(),
        }),
        _ => None,
    }
}

/// What went wrong, in words: the error's deepest cause (`Connection refused (os error 111)`),
/// without the names of the transport types that wrap it on the way up.
fn cause_in_words(error: &(dyn std::error::Error + 'static)) -> String {
    let mut said = error.to_string();
    let mut next = error.source();
    while let Some(cause) = next {
        said = cause.to_string();
        next = cause.source();
    }
    // A wrapper that keeps its cause in its own text names its type in brackets.
    let unnamed = regex::Regex::new(r"\s*\[[^\]]*::[^\]]*\]")
        .map(|types| types.replace_all(&said, "").into_owned())
        .unwrap_or(said);
    unnamed.trim().to_owned()
}
