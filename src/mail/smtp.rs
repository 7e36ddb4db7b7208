//! A reply on its way out: written as RFC 5322 bytes by lettre's message builder (so no text
//! in it, a subject or a display name, can add a header) and submitted over SMTP with TLS
//! through rustls.
//!
//! lettre builds its own rustls config, from the system's roots plus `ca_file`'s
//! certificates; the CA file is first checked by [`crate::tls::client_config`], so a bad
//! one is reported in the same words as everywhere else in the desk.

use std::error::Error as _;
use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use lettre::message::Mailbox;
use lettre::message::header::ContentType;
use lettre::transport::smtp::authentication::Credentials;
use lettre::transport::smtp::client::{Certificate, Tls, TlsParameters};
use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};

use super::message::Address;
use super::{MailError, MailTls, io_words, refuse_plain_to_remote, tls_refused};
use crate::tls::{CertProblem, TlsSetupError};

/// How long connecting, and each step of the SMTP conversation after it, may take.
pub const SMTP_TIMEOUT: Duration = Duration::from_secs(30);

/// Where the desk submits its replies.
#[derive(Clone)]
pub struct SmtpAccount {
    pub host: String,
    pub port: u16,
    pub tls: MailTls,
    /// Logs in (AUTH PLAIN or LOGIN) when set.
    pub user: Option<String>,
    pub password: Option<String>,
    /// A PEM file of CA certificates to trust besides the system's.
    pub ca_file: Option<PathBuf>,
}

impl std::fmt::Debug for SmtpAccount {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SmtpAccount")
            .field("host", &self.host)
            .field("port", &self.port)
            .field("tls", &self.tls)
            .field("user", &self.user)
            .field("password", &self.password.as_ref().map(|_| "(hidden)"))
            .field("ca_file", &self.ca_file)
            .finish()
    }
}

/// A reply as plain data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outgoing {
    pub from: Address,
    pub to: Address,
    /// The subject of the message answered; "Re: " is put in front unless it starts so.
    pub subject: String,
    /// Without angle brackets; see [`make_message_id`].
    pub message_id: String,
    /// The Message-ID of the message answered, without angle brackets.
    pub in_reply_to: Option<String>,
    /// The answered message's References, oldest first, without angle brackets; its own
    /// Message-ID (`in_reply_to`) is added at the end when missing, as RFC 5322 asks.
    pub references: Vec<String>,
    pub text: String,
    pub date: SystemTime,
}

/// A fresh Message-ID, `<32 hex digits>@domain`, without angle brackets.
pub fn make_message_id(domain: &str) -> String {
    format!("{}@{domain}", hex::encode(rand::random::<[u8; 16]>()))
}

/// The reply's RFC 5322 bytes: text/plain in UTF-8, with Message-ID, In-Reply-To and
/// References. An In-Reply-To or a reference that is no valid Message-ID is left out (it could
/// thread nothing); an invalid own Message-ID is an error.
pub fn format(outgoing: &Outgoing) -> Result<Vec<u8>, MailError> {
    Ok(build(outgoing)?.formatted())
}

/// Submits the reply; on success, the server's words for the accepted message (`250 2.0.0 Ok:
/// queued as …`). A refusal for good (5xx) is [`MailError::SmtpRejected`] (or
/// [`MailError::LoginRefused`]); a refusal for now (4xx) and a broken connection are
/// transient ([`MailError::is_transient`]).
pub async fn submit(account: &SmtpAccount, outgoing: &Outgoing) -> Result<String, MailError> {
    refuse_plain_to_remote(account.tls, &account.host)?;
    let message = build(outgoing)?;
    let server = format!("{}:{}", account.host, account.port);
    let host = account.host.trim_start_matches('[').trim_end_matches(']');
    let tls = match account.tls {
        MailTls::Implicit => Tls::Wrapper(tls_parameters(account, host, &server).await?),
        MailTls::StartTls => Tls::Required(tls_parameters(account, host, &server).await?),
        MailTls::None => Tls::None,
    };
    let mut transport = AsyncSmtpTransport::<Tokio1Executor>::builder_dangerous(host)
        .port(account.port)
        .tls(tls)
        .timeout(Some(SMTP_TIMEOUT));
    if let Some(user) = &account.user {
        let password = account.password.clone().unwrap_or_default();
        transport = transport.credentials(Credentials::new(user.clone(), password));
    }
    let response = transport
        .build()
        .send(message)
        .await
        .map_err(|error| smtp_error(&error, account, &server))?;
    let words = response.message().collect::<Vec<_>>().join(" ");
    Ok(format!("{} {words}", response.code()).trim_end().to_owned())
}

fn build(outgoing: &Outgoing) -> Result<Message, MailError> {
    let message_id = bracketed(&outgoing.message_id).ok_or_else(|| MailError::Format {
        detail: format!(
            "the Message-ID {:?} is not one: it must be printable ASCII without spaces or \
             angle brackets, like 1234@example.com",
            outgoing.message_id
        ),
    })?;
    let mut builder = Message::builder()
        .from(mailbox(&outgoing.from)?)
        .to(mailbox(&outgoing.to)?)
        .subject(reply_subject(&outgoing.subject))
        .date(outgoing.date)
        .message_id(Some(message_id))
        .header(ContentType::TEXT_PLAIN);
    let parent = outgoing.in_reply_to.as_deref().and_then(bracketed);
    let mut references: Vec<String> = outgoing
        .references
        .iter()
        .filter_map(|id| bracketed(id))
        .collect();
    if let Some(parent) = parent {
        if references.last() != Some(&parent) {
            references.push(parent.clone());
        }
        builder = builder.in_reply_to(parent);
    }
    if !references.is_empty() {
        builder = builder.references(references.join(" "));
    }
    builder
        .body(outgoing.text.clone())
        .map_err(|e| MailError::Format {
            detail: e.to_string(),
        })
}

/// `Re: subject` on one line; a subject that already starts with "Re:" (any case) is kept.
fn reply_subject(subject: &str) -> String {
    let subject = one_line(subject);
    let is_reply = subject
        .get(..3)
        .is_some_and(|start| start.eq_ignore_ascii_case("re:"));
    match is_reply {
        true => subject,
        false => format!("Re: {subject}"),
    }
}

/// Control characters (a CR/LF above all) become spaces, runs of spaces one.
fn one_line(text: &str) -> String {
    text.split(|c: char| c.is_control() || c.is_whitespace())
        .filter(|word| !word.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

fn mailbox(address: &Address) -> Result<Mailbox, MailError> {
    let parsed = address
        .address
        .parse::<lettre::Address>()
        .map_err(|e| MailError::BadAddress {
            address: address.address.clone(),
            detail: e.to_string(),
        })?;
    let name = address
        .name
        .as_deref()
        .map(one_line)
        .filter(|name| !name.is_empty());
    Ok(Mailbox::new(name, parsed))
}

/// `<id>` for a Message-ID given with or without its brackets; `None` when it is not one.
fn bracketed(id: &str) -> Option<String> {
    let id = id.trim();
    let id = id
        .strip_prefix('<')
        .and_then(|rest| rest.strip_suffix('>'))
        .unwrap_or(id);
    let valid = !id.is_empty()
        && id
            .chars()
            .all(|c| c.is_ascii_graphic() && c != '<' && c != '>');
    valid.then(|| format!("<{id}>"))
}

async fn tls_parameters(
    account: &SmtpAccount,
    host: &str,
    server: &str,
) -> Result<TlsParameters, MailError> {
    let mut builder = TlsParameters::builder(host.to_owned());
    if let Some(path) = &account.ca_file {
        // The desk's own checks of a CA file, for their words.
        crate::tls::client_config(Some(path))?;
        let pem = tokio::fs::read(path)
            .await
            .map_err(|e| TlsSetupError::ReadCaFile {
                path: path.clone(),
                detail: io_words(&e),
            })?;
        let certificate =
            Certificate::from_pem(&pem).map_err(|e| TlsSetupError::BadCaCertificate {
                path: path.clone(),
                detail: e.to_string(),
            })?;
        builder = builder.add_root_certificate(certificate);
    }
    builder.build_rustls().map_err(|e| MailError::Tls {
        server: server.to_owned(),
        advice: format!("the TLS settings could not be made ({e})"),
    })
}

/// lettre's error in the desk's words. lettre tells permanent from transient replies and a
/// client-side refusal, but not a failed connection from one broken later; its Display for the
/// former starts with "Connection error", which is what is read here.
fn smtp_error(
    error: &lettre::transport::smtp::Error,
    account: &SmtpAccount,
    server: &str,
) -> MailError {
    let server = server.to_owned();
    if let Some(problem) = CertProblem::find(error) {
        return tls_refused(&server, &problem, account.ca_file.as_deref());
    }
    let detail = error
        .source()
        .map_or_else(|| error.to_string(), |source| source.to_string());
    if let Some(code) = error.status() {
        let code = code.to_string();
        return match (error.is_permanent(), code.as_str()) {
            (true, "530" | "534" | "535" | "538") => MailError::LoginRefused {
                protocol: "SMTP",
                server,
                user: account.user.clone().unwrap_or_else(|| "(no user)".into()),
                detail: format!("{code} {detail}"),
            },
            (true, _) => MailError::SmtpRejected {
                server,
                code,
                detail,
            },
            (false, _) => MailError::SmtpDeferred {
                server,
                code,
                detail,
            },
        };
    }
    if error.is_timeout() {
        return MailError::Timeout {
            server,
            secs: SMTP_TIMEOUT.as_secs(),
        };
    }
    if error.is_client() {
        return match detail.contains("STARTTLS") {
            true => MailError::NoStartTls { server, detail },
            false => MailError::SmtpFailed { server, detail },
        };
    }
    if error.is_tls() {
        return MailError::Tls {
            server,
            advice: detail,
        };
    }
    let detail = io_error(error).map_or(detail, io_words);
    match error.to_string().starts_with("Connection error") {
        true => MailError::Unreachable { server, detail },
        false => MailError::Lost { server, detail },
    }
}

/// The first I/O error in an error's chain.
fn io_error<'a>(error: &'a (dyn std::error::Error + 'static)) -> Option<&'a std::io::Error> {
    let mut next = Some(error);
    while let Some(error) = next {
        if let Some(io) = error.downcast_ref::<std::io::Error>() {
            return Some(io);
        }
        next = error.source();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outgoing(subject: &str, name: &str) -> Outgoing {
        Outgoing {
            from: Address {
                address: "support@shop.example".into(),
                name: Some("Shop Support".into()),
            },
            to: Address {
                address: "ann@example.com".into(),
                name: Some(name.into()),
            },
            subject: subject.into(),
            message_id: "reply-1@shop.example".into(),
            in_reply_to: Some("question-2@example.com".into()),
            references: vec!["question-1@example.com".into()],
            text: "Your refund is on its way.\n".into(),
            date: SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000),
        }
    }

    /// The header block, unfolded: one entry per header.
    fn headers(raw: &[u8]) -> Vec<String> {
        let text = String::from_utf8(raw.to_vec()).expect("ASCII headers");
        let (head, _) = text.split_once("\r\n\r\n").expect("a header block");
        let mut headers: Vec<String> = Vec::new();
        for line in head.split("\r\n") {
            match line.starts_with([' ', '\t']) {
                true => headers
                    .last_mut()
                    .expect("a header to continue")
                    .push_str(line),
                false => headers.push(line.to_owned()),
            }
        }
        headers
    }

    fn names(headers: &[String]) -> Vec<&str> {
        headers
            .iter()
            .map(|h| h.split_once(':').expect("a header name").0)
            .collect()
    }

    #[test]
    fn cr_lf_in_a_subject_or_a_name_adds_no_header() {
        let raw = format(&outgoing(
            "Refund\r\nBcc: everyone@example.com",
            "Ann\r\nX-Injected: yes",
        ))
        .expect("formats");
        let headers = headers(&raw);
        let mut names = names(&headers);
        names.sort_unstable();
        assert_eq!(
            names,
            [
                "Content-Transfer-Encoding",
                "Content-Type",
                "Date",
                "From",
                "In-Reply-To",
                "Message-ID",
                "References",
                "Subject",
                "To"
            ]
        );
        assert!(headers.contains(&"Subject: Re: Refund Bcc: everyone@example.com".to_owned()));
        assert!(
            headers
                .iter()
                .any(|h| h.starts_with("To: ") && h.contains("<ann@example.com>")),
            "{headers:?}"
        );
    }

    #[test]
    fn a_reply_threads_under_the_message_it_answers() {
        let headers = headers(&format(&outgoing("Where is my order?", "Ann")).expect("formats"));
        for expected in [
            "Subject: Re: Where is my order?",
            "Message-ID: <reply-1@shop.example>",
            "In-Reply-To: <question-2@example.com>",
            "References: <question-1@example.com> <question-2@example.com>",
            "Content-Type: text/plain; charset=utf-8",
            "From: \"Shop Support\" <support@shop.example>",
        ] {
            assert!(
                headers.contains(&expected.to_owned()),
                "{expected} in {headers:?}"
            );
        }
    }

    #[test]
    fn a_subject_that_is_already_a_reply_gets_no_second_re() {
        assert_eq!(reply_subject("RE: order 7"), "RE: order 7");
        assert_eq!(reply_subject("re:order 7"), "re:order 7");
        assert_eq!(reply_subject("Regarding order 7"), "Re: Regarding order 7");
        assert_eq!(reply_subject(""), "Re: ");
    }

    #[test]
    fn a_bad_own_message_id_is_an_error_and_a_bad_reference_is_left_out() {
        let mut bad = outgoing("x", "Ann");
        bad.message_id = "two words@shop.example".into();
        assert!(matches!(format(&bad), Err(MailError::Format { .. })));
        let mut odd = outgoing("x", "Ann");
        odd.references = vec!["<fine@example.com>".into(), "not\r\nfine".into()];
        odd.in_reply_to = None;
        let headers = headers(&format(&odd).expect("formats"));
        assert!(headers.contains(&"References: <fine@example.com>".to_owned()));
        assert!(!names(&headers).contains(&"In-Reply-To"));
    }

    #[test]
    fn message_ids_are_fresh_and_bare() {
        let (a, b) = (
            make_message_id("shop.example"),
            make_message_id("shop.example"),
        );
        assert_ne!(a, b);
        assert!(a.ends_with("@shop.example") && !a.contains('<'), "{a}");
        assert_eq!(bracketed(&a), Some(format!("<{a}>")));
    }
}
