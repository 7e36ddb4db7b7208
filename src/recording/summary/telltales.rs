//! What a reader sees at a glance in a draft that is not for a customer: a placeholder left
//! in brackets, markup, JSON, or the name of a tool. This is the summary's own reading, not
//! the draft check's, so that the drafts showing one can be held against those the check
//! flagged.

use std::collections::BTreeSet;

/// Whether `draft` shows a placeholder, markup, JSON or one of `tools` (canonical names, as
/// `shop.find_orders`; the wire name and the bare tool name count too).
pub(super) fn shows_telltale(draft: &str, tools: &BTreeSet<String>) -> bool {
    placeholder(draft) || markup(draft) || json(draft) || names_a_tool(draft, tools)
}

/// `[Your name]`, `{order_id}`, `<customer name>`: a short bracketed phrase of letters alone
/// (an identifier in brackets, `<KP805438627>`, is no placeholder).
fn placeholder(draft: &str) -> bool {
    [('[', ']'), ('{', '}'), ('<', '>')]
        .iter()
        .any(|&(open, close)| {
            draft.split(open).skip(1).any(|after| {
                after.split_once(close).is_some_and(|(inside, _)| {
                    let inside = inside.trim();
                    (1..=40).contains(&inside.chars().count())
                        && inside
                            .chars()
                            .all(|c| c.is_alphabetic() || matches!(c, ' ' | '_' | '-' | '.'))
                        && inside.chars().any(char::is_alphabetic)
                })
            })
        })
        || draft.contains("XXX")
}

fn markup(draft: &str) -> bool {
    draft.contains("```")
        || draft.contains("**")
        || draft.contains("<tool_")
        || draft.contains("</")
        || draft
            .lines()
            .any(|line| line.trim_start().starts_with("# ") || line.trim_start().starts_with("## "))
}

fn json(draft: &str) -> bool {
    let squeezed: String = draft.chars().filter(|c| !c.is_whitespace()).collect();
    squeezed.contains("{\"") || squeezed.contains("\":")
}

fn names_a_tool(draft: &str, tools: &BTreeSet<String>) -> bool {
    let draft = draft.to_lowercase();
    tools.iter().any(|tool| {
        let tool = tool.to_lowercase();
        let bare = tool.split_once('.').map_or(tool.as_str(), |(_, bare)| bare);
        draft.contains(&tool)
            || draft.contains(&tool.replacen('.', "__", 1))
            || (bare.contains('_') && draft.contains(bare))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tools() -> BTreeSet<String> {
        ["shop.find_orders", "partner.track_parcel", "shop.refund"]
            .map(String::from)
            .into()
    }

    #[test]
    fn each_kind_of_telltale_is_seen() {
        for draft in [
            "Dear [Customer Name], your order shipped.",
            "Hello {customer_name}, thanks.",
            "Hi <first name>, here it is.",
            "Your refund of EUR XXX is on its way.",
            "```\nHello Nina\n```",
            "Hello **Nina**, your order shipped.",
            "# Reply\nHello Nina.",
            "<tool_call>{\"name\": \"x\"}</tool_call>",
            "Result: {\"status\": \"shipped\"}",
            "I used shop.find_orders to look.",
            "I called find_orders for you.",
            "I asked partner__track_parcel.",
        ] {
            assert!(shows_telltale(draft, &tools()), "{draft}");
        }
    }

    #[test]
    fn an_honest_reply_shows_none() {
        for draft in [
            "Hello Nina,\n\nyour order O-1744 (2 items) was delivered on June 5 [as the carrier says: KP805438627].\n\nKind regards,\nThe Support Team",
            "Hi Tom, a refund of €24.90 is waiting for a lead's approval; we will write again once it is released.",
            "Hello Ana, the 28 cm pan (KG-1034) is in stock: 3 left. Best, The team",
            "Hello, we could not find an order under that number: could you send the one on your receipt?",
            "Your parcel is with the carrier (tracking <KP805438627>).",
            "We will refund the order once it is back; see our returns page: shop.example/returns.",
        ] {
            assert!(!shows_telltale(draft, &tools()), "{draft}");
        }
    }
}
