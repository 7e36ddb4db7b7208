//! The words of a message as people read them: HTML turned into plain lines, control
//! characters taken out, one-line fields folded, the quoted history split off. Every step
//! walks the text once, so a message of many megabytes costs no more than its length.

/// Plain text from HTML, without rendering or running anything: `<script>`, `<style>` and
/// `<head>` are dropped with what they hold, comments too; line-ending tags become line
/// breaks, every other tag goes, entities are decoded, and `<blockquote>` lines get `> ` so
/// the quoted history folds as it does in plain text.
pub(super) fn html_to_text(html: &str) -> String {
    let bytes = html.as_bytes();
    let mut out = Lines::default();
    let mut at = 0;
    while let Some(&byte) = bytes.get(at) {
        at = match byte {
            b'<' => tag(bytes, at, &mut out),
            b'&' => {
                let (c, next) = entity(bytes, at);
                out.char(c);
                next
            }
            _ => match html.get(at..).and_then(|rest| rest.chars().next()) {
                Some(c) => {
                    out.char(c);
                    at + c.len_utf8()
                }
                None => break,
            },
        };
    }
    out.text.trim_end().to_owned()
}

/// The text being written, line by line: runs of whitespace become one space, no line
/// starts with one, and there is never more than one blank line in a row.
#[derive(Default)]
struct Lines {
    text: String,
    /// `\n` at the end of `text`, to keep blank lines to one.
    newlines: usize,
    /// Nothing written on the current line yet.
    fresh: bool,
    space: bool,
    /// How many `<blockquote>`s the text is inside.
    quotes: usize,
    /// Inside `<pre>`: whitespace and line breaks are kept.
    pre: usize,
}

impl Lines {
    fn char(&mut self, c: char) {
        if c == '\n' && self.pre > 0 {
            return self.hard_break();
        }
        if c.is_whitespace() && self.pre == 0 || c == '\r' {
            self.space = true;
            return;
        }
        if self.fresh || self.text.is_empty() {
            for _ in 0..self.quotes {
                self.text.push_str("> ");
            }
            self.fresh = false;
        } else if self.space {
            self.text.push(' ');
        }
        self.space = false;
        self.newlines = 0;
        self.text.push(c);
    }

    /// `<br>`: a line break even on an empty line, up to one blank line.
    fn hard_break(&mut self) {
        if !self.text.is_empty() && self.newlines < 2 {
            self.text.push('\n');
            self.newlines += 1;
        }
        self.fresh = true;
        self.space = false;
    }

    /// A block's edge: ends the current line if anything is on it.
    fn soft_break(&mut self) {
        if !self.fresh {
            self.hard_break();
        }
    }

    /// The end of a paragraph or a heading: a blank line.
    fn paragraph(&mut self) {
        self.soft_break();
        self.hard_break();
    }
}

/// Acts on the tag that starts at `start` (a `<`) and returns where the text goes on.
fn tag(bytes: &[u8], start: usize, out: &mut Lines) -> usize {
    let after = start + 1;
    if bytes.get(after..after + 3) == Some(b"!--") {
        let body = after + 3;
        return bytes
            .get(body..)
            .and_then(|rest| rest.windows(3).position(|w| w == b"-->"))
            .map_or(bytes.len(), |p| body + p + 3);
    }
    let closing = bytes.get(after) == Some(&b'/');
    let name_start = after + usize::from(closing);
    let name_len = bytes.get(name_start..).map_or(0, |rest| {
        rest.iter()
            .take_while(|b| b.is_ascii_alphanumeric())
            .count()
    });
    if name_len == 0 {
        // `<!DOCTYPE …>`, `<?xml …?>` and `</ >` are markup; `a < b` is text.
        if closing || matches!(bytes.get(after), Some(b'!' | b'?')) {
            return end_of_tag(bytes, after);
        }
        out.char('<');
        return after;
    }
    let name_end = name_start + name_len;
    let end = end_of_tag(bytes, name_end);
    // Longer than any tag acted on below: stripped without looking closer.
    let Some(name) = bytes.get(name_start..name_end).filter(|n| n.len() <= 10) else {
        return end;
    };
    let name = name.to_ascii_lowercase();
    match (closing, name.as_slice()) {
        (false, b"script" | b"style" | b"title" | b"template") => {
            let mut closer = b"</".to_vec();
            closer.extend_from_slice(&name);
            find_tag(bytes, end, &[&closer]).map_or(bytes.len(), |at| end_of_tag(bytes, at + 2))
        }
        // `</head>` may be left out; the body starts where `<body>` does.
        (false, b"head") => find_tag(bytes, end, &[b"</head", b"<body"]).unwrap_or(bytes.len()),
        (_, b"br") => {
            out.hard_break();
            end
        }
        (true, b"p" | b"h1" | b"h2" | b"h3" | b"h4" | b"h5" | b"h6") => {
            out.paragraph();
            end
        }
        (false, b"h1" | b"h2" | b"h3" | b"h4" | b"h5" | b"h6")
        | (_, b"p" | b"div" | b"li" | b"tr" | b"table" | b"ul" | b"ol" | b"hr") => {
            out.soft_break();
            end
        }
        (_, b"blockquote" | b"pre") => {
            out.soft_break();
            let depth = if name == b"pre" {
                &mut out.pre
            } else {
                &mut out.quotes
            };
            *depth = if closing {
                depth.saturating_sub(1)
            } else {
                depth.saturating_add(1)
            };
            end
        }
        (true, b"td" | b"th") => {
            out.space = true;
            end
        }
        _ => end,
    }
}

/// Just past the `>` that ends a tag, quoted attribute values skipped; the end of the text
/// when it never ends.
fn end_of_tag(bytes: &[u8], from: usize) -> usize {
    let mut quote = None;
    let mut last = 0u8;
    for (i, &b) in bytes.iter().enumerate().skip(from) {
        match quote {
            Some(q) if b == q => quote = None,
            Some(_) => {}
            None if b == b'>' => return i + 1,
            None if (b == b'"' || b == b'\'') && last == b'=' => quote = Some(b),
            None if b.is_ascii_whitespace() => continue,
            None => {}
        }
        last = b;
    }
    bytes.len()
}

/// Where the first of `tags` (`</script`, `<body`, …, any case) starts at or after `from`.
/// Stops at the first match, so it reads only what is skipped.
fn find_tag(bytes: &[u8], from: usize, tags: &[&[u8]]) -> Option<usize> {
    let mut at = from;
    loop {
        at += bytes.get(at..)?.iter().position(|&b| b == b'<')?;
        let matches = |tag: &&[u8]| {
            let name_end = bytes.get(at + tag.len()).copied().unwrap_or(b'>');
            bytes
                .get(at..at + tag.len())
                .is_some_and(|s| s.eq_ignore_ascii_case(tag))
                && !name_end.is_ascii_alphanumeric()
        };
        if tags.iter().any(matches) {
            return Some(at);
        }
        at += 1;
    }
}

/// The character an entity at `start` (a `&`) stands for and where the text goes on; a `&`
/// that starts no known entity stays as it is.
fn entity(bytes: &[u8], start: usize) -> (char, usize) {
    let literal = ('&', start + 1);
    let Some(rest) = bytes.get(start + 1..bytes.len().min(start + 12)) else {
        return literal;
    };
    let Some(semicolon) = rest.iter().position(|&b| b == b';') else {
        return literal;
    };
    let name = &rest[..semicolon];
    let c = match name {
        b"amp" => Some('&'),
        b"lt" => Some('<'),
        b"gt" => Some('>'),
        b"quot" => Some('"'),
        b"apos" => Some('\''),
        b"nbsp" => Some(' '),
        b"ndash" => Some('–'),
        b"mdash" => Some('—'),
        b"hellip" => Some('…'),
        b"lsquo" => Some('‘'),
        b"rsquo" => Some('’'),
        b"ldquo" => Some('“'),
        b"rdquo" => Some('”'),
        b"euro" => Some('€'),
        b"copy" => Some('©'),
        [b'#', b'x' | b'X', hex @ ..] => number(hex, 16),
        [b'#', decimal @ ..] => number(decimal, 10),
        _ => None,
    };
    c.map_or(literal, |c| (c, start + 2 + semicolon))
}

/// `&#NNN;` and `&#xHH;`: the character, `�` for a number that names none, `None` for what
/// is no number.
fn number(digits: &[u8], radix: u32) -> Option<char> {
    let digits = std::str::from_utf8(digits).ok()?;
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    let c = u32::from_str_radix(digits, radix)
        .ok()
        .and_then(char::from_u32)
        .filter(|&c| c != '\0');
    Some(c.unwrap_or(char::REPLACEMENT_CHARACTER))
}

/// Text as it may be shown: `\r\n` and a lone `\r` become `\n`, other control characters
/// (C0, DEL, C1) go, tabs stay.
pub(super) fn clean(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\r' => {
                chars.next_if_eq(&'\n');
                out.push('\n');
            }
            '\n' | '\t' => out.push(c),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

/// One line of at most `max` characters: every control character and run of whitespace
/// becomes one space, none at either end. A header's CR LF cannot start a line of its own.
pub(super) fn one_line(text: &str, max: usize) -> String {
    let mut out = String::new();
    let (mut count, mut space) = (0, false);
    for c in text.chars() {
        if c.is_control() || c.is_whitespace() {
            space = true;
            continue;
        }
        let gap = space && !out.is_empty();
        if count + 1 + usize::from(gap) > max {
            break;
        }
        if gap {
            out.push(' ');
            count += 1;
        }
        out.push(c);
        count += 1;
        space = false;
    }
    out
}

/// Cuts `text` to at most `limit` bytes on a character boundary; the length it had when it
/// was longer.
pub(super) fn cut(text: &mut String, limit: usize) -> Option<usize> {
    let len = text.len();
    if len <= limit {
        return None;
    }
    let mut end = limit;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.truncate(end);
    Some(len)
}

/// The new text and the quoted history under it. The history starts at the first `>` line
/// after which only quote lines, blank lines and attributions ("On … wrote:") follow, with
/// the attribution above it, or at an `-----Original Message-----` or Outlook `_____` line.
/// A message that is all history keeps it all as its text.
pub(super) fn fold_quotes(text: &str) -> (String, Option<String>) {
    let mut lines = Vec::new();
    let mut offset = 0;
    for line in text.split('\n') {
        lines.push((offset, line));
        offset += line.len() + 1;
    }
    // The quoted tail: from `tail` on every line is a quote, a blank or an attribution.
    let mut tail = lines.len();
    while tail > 0 && lines.get(tail - 1).is_some_and(|(_, l)| is_quote_tail(l)) {
        tail -= 1;
    }
    let quotes_in_tail = lines
        .get(tail..)
        .is_some_and(|rest| rest.iter().any(|(_, l)| is_quote(l)));
    let mut split = lines.len();
    if quotes_in_tail {
        split = (tail..lines.len())
            .find(|&i| lines.get(i).is_some_and(|(_, l)| !l.trim().is_empty()))
            .unwrap_or(tail);
        split -= attribution_above(&lines, split);
    }
    if let Some(separator) = lines.iter().position(|(_, l)| is_separator(l)) {
        split = split.min(separator);
    }
    let Some(&(at, _)) = lines.get(split) else {
        return (text.trim().to_owned(), None);
    };
    let (new, quoted) = text.split_at(at.min(text.len()));
    let (new, quoted) = (new.trim(), quoted.trim());
    if new.is_empty() || quoted.is_empty() {
        return (text.trim().to_owned(), None);
    }
    (new.to_owned(), Some(quoted.to_owned()))
}

fn is_quote(line: &str) -> bool {
    line.trim_start().starts_with('>')
}

fn is_quote_tail(line: &str) -> bool {
    line.trim().is_empty() || is_quote(line) || is_attribution(line)
}

/// "On … wrote:", "Am … schrieb …:", "Le … a écrit :", and "Alice wrote:".
fn is_attribution(line: &str) -> bool {
    let line = line.trim();
    if line.len() > 400 {
        return false;
    }
    let lower = line.to_lowercase();
    lower.ends_with("wrote:")
        || lower.starts_with("am ") && lower.contains("schrieb") && lower.ends_with(':')
        || lower.ends_with("schrieb:")
        || lower.ends_with("a écrit :")
        || lower.ends_with("a écrit:")
}

/// How many lines above `first` (the quoted tail's first line) belong to its attribution,
/// when the writer's client wrapped it after the name: "On Mon, 5 Dec 2026, Alice <" over
/// "alice@example.com> wrote:", or "Am …, Alice <" over "alice@example.com>:".
fn attribution_above(lines: &[(usize, &str)], first: usize) -> usize {
    let line = |back: usize| {
        first
            .checked_sub(back)
            .and_then(|i| lines.get(i))
            .map_or("", |(_, l)| l.trim())
    };
    let opens = |l: &str| ["On ", "Am ", "Le "].iter().any(|w| l.starts_with(w));
    if is_attribution(line(0)) {
        usize::from(!opens(line(0)) && opens(line(1)))
    } else if line(1).ends_with(':') && line(1).contains('@') && !opens(line(1)) {
        if opens(line(2)) { 2 } else { 0 }
    } else {
        0
    }
}

/// `-----Original Message-----` (in a few languages) or Outlook's line of underscores.
fn is_separator(line: &str) -> bool {
    let line = line.trim();
    if line.len() >= 30 && line.bytes().all(|b| b == b'_') {
        return true;
    }
    if !(line.starts_with("-----") && line.ends_with("-----")) || line.len() > 80 {
        return false;
    }
    let lower = line.to_lowercase();
    [
        "original message",
        "ursprüngliche nachricht",
        "message d'origine",
        "mensaje original",
    ]
    .iter()
    .any(|words| lower.contains(words))
}
