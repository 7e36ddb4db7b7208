//! The tools the host offers the model: every server's list under the host's names, each
//! definition checked against its pin. Lists are refreshed between tickets, never inside one.
//! This module decides what is offered; it never asks anyone anything.

use std::collections::BTreeMap;
use std::sync::Arc;

use rmcp::model::Tool;
use serde_json::Value;

use super::core::Host;
use crate::host::consent;
use crate::host::names::{NameTable, ToolName};
use crate::host::servers::ServerConn;
use crate::model::chat::ToolSpec;

/// The tools of one server, as last listed.
pub(super) struct Offered {
    pub(super) conn: Arc<ServerConn>,
    pub(super) tool: Tool,
}

impl Host {
    /// Lists every server's tools again and rebuilds the names. Called between tickets, so
    /// a changed list never changes the tools under a ticket being worked.
    pub async fn refresh_tools(&self) {
        let mut offered = BTreeMap::new();
        let mut lists = Vec::new();
        let mut pins = self.pins.lock().await;
        let mut report = BTreeMap::new();
        let servers = self.connected();
        for conn in &servers {
            let tools = match conn.live().await {
                Ok(live) => match live.service.list_all_tools().await {
                    Ok(tools) => tools,
                    Err(e) => {
                        tracing::warn!(server = %conn.prefix, error = %e, "listing tools failed; keeping the last list");
                        live.tools.clone()
                    }
                },
                Err(e) => {
                    tracing::warn!(server = %conn.prefix, error = %e, "server unavailable; its tools are left out");
                    continue;
                }
            };
            tracing::info!(server = %conn.prefix, tools = tools.len(), "tool list");
            lists.push((
                conn.prefix.as_str(),
                tools.iter().map(|t| t.name.to_string()).collect(),
            ));
            for tool in tools {
                let name = ToolName::new(conn.prefix.clone(), tool.name.to_string());
                let status = pins.check(&name, &tool);
                if let consent::PinStatus::Changed(_) = &status {
                    tracing::warn!(tool = %name, "tool definition changed since it was pinned; blocked until approved");
                }
                report.insert(name.to_string(), status);
                offered.insert(
                    name,
                    Offered {
                        conn: Arc::clone(conn),
                        tool,
                    },
                );
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
                let offered = offered.get(name)?;
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
        use sha2::Digest;
        let tools = self.tools.read().await;
        let mut hashes: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
        for (name, offered) in &tools.1 {
            let digest =
                sha2::Sha256::digest(consent::definition(&offered.tool).to_string().as_bytes());
            hashes
                .entry(name.prefix.clone())
                .or_default()
                .insert(name.tool.clone(), hex::encode(digest));
        }
        hashes
    }
}
