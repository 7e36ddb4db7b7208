//! `[mail]`: the support mailbox the queue comes from (a Maildir, or an IMAP folder) and the
//! SMTP server replies go out through. Passwords are never in the file: it names the
//! environment variable that holds each.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::ConfigError;
use crate::mail::{MailTls, is_loopback};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MailConfig {
    /// The support address: the From of replies; mail to it is the queue.
    pub address: String,
    /// The name replies are signed with in their From (`Fernbrook Support`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// A Maildir the team's MTA, fetchmail or mbsync delivers to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub maildir: Option<PathBuf>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub imap: Option<ImapConfig>,
    /// Without it, replies go to the outbox file as they do without `[mail]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub smtp: Option<SmtpConfig>,
    /// A PEM file of the CA that signed the mail servers' certificates, besides the system's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ca_file: Option<PathBuf>,
    /// Who a sender's address belongs to: `bundled` (the shop that ships with the desk) or a
    /// JSON file of `{customer_id, name, email}`. Without it, no sender is a known customer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub customers: Option<String>,
    /// A solved conversation that stays quiet this many days is closed.
    #[serde(default = "default_close_after_days")]
    pub close_after_days: u32,
    /// Seconds between looks at a mailbox that cannot say when mail arrives (an IMAP
    /// server without IDLE; a Maildir is watched).
    #[serde(default = "default_poll_secs")]
    pub poll_secs: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ImapConfig {
    pub host: String,
    #[serde(default = "default_imap_port")]
    pub port: u16,
    #[serde(default = "default_implicit")]
    pub tls: MailTls,
    pub user: String,
    pub password_env: String,
    #[serde(default = "default_folder")]
    pub folder: String,
    /// Where a copy of each reply the mail server took is filed (`Sent`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sent_folder: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SmtpConfig {
    pub host: String,
    #[serde(default = "default_smtp_port")]
    pub port: u16,
    #[serde(default = "default_starttls")]
    pub tls: MailTls,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub password_env: Option<String>,
}

pub(crate) fn default_close_after_days() -> u32 {
    4
}
fn default_poll_secs() -> u64 {
    60
}
fn default_imap_port() -> u16 {
    993
}
fn default_smtp_port() -> u16 {
    587
}
fn default_implicit() -> MailTls {
    MailTls::Implicit
}
fn default_starttls() -> MailTls {
    MailTls::StartTls
}
fn default_folder() -> String {
    "INBOX".to_owned()
}

impl MailConfig {
    pub(super) fn validate(&self) -> Result<(), ConfigError> {
        let problem = |what: String| Err(ConfigError::Mail(what));
        let address = self.address.trim();
        if !address.contains('@') || address.contains(char::is_whitespace) {
            return problem(format!(
                "address \"{address}\" is not a mail address; write the support address replies come from"
            ));
        }
        match (&self.maildir, &self.imap) {
            (Some(_), Some(_)) => {
                return problem(
                    "names both a maildir and [mail.imap]; the queue comes from one mailbox: keep one".into(),
                );
            }
            (None, None) => {
                return problem(
                    "names no mailbox; add maildir = \"/path\" or a [mail.imap] table".into(),
                );
            }
            _ => {}
        }
        if let Some(imap) = &self.imap {
            plain_only_on_loopback("[mail.imap]", &imap.host, imap.tls)?;
        }
        if let Some(smtp) = &self.smtp {
            plain_only_on_loopback("[mail.smtp]", &smtp.host, smtp.tls)?;
            if smtp.user.is_some() != smtp.password_env.is_some() {
                return problem(
                    "[mail.smtp] needs user and password_env together, or neither (a server without AUTH)".into(),
                );
            }
        }
        if self.poll_secs == 0 {
            return problem("poll_secs must be more than 0".into());
        }
        Ok(())
    }
}

/// `tls = "none"` sends passwords and mail in the clear: only to this machine.
fn plain_only_on_loopback(table: &str, host: &str, tls: MailTls) -> Result<(), ConfigError> {
    if tls == MailTls::None && !is_loopback(host) {
        return Err(ConfigError::Mail(format!(
            "{table} has tls = \"none\" for {host}; mail and passwords would cross the network in the clear: use \"implicit\" or \"starttls\" (\"none\" is for 127.0.0.1 only)"
        )));
    }
    Ok(())
}

/// `[sla]`: how soon a customer's message must be answered, in the shop's business hours.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SlaConfig {
    /// The first answer to a ticket (`4h`).
    pub first_response: String,
    /// Every answer after the customer writes again (`8h`).
    pub next_reply: String,
    /// `Mon-Fri 09:00-17:00`, more separated by commas.
    pub business_hours: String,
    /// An IANA name (`Europe/Berlin`).
    pub time_zone: String,
    #[serde(default)]
    pub holidays: Vec<String>,
    /// The status bar warns of a ticket due within this (`1h`).
    #[serde(default = "default_warn_within")]
    pub warn_within: String,
    /// `[sla.tags.NAME]`: targets for tickets with that tag, tighter or looser.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tags: BTreeMap<String, SlaTagConfig>,
}

/// `[sla.tags.NAME]`: a tag's own targets; a clock left out keeps `[sla]`'s.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SlaTagConfig {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_response: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_reply: Option<String>,
}

fn default_warn_within() -> String {
    "1h".to_owned()
}

impl SlaConfig {
    /// The settings, read and checked.
    pub fn build(&self) -> Result<crate::sla::Sla, crate::sla::SlaError> {
        let sla = crate::sla::Sla::new(
            &self.first_response,
            &self.next_reply,
            &self.business_hours,
            &self.time_zone,
            &self.holidays,
            &self.warn_within,
        )?;
        self.tags.iter().try_fold(sla, |sla, (tag, targets)| {
            sla.with_tag(
                tag,
                targets.first_response.as_deref(),
                targets.next_reply.as_deref(),
            )
        })
    }
}
