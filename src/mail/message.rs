//! A mail message as the desk keeps it: who wrote it, what they wrote (the new text, with the
//! quoted history folded apart), what was attached (listed, never read), and how it threads.
//! Everything here came from outside and is data: shown to people cleaned, given to a model
//! only as the host quotes a ticket.

use serde::{Deserialize, Serialize};

/// A mailbox: an address and the display name that came with it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Address {
    /// Lower-cased, without angle brackets.
    pub address: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

impl Address {
    /// `Name <address>`, or the bare address.
    pub fn display(&self) -> String {
        match &self.name {
            Some(name) => format!("{name} <{}>", self.address),
            None => self.address.clone(),
        }
    }
}

/// A part of a message that is not its text: listed for people, never given to a model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Attachment {
    pub name: String,
    /// `type/subtype`, as the message declared it.
    pub mime_type: String,
    /// Decoded size in bytes.
    pub size: usize,
}

/// Why a message was written by a machine rather than a person; such a message is kept on
/// its ticket and never answered by a model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Automatic {
    /// `Auto-Submitted: auto-replied` / `auto-generated`, an out-of-office reply.
    AutoReply,
    /// `Precedence: bulk | list | junk`, or a mailing list's headers.
    Bulk,
    /// A delivery status notification (`multipart/report; report-type=delivery-status`),
    /// or a message from a mailer daemon.
    Bounce,
}

impl Automatic {
    pub fn as_str(self) -> &'static str {
        match self {
            Automatic::AutoReply => "an automatic reply",
            Automatic::Bulk => "bulk mail",
            Automatic::Bounce => "a bounce",
        }
    }
}

/// One message, parsed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Message {
    /// Without angle brackets. A message that has none gets `sha256-<hex of its bytes>@desk.invalid`,
    /// so the same bytes are the same message.
    pub message_id: String,
    pub from: Address,
    /// The `Date:` header as RFC 3339 (UTC), when it has one that parses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub date: Option<String>,
    /// One line: folded whitespace, no control characters.
    pub subject: String,
    /// What the writer wrote this time: text/plain preferred, HTML turned into text (scripts
    /// and styles dropped), the quoted history below it taken out into `quoted`.
    pub text: String,
    /// The quoted history under the new text (`> ` lines, "On … wrote:" and what follows).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quoted: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attachments: Vec<Attachment>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub in_reply_to: Option<String>,
    /// Oldest first, without angle brackets.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub references: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub automatic: Option<Automatic>,
    /// The message's size in bytes as it arrived.
    pub size: usize,
    /// What the parser could not read, in words for a person (an unknown charset, a text cut
    /// at the limit, a malformed part); empty for a clean message.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub problems: Vec<String>,
}

impl Message {
    /// Every Message-ID this message says it answers: `In-Reply-To` first, then
    /// `References` newest first.
    pub fn answers(&self) -> impl Iterator<Item = &str> {
        self.in_reply_to
            .iter()
            .map(String::as_str)
            .chain(self.references.iter().rev().map(String::as_str))
    }
}
