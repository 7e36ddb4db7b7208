//! Refreshing what the model is offered, between tickets: every server's list again under the
//! host's names, each definition through the gate's checks ([`crate::host::gate::tools`]).
//! A changed list never changes the tools under a ticket being worked.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;

use crate::host::core::Host;
use crate::host::gate::consent;
use crate::host::gate::names::{NameTable, ToolName};
use crate::host::gate::tools::{Offered, held, listing};
use crate::model::chat::ToolSpec;

impl Host {
    /// Lists every server's tools again and rebuilds the names. Called between tickets, so
    /// a changed list never changes the tools under a ticket being worked.
    pub async fn refresh_tools(&self) {
        self.list_tools(false).await;
    }

    /// The tools of every server: with `first`, the listing each connection made when it
    /// opened (the one pinned); otherwise a new listing, checked against the pins.
    pub(in crate::host) async fn list_tools(&self, first: bool) {
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
                let status = pins.check(&name, tool, &conn.origin);
                let held = held(&pins, &name, tool, &conn.origin, &status, &others);
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

    pub(in crate::host) async fn tool_specs(&self) -> Vec<ToolSpec> {
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
