//! The desk's mailroom: the support mailbox turned into tickets and replies turned into mail.
//!
//! [`threads`] folds the record's mail events into tickets and decides which ticket a new
//! message belongs to; [`intake`] reads a Maildir or an IMAP folder into the record, once or
//! as mail arrives; [`delivery`] hands replies to the mail server and records its answer.
//! Everything a message says is data: it reaches a model only as the host quotes a ticket.

pub mod delivery;
pub mod follow;
pub mod intake;
pub mod maildir;
pub mod threads;

pub use threads::{MailTickets, Placement};

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use crate::config::MailConfig;
use crate::mail::imap::ImapAccount;
use crate::mail::message::Address;
use crate::mail::smtp::SmtpAccount;
use crate::tickets::{Customers, TicketsError};
use delivery::Outbound;

/// Where the queue's mail comes from.
#[derive(Debug, Clone)]
pub enum Inbound {
    Maildir(PathBuf),
    Imap(ImapAccount),
}

impl Inbound {
    /// How the record names the mailbox (`imap://user@host:port/INBOX`, or the Maildir's
    /// path): a message's place, and the key its UIDs are kept under.
    pub fn name(&self) -> String {
        match self {
            Inbound::Maildir(dir) => dir.display().to_string(),
            Inbound::Imap(a) => format!("imap://{}@{}:{}/{}", a.user, a.host, a.port, a.folder),
        }
    }
}

/// A desk's mailroom, from its `[mail]` config: the mailbox, the way out, who the customers
/// are, and the mail tickets of the record.
pub struct Mailroom {
    pub inbound: Inbound,
    pub outbound: Option<Outbound>,
    /// The IMAP folder a copy of each delivered reply is filed in.
    pub sent_folder: Option<(ImapAccount, String)>,
    pub customers: Customers,
    /// The record's mail tickets, shared with the desk that shows them.
    pub tickets: Arc<Mutex<MailTickets>>,
    pub close_after_days: u32,
    pub poll_secs: u64,
}

#[derive(Debug, thiserror::Error)]
pub enum MailroomError {
    #[error(
        "[mail] names the environment variable {0} for a password, and it is not set: export it before starting the desk"
    )]
    NoPassword(String),
    #[error(transparent)]
    Customers(#[from] TicketsError),
}

impl Mailroom {
    /// The mailroom `config` describes; passwords are read from the environment now.
    pub fn from_config(config: &MailConfig) -> Result<Self, MailroomError> {
        let secret = |name: &str| {
            std::env::var(name).map_err(|_| MailroomError::NoPassword(name.to_owned()))
        };
        let imap = match &config.imap {
            Some(imap) => Some(ImapAccount {
                host: imap.host.clone(),
                port: imap.port,
                tls: imap.tls,
                user: imap.user.clone(),
                password: secret(&imap.password_env)?,
                folder: imap.folder.clone(),
                ca_file: config.ca_file.clone(),
            }),
            None => None,
        };
        let inbound = match (&config.maildir, &imap) {
            (Some(dir), _) => Inbound::Maildir(dir.clone()),
            (None, Some(account)) => Inbound::Imap(account.clone()),
            // The config's own check requires one of them.
            (None, None) => Inbound::Maildir(PathBuf::from(".")),
        };
        let sent_folder = imap.as_ref().zip(
            config
                .imap
                .as_ref()
                .and_then(|imap| imap.sent_folder.clone()),
        );
        let sent_folder = sent_folder.map(|(account, folder)| (account.clone(), folder));
        let outbound = match &config.smtp {
            Some(smtp) => Some(Outbound {
                account: SmtpAccount {
                    host: smtp.host.clone(),
                    port: smtp.port,
                    tls: smtp.tls,
                    user: smtp.user.clone(),
                    password: smtp.password_env.as_deref().map(secret).transpose()?,
                    ca_file: config.ca_file.clone(),
                },
                from: Address {
                    address: config.address.trim().to_lowercase(),
                    name: config.name.clone(),
                },
            }),
            None => None,
        };
        let customers = match &config.customers {
            Some(source) => Customers::load(source)?,
            None => Customers::default(),
        };
        Ok(Self {
            inbound,
            outbound,
            sent_folder,
            customers,
            tickets: Arc::new(Mutex::new(MailTickets::new(&config.address))),
            close_after_days: config.close_after_days,
            poll_secs: config.poll_secs,
        })
    }

    /// The mail tickets now (a lock held only while reading).
    pub fn lock(&self) -> std::sync::MutexGuard<'_, MailTickets> {
        self.tickets.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The intake over `record`.
    pub fn intake<'a>(&'a self, record: &'a crate::record::Record) -> intake::Intake<'a> {
        intake::Intake {
            record,
            tickets: &self.tickets,
            customers: &self.customers,
        }
    }
}
