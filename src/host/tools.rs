//! The tools the host offers the model: every server's list under the host's names, each
//! definition checked against its pin. Lists are refreshed between tickets, never inside one.
//! This module decides what is offered; it never asks anyone anything.

use std::collections::BTreeMap;
use std::sync::Arc;

use rmcp::model::Tool;
use serde_json::Value;

use super::core::Host;
use crate::host::consent::{self, PinStatus, Pins};
use crate::host::names::{NameTable, ToolName};
use crate::host::servers::ServerConn;
use crate::host::suspicious::{self, Suspicion};
use crate::model::chat::ToolSpec;

/// One tool as last listed, with why the model does not see it, if it does not.
pub(super) struct Offered {
    pub(super) conn: Arc<ServerConn>,
    pub(super) tool: Tool,
    /// Kept from the model until a person approves it.
    pub(super) held: Option<Held>,
}

/// Why a tool is kept from the model (name and description alike) until a person approves it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Held {
    /// Its definition differs from its pin: the diff, field by field.
    Changed(String),
    /// Its description addresses the model: the spans that do.
    Suspicious(Vec<Suspicion>),
}

impl Held {
    /// Why the host asks, in one sentence.
    pub fn reason(&self, name: &ToolName) -> String {
        match self {
            Held::Changed(_) => format!(
                "{name} changed its definition since it was pinned; the model does not see it until you approve the new definition"
            ),
            Held::Suspicious(_) => format!(
                "{name}'s description gives the model instructions; the model does not see it until you approve it as it is"
            ),
        }
    }

    /// What a person is shown: the diff, or each suspicious span with why.
    pub fn shown(&self) -> String {
        match self {
            Held::Changed(diff) => diff.clone(),
            Held::Suspicious(found) => found
                .iter()
                .map(|s| format!("\"{}\": {}", s.span, s.why))
                .collect::<Vec<_>>()
                .join("\n"),
        }
    }
}

impl Host {
    /// Lists every server's tools again and rebuilds the names. Called between tickets, so
    /// a changed list never changes the tools under a ticket being worked.
    pub async fn refresh_tools(&self) {
        self.list_tools(false).await;
    }

    /// The tools of every server: with `first`, the listing each connection made when it
    /// opened (the one pinned); otherwise a new listing, checked against the pins.
    pub(super) async fn list_tools(&self, first: bool) {
        let mut listed = Vec::new();
        for conn in &self.connected() {
            let tools = if first {
                conn.current().await.map(|live| live.tools.clone())
            } else {
                listing(conn).await
            };
            let Some(tools) = tools else { continue };
            tracing::info!(server = %conn.prefix, tools = tools.len(), "tool list");
            listed.push((Arc::clone(conn), tools));
        }
        let every: Vec<(String, String)> = listed
            .iter()
            .flat_map(|(conn, tools)| {
                tools
                    .iter()
                    .map(|t| (conn.prefix.clone(), format!("{}.{}", conn.prefix, t.name)))
            })
            .collect();
        let mut offered = BTreeMap::new();
        let mut pins = self.pins.lock().await;
        let mut report = BTreeMap::new();
        let lists: Vec<(&str, Vec<String>)> = listed
            .iter()
            .map(|(conn, tools)| {
                let names: Vec<String> = tools.iter().map(|t| t.name.to_string()).collect();
                (conn.prefix.as_str(), names)
            })
            .collect();
        for (conn, tools) in &listed {
            let others: Vec<String> = every
                .iter()
                .filter(|(prefix, _)| *prefix != conn.prefix)
                .map(|(_, name)| name.clone())
                .collect();
            for tool in tools {
                let name = ToolName::new(conn.prefix.clone(), tool.name.to_string());
                let status = pins.check(&name, tool);
                let held = held(&pins, &name, tool, &status, &others);
                if let Some(held) = &held {
                    tracing::warn!(tool = %name, reason = %held.reason(&name), "tool kept from the model until a person approves it");
                }
                report.insert(name.to_string(), status);
                let (conn, tool) = (Arc::clone(conn), tool.clone());
                offered.insert(name, Offered { conn, tool, held });
            }
        }
        drop(pins);
        *self.pin_report.lock().await = report;
        *self.tools.write().await = (NameTable::new(lists), offered);
    }

    pub(super) async fn tool_specs(&self) -> Vec<ToolSpec> {
        let tools = self.tools.read().await;
        let (names, offered) = &*tools;
        names
            .canonical()
            .filter_map(|name| {
                let offered = offered.get(name).filter(|o| o.held.is_none())?;
                Some(ToolSpec {
                    name: name.to_string(),
                    wire_name: names.wire_name(name)?.to_owned(),
                    description: offered
                        .tool
                        .description
                        .as_deref()
                        .unwrap_or_default()
                        .to_owned(),
                    input_schema: Value::Object((*offered.tool.input_schema).clone()),
                })
            })
            .collect()
    }

    /// Each tool's pin status at the last listing, by `prefix.tool`.
    pub async fn pin_report(&self) -> BTreeMap<String, consent::PinStatus> {
        self.pin_report.lock().await.clone()
    }

    /// sha256 of each offered tool's pinned definition, by server.
    pub async fn tool_hashes(&self) -> BTreeMap<String, BTreeMap<String, String>> {
        let tools = self.tools.read().await;
        let mut hashes: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
        for (name, offered) in &tools.1 {
            hashes
                .entry(name.prefix.clone())
                .or_default()
                .insert(name.tool.clone(), consent::definition_hash(&offered.tool));
        }
        hashes
    }
}

/// A new listing of one server's tools: the last one when listing fails, none when the server
/// cannot be reached.
async fn listing(conn: &ServerConn) -> Option<Vec<Tool>> {
    match conn.live().await {
        Ok(live) => match live.service.list_all_tools().await {
            Ok(tools) => Some(tools),
            Err(e) => {
                tracing::warn!(server = %conn.prefix, error = %e, "listing tools failed; keeping the last list");
                Some(live.tools.clone())
            }
        },
        Err(e) => {
            tracing::warn!(server = %conn.prefix, error = %e, "server unavailable; its tools are left out");
            None
        }
    }
}

/// Why the model must not see `tool` yet: a definition that changed since its pin, or a
/// description that addresses the model and that no person approved as it is.
fn held(
    pins: &Pins,
    name: &ToolName,
    tool: &Tool,
    status: &PinStatus,
    others: &[String],
) -> Option<Held> {
    if let PinStatus::Changed(diff) = status {
        return Some(Held::Changed(diff.clone()));
    }
    let found = suspicious::scan(tool, others);
    (!found.is_empty() && pins.approval(name, tool).is_none()).then_some(Held::Suspicious(found))
}
