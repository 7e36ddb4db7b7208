//! The shop's identifiers, and the forgiving reading of how customers and models write them.
//!
//! Only the *form* is forgiven ("o1744", "#1744" and "1744" all mean `O-1744`); a number is
//! never changed, so a wrong digit still reaches the shop as the wrong order.

/// Reads `text` as `{prefix}-` + `digits` digits, tolerating case, spaces, a missing dash
/// and a leading '#'. Returns `None` when it is not that shape at all.
fn normalise(text: &str, prefix: &str, digits: usize) -> Option<String> {
    let compact: String = text
        .trim()
        .trim_start_matches('#')
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect::<String>()
        .to_ascii_uppercase();
    let rest = compact.strip_prefix(prefix).unwrap_or(&compact);
    let rest = rest.strip_prefix('-').unwrap_or(rest);
    (rest.len() == digits && rest.bytes().all(|b| b.is_ascii_digit()))
        .then(|| format!("{prefix}-{rest}"))
}

/// `O-` and four digits.
pub fn order_id(text: &str) -> Option<String> {
    normalise(text, "O", 4)
}

/// `C-` and four digits.
pub fn customer_id(text: &str) -> Option<String> {
    normalise(text, "C", 4)
}

/// `KG-` and four digits.
pub fn sku(text: &str) -> Option<String> {
    normalise(text, "KG", 4)
}

/// `Q-` and ten lowercase hex digits: the quote handle the shop hands out.
pub fn quote_id(text: &str) -> Option<String> {
    let text = text.trim();
    let hex = text
        .strip_prefix("Q-")
        .or_else(|| text.strip_prefix("q-"))?;
    (hex.len() == 10 && hex.bytes().all(|b| b.is_ascii_hexdigit()))
        .then(|| format!("Q-{}", hex.to_ascii_lowercase()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_way_customers_write_an_order_number_still_reads() {
        for written in ["O-1744", "o1744", "#1744", "1744", " o-1744 ", "O 1744"] {
            assert_eq!(order_id(written), Some("O-1744".to_owned()), "{written}");
        }
    }

    #[test]
    fn other_shapes_are_not_order_numbers() {
        for written in ["O-174", "O-17444", "C-1744", "order", "", "KG-1744"] {
            assert_eq!(order_id(written), None, "{written}");
        }
    }

    #[test]
    fn skus_customers_and_quotes_have_their_own_shapes() {
        assert_eq!(sku("kg 1031"), Some("KG-1031".to_owned()));
        assert_eq!(customer_id("c0129"), Some("C-0129".to_owned()));
        assert_eq!(quote_id("Q-140CE69DD6"), Some("Q-140ce69dd6".to_owned()));
        assert_eq!(quote_id("Q-140ce69dd"), None);
        assert_eq!(quote_id("R-0001"), None);
    }
}
