//! A tool call's answer in the one shape rmcp's servers write it, read without a general
//! JSON parser.
//!
//! A profile of the desk's client put nearly half of its own work per call in decoding the
//! answer, most of it in serde_json taking apart a text block that is itself JSON, one escape
//! at a time (BENCHMARKS.md, 'Tool call against the Python SDK and the floor'). An rmcp server writes a complete result with text
//! blocks always the same way: compact, its fields in one order, `resultType` only on a
//! revision that has it. [`read`] takes exactly that and nothing else:
//!
//! ```text
//! {"jsonrpc":"2.0","id":7,"result":{"resultType":"complete","content":[{"type":"text","text":"…"}],"isError":false}}
//! ```
//!
//! with any number of text blocks, and `resultType` and `isError` each there or not. Any
//! other line (whitespace, another order, an image, `structuredContent`, `_meta`, a string
//! ID, an escape it does not know, a control character, bytes that are not UTF-8) gives
//! `None`, and the caller reads it with serde as before. What it does take, it reads as
//! serde_json and rmcp's own deserializers would: the tests hold the two side by side.

use rmcp::model::{CallToolResult, ContentBlock, RequestId, ResultType, TextContent};

use crate::wire::json_text::{eight, first_stop};

/// The request a line answers and its result, when the line has the one shape.
pub(super) fn read(line: &[u8]) -> Option<(RequestId, CallToolResult)> {
    let mut cursor = Cursor { bytes: line, at: 0 };
    cursor.expect(br#"{"jsonrpc":"2.0","id":"#)?;
    let id = cursor.id()?;
    cursor.expect(br#","result":{"#)?;
    let result_type = cursor
        .eat(br#""resultType":"complete","#)
        .then_some(ResultType::COMPLETE);
    cursor.expect(br#""content":["#)?;
    // Room for one block, which is what a tool's answer mostly holds: a first push into an
    // empty Vec makes room for four, a request large enough to make the allocator tidy up.
    let mut content = Vec::with_capacity(1);
    if !cursor.eat(b"]") {
        loop {
            cursor.expect(br#"{"type":"text","text":""#)?;
            content.push(ContentBlock::Text(TextContent::new(cursor.string()?)));
            cursor.expect(b"}")?;
            if cursor.eat(b"]") {
                break;
            }
            cursor.expect(b",")?;
        }
    }
    let is_error = if cursor.eat(br#","isError":false"#) {
        Some(false)
    } else if cursor.eat(br#","isError":true"#) {
        Some(true)
    } else {
        None
    };
    cursor.expect(b"}}")?;
    if cursor.at != line.len() {
        return None;
    }
    let mut result = CallToolResult::default();
    result.result_type = result_type;
    result.content = content;
    result.is_error = is_error;
    Some((id, result))
}

struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Cursor<'_> {
    fn rest(&self) -> &[u8] {
        &self.bytes[self.at..]
    }

    /// Steps over `literal` if it comes next.
    fn eat(&mut self, literal: &[u8]) -> bool {
        let next = self.rest().starts_with(literal);
        if next {
            self.at += literal.len();
        }
        next
    }

    fn expect(&mut self, literal: &[u8]) -> Option<()> {
        self.eat(literal).then_some(())
    }

    /// A numeric ID as JSON writes a whole number: no sign, no leading zero, no fraction or
    /// exponent, and few enough digits that it cannot overflow.
    fn id(&mut self) -> Option<RequestId> {
        let digits = self
            .rest()
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count();
        let text = &self.rest()[..digits];
        if digits == 0 || digits > 18 || (digits > 1 && text[0] == b'0') {
            return None;
        }
        let id = text
            .iter()
            .fold(0i64, |n, digit| n * 10 + i64::from(digit - b'0'));
        self.at += digits;
        Some(RequestId::Number(id))
    }

    /// A string's contents up to its closing quote, which is stepped over; the opening quote
    /// is behind the cursor already.
    ///
    /// Eight bytes at a time: the raw runs of a text that is itself JSON are a few bytes
    /// between `\"`s, and finding each run's end and copying it one call at a time cost more
    /// than the bytes themselves.
    fn string(&mut self) -> Option<String> {
        let rest = self.rest();
        let mut text = Text::with_room(rest.len());
        let mut at = 0;
        loop {
            let chunk = eight(rest, at);
            let Some(stop) = first_stop(chunk) else {
                text.put(chunk, 8);
                at += 8;
                continue;
            };
            text.put(chunk, stop);
            at += stop;
            // Past the line's end is no byte (the chunk was padded there): not closed.
            match rest.get(at)? {
                b'"' => break,
                b'\\' => {
                    if let Some(byte) = rest.get(at + 1).copied().and_then(one_byte_escape) {
                        // Most of a JSON text's escapes are `\"`: no character to encode.
                        text.put([byte; 8], 1);
                        at += 2;
                        continue;
                    }
                    // Else only `\u` is an escape.
                    if rest.get(at + 1) != Some(&b'u') {
                        return None;
                    }
                    let (unescaped, used) = unicode(&rest[at + 2..])?;
                    let mut chunk = [0; 8];
                    let len = unescaped.encode_utf8(&mut chunk).len();
                    text.put(chunk, len);
                    at += 1 + used;
                }
                // A control character: JSON has these escaped, and serde_json refuses them raw.
                _ => return None,
            }
        }
        self.at += at + 1;
        text.into_string()
    }
}

/// A string's text as it is unescaped, written eight bytes at a time into room made ahead
/// (the bytes past `len` are scratch).
struct Text {
    bytes: Vec<u8>,
    len: usize,
}

impl Text {
    /// Room for a string in `line_left` bytes of line, up to a point: escapes only shorten.
    fn with_room(line_left: usize) -> Self {
        Self {
            bytes: vec![0; line_left.min(64 * 1024) + 8],
            len: 0,
        }
    }

    /// Writes `chunk` and keeps its first `keep` bytes.
    fn put(&mut self, chunk: [u8; 8], keep: usize) {
        if self.len + 8 > self.bytes.len() {
            self.grow();
        }
        self.bytes[self.len..self.len + 8].copy_from_slice(&chunk);
        self.len += keep;
    }

    #[cold]
    fn grow(&mut self) {
        let room = (self.bytes.len() * 2).max(self.len + 8);
        self.bytes.resize(room, 0);
    }

    fn into_string(mut self) -> Option<String> {
        self.bytes.truncate(self.len);
        if self.bytes.capacity() > 2 * self.len + 64 {
            self.bytes.shrink_to_fit();
        }
        // An escape always writes whole characters, so the text is UTF-8 exactly when each
        // raw run of it is.
        String::from_utf8(self.bytes).ok()
    }
}

/// The byte a one-letter escape (the letter after its backslash) stands for.
fn one_byte_escape(letter: u8) -> Option<u8> {
    Some(match letter {
        b'"' => b'"',
        b'\\' => b'\\',
        b'/' => b'/',
        b'b' => 0x08,
        b'f' => 0x0c,
        b'n' => b'\n',
        b'r' => b'\r',
        b't' => b'\t',
        _ => return None,
    })
}

/// A `\u` escape's character (after the `u`) and the bytes it took from the `u` on, a
/// surrogate pair being one character. A lone surrogate is no character: serde_json refuses
/// it, so this does too.
fn unicode(after: &[u8]) -> Option<(char, usize)> {
    let first = hex4(after)?;
    if !(0xD800..0xDC00).contains(&first) {
        return char::from_u32(first).map(|c| (c, 5));
    }
    let second = hex4(after.get(4..)?.strip_prefix(b"\\u")?)?;
    if !(0xDC00..0xE000).contains(&second) {
        return None;
    }
    let code = 0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00);
    char::from_u32(code).map(|c| (c, 11))
}

fn hex4(bytes: &[u8]) -> Option<u32> {
    bytes.get(..4)?.iter().try_fold(0u32, |n, b| {
        let digit = char::from(*b).to_digit(16)?;
        Some(n * 16 + digit)
    })
}

#[cfg(test)]
mod tests;
