//! Tool names across servers: every tool is `{prefix}.{tool}`, with the prefix the config
//! gave its server (never the name the server gives itself). The host routes a name back
//! through this table and nothing else: an unknown or bare name is an error, never a guess.

use std::collections::BTreeMap;
use std::fmt;

use sha2::{Digest, Sha256};

/// The longest name OpenAI-compatible `tools` accept (`^[A-Za-z0-9_-]{1,64}$`).
const WIRE_NAME_MAX: usize = 64;

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ToolName {
    pub prefix: String,
    pub tool: String,
}

impl ToolName {
    pub fn new(prefix: impl Into<String>, tool: impl Into<String>) -> Self {
        Self {
            prefix: prefix.into(),
            tool: tool.into(),
        }
    }
}

impl fmt::Display for ToolName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.prefix, self.tool)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RouteError {
    #[error("\"{0}\" has no server prefix; tool names are written prefix.tool, as listed")]
    Bare(String),
    #[error("there is no tool \"{0}\"; use one of the tools listed, exactly as named")]
    Unknown(String),
}

/// Every tool of every server, in a stable order: servers by prefix, tools as each server
/// listed them.
#[derive(Debug, Clone, Default)]
pub struct NameTable {
    names: Vec<(ToolName, String)>,
    by_canonical: BTreeMap<String, usize>,
    by_wire: BTreeMap<String, usize>,
}

impl NameTable {
    pub fn new<'a>(servers: impl IntoIterator<Item = (&'a str, Vec<String>)>) -> Self {
        let mut servers: Vec<_> = servers.into_iter().collect();
        servers.sort_by(|a, b| a.0.cmp(b.0));
        let mut table = Self::default();
        for (prefix, tools) in servers {
            for tool in tools {
                let name = ToolName::new(prefix, tool);
                let canonical = name.to_string();
                let mut wire = wire_form(&name);
                if table.by_wire.contains_key(&wire) {
                    wire = hashed_wire_form(&canonical);
                }
                let index = table.names.len();
                table.by_canonical.insert(canonical, index);
                table.by_wire.insert(wire.clone(), index);
                table.names.push((name, wire));
            }
        }
        table
    }

    /// `prefix.tool` names in the table's order.
    pub fn canonical(&self) -> impl Iterator<Item = &ToolName> {
        self.names.iter().map(|(name, _)| name)
    }

    /// The form sent where `.` is not allowed.
    pub fn wire_name(&self, name: &ToolName) -> Option<&str> {
        self.by_canonical
            .get(&name.to_string())
            .map(|&i| self.names[i].1.as_str())
    }

    /// The tool a model meant by `name`, written canonically or in wire form.
    pub fn route(&self, name: &str) -> Result<ToolName, RouteError> {
        let name = name.trim();
        if let Some(&index) = self
            .by_canonical
            .get(name)
            .or_else(|| self.by_wire.get(name))
        {
            return Ok(self.names[index].0.clone());
        }
        if name.contains('.') || name.contains("__") {
            Err(RouteError::Unknown(name.to_owned()))
        } else {
            Err(RouteError::Bare(name.to_owned()))
        }
    }

    pub fn len(&self) -> usize {
        self.names.len()
    }

    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }
}

fn wire_form(name: &ToolName) -> String {
    let clean = |s: &str| -> String {
        s.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect()
    };
    let wire = format!("{}__{}", clean(&name.prefix), clean(&name.tool));
    if wire.len() <= WIRE_NAME_MAX {
        wire
    } else {
        hashed_wire_form(&name.to_string())
    }
}

/// A unique wire name for a tool whose plain form is too long or already taken.
fn hashed_wire_form(canonical: &str) -> String {
    let digest = hex::encode(&Sha256::digest(canonical.as_bytes())[..4]);
    let stem: String = canonical
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(WIRE_NAME_MAX - digest.len() - 1)
        .collect();
    format!("{stem}_{digest}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> NameTable {
        NameTable::new([
            (
                "shop",
                vec!["get_order_status".to_owned(), "issue_refund".to_owned()],
            ),
            (
                "partner",
                vec!["track_parcel".to_owned(), "get_order_status".to_owned()],
            ),
        ])
    }

    #[test]
    fn every_tool_is_named_by_its_prefix_in_a_stable_order() {
        let names: Vec<String> = table().canonical().map(ToString::to_string).collect();
        assert_eq!(
            names,
            [
                "partner.track_parcel",
                "partner.get_order_status",
                "shop.get_order_status",
                "shop.issue_refund"
            ]
        );
    }

    #[test]
    fn the_same_tool_name_on_two_servers_routes_to_each() {
        let names = table();
        assert_eq!(
            names.route("shop.get_order_status"),
            Ok(ToolName::new("shop", "get_order_status"))
        );
        assert_eq!(
            names.route("partner.get_order_status"),
            Ok(ToolName::new("partner", "get_order_status"))
        );
        assert_eq!(
            names.route("partner__get_order_status"),
            Ok(ToolName::new("partner", "get_order_status"))
        );
    }

    #[test]
    fn bare_and_unknown_names_are_errors_never_guesses() {
        let names = table();
        assert_eq!(
            names.route("get_order_status"),
            Err(RouteError::Bare("get_order_status".into()))
        );
        assert_eq!(
            names.route("shop.track_parcel"),
            Err(RouteError::Unknown("shop.track_parcel".into()))
        );
    }

    #[test]
    fn wire_names_fit_openai_rules_even_for_long_or_dotted_tools() {
        let long = "x".repeat(100);
        let names = NameTable::new([("s", vec!["a.b".to_owned(), long.clone(), "a_b".to_owned()])]);
        for name in names.canonical() {
            let wire = names.wire_name(name).expect("wire name");
            assert!(
                wire.len() <= 64
                    && wire
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-'),
                "{wire}"
            );
            assert_eq!(names.route(wire).as_ref(), Ok(name));
        }
        let wires: std::collections::BTreeSet<_> = names
            .canonical()
            .filter_map(|n| names.wire_name(n))
            .collect();
        assert_eq!(wires.len(), 3, "a_b and a.b do not collide");
    }
}
