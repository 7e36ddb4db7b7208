//! Server prompts are a person's: listed for the desk's picker, and run for a ticket only when
//! a person asks. The model never picks one.

use serde_json::{Map, Value};

use crate::host::api::PersonPrompt;
use crate::host::core::{Host, TicketRun};

impl Host {
    /// Every server's prompts, named `prefix.prompt`.
    pub async fn prompts(&self) -> Vec<crate::host::events::PromptInfo> {
        let mut prompts = Vec::new();
        for conn in &self.connected() {
            let Ok(live) = conn.live().await else {
                continue;
            };
            if live
                .service
                .peer_info()
                .and_then(|i| i.capabilities.prompts.clone())
                .is_none()
            {
                continue;
            }
            if let Ok(list) = live.service.list_all_prompts().await {
                prompts.extend(list.into_iter().map(|p| {
                    crate::host::events::PromptInfo {
                        name: format!("{}.{}", conn.prefix, p.name),
                        description: p.description.unwrap_or_default(),
                        arguments: p
                            .arguments
                            .unwrap_or_default()
                            .into_iter()
                            .map(|a| {
                                (
                                    a.name,
                                    a.description.unwrap_or_default(),
                                    a.required.unwrap_or(false),
                                )
                            })
                            .collect(),
                    }
                }));
            }
        }
        prompts
    }

    /// Runs a server's prompt for a ticket: its messages join the ticket as the person's request.
    pub async fn run_prompt(
        &self,
        ticket: &str,
        prompt: &PersonPrompt,
    ) -> Result<TicketRun, String> {
        let ticket = self
            .ticket(ticket)
            .ok_or_else(|| format!("there is no ticket {ticket}"))?;
        let request = self.person_request(prompt).await?;
        self.work_claimed(&ticket, Some(request), false)
            .await
            .ok_or_else(|| {
                format!(
                    "{} could not be worked: another desk holds it",
                    ticket.ticket_id
                )
            })
    }

    /// A server prompt's messages, as the person's request that joins a ticket.
    pub(in crate::host) async fn person_request(
        &self,
        prompt: &PersonPrompt,
    ) -> Result<String, String> {
        let name = &prompt.name;
        let (prefix, bare) = name
            .split_once('.')
            .ok_or_else(|| format!("\"{name}\" is not prefix.prompt"))?;
        let conn = self
            .server(prefix)
            .ok_or_else(|| format!("there is no server '{prefix}'"))?;
        let live = conn.live().await.map_err(|e| e.to_string())?;
        let args: Map<String, Value> = prompt
            .arguments
            .iter()
            .map(|(k, v)| (k.clone(), Value::String(v.clone())))
            .collect();
        let result = live
            .service
            .get_prompt(
                rmcp::model::GetPromptRequestParams::new(bare.to_owned()).with_arguments(args),
            )
            .await
            .map_err(|e| format!("{name} failed: {e}"))?;
        let text = result
            .messages
            .iter()
            .filter_map(|m| serde_json::to_value(&m.content).ok())
            .map(|v| {
                v.get("text")
                    .and_then(Value::as_str)
                    .map(str::to_owned)
                    .unwrap_or_else(|| v.to_string())
            })
            .collect::<Vec<_>>()
            .join("\n\n");
        Ok(format!("The support team asks ({name}):\n{text}"))
    }
}
