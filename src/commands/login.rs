//! `support-desk login PREFIX`: signing in to a server that asks for it, and each server's
//! sign-in state for `support-desk servers`.

use std::path::Path;
use std::sync::Arc;

use anyhow::{Context as _, bail};
use clap::Args;

use super::CommonArgs;
use crate::auth::{GrantSummary, Loopback, Target, challenge_of, sign_in};
use crate::config::{DeskConfig, ServerConfig};
use crate::startup::{self, Overrides};

#[derive(Debug, Args)]
pub struct LoginArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// The server's prefix in the config (`shop`).
    pub prefix: String,
    /// Open the sign-in page in the browser too (otherwise only its URL is printed).
    #[arg(long)]
    pub open: bool,
}

/// Signs the person in to one server: prints the URL to open, waits for the browser to come
/// back to the loopback redirect, keeps the grant, and checks that the server accepts it.
pub async fn execute(args: LoginArgs) -> anyhow::Result<()> {
    let (config, data_dir) = setup(&args.common)?;
    let (server, target) = target(&config, &args.prefix, &data_dir)?;
    let http = crate::tls::http_client_builder(server.ca_file.as_deref())?
        .build()
        .context("building the HTTP client")?;
    let challenge = challenge_of(&target.url, &http)
        .await
        .map_err(anyhow::Error::msg)?;
    let prefix = args.prefix.clone();
    let show: crate::auth::visit::Show = Arc::new(move |url: &str| {
        say(&format!(
            "To sign in to '{prefix}', open this address in your browser:\n\n  {url}\n\nWaiting for the browser to come back…\n"
        ));
    });
    let loopback = Loopback::bind(show, args.open)
        .await
        .context("listening for the browser on 127.0.0.1")?;
    sign_in(&target, challenge.as_deref(), &loopback).await?;
    let state = state_words(target.store.summary()?.as_ref());
    say(&format!("Signed in to '{}': {state}\n", args.prefix));
    let tools = check(&args.prefix, &server, &data_dir).await?;
    say(&format!("'{}' accepts it: {tools} tools\n", args.prefix));
    Ok(())
}

/// `  sign-in: …` for `servers`: the server's sign-in state, or nothing for a server that
/// is not reached over HTTP.
pub fn state_line(prefix: &str, server: &ServerConfig, data_dir: Option<&Path>) -> Option<String> {
    server.url.as_ref()?;
    if let Some(var) = &server.bearer_token_env {
        return Some(format!("  sign-in: a static token from {var}"));
    }
    let data_dir = data_dir?;
    let words = match Target::for_server(prefix, server, data_dir) {
        Err(e) => e,
        Ok(None) => return None,
        Ok(Some(target)) => match target.store.summary() {
            Err(e) => format!("the grant cannot be read ({e})"),
            Ok(None) => format!(
                "not signed in (if it asks: {})",
                crate::auth::login_command(prefix)
            ),
            Ok(Some(summary)) => state_words(Some(&summary)),
        },
    };
    Some(format!("  sign-in: {words}"))
}

/// `signed in as staff-0007 · scopes mcp shop:lead · expires 2026-12-01 12:00 UTC (refreshed
/// when it does)`.
fn state_words(summary: Option<&GrantSummary>) -> String {
    let Some(summary) = summary else {
        return "not signed in".to_owned();
    };
    let mut words = match &summary.subject {
        Some(subject) => format!("signed in as {}", crate::ui::sanitize::one_line(subject)),
        None => "signed in".to_owned(),
    };
    if !summary.scopes.is_empty() {
        words.push_str(&format!(" · scopes {}", summary.scopes.join(" ")));
    }
    if let Some(at) = summary.expires_at {
        let at = i64::try_from(at).unwrap_or(i64::MAX);
        let civil = crate::clock::Civil::from_unix(at);
        words.push_str(&format!(
            " · expires {:04}-{:02}-{:02} {:02}:{:02} UTC",
            civil.year, civil.month, civil.day, civil.hour, civil.minute
        ));
    }
    words.push_str(if summary.refreshable {
        " (refreshed when it does)"
    } else {
        " (then sign in again)"
    });
    words
}

pub(super) fn setup(common: &CommonArgs) -> anyhow::Result<(DeskConfig, std::path::PathBuf)> {
    let config = startup::config(common.config.as_deref(), &Overrides::default())?;
    let data_dir = startup::desk_data_dir(common.data_dir.as_deref())?;
    Ok((config, data_dir))
}

pub(super) fn target(
    config: &DeskConfig,
    prefix: &str,
    data_dir: &Path,
) -> anyhow::Result<(ServerConfig, Target)> {
    let Some(server) = config.servers.get(prefix) else {
        bail!(
            "there is no server '{prefix}' in the config; the servers are {}",
            config
                .servers
                .keys()
                .cloned()
                .collect::<Vec<_>>()
                .join(", ")
        );
    };
    if let Some(var) = &server.bearer_token_env {
        bail!(
            "server '{prefix}' uses a static token from {var}; remove bearer_token_env from \
             [servers.{prefix}] to sign in with OAuth instead"
        );
    }
    match Target::for_server(prefix, server, data_dir).map_err(anyhow::Error::msg)? {
        Some(target) => Ok((server.clone(), target)),
        None => bail!("server '{prefix}' is not reached over HTTP (url = …), so it has no sign-in"),
    }
}

/// Connects once with the new grant, never starting another sign-in: the tools it lists.
async fn check(prefix: &str, server: &ServerConfig, data_dir: &Path) -> anyhow::Result<usize> {
    let (questions, _asked) = tokio::sync::mpsc::channel(1);
    let reach = crate::host::servers::connect::Reach {
        data_dir: Some(data_dir.to_owned()),
        connect_timeout: crate::host::servers::connect::CONNECT_TIMEOUT,
        ..Default::default()
    };
    let conn =
        crate::host::servers::connect::ServerConn::connect_with(prefix, server, questions, reach)
            .await?;
    let tools = conn.current().await.map_or(0, |live| live.tools.len());
    conn.forget().await;
    Ok(tools)
}

/// Tells the person, on stdout (cleaned, as every command's output); a closed stdout is no
/// reason to stop a sign-in.
pub(super) fn say(text: &str) {
    let _ = super::write_stdout(text);
}
