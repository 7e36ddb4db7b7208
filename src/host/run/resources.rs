//! What enters a ticket's context besides the ticket: resources a trusted server marks for the
//! assistant (attached to every ticket, under a size cap) and those a person adds to one
//! ticket. The host decides; a model or a customer never does.

use rmcp::model::{ReadResourceRequestParams, ResourceContents, Role};

use crate::host::core::{Attached, Host};
use crate::host::servers::calls;
use crate::host::servers::connect::ServerConn;
use crate::record::Event;

impl Host {
    pub(in crate::host) async fn attach_marked_resources(&self) -> Vec<Attached> {
        let limits = &self.config.limits;
        let mut attached = Vec::new();
        for conn in &self.connected() {
            let trusted = self
                .config
                .servers
                .get(&conn.prefix)
                .is_some_and(|s| s.attach_resources);
            let Ok(live) = conn.live().await else {
                continue;
            };
            if !trusted
                || live
                    .service
                    .peer_info()
                    .and_then(|i| i.capabilities.resources.clone())
                    .is_none()
            {
                continue;
            }
            let resources = match live.service.list_all_resources().await {
                Ok(resources) => resources,
                Err(e) => {
                    tracing::warn!(server = %conn.prefix, error = %e, "listing resources failed");
                    continue;
                }
            };
            for resource in resources {
                let Some(annotations) = &resource.annotations else {
                    continue;
                };
                let for_assistant = annotations
                    .audience
                    .as_ref()
                    .is_some_and(|a| a.contains(&Role::Assistant));
                if !for_assistant || annotations.priority.unwrap_or(0.0) < limits.attach_priority {
                    continue;
                }
                match self.read_resource(conn, &resource.uri).await {
                    Ok(text) if text.len() <= limits.attach_max_bytes => attached.push(Attached {
                        server: conn.prefix.clone(),
                        uri: resource.uri.clone(),
                        title: resource
                            .title
                            .clone()
                            .unwrap_or_else(|| resource.name.clone()),
                        text,
                    }),
                    Ok(text) => tracing::warn!(
                        uri = %resource.uri, bytes = text.len(), cap = limits.attach_max_bytes,
                        "resource marked for the assistant is over the size cap; not attached"
                    ),
                    Err(e) => {
                        tracing::warn!(uri = %resource.uri, error = %e, "reading a resource failed")
                    }
                }
            }
        }
        attached
    }

    /// Reads a resource as text, through the client's cache.
    pub async fn read_resource(&self, conn: &ServerConn, uri: &str) -> Result<String, String> {
        let live = conn.live().await.map_err(|e| e.to_string())?;
        let result = live
            .service
            .read_resource(ReadResourceRequestParams::new(uri.to_owned()))
            .await
            .map_err(|e| e.to_string())?;
        Ok(result
            .contents
            .iter()
            .map(|c| match c {
                ResourceContents::TextResourceContents { text, .. } => text.clone(),
                _ => "[binary content]".to_owned(),
            })
            .collect::<Vec<_>>()
            .join("\n"))
    }

    /// Every server's resources.
    pub async fn resources(&self) -> Vec<crate::host::events::ResourceInfo> {
        let mut all = Vec::new();
        for conn in &self.connected() {
            let Ok(live) = conn.live().await else {
                continue;
            };
            let capable = live
                .service
                .peer_info()
                .and_then(|i| i.capabilities.resources.clone());
            if capable.is_none() {
                continue;
            }
            if let Ok(list) = live.service.list_all_resources().await {
                all.extend(list.into_iter().map(|r| crate::host::events::ResourceInfo {
                    server: conn.prefix.clone(),
                    title: r.title.clone().unwrap_or_else(|| r.name.clone()),
                    description: r.description.clone().unwrap_or_default(),
                    size: r.size,
                    priority: r.annotations.as_ref().and_then(|a| a.priority),
                    uri: r.uri.clone(),
                }));
            }
        }
        all
    }

    /// One resource's text for a person to read, capped at the size of a tool result. Nothing
    /// is attached and nothing is recorded: reading is not acting.
    pub async fn resource_for_a_person(&self, server: &str, uri: &str) -> Result<String, String> {
        let conn = self
            .server(server)
            .ok_or_else(|| format!("there is no server '{server}'"))?;
        let text = self.read_resource(&conn, uri).await?;
        Ok(calls::cap(text, self.config.limits.result_max_bytes).0)
    }

    /// Adds one resource to one ticket's context; returns its size in bytes.
    pub async fn attach_to_ticket(
        &self,
        ticket: &str,
        server: &str,
        uri: &str,
    ) -> Result<usize, String> {
        let conn = self
            .server(server)
            .ok_or_else(|| format!("there is no server '{server}'"))?;
        let text = self.read_resource(&conn, uri).await?;
        let text = calls::cap(text, self.config.limits.attach_max_bytes).0;
        let bytes = text.len();
        let attached = Attached {
            server: server.to_owned(),
            uri: uri.to_owned(),
            title: uri.to_owned(),
            text,
        };
        self.report(Event::Attached {
            ticket: ticket.to_owned(),
            by: self.record.person().to_owned(),
            server: server.to_owned(),
            uri: uri.to_owned(),
            bytes,
        })
        .await
        .map_err(|e| e.to_string())?;
        self.extra
            .lock()
            .await
            .entry(ticket.to_owned())
            .or_default()
            .push(attached);
        Ok(bytes)
    }
}
