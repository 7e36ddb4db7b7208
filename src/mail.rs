//! Mail in and out: a message parsed from its bytes ([`message`]), read from a Maildir or an
//! IMAP folder ([`imap`]), and a reply submitted over SMTP ([`smtp`]). Nothing here knows
//! tickets or the host: the host turns what arrives into the record's events and hands replies
//! back to send.
//!
//! Both wires speak through the desk's one TLS stack (rustls with ring, [`crate::tls`]) and
//! fail with one [`MailError`], whose words say what happened and what to do, and whose
//! [`MailError::is_transient`] tells a caller whether trying again later can help.

pub mod imap;
pub mod message;
pub mod parse;
pub mod smtp;

use std::net::IpAddr;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::tls::{CertProblem, TlsSetupError};

/// How a connection to a mail server is protected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MailTls {
    /// TLS from the first byte (IMAP on 993, SMTP submission on 465).
    Implicit,
    /// A plain greeting, then STARTTLS before anything else (IMAP on 143, SMTP on 587). A
    /// server that does not offer STARTTLS is refused, never used in plain text.
    StartTls,
    /// No TLS: the password and the mail cross in plain text, so only to a server on this
    /// machine.
    None,
}

/// What went wrong talking to a mail server, in words for the person who configures the desk.
#[derive(Debug, thiserror::Error)]
pub enum MailError {
    #[error("cannot reach {server} ({detail}): check host and port")]
    Unreachable { server: String, detail: String },
    #[error(
        "{server} did not answer within {secs} s: check host and port, and that this machine \
         may reach it"
    )]
    Timeout { server: String, secs: u64 },
    #[error("the TLS connection to {server} failed: {advice}")]
    Tls { server: String, advice: String },
    #[error(transparent)]
    TlsSetup(#[from] TlsSetupError),
    #[error(
        "tls = \"none\" would send the password in plain text, so it is allowed only for a \
         server on this machine (127.0.0.1, ::1, localhost), not {host}: use tls = \"implicit\" \
         or \"starttls\""
    )]
    PlainToRemote { host: String },
    #[error(
        "{server} does not offer STARTTLS ({detail}): use tls = \"implicit\" (usually port 993 \
         for IMAP, 465 for SMTP)"
    )]
    NoStartTls { server: String, detail: String },
    #[error(
        "the {protocol} server {server} refused the login for {user} ({detail}): check the user \
         and the password in the environment variable the config's password_env names"
    )]
    LoginRefused {
        protocol: &'static str,
        server: String,
        user: String,
        detail: String,
    },
    #[error(
        "the folder {folder} does not exist on {host}: check the folder names under \
         [mail.imap] (the desk creates no folder)"
    )]
    NoFolder { folder: String, host: String },
    #[error(
        "the folder name {folder:?} cannot be sent to an IMAP server (it holds a control \
         character or a letter outside ASCII, which IMAP spells in modified UTF-7): write it \
         as the server lists it"
    )]
    FolderName { folder: String },
    #[error("the IMAP server {server} refused {command} ({detail})")]
    ImapRefused {
        server: String,
        command: &'static str,
        detail: String,
    },
    #[error("the connection to {server} was lost ({detail}); the desk reconnects")]
    Lost { server: String, detail: String },
    #[error(
        "the SMTP server {server} refused the message for good ({code} {detail}); the reply \
         was not sent: fix what the server names (an address, the account, the size) first"
    )]
    SmtpRejected {
        server: String,
        code: String,
        detail: String,
    },
    #[error(
        "the SMTP server {server} turned the message away for now ({code} {detail}); the desk \
         tries again later"
    )]
    SmtpDeferred {
        server: String,
        code: String,
        detail: String,
    },
    #[error("the conversation with the SMTP server {server} failed ({detail})")]
    SmtpFailed { server: String, detail: String },
    #[error("{address:?} is not a mail address the desk can send to ({detail})")]
    BadAddress { address: String, detail: String },
    #[error("the reply cannot be written as a mail message ({detail})")]
    Format { detail: String },
}

impl MailError {
    /// Whether the same attempt may succeed later without anyone changing the configuration:
    /// the server was unreachable or slow, the connection broke, or it deferred the message
    /// (SMTP 4xx). A refusal (a login, a folder, a 5xx, a certificate) needs a person.
    pub fn is_transient(&self) -> bool {
        match self {
            MailError::Unreachable { .. }
            | MailError::Timeout { .. }
            | MailError::Lost { .. }
            | MailError::SmtpDeferred { .. } => true,
            MailError::Tls { .. }
            | MailError::TlsSetup(_)
            | MailError::PlainToRemote { .. }
            | MailError::NoStartTls { .. }
            | MailError::LoginRefused { .. }
            | MailError::NoFolder { .. }
            | MailError::FolderName { .. }
            | MailError::ImapRefused { .. }
            | MailError::SmtpRejected { .. }
            | MailError::SmtpFailed { .. }
            | MailError::BadAddress { .. }
            | MailError::Format { .. } => false,
        }
    }
}

/// Whether `host` names this machine: `localhost`, or a loopback address (`127.0.0.1`, `::1`,
/// `[::1]`).
pub fn is_loopback(host: &str) -> bool {
    host.eq_ignore_ascii_case("localhost")
        || host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// Refuses [`MailTls::None`] towards any other machine.
fn refuse_plain_to_remote(tls: MailTls, host: &str) -> Result<(), MailError> {
    match tls {
        MailTls::None if !is_loopback(host) => Err(MailError::PlainToRemote {
            host: host.to_owned(),
        }),
        MailTls::Implicit | MailTls::StartTls | MailTls::None => Ok(()),
    }
}

/// A refused TLS handshake with `server`, in words fit for a mail server (whose settings have
/// a host and a port, not a URL).
fn tls_refused(server: &str, problem: &CertProblem, ca_file: Option<&Path>) -> MailError {
    let advice = match problem {
        CertProblem::WrongName { presented, .. } if !presented.is_empty() => format!(
            "its certificate is for {}, not for the host the desk was given: set host to a name \
             the certificate is for",
            presented.join(", ")
        ),
        CertProblem::WrongName { .. } => "its certificate is not valid for the host the desk was \
                                          given: set host to a name the certificate is for"
            .to_owned(),
        CertProblem::NotTls => "it did not answer in TLS: check the port, or use tls = \
                                \"starttls\" for a server that greets in plain text first \
                                (IMAP on 143, SMTP on 587)"
            .to_owned(),
        CertProblem::Untrusted
        | CertProblem::Expired { .. }
        | CertProblem::NotYetValid { .. }
        | CertProblem::Revoked
        | CertProblem::Other(_) => problem.advice("[mail]", ca_file),
    };
    MailError::Tls {
        server: server.to_owned(),
        advice,
    }
}

/// An I/O error in a few plain words ("connection refused"), without the OS's error number.
fn io_words(error: &std::io::Error) -> String {
    use std::io::ErrorKind as K;
    match error.kind() {
        K::ConnectionRefused => "connection refused".to_owned(),
        K::ConnectionReset => "connection reset by the server".to_owned(),
        K::ConnectionAborted => "connection aborted".to_owned(),
        K::UnexpectedEof => "the server closed the connection".to_owned(),
        K::TimedOut => "timed out".to_owned(),
        K::HostUnreachable => "host unreachable".to_owned(),
        K::NetworkUnreachable => "network unreachable".to_owned(),
        _ => {
            let words = error.to_string();
            match words.find(" (os error") {
                Some(at) => words[..at].to_owned(),
                None => words,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_is_this_machine_only() {
        for host in [
            "127.0.0.1",
            "127.0.0.2",
            "::1",
            "[::1]",
            "localhost",
            "LocalHost",
        ] {
            assert!(is_loopback(host), "{host}");
        }
        for host in [
            "imap.example.com",
            "10.0.0.1",
            "localhost.example.com",
            "::2",
        ] {
            assert!(!is_loopback(host), "{host}");
        }
    }

    #[test]
    fn plain_text_to_another_machine_is_refused_in_words() {
        let error = refuse_plain_to_remote(MailTls::None, "imap.example.com").expect_err("refused");
        assert!(!error.is_transient());
        assert!(
            error.to_string().contains("not imap.example.com"),
            "{error}"
        );
        assert!(refuse_plain_to_remote(MailTls::None, "127.0.0.1").is_ok());
        assert!(refuse_plain_to_remote(MailTls::Implicit, "imap.example.com").is_ok());
    }

    #[test]
    fn tls_setting_reads_lowercase_words() {
        #[derive(Deserialize)]
        struct Table {
            tls: Vec<MailTls>,
        }
        let table: Table =
            toml::from_str(r#"tls = ["implicit", "starttls", "none"]"#).expect("parses");
        assert_eq!(
            table.tls,
            [MailTls::Implicit, MailTls::StartTls, MailTls::None]
        );
    }
}
