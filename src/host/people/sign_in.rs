//! A person at the desk signing in to a server that asked for it: the address to open goes
//! to the desk as an event, the browser comes back to a loopback listener, and the server
//! joins the desk's others without a restart (its tools are offered from the next ticket).

use std::sync::Arc;

use crate::auth::{Loopback, Target, challenge_of, sign_in};
use crate::host::core::{Host, summary_of};
use crate::host::events::HostEvent;
use crate::host::servers::connect::{Reach, ServerConn};

impl Host {
    /// Signs the person in to `prefix` and connects it. The error, in words, otherwise.
    pub async fn sign_in(&self, prefix: &str) -> Result<(), String> {
        if self.server(prefix).is_some() {
            return Err(format!("'{prefix}' is connected already"));
        }
        let Some(server) = self.config.servers.get(prefix) else {
            return Err(format!("there is no server '{prefix}'"));
        };
        let Some(data_dir) = self.data_dir.clone() else {
            return Err("this desk keeps no data directory, so it cannot keep a sign-in".into());
        };
        let target = Target::for_server(prefix, server, &data_dir)?
            .ok_or_else(|| format!("'{prefix}' is not reached over HTTP, so it has no sign-in"))?;
        let http = crate::tls::http_client_builder(server.ca_file.as_deref())
            .map_err(|e| e.to_string())?
            .build()
            .map_err(|e| e.to_string())?;
        let challenge = challenge_of(&target.url, &http).await?;
        let events = self.events.clone();
        let server_name = prefix.to_owned();
        let show = Arc::new(move |url: &str| {
            let _ = events.send(HostEvent::SignInOpen {
                server: server_name.clone(),
                url: url.to_owned(),
            });
        });
        let loopback = Loopback::bind(show, false)
            .await
            .map_err(|e| format!("cannot listen for the browser on 127.0.0.1: {e}"))?;
        sign_in(&target, challenge.as_deref(), &loopback)
            .await
            .map_err(|e| e.to_string())?;
        self.join(prefix).await
    }

    /// Connects a server that was left out, now that the person signed in.
    async fn join(&self, prefix: &str) -> Result<(), String> {
        let Some(server) = self.config.servers.get(prefix) else {
            return Err(format!("there is no server '{prefix}'"));
        };
        let reach = Reach {
            data_dir: self.data_dir.clone(),
            connect_timeout: self.config.limits.connect_timeout(),
            builtins: self.builtins.clone(),
            notices: Some(self.notices.clone()),
            ..Reach::default()
        };
        let conn = ServerConn::connect_with(prefix, server, self.questions.clone(), reach)
            .await
            .map_err(|e| e.to_string())?;
        let summary = summary_of(&conn).await;
        self.servers
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .push(Arc::new(conn));
        let summaries = {
            let mut summaries = self.summaries.write().unwrap_or_else(|p| p.into_inner());
            summaries.retain(|s| s.prefix != prefix);
            summaries.push(summary);
            summaries.sort_by(|a, b| a.prefix.cmp(&b.prefix));
            summaries.clone()
        };
        let _ = self.events.send(HostEvent::Servers(summaries));
        Ok(())
    }
}
