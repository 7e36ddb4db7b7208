//! Attached documents kept current: for each server whose documents every run starts with,
//! the desk asks to hear when one changes (on a `subscriptions/listen` stream at 2026-07-28,
//! with `resources/subscribe` from an older server), and a document its server says changed
//! is read again before the next run starts. A run under way keeps the copy it started with.
//! A server that does not offer subscriptions is read once, when the desk opens.

use std::collections::BTreeMap;
use std::sync::Arc;

use rmcp::model::{ServerNotification, SubscribeRequestParams, SubscriptionFilter};

use crate::host::core::Host;
use crate::host::servers::connect::ServerConn;

impl Host {
    /// Asks every server with attached documents to say when one changes.
    pub(in crate::host) fn follow_resource_updates(self: &Arc<Self>) {
        let mut by_server: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for attached in self.attached() {
            by_server
                .entry(attached.server)
                .or_default()
                .push(attached.uri);
        }
        for (prefix, uris) in by_server {
            let Some(conn) = self.server(&prefix) else {
                continue;
            };
            tokio::spawn(async move { subscribe(&conn, uris).await });
        }
    }

    /// A server said the resource at `uri` changed: an attached one is read again before the
    /// next run.
    pub(in crate::host) fn resource_updated(&self, server: &str, uri: &str) {
        let attached = self
            .attached()
            .iter()
            .any(|a| a.server == server && a.uri == uri);
        if attached {
            self.updated
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert((server.to_owned(), uri.to_owned()));
        }
    }

    /// The attached documents their servers said changed, not read again yet (server, URI).
    pub fn documents_changed(&self) -> Vec<(String, String)> {
        self.updated
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .cloned()
            .collect()
    }

    /// Reads again every attached document its server said changed; one that cannot be read
    /// now, or grew past `[limits] attach_max_bytes`, keeps the copy the desk has and is
    /// tried again before the next run.
    pub(in crate::host) async fn read_updated_again(&self) {
        let updated = std::mem::take(&mut *self.updated.lock().unwrap_or_else(|p| p.into_inner()));
        for (server, uri) in updated {
            let Some(conn) = self.server(&server) else {
                continue;
            };
            match self.read_resource(&conn, &uri).await {
                Ok(text) if text.len() <= self.config.limits.attach_max_bytes => {
                    let mut attached = self.attached.write().unwrap_or_else(|p| p.into_inner());
                    for doc in attached
                        .iter_mut()
                        .filter(|a| a.server == server && a.uri == uri)
                    {
                        doc.text = text.clone();
                    }
                    tracing::info!(%server, %uri, "read an attached document again after its server said it changed");
                }
                Ok(text) => {
                    tracing::warn!(%server, %uri, bytes = text.len(), "an attached document grew past the size cap; the desk keeps its earlier copy")
                }
                Err(e) => {
                    tracing::warn!(%server, %uri, error = %e, "could not read a changed document again; trying before the next run");
                    self.updated
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .insert((server, uri));
                }
            }
        }
    }
}

/// `resources/subscribe`, the one way a server older than 2026-07-28 says a resource changed.
#[expect(
    deprecated,
    reason = "servers before 2026-07-28 know no subscriptions/listen"
)]
async fn subscribe_the_older_way(
    peer: &rmcp::Peer<rmcp::RoleClient>,
    uri: &str,
) -> Result<(), rmcp::ServiceError> {
    peer.subscribe(SubscribeRequestParams::new(uri.to_owned()))
        .await
}

/// Asks `conn`'s server to say when any of `uris` changes. What it says reaches the host
/// through the connection's handler, as its other notices do.
async fn subscribe(conn: &ServerConn, uris: Vec<String>) {
    let Ok(live) = conn.live().await else {
        return;
    };
    let Some(info) = live.service.peer_info() else {
        return;
    };
    let subscribes = info
        .capabilities
        .resources
        .as_ref()
        .and_then(|r| r.subscribe)
        == Some(true);
    if !subscribes {
        tracing::info!(server = %conn.prefix, "the server does not say when its resources change; attached documents are read when the desk opens");
        return;
    }
    let peer = live.service.peer().clone();
    if info.protocol_version.has_initialize() {
        for uri in uris {
            if let Err(e) = subscribe_the_older_way(&peer, &uri).await {
                tracing::warn!(server = %conn.prefix, %uri, error = %e, "could not subscribe to an attached document");
            }
        }
        return;
    }
    let filter = SubscriptionFilter::builder()
        .resource_subscriptions(uris)
        .build();
    let mut subscription = match peer.listen(filter).await {
        Ok(subscription) => subscription,
        Err(e) => {
            tracing::warn!(server = %conn.prefix, error = %e, "the server will not say when its resources change");
            return;
        }
    };
    let handler = conn.handler().clone();
    loop {
        match subscription.next().await {
            Ok(Some(ServerNotification::ResourceUpdatedNotification(updated))) => {
                handler.resource_updated(&updated.params.uri);
            }
            Ok(Some(_)) => {}
            Ok(None) => return,
            Err(e) => {
                tracing::warn!(server = %conn.prefix, error = %e, "the server's resource subscription ended");
                return;
            }
        }
    }
}
