//! A message parsed from its bytes, whatever the bytes are. MIME, transfer encodings,
//! charsets and RFC 2047 headers are mail-parser's; this module picks what the desk keeps
//! (who, when, the new text, what was attached, how it threads, whether a machine wrote it)
//! and says in plain words what it could not read. It never fails and never panics: a broken
//! message still arrives on its ticket, with its problems listed for the person who reads it.

use std::collections::HashSet;
use std::panic;

use mail_parser::decoders::charsets::map::charset_decoder;
use mail_parser::{
    HeaderName, HeaderValue, Message as Mail, MessageParser, MessagePart, MimeHeaders, PartType,
};
use sha2::{Digest, Sha256};

use super::message::{Address, Attachment, Automatic, Message};

mod text;

#[cfg(test)]
mod tests;

/// The most of a message's new text the desk keeps, in bytes; the quoted history has the
/// same limit.
pub const TEXT_LIMIT: usize = 64 * 1024;
/// The longest subject kept, in characters.
const SUBJECT_LIMIT: usize = 300;
/// The longest display name or attachment name kept, in characters.
const NAME_LIMIT: usize = 200;
/// Said once, however many parts were broken.
const MALFORMED: &str = "part of the message was malformed (a broken MIME boundary or \
    encoding); what could be read is shown as it came";

/// The desk's message from a raw RFC 5322 message. Never fails: what could not be read is
/// said in [`Message::problems`].
pub fn parse(raw: &[u8]) -> Message {
    // mail-parser promises not to panic, but a few of its internal checks still can on
    // malformed input; the message then keeps its size, its id and what its bytes say.
    panic::catch_unwind(|| read(raw)).unwrap_or_else(|_| {
        headless(
            raw,
            "the message could not be read as mail; its bytes are shown as text",
        )
    })
}

fn read(raw: &[u8]) -> Message {
    if raw.is_empty() {
        return headless(raw, "the message was empty");
    }
    let Some(mail) = MessageParser::default().parse(raw) else {
        return headless(
            raw,
            "the message had no headers that could be read; its bytes are shown as text",
        );
    };
    let mut message = blank(raw);
    let problems = &mut message.problems;

    if let Some(id) = ids(mail.header(HeaderName::MessageId)).into_iter().next() {
        message.message_id = id;
    } else {
        message.message_id = id_of(raw);
    }
    message.from = from(&mail, problems);
    message.date = date(&mail, problems);
    message.subject = text::one_line(mail.subject().unwrap_or_default(), SUBJECT_LIMIT);
    if message.subject.contains(char::REPLACEMENT_CHARACTER) {
        problems.push("some characters of the subject could not be read and are shown as �".into());
    }
    message.in_reply_to = ids(mail.header(HeaderName::InReplyTo)).into_iter().next();
    message.references = ids(mail.header(HeaderName::References));
    message.automatic = automatic(&mail, &message.from.address, &message.subject);

    let (body, chosen) = body(&mail, problems);
    let (mut new, mut quoted) = text::fold_quotes(&body);
    if let Some(len) = text::cut(&mut new, TEXT_LIMIT) {
        problems.push(format!("the text was cut at 64 KiB of {}", size(len)));
    }
    if let Some(quoted) = &mut quoted
        && let Some(len) = text::cut(quoted, TEXT_LIMIT)
    {
        problems.push(format!(
            "the quoted history was cut at 64 KiB of {}",
            size(len)
        ));
    }
    (message.text, message.quoted) = (new, quoted);

    let chosen: HashSet<u32> = chosen.into_iter().collect();
    message.attachments = mail
        .attachments
        .iter()
        .filter(|id| !chosen.contains(id))
        .filter_map(|&id| mail.parts.get(id as usize))
        .map(attachment)
        .collect();
    if mail
        .parts
        .iter()
        .any(|part| part.is_encoding_problem && !part.is_empty())
    {
        note(&mut message.problems, MALFORMED);
    }
    message
}

/// The id of a message that has no Message-ID: the same bytes, the same id.
fn id_of(raw: &[u8]) -> String {
    format!("sha256-{}@desk.invalid", hex::encode(Sha256::digest(raw)))
}

/// A message with nothing read yet and no sender.
fn blank(raw: &[u8]) -> Message {
    Message {
        message_id: String::new(),
        from: Address {
            address: String::new(),
            name: None,
        },
        date: None,
        subject: String::new(),
        text: String::new(),
        quoted: None,
        attachments: Vec::new(),
        in_reply_to: None,
        references: Vec::new(),
        automatic: None,
        size: raw.len(),
        problems: Vec::new(),
    }
}

/// A message that is not mail: its bytes, cleaned and cut, as its text.
fn headless(raw: &[u8], problem: &str) -> Message {
    let mut message = blank(raw);
    message.message_id = id_of(raw);
    let mut words = text::clean(&String::from_utf8_lossy(raw));
    let cut = text::cut(&mut words, TEXT_LIMIT);
    message.text = words.trim().to_owned();
    message.problems.push(problem.to_owned());
    if let Some(len) = cut {
        message
            .problems
            .push(format!("the text was cut at 64 KiB of {}", size(len)));
    }
    message
}

fn note(problems: &mut Vec<String>, problem: &str) {
    if !problems.iter().any(|p| p == problem) {
        problems.push(problem.to_owned());
    }
}

/// `196 KiB`, `30.0 MiB`.
fn size(bytes: usize) -> String {
    if bytes >= 1024 * 1024 {
        format!("{:.1} MiB", bytes as f64 / (1024.0 * 1024.0))
    } else {
        format!("{} KiB", bytes.div_ceil(1024))
    }
}

/// Message ids without angle brackets or control characters, in the header's order.
fn ids(value: Option<&HeaderValue>) -> Vec<String> {
    let Some(ids) = value.and_then(HeaderValue::as_text_list) else {
        return Vec::new();
    };
    ids.iter()
        .filter_map(|id| {
            let id: String = id.chars().filter(|c| !c.is_control()).collect();
            let id = id
                .trim()
                .trim_start_matches('<')
                .trim_end_matches('>')
                .trim();
            (!id.is_empty()).then(|| id.to_owned())
        })
        .collect()
}

fn from(mail: &Mail, problems: &mut Vec<String>) -> Address {
    let first = mail.from().and_then(|from| from.first());
    let address: String = first
        .and_then(|addr| addr.address())
        .unwrap_or_default()
        .chars()
        .filter(|c| !c.is_control())
        .collect();
    let address = address
        .trim()
        .trim_start_matches('<')
        .trim_end_matches('>')
        .trim()
        .to_lowercase();
    let name = first
        .and_then(|addr| addr.name())
        .map(|name| text::one_line(name, NAME_LIMIT))
        .filter(|name| !name.is_empty());
    if address.is_empty() {
        let header = mail.header_raw(HeaderName::From).map(str::trim);
        problems.push(match header.filter(|h| !h.is_empty()) {
            Some(header) => format!(
                "the sender's address could not be read from \"{}\"",
                text::one_line(header, 80)
            ),
            None => "the message has no sender (no From header)".to_owned(),
        });
    }
    Address { address, name }
}

/// The Date header in UTC as RFC 3339, when it names a real moment.
fn date(mail: &Mail, problems: &mut Vec<String>) -> Option<String> {
    if let Some(date) = mail.date().filter(|d| d.is_valid()) {
        let utc = mail_parser::DateTime::from_timestamp(date.to_timestamp());
        return Some(utc.to_rfc3339());
    }
    if let Some(header) = mail.header_raw(HeaderName::Date).map(str::trim)
        && !header.is_empty()
    {
        problems.push(format!(
            "the date \"{}\" could not be read",
            text::one_line(header, 80)
        ));
    }
    None
}

/// The message's text with the parts it came from: every text body part in order (HTML
/// only where there is no plain text, turned into text here), or, when the MIME was too
/// broken for any, the first text mail-parser recovered from it.
fn body(mail: &Mail, problems: &mut Vec<String>) -> (String, Vec<u32>) {
    let is_text = |id: &u32| {
        mail.parts
            .get(*id as usize)
            .is_some_and(|part| matches!(part.body, PartType::Text(_) | PartType::Html(_)))
    };
    let mut chosen: Vec<u32> = mail.text_body.iter().copied().filter(is_text).collect();
    if chosen.is_empty()
        && let Some(&id) = mail
            .attachments
            .iter()
            .find(|&&id| mail.parts.get(id as usize).is_some_and(recovered_text))
    {
        note(problems, MALFORMED);
        chosen.push(id);
    }
    let mut words = Vec::new();
    for part in chosen.iter().filter_map(|&id| mail.parts.get(id as usize)) {
        let text = match &part.body {
            PartType::Html(html) => text::html_to_text(html),
            PartType::Text(text) if part.is_content_type("text", "html") => {
                text::html_to_text(text)
            }
            PartType::Text(text) => text.to_string(),
            _ => continue,
        };
        charset_problems(part, &text, problems);
        words.push(text::clean(&text));
    }
    (words.join("\n\n"), chosen)
}

/// A text part mail-parser kept as it came because its MIME was broken: a part whose
/// boundary never ended, or a multipart whose boundary never came.
fn recovered_text(part: &MessagePart) -> bool {
    let attached = part
        .content_disposition()
        .is_some_and(|d| d.is_attachment());
    let kind = part
        .content_type()
        .map(|ct| ct.ctype().to_ascii_lowercase());
    matches!(part.body, PartType::Text(_))
        && !attached
        && match kind.as_deref() {
            None | Some("text") => part.is_encoding_problem,
            Some(kind) => kind == "multipart",
        }
}

/// Says so when a part's charset is unknown or cannot be decoded here, or when some of its
/// characters could not be decoded (mail-parser shows those as U+FFFD).
fn charset_problems(part: &MessagePart, text: &str, problems: &mut Vec<String>) {
    let charset = part
        .content_type()
        .and_then(|ct| ct.attribute("charset"))
        .map(|c| text::one_line(c, 40));
    let utf8 = |c: &&str| {
        let c = c.to_ascii_lowercase().replace('_', "-");
        matches!(
            c.as_str(),
            "utf-8" | "utf8" | "unicode-1-1-utf-8" | "unicode11utf8" | "unicode20utf8"
        ) || c.ends_with("-utf8")
    };
    let decoder = charset
        .as_deref()
        .filter(|c| !utf8(c))
        .map(|c| (c, charset_decoder(c.as_bytes())));
    // Without mail-parser's `full_encoding` feature its multi-byte charsets (Shift_JIS,
    // ISO-2022-JP, EUC, GBK, Big5) read the bytes as UTF-8: a decoder that gives back this
    // UTF-8 unchanged is one of those.
    let probe = "あ";
    let problem = match decoder {
        Some((c, None)) => {
            format!("the text was in an unknown charset ({c}) and is shown as it came")
        }
        Some((c, Some(decode))) if decode(probe.as_bytes()) == probe => {
            format!("the text was in {c}, which the desk cannot decode, and is shown as it came")
        }
        _ if text.contains(char::REPLACEMENT_CHARACTER) => format!(
            "some characters of the text ({}) could not be read and are shown as �",
            charset.as_deref().unwrap_or("no charset given")
        ),
        _ => return,
    };
    note(problems, &problem);
}

fn attachment(part: &MessagePart) -> Attachment {
    let name = part
        .attachment_name()
        .map(|name| text::one_line(name, NAME_LIMIT))
        .filter(|name| !name.is_empty())
        .unwrap_or_else(|| "unnamed".to_owned());
    let mime_type = match part.content_type() {
        Some(ct) => match ct.subtype() {
            Some(subtype) => format!("{}/{subtype}", ct.ctype()),
            None => "application/octet-stream".to_owned(),
        },
        None if part.is_message() => "message/rfc822".to_owned(),
        None => "text/plain".to_owned(),
    };
    let mime_type: String = mime_type
        .chars()
        .filter(|c| !c.is_control() && !c.is_whitespace())
        .take(100)
        .collect();
    Attachment {
        name,
        mime_type: mime_type.to_lowercase(),
        size: part.len(),
    }
}

/// Clear header signals only: a bounce over an automatic reply over bulk mail.
fn automatic(mail: &Mail, from: &str, subject: &str) -> Option<Automatic> {
    let present = |name: &'static str| mail.header(name).is_some();
    let header = |name: &'static str| {
        mail.header_raw(name)
            .map(|value| value.trim().to_ascii_lowercase())
    };
    let subject = subject.to_lowercase();

    let report = mail.content_type().is_some_and(|ct| {
        ct.ctype().eq_ignore_ascii_case("multipart")
            && ct
                .subtype()
                .is_some_and(|s| s.eq_ignore_ascii_case("report"))
            && ct
                .attribute("report-type")
                .is_some_and(|t| t.trim().eq_ignore_ascii_case("delivery-status"))
    });
    let daemon = from
        .split_once('@')
        .is_some_and(|(local, _)| local == "mailer-daemon" || local == "postmaster");
    let null_sender = header("Return-Path").is_some_and(|path| path == "<>");
    let dsn_subject = [
        "undeliverable",
        "undelivered mail",
        "delivery status notification",
        "delivery failure",
        "mail delivery failed",
        "returned mail",
        "failure notice",
    ]
    .iter()
    .any(|words| subject.contains(words));
    if report || daemon || null_sender && dsn_subject {
        return Some(Automatic::Bounce);
    }

    let auto_submitted = header("Auto-Submitted")
        .is_some_and(|v| v.split(';').next().is_some_and(|v| v.trim() != "no"));
    let autoreply_header = present("X-Autoreply") || present("X-Autorespond");
    let suppressed = header("X-Auto-Response-Suppress")
        .is_some_and(|v| v.split(',').any(|w| matches!(w.trim(), "all" | "oof")));
    let auto_subject = [
        "automatic reply",
        "auto:",
        "autoreply",
        "out of office",
        "abwesenheitsnotiz",
        "réponse automatique",
    ]
    .iter()
    .any(|words| subject.starts_with(words));
    if auto_submitted || autoreply_header || suppressed && auto_subject {
        return Some(Automatic::AutoReply);
    }

    let precedence =
        header("Precedence").is_some_and(|p| matches!(p.as_str(), "bulk" | "list" | "junk"));
    let list = present("List-Id") || present("List-Unsubscribe");
    (precedence || list).then_some(Automatic::Bulk)
}
