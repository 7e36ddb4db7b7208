//! `support-desk servers`: every configured server connected once and described (revision,
//! tools, whether each matches its pin, transport and certificate, and what the server says
//! of itself), for a person to read.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::bail;
use tokio::sync::mpsc;

use crate::commands::run::{Script, answer_by_script};
use crate::config::{DeskConfig, Transport};
use crate::host::core::{Host, Storage};
use crate::host::gate::consent::PinStatus;
use crate::model::Model;
use crate::model::replay::ReplayModel;

/// `support-desk servers`: every configured server, connected and described.
pub async fn execute(args: ServersArgs) -> anyhow::Result<()> {
    let config = crate::startup::config(
        args.common.config.as_deref(),
        &crate::startup::Overrides::default(),
    )?;
    let data_dir = crate::startup::data_dir(args.common.data_dir.as_deref());
    let described = servers(config, data_dir).await?;
    super::write_stdout(&described.text)?;
    if !described.not_connected.is_empty() && !args.allow_missing {
        bail!(
            "not connected: {}; fix what each says, or give --allow-missing when a partial start is fine",
            described.not_connected.join(", ")
        );
    }
    Ok(())
}

#[derive(Debug, clap::Args)]
pub struct ServersArgs {
    #[command(flatten)]
    pub common: super::CommonArgs,
    /// Exit 0 even when a configured server did not connect.
    #[arg(long)]
    pub allow_missing: bool,
}

/// Every configured server described, and the prefixes of those that did not connect.
#[derive(Debug, Clone, PartialEq)]
pub struct Described {
    pub text: String,
    pub not_connected: Vec<String>,
}

/// Connects to every configured server and describes it.
pub async fn servers(config: DeskConfig, data_dir: Option<PathBuf>) -> anyhow::Result<Described> {
    // How each server is reached, and for https what its certificate says, read from one
    // TLS handshake of its own.
    let mut reached = BTreeMap::new();
    let defined_in: BTreeMap<String, String> = config
        .servers
        .iter()
        .filter_map(|(prefix, s)| Some((prefix.clone(), s.defined_in.clone()?)))
        .collect();
    for (prefix, server) in config.enabled_servers() {
        let Ok(transport) = server.transport(prefix) else {
            continue;
        };
        let mut lines = vec![format!("  transport: {}", transport_words(&transport))];
        lines.extend(crate::commands::login::state_line(
            prefix,
            server,
            data_dir.as_deref(),
        ));
        if let Transport::Http { url, ca_file, .. } = &transport
            && url.starts_with("https://")
        {
            lines.push(format!(
                "  certificate: {}",
                certificate_words(url, ca_file.as_deref()).await
            ));
        }
        reached.insert(prefix.clone(), lines);
    }
    let (questions_tx, questions_rx) = mpsc::channel(1);
    let (events_tx, _events_rx) = mpsc::unbounded_channel();
    let answering = tokio::spawn(answer_by_script(
        questions_rx,
        Script {
            approve_consent: false,
            accept_forms: false,
        },
        super::run::RUN_PERSON.to_owned(),
    ));
    let model = Model::Replay(ReplayModel::empty("none".into()));
    let storage = Storage {
        data_dir,
        record: None,
    };
    let parts = crate::startup::host_parts(config, model, vec![], storage, None);
    let host = Host::start(parts, questions_tx, events_tx).await;
    let pins = host.pin_report().await;
    let mut out = String::new();
    let mut not_connected = Vec::new();
    for server in host.servers() {
        let from = defined_in
            .get(&server.prefix)
            .map(|file| format!(" · from {file}"))
            .unwrap_or_default();
        out.push_str(&format!("{}  ({}){from}\n", server.prefix, server.origin));
        for line in reached.get(&server.prefix).into_iter().flatten() {
            out.push_str(line);
            out.push('\n');
        }
        match &server.error {
            Some(error) => {
                out.push_str(&format!("  not connected: {error}\n"));
                not_connected.push(server.prefix.clone());
            }
            None => {
                out.push_str(&format!(
                    "  server: {}  revision: {}  tools: {}\n",
                    server.name.as_deref().unwrap_or("(unnamed)"),
                    server.revision.as_deref().unwrap_or("?"),
                    server.tools.len(),
                ));
                if let Some(instructions) = &server.instructions {
                    out.push_str(&said_by_the_server(instructions));
                }
                for tool in &server.tools {
                    let name = format!("{}.{tool}", server.prefix);
                    let pin = match pins.get(&name) {
                        Some(PinStatus::New) => "pinned now (first seen)",
                        Some(PinStatus::Same) => "matches its pin",
                        Some(PinStatus::Changed(_)) => {
                            "CHANGED since pinned: blocked until a person approves it"
                        }
                        None => "not listed",
                    };
                    out.push_str(&format!("    {name}: {pin}\n"));
                }
            }
        }
    }
    host.shutdown().await;
    answering.abort();
    Ok(Described {
        text: out,
        not_connected,
    })
}

/// A server's instructions as its own words: labelled, each line quoted, escape sequences and
/// control characters removed, so nothing it wrote can pass for a line of the desk's.
fn said_by_the_server(instructions: &str) -> String {
    let mut out =
        "  the server says (its instructions, as it wrote them; never given to the model):\n"
            .to_owned();
    for line in crate::ui::sanitize::clean(instructions).lines() {
        out.push_str(&format!("    | {line}\n"));
    }
    out
}

/// How a transport reaches its server, in words.
fn transport_words(transport: &Transport) -> &'static str {
    match transport {
        Transport::Stdio { .. } => "stdio (a child process)",
        Transport::InProcess(_) => "in-process pipe (built into this binary)",
        Transport::Http { url, .. } if url.starts_with("https://") => {
            "Streamable HTTP over TLS (https)"
        }
        Transport::Http { .. } => "Streamable HTTP, plain http (not encrypted)",
    }
}

/// The certificate an https server presents: subject, names, issuer and expiry, and
/// whether the desk trusts it (the connection line says why not).
async fn certificate_words(url: &str, ca_file: Option<&Path>) -> String {
    match crate::tls::inspect(url, ca_file).await {
        Err(e) => format!("not read ({e})"),
        Ok(inspection) => {
            let refused = if inspection.verdict.is_ok() {
                ""
            } else {
                "REFUSED: "
            };
            match inspection.certificate {
                Some(Ok(summary)) => format!("{refused}{}", summary.line()),
                Some(Err(e)) => format!("{refused}{e}"),
                None => match inspection.verdict {
                    Err(problem) => format!("none ({})", problem.advice("", ca_file)),
                    Ok(()) => "none".to_owned(),
                },
            }
        }
    }
}
