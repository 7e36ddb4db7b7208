//! Saved replies and macros: a text with variables the desk fills from the ticket
//! (`{customer.name}`, `{ticket.id}`, `{me}`, and `{result.NAME}`, a value by name from the
//! ticket's tool results), and for a macro the actions that go with it (tags, an assignee, a
//! note, solving the conversation), one event each. The text goes into the reply's editor, where
//! the draft check reads it like any text: a saved reply cannot promise what no tool did. A
//! variable the ticket has no value for stays as written, and the check flags it as a
//! placeholder. A macro's solve goes with its reply (it is recorded after the send, and only if
//! the send is); a macro without text acts at once.
//!
//! They come from the config (`[replies.NAME]`), from `replies.toml` in the data directory
//! (the same shape; it wins on a name both have) and, on a team, from the team's record, which
//! wins over both ([`layered`]); each is checked when loaded, and a team's before a lead's
//! desk stores it ([`checked`]).

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::record::postgres::TeamReply;
use crate::record::tag_name;
use crate::tickets::Ticket;

/// The file in the data directory that holds the desk's own saved replies.
pub const REPLIES_FILE: &str = "replies.toml";

/// The one conversation state a macro may set. The others follow from what happens: a
/// customer's message opens the conversation and a reply sent makes it pending.
pub const SOLVED: &str = "solved";

/// `[replies.NAME]` as written.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReplyConfig {
    /// The reply, with `{variables}`; a macro with actions may leave it out.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub text: String,
    /// Tags the macro puts on the ticket.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// Who the macro gives the ticket to: a name, `me` or `nobody`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub assign: Option<String>,
    /// An internal note the macro adds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The conversation's state after the macro: only `solved`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
}

/// A saved reply, read and checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SavedReply {
    pub name: String,
    /// `None` for a macro that only acts.
    pub text: Option<String>,
    pub tags: Vec<String>,
    pub assign: Option<String>,
    pub note: Option<String>,
    /// The macro solves the conversation: with its reply when it has text, else at once.
    pub solves: bool,
}

impl SavedReply {
    /// Whether it does more than insert its text.
    pub fn is_macro(&self) -> bool {
        !self.tags.is_empty() || self.assign.is_some() || self.note.is_some() || self.solves
    }

    /// What the macro does besides its text, in a few words (`#damaged · assign me · note ·
    /// solves`), for the list that completes its name.
    pub fn actions(&self) -> String {
        let mut said: Vec<String> = self.tags.iter().map(|t| format!("#{t}")).collect();
        said.extend(self.assign.iter().map(|to| format!("assign {to}")));
        said.extend(self.note.iter().map(|_| "note".to_owned()));
        if self.solves {
            said.push("solves".to_owned());
        }
        said.join(" · ")
    }
}

#[derive(Debug, thiserror::Error)]
pub enum RepliesError {
    #[error("[replies.{name}]: {problem} (README, 'Saved replies and macros')")]
    Bad { name: String, problem: String },
    #[error("cannot read {path}: {source}; fix or remove it")]
    Read {
        path: std::path::PathBuf,
        source: std::io::Error,
    },
    #[error("{path} is not a replies file ({source}); each reply is a [replies.NAME] table")]
    Parse {
        path: std::path::PathBuf,
        source: Box<toml::de::Error>,
    },
    #[error(
        "{path} is not one saved reply ({source}); write its fields at the top: text = \"…\", and any of tags, assign, note, state"
    )]
    One {
        path: std::path::PathBuf,
        source: Box<toml::de::Error>,
    },
    #[error(
        "the team's saved reply {name} cannot be read ({source}); a lead sets it again with support-desk replies set {name} --file FILE, or removes it"
    )]
    Team {
        name: String,
        source: serde_json::Error,
    },
}

/// Where a saved reply comes from: a later one wins on a name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Source {
    /// The config's `[replies.NAME]`.
    Config,
    /// `replies.toml` in the data directory.
    DataDir,
    /// The team's record.
    Team,
}

impl Source {
    /// How `replies --json` names it.
    pub fn key(self) -> &'static str {
        match self {
            Source::Config => "config",
            Source::DataDir => "data_dir",
            Source::Team => "team",
        }
    }
}

/// The variables a reply may name besides `result.NAME`.
pub const VARIABLES: [&str; 5] = [
    "customer.name",
    "customer.id",
    "ticket.id",
    "ticket.subject",
    "me",
];

/// The replies of the config and of `data_dir`'s file, checked, in name order.
pub fn load(
    config: &BTreeMap<String, ReplyConfig>,
    data_dir: Option<&Path>,
) -> Result<Vec<SavedReply>, RepliesError> {
    let loaded = layered(config, data_dir, &BTreeMap::new())?;
    Ok(loaded.into_iter().map(|(reply, _)| reply).collect())
}

/// The replies of the config, of `data_dir`'s file and of the team, checked, in name order,
/// each with where it comes from: the data directory's wins over the config's on a name, and
/// the team's over both, so a lead's change reaches every desk of the team.
pub fn layered(
    config: &BTreeMap<String, ReplyConfig>,
    data_dir: Option<&Path>,
    team: &BTreeMap<String, ReplyConfig>,
) -> Result<Vec<(SavedReply, Source)>, RepliesError> {
    let own = match data_dir {
        Some(dir) => data_dir_file(&dir.join(REPLIES_FILE))?,
        None => BTreeMap::new(),
    };
    let mut all: BTreeMap<&String, (&ReplyConfig, Source)> = BTreeMap::new();
    for (layer, source) in [
        (config, Source::Config),
        (&own, Source::DataDir),
        (team, Source::Team),
    ] {
        all.extend(layer.iter().map(|(name, reply)| (name, (reply, source))));
    }
    all.into_iter()
        .map(|(name, (reply, source))| checked(name, reply).map(|reply| (reply, source)))
        .collect()
}

/// The data directory's `replies.toml`; none when there is no such file.
fn data_dir_file(path: &Path) -> Result<BTreeMap<String, ReplyConfig>, RepliesError> {
    if !path.exists() {
        return Ok(BTreeMap::new());
    }
    let text = std::fs::read_to_string(path).map_err(|source| RepliesError::Read {
        path: path.to_owned(),
        source,
    })?;
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct File {
        #[serde(default)]
        replies: BTreeMap<String, ReplyConfig>,
    }
    let file: File = toml::from_str(&text).map_err(|source| RepliesError::Parse {
        path: path.to_owned(),
        source: Box::new(source),
    })?;
    Ok(file.replies)
}

/// The team's saved replies, as `[replies.NAME]` tables (not checked yet: [`layered`] does).
pub fn team_layer(rows: &[TeamReply]) -> Result<BTreeMap<String, ReplyConfig>, RepliesError> {
    rows.iter()
        .map(|row| {
            serde_json::from_value(row.reply.clone())
                .map(|reply| (row.name.clone(), reply))
                .map_err(|source| RepliesError::Team {
                    name: row.name.clone(),
                    source,
                })
        })
        .collect()
}

/// One reply's table read from `path` (`text = …`, `tags = […]`, … at the top), for a lead
/// to store as the team's; not checked yet.
pub fn read_one(path: &Path) -> Result<ReplyConfig, RepliesError> {
    let text = std::fs::read_to_string(path).map_err(|source| RepliesError::Read {
        path: path.to_owned(),
        source,
    })?;
    toml::from_str(&text).map_err(|source| RepliesError::One {
        path: path.to_owned(),
        source: Box::new(source),
    })
}

/// A reply as the team's record keeps it: its table's fields as a JSON object.
pub fn stored_form(config: &ReplyConfig) -> Value {
    serde_json::to_value(config).expect("a reply's fields are strings and lists of strings")
}

/// `config` read as the saved reply `name`, or what is wrong with it in words: the same rules
/// wherever a reply comes from.
pub fn checked(name: &str, config: &ReplyConfig) -> Result<SavedReply, RepliesError> {
    let bad = |problem: String| RepliesError::Bad {
        name: name.to_owned(),
        problem,
    };
    if name.is_empty() || name.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(bad(
            "a reply's name is one word, so that :reply NAME finds it".into(),
        ));
    }
    let solves = match config.state.as_deref() {
        None => false,
        Some(SOLVED) => true,
        Some(other) => {
            return Err(bad(format!(
                "state = {other:?} cannot be set by a macro: it can only solve (state = \"{SOLVED}\"); a customer's message opens a conversation and a reply sent makes it pending"
            )));
        }
    };
    let acts =
        !config.tags.is_empty() || config.assign.is_some() || config.note.is_some() || solves;
    if config.text.trim().is_empty() && !acts {
        return Err(bad(
            "text is empty; write the reply (only a macro with tags, assign, note or state may leave it out)".into(),
        ));
    }
    for variable in variables(&config.text) {
        let known = VARIABLES.contains(&variable)
            || variable
                .strip_prefix("result.")
                .is_some_and(|field| !field.is_empty());
        if !known {
            return Err(bad(format!(
                "{{{variable}}} is no variable the desk fills; use {}, or result.NAME for a value from the ticket's tool results",
                VARIABLES.map(|v| format!("{{{v}}}")).join(", ")
            )));
        }
    }
    let tags = config
        .tags
        .iter()
        .map(|t| tag_name(t))
        .collect::<Result<Vec<_>, _>>()
        .map_err(bad)?;
    Ok(SavedReply {
        name: name.to_owned(),
        text: Some(config.text.clone()).filter(|t| !t.trim().is_empty()),
        tags,
        assign: config.assign.clone(),
        note: config.note.clone(),
        solves,
    })
}

/// The `{names}` a text uses, in order.
fn variables(text: &str) -> Vec<&str> {
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find('{') {
        let after = &rest[open + 1..];
        let Some(close) = after.find('}') else {
            break;
        };
        let name = &after[..close];
        if !name.is_empty() && !name.contains(char::is_whitespace) && !name.contains('{') {
            found.push(name);
        }
        rest = &after[close + 1..];
    }
    found
}

/// What the desk knows of a ticket for a reply's variables.
#[derive(Debug, Clone, Copy)]
pub struct Values<'a> {
    pub ticket: &'a Ticket,
    /// The person at the desk.
    pub me: &'a str,
    /// The ticket's tool results, oldest first (JSON text, as the tools answered).
    pub results: &'a [&'a str],
}

/// The text with each variable the ticket has a value for filled in; the others stay.
pub fn fill(text: &str, values: &Values<'_>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let value = after
            .find('}')
            .and_then(|close| value_of(&after[..close], values).map(|v| (close, v)));
        match value {
            Some((close, value)) => {
                out.push_str(&value);
                rest = &after[close + 1..];
            }
            None => {
                out.push('{');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

fn value_of(name: &str, values: &Values<'_>) -> Option<String> {
    let ticket = values.ticket;
    match name {
        "customer.name" => ticket
            .customer_name
            .clone()
            .or_else(|| ticket.from.as_ref().and_then(|f| f.name.clone())),
        "customer.id" => Some(ticket.customer_id.clone()).filter(|id| !id.is_empty()),
        "ticket.id" => Some(ticket.ticket_id.clone()),
        "ticket.subject" => Some(ticket.subject.clone()),
        "me" => Some(values.me.to_owned()),
        _ => {
            let field = name.strip_prefix("result.")?;
            // The newest result that names the field wins.
            values
                .results
                .iter()
                .rev()
                .filter_map(|text| serde_json::from_str::<Value>(text).ok())
                .find_map(|json| find(&json, field))
        }
    }
}

/// The first value named `field` in `json`, breadth first, as plain text (a string without
/// quotes, a number or a flag as written); objects and lists are not values.
fn find(json: &Value, field: &str) -> Option<String> {
    let mut level = vec![json];
    while !level.is_empty() {
        let mut next = Vec::new();
        for value in level {
            match value {
                Value::Object(map) => {
                    if let Some(found) = map.get(field).and_then(plain) {
                        return Some(found);
                    }
                    next.extend(map.values());
                }
                Value::Array(items) => next.extend(items),
                _ => {}
            }
        }
        level = next;
    }
    None
}

fn plain(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ticket() -> Ticket {
        Ticket {
            ticket_id: "T-0004".into(),
            customer_id: "C-0173".into(),
            customer_name: Some("Mira Okafor".into()),
            subject: "parcel not come".into(),
            ..Ticket::default()
        }
    }

    #[test]
    fn variables_are_filled_from_the_ticket_and_its_newest_results() {
        let old = r#"{"order": {"order_id": "O-1000", "status": "processing"}}"#;
        let new = r#"{"orders": [{"order_id": "O-2318", "status": "shipped", "tracking_number": "KP842713906"}]}"#;
        let ticket = ticket();
        let values = Values {
            ticket: &ticket,
            me: "dana",
            results: &[old, "not json", new],
        };
        assert_eq!(
            fill(
                "Dear {customer.name}, about {ticket.id} ({customer.id}): order {result.order_id} is {result.status}, parcel {result.tracking_number}. {result.refund_id} — {me}",
                &values
            ),
            "Dear Mira Okafor, about T-0004 (C-0173): order O-2318 is shipped, parcel KP842713906. {result.refund_id} — dana"
        );
        assert_eq!(fill("{ {x} {", &values), "{ {x} {");
    }

    #[test]
    fn a_reply_that_names_an_unknown_variable_or_tag_is_refused_on_loading() {
        let reply = |text: &str, tags: &[&str]| {
            let mut config = BTreeMap::new();
            config.insert(
                "parcel".to_owned(),
                ReplyConfig {
                    text: text.into(),
                    tags: tags.iter().map(|t| (*t).to_owned()).collect(),
                    ..ReplyConfig::default()
                },
            );
            load(&config, None)
        };
        let refused = reply("Hello {customer.nmae}", &[]).expect_err("refused");
        assert!(refused.to_string().contains("{customer.nmae}"), "{refused}");
        assert!(reply("Hi", &["two words"]).is_err());
        assert!(reply("  ", &[]).is_err());
        let ok = reply("Hi {result.status}", &["Late-Parcel"]).expect("loaded");
        assert_eq!(ok[0].tags, ["late-parcel"]);
        assert!(ok[0].is_macro());
    }

    fn one(config: ReplyConfig) -> Result<SavedReply, RepliesError> {
        let config = BTreeMap::from([("wrap-up".to_owned(), config)]);
        load(&config, None).map(|mut replies| replies.remove(0))
    }

    #[test]
    fn a_macro_may_solve_the_conversation_and_set_no_other_state() {
        let solving = one(ReplyConfig {
            text: "All done, {customer.name}.".into(),
            state: Some("solved".into()),
            ..ReplyConfig::default()
        })
        .expect("loaded");
        assert_eq!(
            solving,
            SavedReply {
                name: "wrap-up".into(),
                text: Some("All done, {customer.name}.".into()),
                tags: vec![],
                assign: None,
                note: None,
                solves: true,
            }
        );
        assert!(solving.is_macro(), "solving is an action");
        assert_eq!(solving.actions(), "solves");

        let pending = one(ReplyConfig {
            text: "Hi".into(),
            state: Some("pending".into()),
            ..ReplyConfig::default()
        })
        .expect_err("refused");
        assert_eq!(
            pending.to_string(),
            "[replies.wrap-up]: state = \"pending\" cannot be set by a macro: it can only solve (state = \"solved\"); a customer's message opens a conversation and a reply sent makes it pending (README, 'Saved replies and macros')"
        );
        let shouted = one(ReplyConfig {
            text: "Hi".into(),
            state: Some("Solved".into()),
            ..ReplyConfig::default()
        });
        assert!(
            shouted.is_err(),
            "the state is written as the queue writes it"
        );
    }

    #[test]
    fn only_a_macro_with_actions_may_leave_its_text_out() {
        let quiet = one(ReplyConfig {
            tags: vec!["spam".into()],
            state: Some("solved".into()),
            ..ReplyConfig::default()
        })
        .expect("a macro that only acts");
        assert_eq!((quiet.text, quiet.solves), (None, true));
        for acts in [
            ReplyConfig {
                note: Some("closed as spam".into()),
                ..ReplyConfig::default()
            },
            ReplyConfig {
                assign: Some("nobody".into()),
                ..ReplyConfig::default()
            },
        ] {
            assert_eq!(one(acts).expect("loaded").text, None);
        }
        let nothing = one(ReplyConfig::default()).expect_err("refused");
        assert!(nothing.to_string().contains("text is empty"), "{nothing}");
        let blank = one(ReplyConfig {
            text: " \n ".into(),
            ..ReplyConfig::default()
        });
        assert!(
            blank.is_err(),
            "a saved reply without actions needs its text"
        );
    }

    #[test]
    fn the_data_dirs_file_can_hold_a_solving_macro() {
        let dir = tempfile::tempdir().expect("temp dir");
        let file = "[replies.spam]\ntags = [\"spam\"]\nstate = \"solved\"\n[replies.odd]\ntext = \"Hi\"\nstate = \"closed\"\n";
        std::fs::write(dir.path().join(REPLIES_FILE), file).expect("written");
        let refused = load(&BTreeMap::new(), Some(dir.path())).expect_err("odd is refused");
        assert!(
            refused
                .to_string()
                .starts_with("[replies.odd]: state = \"closed\""),
            "{refused}"
        );
        std::fs::write(
            dir.path().join(REPLIES_FILE),
            "[replies.spam]\ntags = [\"spam\"]\nstate = \"solved\"\n",
        )
        .expect("written");
        let replies = load(&BTreeMap::new(), Some(dir.path())).expect("loaded");
        assert_eq!(replies[0].actions(), "#spam · solves");
        assert_eq!(replies[0].text, None);
    }

    fn team_row(name: &str, reply: Value) -> TeamReply {
        TeamReply {
            name: name.into(),
            reply,
            changed_by: "lee".into(),
            changed_at: 0,
        }
    }

    #[test]
    fn the_teams_reply_wins_over_the_data_dirs_and_the_configs_on_a_name() {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::write(
            dir.path().join(REPLIES_FILE),
            "[replies.thanks]\ntext = \"From my file\"\n[replies.late]\ntext = \"Sorry\"\n",
        )
        .expect("written");
        let config = BTreeMap::from([("thanks", "From the config"), ("hello", "Hi")].map(
            |(name, text)| {
                let reply = ReplyConfig {
                    text: text.into(),
                    ..ReplyConfig::default()
                };
                (name.to_owned(), reply)
            },
        ));
        let team = team_layer(&[team_row(
            "thanks",
            serde_json::json!({"text": "From the team, {me}", "tags": ["Polite"]}),
        )])
        .expect("read");
        let loaded = layered(&config, Some(dir.path()), &team).expect("loaded");
        let seen: Vec<(&str, Option<&str>, Source)> = loaded
            .iter()
            .map(|(reply, from)| (reply.name.as_str(), reply.text.as_deref(), *from))
            .collect();
        assert_eq!(
            seen,
            [
                ("hello", Some("Hi"), Source::Config),
                ("late", Some("Sorry"), Source::DataDir),
                ("thanks", Some("From the team, {me}"), Source::Team),
            ]
        );
        assert_eq!(loaded[2].0.tags, ["polite"]);
        let without_team = load(&config, Some(dir.path())).expect("loaded");
        assert_eq!(without_team[2].text.as_deref(), Some("From my file"));
    }

    #[test]
    fn a_teams_reply_is_read_and_checked_as_the_configs_are() {
        let file = tempfile::NamedTempFile::new().expect("temp file");
        std::fs::write(
            file.path(),
            "text = \"Hello {customer.name}\"\ntags = [\"late\"]\nstate = \"solved\"\n",
        )
        .expect("written");
        let written = read_one(file.path()).expect("one reply");
        let kept = team_layer(&[team_row("late", stored_form(&written))]).expect("read back");
        assert_eq!(kept, BTreeMap::from([("late".to_owned(), written)]));

        let odd = team_layer(&[team_row("odd", serde_json::json!({"txt": "Hi"}))])
            .expect_err("no such field");
        assert!(
            odd.to_string()
                .starts_with("the team's saved reply odd cannot be read"),
            "{odd}"
        );
        let unknown = ReplyConfig {
            text: "Hi {nope}".into(),
            ..ReplyConfig::default()
        };
        let refused = layered(
            &BTreeMap::new(),
            None,
            &BTreeMap::from([("odd".to_owned(), unknown)]),
        )
        .expect_err("refused");
        assert!(
            refused
                .to_string()
                .starts_with("[replies.odd]: {nope} is no variable the desk fills"),
            "{refused}"
        );
        std::fs::write(file.path(), "[replies.late]\ntext = \"Hi\"\n").expect("written");
        let table = read_one(file.path()).expect_err("a whole file is not one reply");
        assert!(
            table.to_string().contains("is not one saved reply"),
            "{table}"
        );
    }

    #[test]
    fn the_data_dirs_file_adds_replies_and_wins_on_a_name() {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::write(
            dir.path().join(REPLIES_FILE),
            "[replies.thanks]\ntext = \"Thanks, {customer.name}!\"\n[replies.late]\ntext = \"Sorry\"\nnote = \"said sorry\"\n",
        )
        .expect("written");
        let mut config = BTreeMap::new();
        config.insert(
            "thanks".to_owned(),
            ReplyConfig {
                text: "Thank you.".into(),
                ..ReplyConfig::default()
            },
        );
        let replies = load(&config, Some(dir.path())).expect("loaded");
        let names: Vec<&str> = replies.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["late", "thanks"]);
        assert_eq!(replies[1].text.as_deref(), Some("Thanks, {customer.name}!"));
        std::fs::write(dir.path().join(REPLIES_FILE), "[replies.x]\ntxt = 1\n").expect("written");
        assert!(load(&config, Some(dir.path())).is_err());
    }
}
