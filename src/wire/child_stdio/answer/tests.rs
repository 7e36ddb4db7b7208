use proptest::prelude::*;
use rmcp::model::{
    CallToolResult, ContentBlock, JsonRpcResponse, JsonRpcVersion2_0, RequestId, ServerResult,
};

use super::read;
use crate::wire::child_stdio::CallAnswer;

/// What serde_json and rmcp's deserializers make of `line`: the reading [`read`] stands in for.
fn serdes(line: &[u8]) -> Option<(RequestId, CallToolResult)> {
    serde_json::from_slice::<CallAnswer>(line)
        .ok()
        .map(|answer| (answer.id, answer.result))
}

/// A result as an rmcp server writes it on the wire.
fn written(id: i64, result: CallToolResult) -> Vec<u8> {
    serde_json::to_vec(&JsonRpcResponse {
        jsonrpc: JsonRpcVersion2_0,
        id: RequestId::Number(id),
        result: ServerResult::CallToolResult(result),
    })
    .expect("a result encodes")
}

/// `read` takes `line` and reads it as serde does.
fn taken_as_serde_reads_it(line: &[u8]) -> (RequestId, CallToolResult) {
    let ours = read(line).unwrap_or_else(|| panic!("not taken: {}", String::from_utf8_lossy(line)));
    let theirs = serdes(line).expect("serde reads it");
    assert_eq!(ours, theirs, "{}", String::from_utf8_lossy(line));
    ours
}

/// A line with one text block whose JSON string, quotes included, is `quoted`.
fn with_text(quoted: &str) -> Vec<u8> {
    format!(
        r#"{{"jsonrpc":"2.0","id":4294967296,"result":{{"resultType":"complete","content":[{{"type":"text","text":{quoted}}}],"isError":false}}}}"#
    )
    .into_bytes()
}

#[test]
fn the_shops_answer_is_read_as_serde_reads_it() {
    // As the shop wrote it for get_order_status (one text block, no structuredContent).
    let line = br#"{"jsonrpc":"2.0","id":2,"result":{"resultType":"complete","content":[{"type":"text","text":"{\"order_id\":\"O-1744\",\"status\":\"delivered\",\"returned_on\":null,\"lines\":[{\"sku\":\"KG-1031\",\"quantity\":1}],\"refunds\":[]}"}],"isError":false}}"#;
    let (id, result) = taken_as_serde_reads_it(line);
    assert_eq!(id, RequestId::Number(2));
    assert_eq!(result.content.len(), 1);
}

#[test]
fn every_result_of_text_blocks_an_rmcp_server_writes_is_taken() {
    let texts = |n: usize| {
        (0..n)
            .map(|i| ContentBlock::text(format!("block {i}")))
            .collect()
    };
    let mut results = vec![
        CallToolResult::success(texts(0)),
        CallToolResult::success(texts(1)),
        CallToolResult::success(texts(3)),
        CallToolResult::error(texts(1)),
    ];
    // On a revision before resultType, and with no isError at all.
    let mut legacy = CallToolResult::success(texts(2));
    legacy.result_type = None;
    results.push(legacy);
    let mut unsaid = CallToolResult::success(texts(1));
    unsaid.is_error = None;
    results.push(unsaid);
    for (id, result) in [0, 1, 7, 1 << 32, i64::MAX / 1000]
        .into_iter()
        .zip(results.iter().cycle())
    {
        let (read_id, read_result) = taken_as_serde_reads_it(&written(id, result.clone()));
        assert_eq!((read_id, &read_result), (RequestId::Number(id), result));
    }
}

#[test]
fn every_escape_json_has_is_read_as_serde_reads_it() {
    for quoted in [
        r#""plain""#,
        r#""""#,
        r#""\"\\\/\b\f\n\r\t""#,
        r#""caf\u00e9 caf\u00E9 \u0000 \u001f""#,
        r#""\uD83D\uDE00 and \ud83d\ude00""#,
        r#""raw é and 😀 beside \u00e9""#,
        r#""\\u0041 is not an escape""#,
    ] {
        taken_as_serde_reads_it(&with_text(quoted));
    }
}

#[test]
fn an_escape_or_the_end_anywhere_in_a_chunk_of_eight_is_read_as_serde_reads_it() {
    let runs = [
        "",
        "a",
        "abcdefg",
        "abcdefgh",
        "abcdefghi",
        "é😀é",
        "0123456789abcdef",
    ];
    for before in runs {
        for after in runs {
            for escape in ["", "\\\"", "\\u00e9", "\\ud83d\\ude00", "\\n"] {
                taken_as_serde_reads_it(&with_text(&format!("\"{before}{escape}{after}\"")));
            }
        }
    }
}

#[test]
fn a_string_that_runs_to_the_lines_end_is_not_taken() {
    for cut in [
        r#""abc"#,
        r#""abcdefgh"#,
        r#""abcdefghijklmno\""#,
        r#""abc\"#,
    ] {
        let line = format!(
            r#"{{"jsonrpc":"2.0","id":1,"result":{{"content":[{{"type":"text","text":{cut}"#
        );
        assert_eq!(read(line.as_bytes()), None, "{cut}");
    }
}

#[test]
fn what_serde_refuses_in_a_string_is_not_taken_either() {
    for quoted in [
        "\"a raw \u{1} control\"",
        "\"a raw\nnewline\"",
        r#""a lone \uD83D surrogate""#,
        r#""a lone \uDE00 low surrogate""#,
        r#""a high \uD83D\u0041 then no low""#,
        r#""an unknown \x escape""#,
        r#""a short \u12 escape""#,
        r#""not closed"#,
    ] {
        let line = with_text(quoted);
        assert_eq!(read(&line), None, "{quoted}");
        assert_eq!(serdes(&line), None, "{quoted}");
    }
    let mut not_utf8 = with_text(r#""ab""#);
    let at = not_utf8.iter().rposition(|b| *b == b'a').expect("an a");
    not_utf8[at] = 0xC3;
    assert_eq!(read(&not_utf8), None);
    assert_eq!(serdes(&not_utf8), None);
}

#[test]
fn any_other_shape_is_left_to_serde() {
    let lines: [&[u8]; 10] = [
        // Whitespace, as other SDKs write it.
        br#"{"jsonrpc": "2.0", "id": 1, "result": {"content": [], "isError": false}}"#,
        // A string ID, a negative one, a leading zero, one too long to be sure of.
        br#"{"jsonrpc":"2.0","id":"a","result":{"content":[],"isError":false}}"#,
        br#"{"jsonrpc":"2.0","id":-1,"result":{"content":[],"isError":false}}"#,
        br#"{"jsonrpc":"2.0","id":01,"result":{"content":[],"isError":false}}"#,
        br#"{"jsonrpc":"2.0","id":1234567890123456789,"result":{"content":[],"isError":false}}"#,
        // Structured content, _meta, another kind of block, annotations.
        br#"{"jsonrpc":"2.0","id":1,"result":{"content":[],"structuredContent":{"a":1},"isError":false}}"#,
        br#"{"jsonrpc":"2.0","id":1,"result":{"content":[],"isError":false,"_meta":{"k":1}}}"#,
        br#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"image","data":"AA==","mimeType":"image/png"}]}}"#,
        br#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"a","annotations":{"priority":1}}]}}"#,
        // Something after the message.
        br#"{"jsonrpc":"2.0","id":1,"result":{"content":[],"isError":false}} "#,
    ];
    for line in lines {
        assert_eq!(read(line), None, "{}", String::from_utf8_lossy(line));
    }
    // Each but the last of those is a good answer all the same.
    for line in lines.iter().filter(|line| !line.ends_with(b" ")) {
        if line.windows(8).any(|w| w == br#""id":01,"#) {
            continue;
        }
        assert!(serdes(line).is_some(), "{}", String::from_utf8_lossy(line));
    }
}

proptest! {
    #[test]
    fn any_text_an_rmcp_server_writes_is_taken_as_serde_reads_it(text in any::<String>()) {
        let line = written(9, CallToolResult::success(vec![ContentBlock::text(text.clone())]));
        let (_, result) = taken_as_serde_reads_it(&line);
        prop_assert_eq!(result.content, vec![ContentBlock::text(text)]);
    }

    /// Strings pieced together from escapes, broken escapes, quotes, controls and raw text:
    /// the line is taken exactly when serde reads it, and then read the same.
    #[test]
    fn a_string_is_taken_exactly_when_serde_reads_it_and_read_the_same(
        pieces in prop::collection::vec(prop::sample::select(vec![
            "a", "é", "😀", "\\\"", "\\\\", "\\/", "\\n", "\\t", "\\u00e9", "\\u00E9",
            "\\uD83D", "\\uDE00", "\\ud83d\\ude00", "\\u12", "\\x", "\\", "\"", "\u{1}", "\u{7f}",
            "abcdefgh", "\u{1f}", " ", "\u{80}", "\u{ff}",
        ]), 0..16)
    ) {
        let quoted = format!("\"{}\"", pieces.concat());
        let line = with_text(&quoted);
        let theirs = serdes(&line);
        let ours = read(&line);
        prop_assert_eq!(&ours, &theirs, "{}", quoted);
    }
}
