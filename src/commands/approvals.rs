//! `support-desk approvals [--json]`: the team's open approvals, forms that wait for a lead.

use clap::Args;
use serde_json::{Value, json};

use super::{CommonArgs, write_stdout};
use crate::config::DeskConfig;
use crate::host::api::{ApprovalView, Field, FieldKind};
use crate::record::Record;
use crate::startup::{self, Overrides};

#[derive(Debug, Args)]
pub struct ApprovalsArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// Print them as one JSON object: {"approvals": [{"id", "ticket", "server", "tool", …}]}.
    #[arg(long)]
    pub json: bool,
}

pub async fn execute(args: ApprovalsArgs) -> anyhow::Result<()> {
    let config = startup::config(args.common.config.as_deref(), &Overrides::default())?;
    let store = needs_store(&config, &args.common)?;
    write_stdout(&list(&config, &store, args.json).await?)
}

/// The team's record a command needs: approvals live only there.
pub(super) fn needs_store(config: &DeskConfig, common: &CommonArgs) -> anyhow::Result<String> {
    startup::team_url(config, common.store())?.ok_or_else(|| {
        anyhow::anyhow!(
            "approvals live in a team's record: give --store postgres://NAME@HOST:PORT/DB (or [desk] store in the config)"
        )
    })
}

/// The open approvals of the team's record at `store`, as text or JSON.
pub async fn list(config: &DeskConfig, store: &str, as_json: bool) -> anyhow::Result<String> {
    let record = Record::team(store, &config.consent.allow).await?;
    let open: Vec<ApprovalView> = record
        .open_approvals()
        .await?
        .iter()
        .map(crate::host::people::approvals::view)
        .collect();
    if as_json {
        let rows: Vec<Value> = open.iter().map(approval_json).collect();
        return Ok(format!("{}\n", json!({ "approvals": rows })));
    }
    if open.is_empty() {
        return Ok("no approval is open\n".to_owned());
    }
    let mut text = String::new();
    for approval in &open {
        let passed = approval
            .passed_to
            .as_ref()
            .map(|lead| format!(", passed to {lead}: no lead answered in time"))
            .unwrap_or_default();
        text.push_str(&format!(
            "#{} {} {} asked by {} at {}{passed}\n  {}\n",
            approval.id,
            approval.ticket,
            approval.tool,
            approval.asked_by,
            crate::record::rfc3339(approval.asked_at),
            approval.message
        ));
        for field in &approval.fields {
            text.push_str(&format!("  field {}\n", field_line(field)));
        }
    }
    Ok(text)
}

fn field_line(field: &Field) -> String {
    let kind = match &field.kind {
        FieldKind::Boolean { .. } => "true|false",
        FieldKind::Integer { .. } => "integer",
        FieldKind::Number { .. } => "number",
        FieldKind::Choice { .. } => "one choice",
        FieldKind::Choices { .. } => "choices, comma-separated",
        FieldKind::Text { .. } => "text",
    };
    let required = if field.required { ", required" } else { "" };
    let title = field.title.as_deref().unwrap_or_default();
    format!("{} ({kind}{required}) {title}", field.name)
}

fn approval_json(approval: &ApprovalView) -> Value {
    let fields: Vec<Value> = approval
        .fields
        .iter()
        .map(|f| json!({ "name": f.name, "title": f.title, "required": f.required, "about": field_line(f) }))
        .collect();
    let arguments: serde_json::Map<String, Value> = approval
        .arguments
        .iter()
        .map(|(k, v)| {
            (
                k.clone(),
                serde_json::from_str(v).unwrap_or(Value::String(v.clone())),
            )
        })
        .collect();
    json!({
        "id": approval.id,
        "ticket": approval.ticket,
        "server": approval.server,
        "tool": approval.tool,
        "arguments": arguments,
        "asked_by": approval.asked_by,
        "asked_at": crate::record::rfc3339(approval.asked_at),
        "answering_by": approval.answering_by,
        "passed_to": approval.passed_to,
        "message": approval.message,
        "fields": fields,
    })
}
