//! The desk's configuration: servers under the prefixes the config gives them, the model,
//! the limits and the consent allow list.
//!
//! The default is `config/desk.toml`, built into the binary. A file of the same shape in the
//! user's config directory, then `--config FILE`, override it table by table. Servers can
//! also come from the `mcpServers` JSON other MCP hosts use. Secrets are never stored: a
//! config names the environment variable that holds them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::model::openai::{Recipe, Sampling};

mod approvals;
mod desk;
mod mail;
mod oauth;
pub use approvals::{ApprovalsConfig, Fallback, Notice};
pub use desk::{DeskSection, FirstTool, IdentifierPattern, KeyList, Preset, ThemeConfig};
pub use mail::{ImapConfig, MailConfig, SlaConfig, SlaTagConfig, SmtpConfig};
pub use oauth::OAuthConfig;

pub const DEFAULT_TOML: &str = include_str!("../config/desk.toml");

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeskConfig {
    /// Where the desk's record lives: one person's SQLite file (the default) or a team's
    /// PostgreSQL.
    #[serde(default)]
    pub desk: DeskSection,
    pub model: ModelConfig,
    pub limits: Limits,
    pub consent: ConsentConfig,
    pub tickets: TicketsConfig,
    /// The support mailbox: where tickets come from and replies go, besides `tickets`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mail: Option<MailConfig>,
    /// Due times for customers' messages; without it nothing is due.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sla: Option<SlaConfig>,
    /// The desk's keys, rebound: an action's name and its keys.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub keys: BTreeMap<String, KeyList>,
    #[serde(default)]
    pub theme: ThemeConfig,
    /// `[approvals]`: a lead's notice of a new approval, and the fallback of one no lead
    /// answers in time.
    #[serde(default)]
    pub approvals: ApprovalsConfig,
    /// A person's own views of the queue, by name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub views: BTreeMap<String, crate::views::ViewConfig>,
    /// Saved replies and macros, by name (more in the data directory's `replies.toml`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub replies: BTreeMap<String, crate::replies::ReplyConfig>,
    #[serde(default)]
    pub servers: BTreeMap<String, ServerConfig>,
    /// Files in the `mcpServers` JSON format whose servers join `servers`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mcp_servers_json: Vec<PathBuf>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelConfig {
    pub source: String,
    pub name: String,
    #[serde(default)]
    pub api_key_env: Option<String>,
    /// A PEM file of CA certificates trusted for an `https://` model server, besides the
    /// system's roots (for a server whose certificate a private CA signed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ca_file: Option<PathBuf>,
    pub recipe: Recipe,
    #[serde(default)]
    pub temperature: Option<f32>,
    #[serde(default)]
    pub seed: Option<u64>,
    #[serde(default)]
    pub max_tokens: Option<u32>,
    /// Ask for replies as they are generated, so people watch the model write (`true` unless
    /// set `false`); a server that does not stream is read whole either way.
    #[serde(default = "streams")]
    pub stream: bool,
}

fn streams() -> bool {
    true
}

impl ModelConfig {
    pub fn sampling(&self) -> Sampling {
        Sampling {
            temperature: self.temperature,
            seed: self.seed,
            max_tokens: self.max_tokens,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Limits {
    pub model_calls_per_ticket: u32,
    /// How long a server may stay silent on a call: each progress notification it sends
    /// starts the wait again, up to `call_max_secs`.
    pub request_timeout_secs: u64,
    pub model_timeout_secs: u64,
    pub input_rounds: u32,
    pub attach_priority: f32,
    pub attach_max_bytes: usize,
    pub result_max_bytes: usize,
    pub concurrency: usize,
    /// How long a server may take to start and answer the handshake.
    #[serde(default = "default_connect_timeout")]
    pub connect_timeout_secs: u64,
    /// The most a call may take, however much progress its server reports (time people
    /// spend on its forms aside).
    #[serde(default = "default_call_max")]
    pub call_max_secs: u64,
    /// How long the desk waits on a call its server runs as a task (the Tasks extension)
    /// before the ticket goes to a person; the task goes on at the server, and the desk
    /// follows it to its end and records how it ended. Time people spend on its forms aside.
    #[serde(default = "default_task_max")]
    pub task_max_secs: u64,
    /// The quickest and the slowest the desk asks a task how it stands, whatever its server
    /// suggests (`pollIntervalMs`), in milliseconds.
    #[serde(default = "default_task_poll_min")]
    pub task_poll_min_ms: u64,
    #[serde(default = "default_task_poll_max")]
    pub task_poll_max_ms: u64,
}

fn default_connect_timeout() -> u64 {
    20
}

fn default_call_max() -> u64 {
    300
}

fn default_task_max() -> u64 {
    600
}

fn default_task_poll_min() -> u64 {
    250
}

fn default_task_poll_max() -> u64 {
    10_000
}

impl Limits {
    pub fn request_timeout(&self) -> Duration {
        Duration::from_secs(self.request_timeout_secs)
    }

    pub fn call_max(&self) -> Duration {
        Duration::from_secs(self.call_max_secs)
    }

    pub fn task_max(&self) -> Duration {
        Duration::from_secs(self.task_max_secs)
    }

    /// The bounds within which a task's suggested polling interval is kept.
    pub fn task_poll(&self) -> std::ops::RangeInclusive<Duration> {
        let min = Duration::from_millis(self.task_poll_min_ms.max(10));
        min..=Duration::from_millis(self.task_poll_max_ms).max(min)
    }

    pub fn connect_timeout(&self) -> Duration {
        Duration::from_secs(self.connect_timeout_secs)
    }

    pub fn model_timeout(&self) -> Duration {
        Duration::from_secs(self.model_timeout_secs)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConsentConfig {
    pub allow: Vec<String>,
    /// Tools the desk itself holds to be read-only, whatever a server says: the only ones a
    /// person may trust from a consent card.
    #[serde(default)]
    pub read_only: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TicketsConfig {
    pub source: String,
}

/// How to reach one server. Exactly one of `command`, `in_process` or `url`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerConfig {
    /// A program speaking MCP on stdio; `@self` is this binary.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// Environment for the child: literal values, or `${NAME}` to pass on the desk's own.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// A server built into this binary (`shop` or `partner`), on an in-process pipe.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub in_process: Option<String>,
    /// A Streamable HTTP endpoint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Headers for `url`: literal values, or `${NAME}` read from the environment.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    /// The environment variable holding a bearer token for `url`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bearer_token_env: Option<String>,
    /// How the desk signs in to `url` with OAuth when the server asks (`[servers.X.oauth]`);
    /// without it the desk still signs in, registering itself with the authorization server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oauth: Option<OAuthConfig>,
    /// A PEM file of CA certificates trusted for an `https://` `url`, besides the system's
    /// roots (for a server whose certificate a private CA signed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ca_file: Option<PathBuf>,
    /// Attach the resources this server marks for the assistant at high priority to every
    /// ticket. Only for servers you trust: annotations are the server's claims.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub attach_resources: bool,
    /// Tools (the server's own names) whose forms only a lead answers: on a team's desk such
    /// a form goes to the team's leads as an approval, never to the person whose run asked.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lead_forms: Vec<String>,
    /// For a stdio server: how many microseconds the desk polls its stdout for a tool call's
    /// answer before its thread sleeps (100 when unset; 0 never polls). See `busy_poll`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub busy_poll_us: Option<u64>,
    /// Set false to keep a server from an earlier file out.
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub enabled: bool,
    /// The config file whose transport key says how the server is reached.
    #[serde(skip)]
    pub defined_in: Option<String>,
}

/// Written in a server's `args`, it stands for the desk's data directory, so a bundled server
/// keeps its files beside the desk's record.
pub const DATA_DIR_PLACEHOLDER: &str = "{data_dir}";

impl ServerConfig {
    /// How long the desk polls a stdio server's stdout for an answer before its thread sleeps.
    pub fn busy_poll(&self) -> Duration {
        self.busy_poll_us.map_or(
            crate::wire::busy_poll::DEFAULT_WINDOW,
            Duration::from_micros,
        )
    }

    /// The same server with `{data_dir}` in its arguments made the data directory. Without
    /// one, an argument naming a file there becomes `:memory:`: the server keeps nothing.
    pub fn in_data_dir(&self, data_dir: Option<&std::path::Path>) -> ServerConfig {
        let args = self
            .args
            .iter()
            .map(|arg| match data_dir {
                _ if !arg.contains(DATA_DIR_PLACEHOLDER) => arg.clone(),
                Some(dir) => arg.replace(DATA_DIR_PLACEHOLDER, &dir.to_string_lossy()),
                None => ":memory:".to_owned(),
            })
            .collect();
        ServerConfig {
            args,
            ..self.clone()
        }
    }
}

fn yes() -> bool {
    true
}

fn is_true(value: &bool) -> bool {
    *value
}

/// How a server is reached, once its config is read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transport {
    Stdio {
        command: String,
        args: Vec<String>,
        env: BTreeMap<String, String>,
    },
    InProcess(String),
    Http {
        url: String,
        headers: BTreeMap<String, String>,
        bearer_token_env: Option<String>,
        ca_file: Option<PathBuf>,
    },
}

impl ServerConfig {
    pub fn transport(&self, prefix: &str) -> Result<Transport, ConfigError> {
        if self.ca_file.is_some() && self.url.is_none() {
            return Err(ConfigError::CaFileWithoutUrl(prefix.to_owned()));
        }
        match (&self.command, &self.in_process, &self.url) {
            (Some(command), None, None) => Ok(Transport::Stdio {
                command: command.clone(),
                args: self.args.clone(),
                env: self.env.clone(),
            }),
            (None, Some(name), None) => Ok(Transport::InProcess(name.clone())),
            (None, None, Some(url)) => Ok(Transport::Http {
                url: url.clone(),
                headers: self.headers.clone(),
                bearer_token_env: self.bearer_token_env.clone(),
                ca_file: self.ca_file.clone(),
            }),
            _ => Err(ConfigError::Transport(prefix.to_owned())),
        }
    }

    /// Where the server runs, as people are shown it: the command line, `in-process …`, or
    /// the URL. Never holds a secret.
    pub fn origin(&self) -> String {
        match (&self.command, &self.in_process, &self.url) {
            (Some(command), _, _) => std::iter::once(command.as_str())
                .chain(self.args.iter().map(String::as_str))
                .collect::<Vec<_>>()
                .join(" "),
            (_, Some(name), _) => format!("in-process {name}"),
            (_, _, Some(url)) => url.clone(),
            _ => "unconfigured".to_owned(),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read the config file {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("{path} is not valid config TOML: {message}")]
    Toml { path: String, message: String },
    #[error("{path} is not valid mcpServers JSON: {message}")]
    McpJson { path: String, message: String },
    #[error(
        "{path} names a server '{prefix}', which the config already has (from {defined_in}): an imported server never replaces one, since the allow list and trust name servers by prefix; rename it in {path}"
    )]
    McpJsonClash {
        path: String,
        prefix: String,
        defined_in: String,
    },
    #[error(
        "server '{0}' needs exactly one of command (stdio), in_process or url (HTTP); fix its table"
    )]
    Transport(String),
    #[error(
        "server '{0}' has a ca_file but no url: ca_file is for https:// servers only; remove it"
    )]
    CaFileWithoutUrl(String),
    #[error(
        "server prefix '{0}' may use only letters, digits, '_' and '-' (it becomes part of every tool name)"
    )]
    Prefix(String),
    #[error("limits.{0} must be at least 1")]
    Limit(&'static str),
    #[error("[mail] {0}")]
    Mail(String),
    #[error(transparent)]
    Sla(#[from] crate::sla::SlaError),
    #[error("[approvals] {0} (README, 'Leads hear of approvals')")]
    Approvals(String),
}

/// Which files make the config, lowest priority first after the built-in default.
pub fn layered_files(explicit: Option<&Path>) -> Vec<PathBuf> {
    let mut files = Vec::new();
    if let Some(dirs) = directories::ProjectDirs::from("", "", "support-desk") {
        let user = dirs.config_dir().join("desk.toml");
        if user.is_file() {
            files.push(user);
        }
    }
    files.extend(explicit.map(Path::to_path_buf));
    files
}

impl DeskConfig {
    /// How many days a solved conversation stays quiet before it is closed (`[mail]
    /// close_after_days`, four without mail).
    pub fn close_after_days(&self) -> u32 {
        self.mail
            .as_ref()
            .map_or_else(mail::default_close_after_days, |m| m.close_after_days)
    }

    /// The built-in default.
    pub fn bundled() -> Self {
        Self::from_layers(&[("config/desk.toml", DEFAULT_TOML)])
            .expect("the built-in config/desk.toml is valid")
    }

    /// The built-in default overridden by `files`, in order.
    pub fn load(files: &[PathBuf]) -> Result<Self, ConfigError> {
        let mut texts = vec![("config/desk.toml".to_owned(), DEFAULT_TOML.to_owned())];
        for path in files {
            let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
                path: path.display().to_string(),
                source,
            })?;
            texts.push((path.display().to_string(), text));
        }
        let borrowed: Vec<(&str, &str)> = texts
            .iter()
            .map(|(p, t)| (p.as_str(), t.as_str()))
            .collect();
        let mut config = Self::from_layers(&borrowed)?;
        for path in config.mcp_servers_json.clone() {
            let text = std::fs::read_to_string(&path).map_err(|source| ConfigError::Read {
                path: path.display().to_string(),
                source,
            })?;
            let servers = servers_from_mcp_json(&text).map_err(|message| ConfigError::McpJson {
                path: path.display().to_string(),
                message,
            })?;
            for (prefix, server) in servers {
                if let Some(existing) = config.servers.get(&prefix) {
                    return Err(ConfigError::McpJsonClash {
                        path: path.display().to_string(),
                        prefix,
                        defined_in: existing
                            .defined_in
                            .clone()
                            .unwrap_or_else(|| "an earlier file".to_owned()),
                    });
                }
                config.servers.insert(prefix, server);
            }
        }
        config.validate()?;
        Ok(config)
    }

    /// Parses TOML texts (name, text) and merges them, later tables over earlier ones.
    pub fn from_layers(layers: &[(&str, &str)]) -> Result<Self, ConfigError> {
        let mut merged = toml::Table::new();
        let mut origins = BTreeMap::new();
        for (path, text) in layers {
            let mut table: toml::Table = toml::from_str(text).map_err(|e| ConfigError::Toml {
                path: (*path).to_owned(),
                message: e.to_string(),
            })?;
            if let Some(toml::Value::Table(servers)) = table.remove("servers") {
                let base = merged
                    .entry("servers")
                    .or_insert_with(|| toml::Value::Table(toml::Table::new()));
                if let toml::Value::Table(base) = base {
                    merge_servers(base, servers, path, &mut origins);
                }
            }
            merge(&mut merged, table);
        }
        let mut config: Self =
            toml::Value::Table(merged)
                .try_into()
                .map_err(|e: toml::de::Error| ConfigError::Toml {
                    path: layers.last().map_or("config", |(p, _)| p).to_owned(),
                    message: e.to_string(),
                })?;
        for (prefix, server) in &mut config.servers {
            server.defined_in = origins.get(prefix).cloned();
        }
        config.validate()?;
        Ok(config)
    }

    fn validate(&self) -> Result<(), ConfigError> {
        for (prefix, server) in &self.servers {
            if !valid_prefix(prefix) {
                return Err(ConfigError::Prefix(prefix.clone()));
            }
            if server.enabled {
                server.transport(prefix)?;
            }
        }
        let limits = &self.limits;
        for (name, value) in [
            (
                "model_calls_per_ticket",
                u64::from(limits.model_calls_per_ticket),
            ),
            ("request_timeout_secs", limits.request_timeout_secs),
            ("call_max_secs", limits.call_max_secs),
            ("task_max_secs", limits.task_max_secs),
            ("input_rounds", u64::from(limits.input_rounds)),
            ("concurrency", limits.concurrency as u64),
        ] {
            if value == 0 {
                return Err(ConfigError::Limit(name));
            }
        }
        if let Some(mail) = &self.mail {
            mail.validate()?;
        }
        if let Some(sla) = &self.sla {
            sla.build()?;
        }
        self.approvals.fallback().map_err(ConfigError::Approvals)?;
        Ok(())
    }

    /// `[keys]` as action name → its keys.
    pub fn key_lists(&self) -> BTreeMap<String, Vec<String>> {
        self.keys
            .iter()
            .map(|(action, keys)| (action.clone(), keys.keys()))
            .collect()
    }

    /// The enabled servers, in prefix order.
    pub fn enabled_servers(&self) -> impl Iterator<Item = (&String, &ServerConfig)> {
        self.servers.iter().filter(|(_, s)| s.enabled)
    }
}

fn valid_prefix(prefix: &str) -> bool {
    !prefix.is_empty()
        && prefix.len() <= 32
        && prefix
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// Later tables win key by key; nested tables merge, everything else is replaced.
/// The keys that say how a server is reached, each with the keys that only make sense with it.
const TRANSPORTS: [(&str, &[&str]); 3] = [
    ("command", &["args", "env"]),
    ("in_process", &[]),
    ("url", &["headers", "bearer_token_env", "ca_file", "oauth"]),
];

/// Merges one layer's `[servers.*]` over the earlier ones: a server given a transport key
/// (`command`, `in_process`, `url`) in a later file is reached that way alone, so moving the
/// bundled shop to a URL needs only `url = "…"`.
fn merge_servers(
    base: &mut toml::Table,
    over: toml::Table,
    layer: &str,
    origins: &mut BTreeMap<String, String>,
) {
    for (prefix, server) in over {
        let (Some(toml::Value::Table(earlier)), toml::Value::Table(later)) =
            (base.get_mut(&prefix), &server)
        else {
            if server.is_table() {
                origins.insert(prefix.clone(), layer.to_owned());
            }
            base.insert(prefix, server);
            continue;
        };
        if TRANSPORTS.iter().any(|(key, _)| later.contains_key(*key)) {
            for (key, companions) in TRANSPORTS {
                earlier.remove(key);
                for companion in companions {
                    if !later.contains_key(*companion) {
                        earlier.remove(*companion);
                    }
                }
            }
            origins.insert(prefix.clone(), layer.to_owned());
        }
        let toml::Value::Table(later) = server else {
            continue;
        };
        merge(earlier, later);
    }
}

fn merge(base: &mut toml::Table, over: toml::Table) {
    for (key, value) in over {
        match (base.get_mut(&key), value) {
            (Some(toml::Value::Table(base_table)), toml::Value::Table(over_table)) => {
                merge(base_table, over_table)
            }
            (_, value) => {
                base.insert(key, value);
            }
        }
    }
}

/// Servers from the `mcpServers` JSON other hosts use:
/// `{"mcpServers": {"name": {"command", "args", "env"} | {"url", "headers"}}}`.
/// Each key becomes the server's prefix (characters outside `[A-Za-z0-9_-]` become `_`).
pub fn servers_from_mcp_json(text: &str) -> Result<BTreeMap<String, ServerConfig>, String> {
    #[derive(Deserialize)]
    struct File {
        #[serde(rename = "mcpServers")]
        mcp_servers: BTreeMap<String, Entry>,
    }
    #[derive(Deserialize)]
    struct Entry {
        command: Option<String>,
        #[serde(default)]
        args: Vec<String>,
        #[serde(default)]
        env: BTreeMap<String, String>,
        url: Option<String>,
        #[serde(default)]
        headers: BTreeMap<String, String>,
        /// The desk's own addition: a PEM CA file for an `https://` url.
        #[serde(default)]
        ca_file: Option<PathBuf>,
        #[serde(default)]
        disabled: bool,
    }
    let file: File = serde_json::from_str(text).map_err(|e| e.to_string())?;
    file.mcp_servers
        .into_iter()
        .map(|(name, entry)| {
            let prefix: String = name
                .chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                        c
                    } else {
                        '_'
                    }
                })
                .collect();
            if entry.command.is_some() == entry.url.is_some() {
                return Err(format!("server '{name}' needs either command or url"));
            }
            let server = ServerConfig {
                command: entry.command,
                args: entry.args,
                env: entry.env,
                url: entry.url,
                headers: entry.headers,
                ca_file: entry.ca_file,
                enabled: !entry.disabled,
                ..ServerConfig::default()
            };
            Ok((prefix, server))
        })
        .collect()
}

/// Reads `${NAME}` from the environment; any other value is literal.
pub fn resolve_value(value: &str) -> Result<String, String> {
    match value.strip_prefix("${").and_then(|v| v.strip_suffix('}')) {
        Some(name) => {
            std::env::var(name).map_err(|_| format!("the environment variable {name} is not set"))
        }
        None => Ok(value.to_owned()),
    }
}

#[cfg(test)]
mod tests;
