//! `support-desk` (or `support-desk desk`): the desk on the terminal, on its embedded default
//! or the config's servers, model and record.

use anyhow::bail;
use clap::Args;
use tokio::sync::mpsc;

use super::CommonArgs;
use crate::host::api::{Command, HostHandle};
use crate::host::events::HostEvent;
use crate::host::task::{Answerers, HostSetup};
use crate::startup::{self, Overrides};

#[derive(Debug, Args, Default)]
pub struct DeskArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// replay:PATH (a recording) or openai:URL (an OpenAI-compatible server).
    #[arg(long, value_name = "SOURCE")]
    pub model: Option<String>,
    /// The model name sent to an OpenAI-compatible server.
    #[arg(long, value_name = "NAME")]
    pub model_name: Option<String>,
    /// Open even when a configured server does not connect (its tools are left out).
    #[arg(long)]
    pub allow_missing: bool,
}

pub async fn execute(args: DeskArgs) -> anyhow::Result<()> {
    let overrides = Overrides {
        model: args.model,
        model_name: args.model_name,
        ..Overrides::default()
    };
    let config = startup::config(args.common.config.as_deref(), &overrides)?;
    let data_dir = startup::desk_data_dir(args.common.data_dir.as_deref())?;
    let _log = crate::logging::to_file(&data_dir.join("logs"))?;
    let model = startup::build_model(&config)?;
    let described = model.describe();
    let review_source = std::path::PathBuf::from(
        config
            .model
            .source
            .strip_prefix("replay:")
            .unwrap_or(crate::recording::reader::BUNDLED),
    );
    let tickets = startup::load_tickets(&config)?;
    let views = crate::views::saved_views(&config.views)?;
    let storage = startup::storage(
        &config,
        args.common.store(),
        data_dir.clone(),
        &startup::staff(),
    )
    .await?;
    let staff = storage.person();
    // On a team the team's saved replies are the last layer: a lead's wins on a name.
    let team_replies = match &storage.record {
        Some(record) => crate::replies::team_layer(&record.team_replies().await?)?,
        None => Default::default(),
    };
    let replies = crate::replies::layered(&config.replies, Some(&data_dir), &team_replies)?
        .into_iter()
        .map(|(reply, _)| reply)
        .collect();
    let lead = match &storage.record {
        Some(record) => record.is_lead().await?,
        None => None,
    };
    let sla = config
        .sla
        .as_ref()
        .map(crate::config::SlaConfig::build)
        .transpose()?;
    let (keymap, theme) = (startup::keymap(&config)?, config.theme.preset);
    let notice = config.approvals.notice;
    // A broken mailbox stops the desk before it opens, in words.
    let mailroom = startup::mailroom(&config)?;
    if let Some(mailroom) = &mailroom {
        startup::check_mailbox(mailroom).await?;
    }
    let mut parts = startup::host_parts(config, model, tickets.clone(), storage, None);
    parts.mailroom = mailroom;
    let mut handle = crate::host::task::spawn(HostSetup {
        parts,
        answerers: Answerers {
            consent: format!("person: {staff}"),
            lead: format!("person: {staff}"),
        },
        notes: Default::default(),
        person_prompt: None,
    });
    if let Err(why) = servers_connected(&mut handle, args.allow_missing).await {
        let _ = handle.commands.send(Command::Shutdown).await;
        while let Some(event) = handle.events.recv().await {
            if matches!(event, HostEvent::Stopped) {
                break;
            }
        }
        bail!("{why}");
    }
    let mut app = crate::ui::app::App::new(tickets, described, staff)
        .with_review_source(review_source)
        .with_record(data_dir.join(crate::record::RECORD_FILE));
    if let Some(sla) = sla {
        app = app.with_sla(sla, crate::clock::unix_ms);
    }
    app = app
        .with_keymap(keymap)
        .with_views(views)
        .with_replies(replies)
        .with_notice(notice);
    crate::ui::theme::set(crate::ui::theme::chosen(
        theme == crate::config::Preset::Light,
        std::env::var_os("NO_COLOR"),
    ));
    if let Some(lead) = lead {
        app = app.on_team(lead);
    }
    crate::ui::terminal::run_desk(handle, app).await
}

/// Waits for the servers as the host connected them, before the terminal is taken: a desk
/// whose shop did not connect would work tickets without its tools and nobody told why, so it
/// opens only when every server connected, or asks for a sign-in (which the desk offers), or
/// when a partial start is allowed. What the host said meanwhile is kept for the desk.
async fn servers_connected(handle: &mut HostHandle, allow_missing: bool) -> Result<(), String> {
    let (kept, events) = mpsc::unbounded_channel();
    let mut from_host = std::mem::replace(&mut handle.events, events);
    let waiting = tokio::time::sleep(std::time::Duration::from_secs(1));
    tokio::pin!(waiting);
    let mut told = false;
    let servers = loop {
        tokio::select! {
            event = from_host.recv() => {
                let Some(event) = event else { break Vec::new() };
                let servers = match &event {
                    HostEvent::Servers(servers) => Some(servers.clone()),
                    _ => None,
                };
                let _ = kept.send(event);
                if let Some(servers) = servers {
                    break servers;
                }
            }
            () = &mut waiting, if !told => {
                told = true;
                use std::io::Write;
                let _ = writeln!(std::io::stderr(), "support-desk: connecting to the desk's servers…");
            }
        }
    };
    tokio::spawn(async move {
        while let Some(event) = from_host.recv().await {
            if kept.send(event).is_err() {
                break;
            }
        }
    });
    let missing: Vec<String> = servers
        .iter()
        .filter(|s| s.sign_in.is_none())
        .filter_map(|s| s.error.clone())
        .collect();
    match missing.is_empty() || allow_missing {
        true => Ok(()),
        false => Err(format!(
            "{}; the desk did not open: fix it, or give --allow-missing to work without it",
            missing.join("; ")
        )),
    }
}

/// The desk and review mode stay open for hours, mostly idle, so their resident memory should
/// be what they touch. mimalloc (the allocator, `src/lib.rs`) asks for transparent huge pages
/// on its arenas, and the kernel's `khugepaged` then fills each partly used 2 MiB region in
/// the background: a desk that had opened a day's record grew by about 9 MiB over its first
/// minute while doing nothing (BENCHMARKS.md, 'The desk's memory on a day's record'). This turns huge pages
/// off for the process and for the servers it starts, which inherit the flag. A kernel that
/// refuses leaves things as they were: nothing but memory depends on it.
pub fn no_huge_pages() {
    #[cfg(target_os = "linux")]
    let _ = rustix::thread::disable_transparent_huge_pages(true);
}
