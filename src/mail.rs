//! Mail in and out: a message parsed from its bytes ([`message`], [`parse`]), read from a
//! Maildir or an IMAP folder, and a reply submitted over SMTP. Nothing here knows tickets or
//! the host: the host turns what arrives into the record's events and hands replies back to
//! send.

pub mod message;
pub mod parse;
