//! A tool call's answer written as one line, byte for byte as rmcp's transport writes it,
//! with its text blocks escaped eight bytes at a time.
//!
//! rmcp writes every message with serde_json. A tool's text is mostly JSON itself, so its
//! escapes come every few bytes, and serde_json writes each run and each escape with a call
//! of its own: in the shop's server, about a tenth of a `get_order_status` call's
//! instructions, and a third of that written here (BENCHMARKS.md, 'Tool call against the Python SDK and the floor'). The
//! one shape a tool's plain answer has is written directly:
//!
//! ```text
//! {"jsonrpc":"2.0","id":7,"result":{"resultType":"complete","content":[{"type":"text","text":"…"}],"isError":false}}
//! ```
//!
//! with any number of text blocks and `resultType` and `isError` each there or not: the
//! shape the desk's client reads without a general parser (`crate::wire::child_stdio::answer`). Any other
//! message (another result, an error, a block with annotations or `_meta`, structured
//! content, a result's `_meta`) is `None`, and serde_json writes it as rmcp would. The tests
//! hold the two writers side by side.

use rmcp::RoleServer;
use rmcp::model::{CallToolResult, ContentBlock, JsonRpcMessage, ResultType, ServerResult};
use rmcp::service::TxJsonRpcMessage;

use crate::wire::json_text::write_string;

/// `message` as rmcp's transport writes it, newline included, when it is a tool's answer of
/// text blocks alone.
pub(super) fn write(message: &TxJsonRpcMessage<RoleServer>) -> Option<Vec<u8>> {
    let JsonRpcMessage::Response(response) = message else {
        return None;
    };
    let ServerResult::CallToolResult(result) = &response.result else {
        return None;
    };
    let texts = plain_texts(result)?;
    let mut line = Vec::with_capacity(96 + texts.clone().map(str::len).sum::<usize>());
    line.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    serde_json::to_writer(&mut line, &response.id).ok()?;
    line.extend_from_slice(br#","result":{"#);
    match &result.result_type {
        None => {}
        Some(kind) if kind.as_str() == ResultType::COMPLETE.as_str() => {
            line.extend_from_slice(br#""resultType":"complete","#);
        }
        Some(_) => return None,
    }
    line.extend_from_slice(br#""content":["#);
    for (n, text) in texts.enumerate() {
        if n > 0 {
            line.push(b',');
        }
        line.extend_from_slice(br#"{"type":"text","text":"#);
        write_string(&mut line, text);
        line.push(b'}');
    }
    line.push(b']');
    match result.is_error {
        None => {}
        Some(false) => line.extend_from_slice(br#","isError":false"#),
        Some(true) => line.extend_from_slice(br#","isError":true"#),
    }
    line.extend_from_slice(b"}}\n");
    Some(line)
}

/// The texts of `result`'s blocks, when it holds text blocks and nothing else: no
/// structured content, no `_meta`, no annotations.
///
/// `CallToolResult` is `non_exhaustive`, so these are its fields as of rmcp 3.11.0, which
/// Cargo.toml pins; the tests fail if another field would be written.
fn plain_texts(result: &CallToolResult) -> Option<impl Iterator<Item = &str> + Clone> {
    if result.structured_content.is_some() || result.meta.is_some() {
        return None;
    }
    let plain = |block: &ContentBlock| matches!(block, ContentBlock::Text(text) if text.meta.is_none() && text.annotations.is_none());
    if !result.content.iter().all(plain) {
        return None;
    }
    Some(result.content.iter().filter_map(|block| match block {
        ContentBlock::Text(text) => Some(text.text.as_str()),
        _ => None,
    }))
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use rmcp::model::{
        Annotations, CallToolResult, ContentBlock, ErrorData, JsonRpcMessage, JsonRpcResponse,
        JsonRpcVersion2_0, MetaObject, RequestId, ResultType, Role, ServerResult, TextContent,
    };
    use rmcp::service::TxJsonRpcMessage;
    use serde_json::json;

    use super::write;

    fn answer(id: RequestId, result: CallToolResult) -> TxJsonRpcMessage<rmcp::RoleServer> {
        JsonRpcMessage::Response(JsonRpcResponse {
            jsonrpc: JsonRpcVersion2_0,
            id,
            result: ServerResult::CallToolResult(result),
        })
    }

    /// What rmcp's transport writes for `message`: serde_json, then a newline.
    fn rmcps(message: &TxJsonRpcMessage<rmcp::RoleServer>) -> String {
        let mut line = serde_json::to_string(message).expect("a message serializes");
        line.push('\n');
        line
    }

    /// `message` is written here, and exactly as rmcp writes it.
    fn written_as_rmcp_writes_it(message: &TxJsonRpcMessage<rmcp::RoleServer>) -> String {
        let ours = write(message).unwrap_or_else(|| panic!("not taken: {message:?}"));
        let ours = String::from_utf8(ours).expect("UTF-8");
        assert_eq!(ours, rmcps(message));
        ours
    }

    #[test]
    fn the_shops_answer_is_written_as_rmcp_writes_it() {
        let text = json!({"order_id": "O-1744", "status": "shipped", "lines": [{"sku": "K-1"}]});
        let line = written_as_rmcp_writes_it(&answer(
            RequestId::Number(4_294_967_296),
            CallToolResult::success(vec![ContentBlock::text(text.to_string())]),
        ));
        assert!(line.starts_with(
            r#"{"jsonrpc":"2.0","id":4294967296,"result":{"resultType":"complete","content":[{"type":"text","text":"{\"order_id\""#
        ));
    }

    #[test]
    fn results_with_and_without_their_optional_fields_are_written_as_rmcp_writes_them() {
        let mut older = CallToolResult::error(vec![ContentBlock::text("no such order")]);
        older.result_type = None;
        let mut silent = CallToolResult::success(vec![]);
        silent.is_error = None;
        let two = CallToolResult::success(vec![ContentBlock::text("a"), ContentBlock::text("")]);
        for result in [older, silent, two, CallToolResult::default()] {
            written_as_rmcp_writes_it(&answer(RequestId::String("r-\"1\"".into()), result));
        }
    }

    #[test]
    fn anything_but_plain_text_blocks_is_left_to_serde_json() {
        let mut with_meta = CallToolResult::success(vec![ContentBlock::text("x")]);
        with_meta.meta = Some(MetaObject::new());
        let mut structured = CallToolResult::success(vec![ContentBlock::text("{}")]);
        structured.structured_content = Some(json!({}));
        let mut annotated = TextContent::new("x");
        let mut annotations = Annotations::default();
        annotations.audience = Some(vec![Role::User]);
        annotated.annotations = Some(annotations);
        let mut block_meta = TextContent::new("x");
        block_meta.meta = Some(MetaObject::new());
        let mut other_type = CallToolResult::success(vec![]);
        other_type.result_type = Some(ResultType::INPUT_REQUIRED);
        let results = [
            with_meta,
            structured,
            CallToolResult::success(vec![ContentBlock::Text(annotated)]),
            CallToolResult::success(vec![ContentBlock::Text(block_meta)]),
            CallToolResult::success(vec![
                ContentBlock::text("x"),
                ContentBlock::image("aGk=", "image/png"),
            ]),
            other_type,
        ];
        for result in results {
            let message = answer(RequestId::Number(3), result);
            assert_eq!(write(&message), None, "{}", rmcps(&message));
        }
        let error = TxJsonRpcMessage::<rmcp::RoleServer>::error(
            ErrorData::invalid_request("Invalid request", None),
            Some(RequestId::Number(3)),
        );
        assert_eq!(write(&error), None);
    }

    proptest! {
        #[test]
        fn any_answer_of_text_blocks_is_written_as_rmcp_writes_it(
            number in any::<i64>(),
            name in any::<String>(),
            by_name in any::<bool>(),
            texts in prop::collection::vec(any::<String>(), 0..4),
            is_error in prop::option::of(any::<bool>()),
            complete in any::<bool>(),
        ) {
            let id = if by_name { RequestId::String(name.into()) } else { RequestId::Number(number) };
            let mut result = CallToolResult::success(texts.into_iter().map(ContentBlock::text).collect());
            result.is_error = is_error;
            if !complete {
                result.result_type = None;
            }
            let message = answer(id, result);
            let ours = write(&message).map(|line| String::from_utf8(line).expect("UTF-8"));
            prop_assert_eq!(ours, Some(rmcps(&message)));
        }
    }
}
