//! JSON strings eight bytes at a time, for the two places a tool call's answer crosses a
//! pipe: the shop's server writing it and the desk's client reading it.
//!
//! The text of a tool's answer is mostly JSON itself, so as a JSON string it is short raw
//! runs between escaped quotes. serde_json handles such a string one byte and one escape at
//! a time, with a writer call for every run and every escape; here a run is found and copied
//! eight bytes at a time (BENCHMARKS.md, 'Tool call against the Python SDK and the floor').

const ONES: u64 = u64::from_le_bytes([0x01; 8]);
const HIGHS: u64 = u64::from_le_bytes([0x80; 8]);

/// The eight bytes of `bytes` from `at`, zeros past its end: a zero stops a raw run as any
/// control character does.
pub(crate) fn eight(bytes: &[u8], at: usize) -> [u8; 8] {
    if let Some(chunk) = bytes
        .get(at..at + 8)
        .and_then(|c| <[u8; 8]>::try_from(c).ok())
    {
        return chunk;
    }
    let mut chunk = [0; 8];
    let tail = bytes.get(at..).unwrap_or_default();
    chunk[..tail.len()].copy_from_slice(tail);
    chunk
}

/// Where in `chunk` the first byte a string's raw run stops at is (a quote, a backslash, a
/// control character), if anywhere.
///
/// Each test sets a byte's high bit where it holds. A borrow can set bits above a byte that
/// holds, never below the first one, so the lowest bit set is exact. A byte of 0x80 or more
/// (UTF-8 beyond ASCII) is never a stop: `!word` clears its bit.
pub(crate) fn first_stop(chunk: [u8; 8]) -> Option<usize> {
    let word = u64::from_le_bytes(chunk);
    let below = |limit: u8| word.wrapping_sub(ONES * u64::from(limit)) & !word & HIGHS;
    let equal = |byte: u8| {
        let zeroed = word ^ (ONES * u64::from(byte));
        zeroed.wrapping_sub(ONES) & !zeroed & HIGHS
    };
    let stops = below(0x20) | equal(b'"') | equal(b'\\');
    (stops != 0).then(|| stops.trailing_zeros() as usize / 8)
}

/// Appends `text` to `out` as a JSON string, quotes included, byte for byte as serde_json
/// writes it: `"` and `\` escaped with a backslash, the five controls that have a letter by
/// their letter, every other control as `\u00xx` (lowercase hex), everything else raw.
pub(crate) fn write_string(out: &mut Vec<u8>, text: &str) {
    let bytes = text.as_bytes();
    // Room for the text, its quotes and one padded chunk: a text without escapes never grows
    // the buffer again.
    out.reserve(bytes.len() + 2 + 8);
    out.push(b'"');
    let mut at = 0;
    loop {
        let chunk = eight(bytes, at);
        let stop = first_stop(chunk);
        let keep = stop.unwrap_or(8);
        // The whole chunk is written and the bytes past the stop taken back: one store, not a
        // copy of a few bytes.
        out.extend_from_slice(&chunk);
        out.truncate(out.len() - 8 + keep);
        at += keep;
        if stop.is_none() {
            continue;
        }
        // A stop past the text's end is its padding: the text is written.
        let Some(&byte) = bytes.get(at) else {
            break;
        };
        write_escape(out, byte);
        at += 1;
    }
    out.push(b'"');
}

/// The escape of `byte`, a quote, a backslash or a control character.
fn write_escape(out: &mut Vec<u8>, byte: u8) {
    let letter = match byte {
        b'"' => b'"',
        b'\\' => b'\\',
        0x08 => b'b',
        0x0c => b'f',
        b'\n' => b'n',
        b'\r' => b'r',
        b'\t' => b't',
        _ => {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            out.extend_from_slice(&[
                b'\\',
                b'u',
                b'0',
                b'0',
                HEX[usize::from(byte >> 4)],
                HEX[usize::from(byte & 0xf)],
            ]);
            return;
        }
    };
    out.extend_from_slice(&[b'\\', letter]);
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::{first_stop, write_string};

    fn written(text: &str) -> String {
        let mut out = b"[".to_vec();
        write_string(&mut out, text);
        String::from_utf8(out).expect("UTF-8 in, UTF-8 out")
    }

    #[test]
    fn a_json_text_is_written_with_its_quotes_escaped() {
        let text = r#"{"order_id":"O-1744","status":"shipped","note":"a\b"}"#;
        assert_eq!(
            written(text),
            format!("[{}", serde_json::to_string(text).expect("a string"))
        );
        assert_eq!(written(""), r#"["""#);
        assert_eq!(written("\u{7f}é\u{1f}\n"), "[\"\u{7f}é\\u001f\\n\"");
    }

    /// Texts pieced from what makes a run stop and what does not, at every offset from the
    /// eight-byte chunks' edges.
    fn pieced() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            Just("\"".to_owned()),
            Just("\\".to_owned()),
            Just("\u{0}".to_owned()),
            Just("\u{1f}".to_owned()),
            Just("\u{7f}".to_owned()),
            Just("\n\r\t\u{8}\u{c}".to_owned()),
            Just("é€😀".to_owned()),
            "[a-z:,{}]{0,9}",
        ];
        prop::collection::vec(piece, 0..24).prop_map(|pieces| pieces.concat())
    }

    proptest! {
        #[test]
        fn the_first_stop_in_eight_bytes_is_the_first_quote_backslash_or_control(
            chunk in any::<[u8; 8]>()
        ) {
            let stops = |b: &u8| *b == b'"' || *b == b'\\' || *b < 0x20;
            prop_assert_eq!(first_stop(chunk), chunk.iter().position(stops));
        }

        #[test]
        fn any_text_is_written_as_serde_json_writes_it(text in any::<String>()) {
            let mut out = Vec::new();
            write_string(&mut out, &text);
            prop_assert_eq!(out, serde_json::to_vec(&text).expect("a string"));
        }

        #[test]
        fn a_text_of_escapes_and_runs_is_written_as_serde_json_writes_it(text in pieced()) {
            let mut out = Vec::new();
            write_string(&mut out, &text);
            prop_assert_eq!(
                String::from_utf8(out).expect("UTF-8"),
                serde_json::to_string(&text).expect("a string")
            );
        }
    }
}
