//! Refreshing what the model is offered: every server's list again between tickets, and one
//! server's at once when it says its tools changed; each definition through the gate's
//! checks ([`crate::host::gate::tools`]). A tool that changed is held from the model's next
//! request on (the run puts it to a person first), and one added is offered once its pin
//! check has passed.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Weak};

use rmcp::model::Tool;
use serde_json::Value;
use tokio::sync::mpsc;

use crate::host::core::Host;
use crate::host::events::HostEvent;
use crate::host::gate::consent;
use crate::host::gate::names::{NameTable, ToolName};
use crate::host::gate::tools::{Offered, held, listing};
use crate::host::run::conversation::Conversation;
use crate::host::run::system_prompt;
use crate::host::servers::connect::ServerConn;
use crate::host::servers::notices::ServerNotice;
use crate::model::chat::{Message, ToolSpec};
use crate::tickets::Ticket;

impl Host {
    /// Lists every server's tools again and rebuilds the names. Called before each ticket.
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
        self.offer(listed).await;
    }

    /// Lists each server that says its tools changed again, as soon as it says so, for as
    /// long as the host lives. Several words from one server while a listing is under way
    /// make one listing more. A resource a server says changed is read again before the
    /// next run ([`Host::resource_updated`]).
    pub(in crate::host) fn follow_notices(
        self: &Arc<Self>,
        mut said: mpsc::UnboundedReceiver<ServerNotice>,
    ) {
        let host: Weak<Self> = Arc::downgrade(self);
        tokio::spawn(async move {
            while let Some(first) = said.recv().await {
                let mut notices = vec![first];
                while let Ok(more) = said.try_recv() {
                    notices.push(more);
                }
                let Some(host) = host.upgrade() else { return };
                let mut servers = BTreeSet::new();
                for notice in notices {
                    match notice {
                        ServerNotice::ToolsChanged(server) => {
                            servers.insert(server);
                        }
                        ServerNotice::ResourceUpdated { server, uri } => {
                            host.resource_updated(&server, &uri)
                        }
                    }
                }
                for server in servers {
                    host.relist(&server).await;
                }
            }
        });
    }

    /// Lists one server's tools again, now: each checked against its pin as between tickets,
    /// the offer changed at once (a tool held is out of the model's next request), and the
    /// desk told what changed.
    pub(in crate::host) async fn relist(&self, prefix: &str) {
        let Some(conn) = self
            .connected()
            .into_iter()
            .find(|conn| conn.prefix == prefix)
        else {
            return;
        };
        let Some(tools) = listing(&conn).await else {
            return;
        };
        tracing::info!(server = %prefix, tools = tools.len(), "tool list, after the server said it changed");
        let (before, mut listed) = {
            let offer = self.tools.read().await;
            let before: BTreeMap<String, bool> = offer
                .1
                .iter()
                .filter(|(name, _)| name.prefix == prefix)
                .map(|(name, o)| (name.to_string(), o.held.is_some()))
                .collect();
            let mut listed: Vec<(Arc<ServerConn>, Vec<Tool>)> = Vec::new();
            // The other servers' tools as offered now, in the table's order.
            let others = offer.0.canonical().filter(|name| name.prefix != prefix);
            for (name, offered) in others.filter_map(|name| Some((name, offer.1.get(name)?))) {
                match listed.iter_mut().find(|(c, _)| c.prefix == name.prefix) {
                    Some((_, tools)) => tools.push(offered.tool.clone()),
                    None => listed.push((Arc::clone(&offered.conn), vec![offered.tool.clone()])),
                }
            }
            (before, listed)
        };
        listed.push((Arc::clone(&conn), tools));
        // The table keeps the servers in the order they are connected.
        let order: Vec<String> = self.connected().iter().map(|c| c.prefix.clone()).collect();
        listed.sort_by_key(|(c, _)| order.iter().position(|p| *p == c.prefix));
        self.offer(listed).await;
        let after: BTreeMap<String, bool> = self
            .tools
            .read()
            .await
            .1
            .iter()
            .filter(|(name, _)| name.prefix == prefix)
            .map(|(name, o)| (name.to_string(), o.held.is_some()))
            .collect();
        let held: Vec<String> = after
            .iter()
            .filter(|(name, held)| **held && before.get(*name) != Some(&true))
            .map(|(name, _)| name.clone())
            .collect();
        let added: Vec<String> = after
            .iter()
            .filter(|(name, held)| !**held && !before.contains_key(*name))
            .map(|(name, _)| name.clone())
            .collect();
        let gone: Vec<String> = before
            .keys()
            .filter(|name| !after.contains_key(*name))
            .cloned()
            .collect();
        if held.is_empty() && added.is_empty() && gone.is_empty() {
            return;
        }
        tracing::warn!(server = %prefix, ?held, ?added, ?gone, "a server's tools changed while the desk was open");
        self.tools_listed(prefix, after.keys());
        let _ = self.events.send(HostEvent::ToolsChanged {
            server: prefix.to_owned(),
            held,
            added,
            gone,
        });
    }

    /// Before a run's model call `turn`: a tool held since the last call (its server said
    /// its tools changed) is put to a person first, and the request offers the tools as they
    /// are now. When they differ from what the run offered so far, the run's opening (the
    /// system prompt with its tools, and the ticket's message with its first-tool lines) is
    /// written again for them, so a held tool is in no part of the request.
    pub(in crate::host) async fn keep_offer_current(
        &self,
        ticket: &Ticket,
        turn: u32,
        conversation: &mut Conversation,
    ) {
        self.review_held_tools(&ticket.ticket_id, turn).await;
        let specs = self.tool_specs().await;
        if specs == conversation.specs {
            return;
        }
        let opening = matches!(
            conversation.messages.as_slice(),
            [Message::System { .. }, Message::User { .. }, ..]
        );
        if !opening {
            tracing::error!(ticket = %ticket.ticket_id, "a run's conversation does not start with its system prompt and ticket; its tools are left as they were");
            return;
        }
        tracing::info!(ticket = %ticket.ticket_id, turn, tools = specs.len(), "the tools offered changed during the run");
        let (told, _) = self.told_first(ticket, &specs).await;
        for (at, message) in told.into_iter().enumerate() {
            conversation.messages[at] = message;
        }
        conversation.tool_list_chars = system_prompt::tool_list_chars(&specs);
        conversation.offered = specs.clone();
        conversation.specs = specs;
    }

    /// The server's summary with the tools it lists now, for the status bar.
    fn tools_listed<'a>(&self, prefix: &str, names: impl Iterator<Item = &'a String>) {
        let tools: Vec<String> = names
            .filter_map(|name| name.strip_prefix(&format!("{prefix}.")).map(str::to_owned))
            .collect();
        let summaries = {
            let mut summaries = self.summaries.write().unwrap_or_else(|p| p.into_inner());
            for summary in summaries.iter_mut().filter(|s| s.prefix == prefix) {
                summary.tools = tools.clone();
            }
            summaries.clone()
        };
        let _ = self.events.send(HostEvent::Servers(summaries));
    }

    /// Offers `listed` under the host's names, each definition checked against its pin: a
    /// changed or instruction-giving tool is held.
    async fn offer(&self, listed: Vec<(Arc<ServerConn>, Vec<Tool>)>) {
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
