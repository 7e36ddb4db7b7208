//! The tools the host offers the model: every server's list under the host's names, each
//! definition checked against its pin. Lists are refreshed before each ticket, and at once
//! for a server that says its tools changed.
//! This module decides what is offered; it never asks anyone anything.

use std::sync::Arc;

use rmcp::model::Tool;

use crate::host::gate::consent::{PinStatus, Pins};
use crate::host::gate::names::ToolName;
use crate::host::gate::suspicious::{self, Suspicion};
use crate::host::servers::connect::ServerConn;

/// One tool as last listed, with why the model does not see it, if it does not.
pub(in crate::host) struct Offered {
    pub(in crate::host) conn: Arc<ServerConn>,
    pub(in crate::host) tool: Tool,
    /// Kept from the model until a person approves it.
    pub(in crate::host) held: Option<Held>,
}

/// Why a tool is kept from the model (name and description alike) until a person approves it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Held {
    /// Its definition, or where its server runs, differs from its pin: the diff, field by
    /// field.
    Changed(String),
    /// Its description addresses the model: the spans that do.
    Suspicious(Vec<Suspicion>),
}

impl Held {
    /// Why the host asks, in one sentence.
    pub fn reason(&self, name: &ToolName) -> String {
        match self {
            Held::Changed(_) => format!(
                "{name} is not as it was pinned (its definition, or where its server runs); the model does not see it until you approve it as it is now"
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

/// A new listing of one server's tools: the last one when listing fails, none when the server
/// cannot be reached.
pub(in crate::host) async fn listing(conn: &ServerConn) -> Option<Vec<Tool>> {
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
pub(in crate::host) fn held(
    pins: &Pins,
    name: &ToolName,
    tool: &Tool,
    origin: &str,
    status: &PinStatus,
    others: &[String],
) -> Option<Held> {
    if let PinStatus::Changed(diff) = status {
        return Some(Held::Changed(diff.clone()));
    }
    let found = suspicious::scan(tool, others);
    (!found.is_empty() && pins.approval(name, tool, origin).is_none())
        .then_some(Held::Suspicious(found))
}
