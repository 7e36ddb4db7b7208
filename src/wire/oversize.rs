//! A server's stdout as the client reads it, with one guard: a message longer than the desk
//! takes is cut short, and the request it answered gets an error saying so at once, instead of
//! waiting for a timeout. rmcp drops an over-long line silently (its own cap is
//! [`rmcp::transport::async_rw::DEFAULT_MAX_LINE_LENGTH`]); this reader cuts such a line below
//! that cap, so rmcp reads the truncated part as unparsable and ignores it, then follows it with
//! a JSON-RPC error for the request's ID.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use serde_json::json;
use tokio::io::{AsyncRead, ReadBuf};

mod http;
pub use http::SizeGuarded;

/// The most a single message from a server may hold: a little under rmcp's own line cap, so
/// this reader, not rmcp, decides what happens to a longer one.
pub const MAX_MESSAGE_BYTES: usize = rmcp::transport::async_rw::DEFAULT_MAX_LINE_LENGTH - 64 * 1024;

/// The JSON-RPC error code of a message the desk cut short (an implementation-defined server
/// error, in the range JSON-RPC leaves for them).
pub const TOO_LARGE_CODE: i32 = -32_090;

/// What the request whose answer was cut is told; `size` when it is known.
pub(crate) fn too_large_message(size: Option<usize>, max: usize) -> String {
    let size = size.map_or_else(String::new, |s| format!("{}, ", bytes(s)));
    format!(
        "too large: the answer was {size}over the {} the desk takes in one message; the call ran, but its answer was dropped",
        bytes(max)
    )
}

/// `512 bytes`, `16.0 MiB`.
fn bytes(n: usize) -> String {
    if n < 1024 * 1024 {
        format!("{n} bytes")
    } else {
        format!("{:.1} MiB", n as f64 / (1024.0 * 1024.0))
    }
}

/// How many bytes of a line's start and end are kept to find its `id`.
const EDGE: usize = 1024;

/// A reader of newline-delimited JSON-RPC that cuts any line over `max` bytes.
pub struct Guarded<R> {
    inner: R,
    max: usize,
    /// Bytes read from `inner` behind a cut, not yet looked at.
    input: Vec<u8>,
    /// Bytes ready for the caller, in order, once a line has been cut.
    output: Vec<u8>,
    output_at: usize,
    /// The current line: its length so far, its first bytes, and (once cut) its last bytes.
    line_len: usize,
    head: Vec<u8>,
    tail: Vec<u8>,
    cutting: bool,
}

impl<R: AsyncRead + Unpin> Guarded<R> {
    pub fn new(inner: R, max: usize) -> Self {
        Self {
            inner,
            max,
            input: Vec::new(),
            output: Vec::new(),
            output_at: 0,
            line_len: 0,
            head: Vec::new(),
            tail: Vec::new(),
            cutting: false,
        }
    }

    /// Follows the lines in bytes just read, which go to the caller as they are; `Some(at)`
    /// when a line grows too long at `at`, where the cut starts.
    fn scan(&mut self, bytes: &[u8]) -> Option<usize> {
        let mut at = 0;
        while at < bytes.len() {
            let rest = &bytes[at..];
            let newline = memchr::memchr(b'\n', rest);
            let content = newline.unwrap_or(rest.len());
            let room = self.max - self.line_len;
            if content > room {
                keep_first(&mut self.head, &rest[..room]);
                self.line_len += room;
                self.cutting = true;
                return Some(at + room);
            }
            match newline {
                Some(n) => {
                    self.line_len = 0;
                    self.head.clear();
                    at += n + 1;
                }
                None => {
                    // The line goes on in the next read: keep its start, for its ID.
                    keep_first(&mut self.head, rest);
                    self.line_len += content;
                    at += content;
                }
            }
        }
        None
    }

    /// Moves the input behind a cut to the output: the rest of the cut line is dropped (its
    /// last bytes kept, for its ID), and what follows is followed as [`Self::scan`] does.
    fn process(&mut self) {
        let input = std::mem::take(&mut self.input);
        let mut at = 0;
        while at < input.len() {
            let rest = &input[at..];
            if !self.cutting {
                let delivered = self.scan(rest).unwrap_or(rest.len());
                self.output.extend_from_slice(&rest[..delivered]);
                at += delivered;
                continue;
            }
            let newline = memchr::memchr(b'\n', rest);
            let content = newline.unwrap_or(rest.len());
            keep_last(&mut self.tail, &rest[..content]);
            self.line_len += content;
            at += content;
            if newline.is_some() {
                at += 1;
                self.end_cut_line();
            }
        }
    }

    /// The cut line has ended: close it, and answer its request with an error.
    fn end_cut_line(&mut self) {
        let size = self.line_len;
        self.output.push(b'\n');
        match response_id(&self.head, &self.tail) {
            Some(id) => {
                tracing::warn!(bytes = size, %id, "a server's answer was over the desk's size limit; cut short");
                let error = json!({
                    "jsonrpc": "2.0",
                    "id": id,
                    "error": {
                        "code": TOO_LARGE_CODE,
                        "message": too_large_message(Some(size), self.max),
                    }
                });
                self.output.extend_from_slice(error.to_string().as_bytes());
                self.output.push(b'\n');
            }
            None => {
                tracing::warn!(
                    bytes = size,
                    "a server's message was over the desk's size limit and answered no request it could name; dropped"
                );
            }
        }
        self.line_len = 0;
        self.head.clear();
        self.tail.clear();
        self.cutting = false;
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for Guarded<R> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        loop {
            if this.output_at < this.output.len() {
                let ready = &this.output[this.output_at..];
                let n = ready.len().min(buf.remaining());
                buf.put_slice(&ready[..n]);
                this.output_at += n;
                if this.output_at == this.output.len() {
                    this.output.clear();
                    this.output_at = 0;
                }
                return Poll::Ready(Ok(()));
            }
            if !this.input.is_empty() {
                this.process();
                continue;
            }
            // Every message but a cut one is read straight into the caller's buffer.
            let before = buf.filled().len();
            ready!(Pin::new(&mut this.inner).poll_read(cx, buf))?;
            if buf.filled().len() == before {
                return Poll::Ready(Ok(()));
            }
            let cut_at = if this.cutting {
                Some(0)
            } else {
                this.scan(&buf.filled()[before..])
            };
            let Some(at) = cut_at else {
                return Poll::Ready(Ok(()));
            };
            this.input.extend_from_slice(&buf.filled()[before + at..]);
            buf.set_filled(before + at);
            if at > 0 {
                return Poll::Ready(Ok(()));
            }
        }
    }
}

fn keep_first(head: &mut Vec<u8>, bytes: &[u8]) {
    let room = EDGE.saturating_sub(head.len());
    head.extend_from_slice(&bytes[..bytes.len().min(room)]);
}

fn keep_last(tail: &mut Vec<u8>, bytes: &[u8]) {
    tail.extend_from_slice(&bytes[bytes.len().saturating_sub(EDGE)..]);
    if tail.len() > EDGE {
        tail.drain(..tail.len() - EDGE);
    }
}

/// The `id` of a response whose middle is gone: a top-level `"id"` found in its first bytes
/// (before any `"method"`, which makes it a request or a notification), or as the last member
/// of the object at its very end.
fn response_id(head: &[u8], tail: &[u8]) -> Option<serde_json::Value> {
    match top_level_keys(head) {
        Scan::Id(id) => Some(id),
        Scan::Method => None,
        Scan::Unknown => last_member_id(tail),
    }
}

enum Scan {
    Id(serde_json::Value),
    Method,
    Unknown,
}

/// Walks the top-level members at the start of a JSON object, as far as the bytes go.
fn top_level_keys(bytes: &[u8]) -> Scan {
    let text = String::from_utf8_lossy(bytes);
    let mut chars = text.char_indices().peekable();
    let mut depth = 0usize;
    let mut expecting_key = false;
    while let Some((at, c)) = chars.next() {
        match c {
            '{' | '[' => {
                depth += 1;
                expecting_key = depth == 1 && c == '{';
            }
            '}' | ']' => depth = depth.saturating_sub(1),
            ',' if depth == 1 => expecting_key = true,
            '"' => {
                let end = string_end(&text, at);
                let Some(end) = end else { return Scan::Unknown };
                if depth == 1 && expecting_key {
                    let key = &text[at + 1..end];
                    let value_at = text[end + 1..].trim_start().strip_prefix(':');
                    match (key, value_at) {
                        ("method", _) => return Scan::Method,
                        ("id", Some(value)) => return id_value(value),
                        _ => {}
                    }
                    expecting_key = false;
                }
                while chars.peek().is_some_and(|(i, _)| *i <= end) {
                    chars.next();
                }
            }
            _ => {}
        }
    }
    Scan::Unknown
}

/// Where the string that opens at `open` closes, honouring escapes.
fn string_end(text: &str, open: usize) -> Option<usize> {
    let mut escaped = false;
    for (i, c) in text[open + 1..].char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '"' => return Some(open + 1 + i),
            _ => {}
        }
    }
    None
}

/// A JSON-RPC ID at the start of `text`: a number or a string.
fn id_value(text: &str) -> Scan {
    let mut stream =
        serde_json::Deserializer::from_str(text.trim_start()).into_iter::<serde_json::Value>();
    match stream.next() {
        Some(Ok(id @ (serde_json::Value::Number(_) | serde_json::Value::String(_)))) => {
            Scan::Id(id)
        }
        _ => Scan::Unknown,
    }
}

/// `…,"id":7}` or `…,"id":"a"}` at the very end of a line: the top-level object's last member.
fn last_member_id(tail: &[u8]) -> Option<serde_json::Value> {
    let text = String::from_utf8_lossy(tail);
    let body = text.trim_end().strip_suffix('}')?.trim_end();
    let at = body.rfind("\"id\"")?;
    let before = body[..at].trim_end();
    if !before.ends_with(',') {
        return None;
    }
    let value = body[at + 4..].trim_start().strip_prefix(':')?.trim();
    match serde_json::from_str(value).ok()? {
        id @ (serde_json::Value::Number(_) | serde_json::Value::String(_)) => Some(id),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    async fn through(input: Vec<u8>, max: usize) -> String {
        let mut reader = Guarded::new(&input[..], max);
        let mut out = Vec::new();
        reader.read_to_end(&mut out).await.expect("read");
        String::from_utf8(out).expect("utf-8")
    }

    fn response(id: &str, text_len: usize) -> String {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":"{}"}}]}}}}"#,
            "x".repeat(text_len)
        )
    }

    #[tokio::test]
    async fn lines_under_the_limit_pass_unchanged() {
        let input = format!("{}\n{}\n", response("1", 10), response("2", 100));
        let out = through(input.clone().into_bytes(), 200).await;
        assert_eq!(out, input);
    }

    #[tokio::test]
    async fn an_over_long_answer_is_cut_and_its_request_told_why() {
        let big = response("7", 5_000);
        let input = format!("{big}\n{}\n", response("8", 10));
        let out = through(input.into_bytes(), 1_000).await;
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines[0].len(), 1_000, "the cut part");
        assert!(serde_json::from_str::<serde_json::Value>(lines[0]).is_err());
        let error: serde_json::Value = serde_json::from_str(lines[1]).expect("an error line");
        assert_eq!(error["id"], 7);
        assert_eq!(error["error"]["code"], TOO_LARGE_CODE);
        let message = error["error"]["message"].as_str().unwrap_or_default();
        let size = big.len();
        assert!(
            message.starts_with(&format!(
                "too large: the answer was {size} bytes, over the 1000 bytes"
            )),
            "{message}"
        );
        assert_eq!(lines[2], response("8", 10), "the next message is untouched");
    }

    #[tokio::test]
    async fn the_id_is_found_at_the_end_and_requests_are_not_answered() {
        let id_last = format!(
            r#"{{"jsonrpc":"2.0","result":{{"text":"{}","id":"inner"}},"id":"req-3"}}"#,
            "y".repeat(3_000)
        );
        let out = through(format!("{id_last}\n").into_bytes(), 500).await;
        let error: serde_json::Value =
            serde_json::from_str(out.lines().nth(1).expect("an error")).expect("json");
        assert_eq!(error["id"], "req-3");

        let request = format!(
            r#"{{"jsonrpc":"2.0","id":4,"method":"elicitation/create","params":{{"m":"{}"}}}}"#,
            "z".repeat(3_000)
        );
        let request_first = format!(
            r#"{{"jsonrpc":"2.0","method":"x","id":4,"params":{{"m":"{}"}}}}"#,
            "z".repeat(3_000)
        );
        let out = through(format!("{request_first}\n").into_bytes(), 500).await;
        assert_eq!(out.lines().count(), 1, "no error for a request: {out}");
        // The id comes before "method" here, so it is taken for a response's: the server
        // then gets an error for an ID it never asked with, which rmcp ignores.
        let out = through(format!("{request}\n").into_bytes(), 500).await;
        assert_eq!(out.lines().count(), 2);
    }

    #[tokio::test]
    async fn a_line_arriving_in_many_small_reads_is_cut_the_same() {
        let big = response("11", 50_000);
        let (client, mut server) = tokio::io::duplex(256);
        let writer = tokio::spawn(async move {
            use tokio::io::AsyncWriteExt;
            server
                .write_all(format!("{big}\n").as_bytes())
                .await
                .expect("write");
        });
        let mut reader = Guarded::new(client, 4_096);
        let mut out = Vec::new();
        reader.read_to_end(&mut out).await.expect("read");
        writer.await.expect("writer");
        let out = String::from_utf8(out).expect("utf-8");
        let error: serde_json::Value =
            serde_json::from_str(out.lines().nth(1).expect("an error")).expect("json");
        assert_eq!(error["id"], 11);
    }
}
