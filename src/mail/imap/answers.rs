//! What an IMAP server's answers say, read for [`super::Imap`]: a fetched message, a refusal
//! in the server's own words (and whether it names a missing folder), and the few strings the
//! desk sends (a quoted folder name, a set of UIDs).

use async_imap::imap_proto::{AttributeValue, Outcome, Response, ResponseCode};

use super::{Failure, Fetched};
use crate::mail::{MailError, io_words};

/// One FETCH answer with both its UID and the whole message.
pub(super) fn fetched(answer: &Response<'_>) -> Option<Fetched> {
    let Response::Fetch(_, attributes) = answer else {
        return None;
    };
    let uid = attributes.iter().find_map(|attribute| match attribute {
        AttributeValue::Uid(uid) => Some(*uid),
        _ => None,
    })?;
    let raw = attributes.iter().find_map(|attribute| match attribute {
        AttributeValue::BodySection {
            section: None,
            data: Some(data),
            ..
        }
        | AttributeValue::Rfc822(Some(data)) => Some(data.to_vec()),
        _ => None,
    })?;
    Some(Fetched { uid, raw })
}

/// A NO or BAD in words, and whether it says the folder does not exist (`[TRYCREATE]` on
/// APPEND, `[NONEXISTENT]` or Dovecot's "Mailbox doesn't exist" on SELECT).
pub(super) fn refusal(outcome: &Outcome<'_>) -> Failure {
    let text = outcome_text(outcome);
    let lower = text.to_lowercase();
    let missing = matches!(outcome.code, Some(ResponseCode::TryCreate))
        || ["nonexistent", "not exist", "n't exist", "no such"]
            .iter()
            .any(|words| lower.contains(words));
    Failure::Refused { text, missing }
}

pub(super) fn outcome_text(outcome: &Outcome<'_>) -> String {
    without_timing(outcome.information.as_deref().unwrap_or("no reason given"))
}

/// The server's own words inside one of async-imap's error texts, which read
/// `code: None, info: Some("Authentication failed.")`.
pub(super) fn server_text(error: &str) -> String {
    let Some(start) = ["info: Some(\"", "information: Some(\""]
        .iter()
        .find_map(|key| error.find(key).map(|at| at + key.len()))
    else {
        return error.to_owned();
    };
    let rest = &error[start..];
    let inner = rest.rfind("\")").map_or(rest, |end| &rest[..end]);
    without_timing(&inner.replace("\\\"", "\"").replace("\\\\", "\\"))
}

/// Dovecot ends its answers with its timings, `(0.001 + 0.000 secs).`: not for people.
fn without_timing(text: &str) -> String {
    let text = text.trim();
    let text = match text.rfind(" (") {
        Some(at) if text.ends_with("secs).") => &text[..at],
        _ => text,
    };
    text.trim_end_matches('.').to_owned()
}

pub(super) fn imap_words(error: &async_imap::error::Error) -> String {
    use async_imap::error::Error as E;
    match error {
        E::Io(e) => io_words(e),
        E::ConnectionLost => "the server closed the connection".to_owned(),
        E::No(text) | E::Bad(text) => server_text(text),
        E::Parse(e) => format!("the server said something the desk cannot read ({e})"),
        other => other.to_string(),
    }
}

/// A folder name as an IMAP quoted string. Control characters cannot be quoted, and a name
/// outside ASCII must be given as the server spells it (modified UTF-7).
pub(super) fn quoted(folder: &str) -> Result<String, MailError> {
    if folder.is_empty()
        || folder
            .chars()
            .any(|c| !c.is_ascii() || c.is_ascii_control())
    {
        return Err(MailError::FolderName {
            folder: folder.to_owned(),
        });
    }
    Ok(format!(
        "\"{}\"",
        folder.replace('\\', "\\\\").replace('"', "\\\"")
    ))
}

/// Sorted UIDs as an IMAP set, runs folded: `1:3,7,9:10`.
pub(super) fn uid_set(uids: &[u32]) -> String {
    let mut runs: Vec<(u32, u32)> = Vec::new();
    for &uid in uids {
        match runs.last_mut() {
            Some((_, end)) if end.checked_add(1) == Some(uid) => *end = uid,
            _ => runs.push((uid, uid)),
        }
    }
    runs.iter()
        .map(|&(start, end)| match start == end {
            true => start.to_string(),
            false => format!("{start}:{end}"),
        })
        .collect::<Vec<_>>()
        .join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uid_sets_fold_runs() {
        assert_eq!(uid_set(&[1, 2, 3, 7, 9, 10]), "1:3,7,9:10");
        assert_eq!(uid_set(&[5]), "5");
        assert_eq!(uid_set(&[u32::MAX - 1, u32::MAX]), "4294967294:4294967295");
    }

    #[test]
    fn the_servers_words_come_out_of_async_imaps_error_text() {
        assert_eq!(
            server_text(
                r#"code: None, info: Some("[AUTHENTICATIONFAILED] Authentication failed.")"#
            ),
            "[AUTHENTICATIONFAILED] Authentication failed"
        );
        assert_eq!(
            server_text(
                r#"code: Some(TryCreate), info: Some("Mailbox doesn't exist: Sent (0.001 + 0.000 secs).")"#
            ),
            "Mailbox doesn't exist: Sent"
        );
        assert_eq!(server_text("something else"), "something else");
    }

    #[test]
    fn folder_names_are_quoted_or_refused() {
        assert_eq!(quoted("INBOX").expect("quotable"), "\"INBOX\"");
        assert_eq!(quoted(r#"a"b\c"#).expect("quotable"), r#""a\"b\\c""#);
        for bad in ["", "IN\r\nBOX", "Gesendete Objekte ä"] {
            assert!(
                matches!(quoted(bad), Err(MailError::FolderName { .. })),
                "{bad:?}"
            );
        }
    }
}
