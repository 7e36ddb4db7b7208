//! `[desk]`: where the record lives, how replies are signed, and how a ticket's first step is
//! guided (the first-tool lines and the identifiers read in the customer's text).

use serde::{Deserialize, Serialize};

/// `[desk]`: the record's home.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeskSection {
    /// `postgres://NAME@HOST:PORT/DB`: a team's record. The password is never written here:
    /// it comes from `PGPASSWORD`, a `.pgpass` file, or the variable `password_env` names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub store: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub password_env: Option<String>,
    /// How the desk's replies are signed; the model is told to sign with it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
    /// How the model is told to pick a ticket's first tool: the first line that fits names it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub first_tool: Vec<FirstTool>,
    /// Identifiers the desk reads in a customer's text, in the shop's own formats.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub identifiers: Vec<IdentifierPattern>,
}

/// `[[desk.first_tool]]`: when a ticket fits `when`, the model starts with `tool`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FirstTool {
    pub when: String,
    /// `prefix.tool`; the line is left out of a ticket whose model is not offered it.
    pub tool: String,
    /// Words after the tool's name; `{customer_id}` becomes the ticket's customer ID.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub with: Option<String>,
}

/// `[[desk.identifiers]]`: a kind of identifier (`order number`), the regular expression that
/// finds it, and how it is written once found (`O-$1`: `$1` is the first group; the whole
/// match when not given), in capitals.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IdentifierPattern {
    pub name: String,
    pub pattern: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write: Option<String>,
    /// The tool and prompt arguments a value of this kind fills in a person's form (a
    /// suggestion, saying where in the ticket it was found).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub arguments: Vec<String>,
}

impl DeskSection {
    /// The signature replies end with (the team's name when none is configured).
    pub fn signature(&self) -> &str {
        self.signature.as_deref().unwrap_or("The support team")
    }
}

/// One key or several, as `[keys]` writes them: `solve = "d"` or `solve = ["d", "ctrl-d"]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum KeyList {
    One(String),
    Many(Vec<String>),
}

impl KeyList {
    pub fn keys(&self) -> Vec<String> {
        match self {
            KeyList::One(key) => vec![key.clone()],
            KeyList::Many(keys) => keys.clone(),
        }
    }
}

/// `[theme]`: the desk's colours.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ThemeConfig {
    #[serde(default)]
    pub preset: Preset,
}

/// Colours for a dark terminal (the default) or a light one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Preset {
    #[default]
    Dark,
    Light,
}
