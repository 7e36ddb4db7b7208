//! What the desk reads in a customer's text before the model does: the identifiers the config
//! names (order numbers, tracking numbers, SKUs), in the shop's own format. The model is told
//! what was found and where; the values stay the customer's words.

use regex::Regex;

use crate::config::IdentifierPattern;

/// One configured kind of identifier, compiled.
#[derive(Debug, Clone)]
pub struct Identifier {
    name: String,
    pattern: Regex,
    write: Option<String>,
    arguments: Vec<String>,
}

impl Identifier {
    /// Every configured kind; a pattern that does not compile is left out, with a warning.
    pub fn compile(config: &[IdentifierPattern]) -> Vec<Identifier> {
        config
            .iter()
            .filter_map(|kind| match Regex::new(&kind.pattern) {
                Ok(pattern) => Some(Identifier {
                    name: kind.name.clone(),
                    pattern,
                    write: kind.write.clone(),
                    arguments: kind.arguments.clone(),
                }),
                Err(error) => {
                    tracing::warn!(identifier = %kind.name, %error, "an identifier pattern in [[desk.identifiers]] does not compile; it is left out");
                    None
                }
            })
            .collect()
    }

    /// What the config calls this kind ("order number").
    pub(in crate::host) fn name(&self) -> &str {
        &self.name
    }

    /// Whether a value of this kind fills an argument named `argument` in a person's form.
    pub(in crate::host) fn fills(&self, argument: &str) -> bool {
        self.arguments.iter().any(|a| a == argument)
    }

    /// Each value found in `text`, once, in the order met, written as configured, in capitals.
    pub(in crate::host) fn found_in(&self, text: &str) -> Vec<String> {
        let mut found: Vec<String> = Vec::new();
        for captures in self.pattern.captures_iter(text) {
            let value = match &self.write {
                Some(write) => {
                    let mut out = String::new();
                    captures.expand(write, &mut out);
                    out
                }
                None => captures[0].to_owned(),
            }
            .to_uppercase();
            if !found.contains(&value) {
                found.push(value);
            }
        }
        found
    }
}

/// "order number O-2318; tracking number KP615092837", or "no order number, tracking number
/// or SKU" when nothing was found; `None` when no kinds are configured.
pub fn describe(kinds: &[Identifier], text: &str) -> Option<String> {
    if kinds.is_empty() {
        return None;
    }
    let found: Vec<String> = kinds
        .iter()
        .filter_map(|kind| {
            let values = kind.found_in(text);
            (!values.is_empty()).then(|| format!("{} {}", kind.name, values.join(", ")))
        })
        .collect();
    if !found.is_empty() {
        return Some(found.join("; "));
    }
    let names: Vec<&str> = kinds.iter().map(|k| k.name.as_str()).collect();
    Some(match names.split_last() {
        Some((last, [])) => format!("no {last}"),
        Some((last, rest)) => format!("no {} or {last}", rest.join(", ")),
        None => unreachable!("kinds is not empty"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::DeskConfig;

    fn bundled() -> Vec<Identifier> {
        let config = DeskConfig::bundled();
        Identifier::compile(&config.desk.identifiers)
    }

    #[test]
    fn the_bundled_kinds_find_order_tracking_and_sku_however_they_are_written() {
        let kinds = bundled();
        let cases = [
            ("hi, order 2318 never came", "order number O-2318"),
            (
                "from order #1655, and O-1587 too",
                "order number O-1655, O-1587",
            ),
            ("the mug from order o7144", "order number O-7144"),
            (
                "can you check kp308952641 for me",
                "tracking number KP308952641",
            ),
            (
                "order O-2456 and the sauté pan (KG-1034)",
                "order number O-2456; SKU KG-1034",
            ),
            (
                "the pasta machine, back in stock?",
                "no order number, tracking number or SKU",
            ),
        ];
        for (text, said) in cases {
            assert_eq!(describe(&kinds, text).as_deref(), Some(said), "{text}");
        }
    }

    #[test]
    fn numbers_that_are_not_identifiers_are_not_found() {
        let kinds = bundled();
        for text in [
            "I paid 24,90 on 2026-06-13",
            "call me at 0151 2345 6789",
            "30 cm, 12345",
        ] {
            assert_eq!(
                describe(&kinds, text).as_deref(),
                Some("no order number, tracking number or SKU"),
                "{text}"
            );
        }
    }

    #[test]
    fn no_kinds_say_nothing_and_a_bad_pattern_is_left_out() {
        assert_eq!(describe(&[], "order 2318"), None);
        let kinds = Identifier::compile(&[IdentifierPattern {
            name: "broken".into(),
            pattern: "(".into(),
            write: None,
            arguments: vec![],
        }]);
        assert!(kinds.is_empty());
    }
}
