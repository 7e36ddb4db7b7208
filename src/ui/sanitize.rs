//! Untrusted text is data: before any ticket body, tool result, server name, description or
//! form text reaches the terminal, escape sequences and control characters are removed.
//!
//! Newlines survive (text is laid out in lines), tabs become spaces, and everything else in
//! the C0 and C1 control ranges goes, together with the whole escape sequence it starts, so
//! `\x1b]52;c;…\x07` (clipboard), `\x1b[2J` (clear) and friends cannot act.

/// `text` with every escape sequence and control character removed; newlines kept.
pub fn clean(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\n' => out.push('\n'),
            '\t' => out.push_str("    "),
            '\r' => {}
            '\u{1b}' => skip_escape(&mut chars),
            // C1 introducers that some terminals honour on their own: CSI, OSC, DCS, SOS, PM, APC.
            '\u{9b}' => skip_until_final(&mut chars),
            '\u{9d}' | '\u{90}' | '\u{98}' | '\u{9e}' | '\u{9f}' => skip_string(&mut chars),
            c if c.is_control() => {}
            // Bidirectional overrides can make text read differently from what it is.
            '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' => {}
            c => out.push(c),
        }
    }
    out
}

/// One line: like [`clean`], with newlines turned into spaces (for names and titles).
pub fn one_line(text: &str) -> String {
    clean(text).replace('\n', " ")
}

fn skip_escape(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    match chars.next() {
        Some('[') => skip_until_final(chars),
        Some(']') | Some('P') | Some('X') | Some('^') | Some('_') => skip_string(chars),
        // Two-character sequences (ESC 7, ESC c, …) and charset selections (ESC ( B).
        Some('(') | Some(')') | Some('*') | Some('+') | Some('#') | Some('%') => {
            chars.next();
        }
        _ => {}
    }
}

/// CSI: parameters and intermediates, then one final byte in `@`..=`~`.
fn skip_until_final(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    for c in chars.by_ref() {
        if ('@'..='~').contains(&c) {
            break;
        }
    }
}

/// OSC, DCS and the like: up to BEL or ST (`ESC \`).
fn skip_string(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    while let Some(c) = chars.next() {
        match c {
            '\u{7}' | '\u{9c}' => break,
            '\u{1b}' if chars.peek() == Some(&'\\') => {
                chars.next();
                break;
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_sequences_and_control_characters_are_removed() {
        let hostile = "Hi\x1b[2J\x1b[31mred\x1b[0m \x1b]52;c;ZXZpbA==\x07there\x07\x08 \u{9b}1;1Hx\x1bPdcs\x1b\\ok\u{202e}txt";
        assert_eq!(clean(hostile), "Hired there xoktxt");
    }

    #[test]
    fn newlines_survive_and_tabs_become_spaces() {
        assert_eq!(clean("a\r\n\tb"), "a\n    b");
        assert_eq!(one_line("a\nb"), "a b");
    }

    #[test]
    fn ordinary_text_in_any_script_is_untouched() {
        let text = "Grüße aus Köln — 28 cm? 日本語 🙂";
        assert_eq!(clean(text), text);
    }
}
