//! A JSON-RPC stream read line by line, each line bounded: the desk's end of a server's stdout
//! ([`super::child_stdio`]) and a server's end of its client's pipe
//! ([`super::server_stdio`]) both read this way.

use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};

pub(crate) struct Lines<R> {
    read: BufReader<R>,
    /// The line being read; kept across a cancelled [`Lines::next`], which resumes it.
    line: Vec<u8>,
    /// `line` is whole, handed out by the last [`Lines::next`].
    whole: bool,
    /// Dropping the line that went over `max`, up to its end.
    discarding: bool,
    max: usize,
    /// Who writes the stream, for the log: "a server", "a client".
    writer: &'static str,
}

impl<R: AsyncRead + Unpin> Lines<R> {
    /// Lines of `read` of at most `max` bytes; a longer one is dropped (and logged as
    /// `writer`'s), as rmcp drops it.
    pub(crate) fn new(read: R, max: usize, writer: &'static str) -> Self {
        Self {
            read: BufReader::new(read),
            line: Vec::new(),
            whole: false,
            discarding: false,
            max,
            writer,
        }
    }

    /// Reads the next whole line; `false` at the end of the stream. Cancel-safe: a line cut
    /// short is resumed by the next call.
    pub(crate) async fn next(&mut self) -> std::io::Result<bool> {
        if std::mem::take(&mut self.whole) {
            self.line.clear();
        }
        loop {
            let available = self.read.fill_buf().await?;
            if available.is_empty() {
                return Ok(false);
            }
            let newline = memchr::memchr(b'\n', available);
            let take = newline.map_or(available.len(), |at| at + 1);
            let too_long = self.line.len().saturating_add(take) > self.max;
            if !self.discarding && !too_long {
                self.line.extend_from_slice(&available[..take]);
            } else if !self.discarding {
                tracing::error!(
                    max = self.max,
                    "{}'s message is too long; dropping it",
                    self.writer
                );
                self.line.clear();
                self.discarding = true;
            }
            self.read.consume(take);
            if newline.is_some() && !std::mem::take(&mut self.discarding) {
                self.whole = true;
                return Ok(true);
            }
        }
    }

    /// The line [`Lines::next`] read, without its newline (or a carriage return before it).
    pub(crate) fn line(&self) -> &[u8] {
        let text = self.line.strip_suffix(b"\n").unwrap_or(&self.line);
        text.strip_suffix(b"\r").unwrap_or(text)
    }

    /// The line with its newline, as it came.
    pub(crate) fn raw(&self) -> &[u8] {
        &self.line
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use tokio::io::AsyncWriteExt;

    use super::Lines;

    #[tokio::test]
    async fn a_line_over_the_limit_is_dropped_to_its_end_and_the_next_is_read() {
        let (mut write, read) = tokio::io::duplex(64);
        let mut lines = Lines::new(read, 16, "a test");
        let writer = tokio::spawn(async move {
            let long = format!("{}\r\n", "x".repeat(100));
            for bytes in [
                b"first\r\n".as_slice(),
                long.as_bytes(),
                b"after\n",
                b"last",
            ] {
                write.write_all(bytes).await.expect("written");
            }
        });
        let mut seen = Vec::new();
        while lines.next().await.expect("read") {
            seen.push(String::from_utf8(lines.line().to_vec()).expect("UTF-8"));
        }
        writer.await.expect("writer");
        // "last" has no newline: the stream ended inside it.
        assert_eq!(seen, ["first", "after"]);
    }

    #[tokio::test]
    async fn a_read_given_up_halfway_through_a_line_is_resumed() {
        let (mut write, read) = tokio::io::duplex(64);
        let mut lines = Lines::new(read, 1024, "a test");
        write.write_all(b"half of ").await.expect("written");
        let given_up = tokio::time::timeout(Duration::from_millis(50), lines.next()).await;
        assert!(given_up.is_err(), "no whole line yet");
        write.write_all(b"a line\n").await.expect("written");
        assert!(lines.next().await.expect("read"));
        assert_eq!(lines.line(), b"half of a line");
        assert_eq!(lines.raw(), b"half of a line\n");
    }
}
