//! Start-up in one place, from plain values (never clap's types): the config layered with the
//! command line's [`Overrides`], the data directory, the desk's record, the model, the queue
//! and the bundled servers turned into [`HostParts`], and the desk's one-thread runtime.
//! [`crate::cli`] sets up the process and dispatches to [`crate::commands`]; nothing here
//! draws or prints.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, bail};

use crate::config::DeskConfig;
use crate::host::core::{HostParts, Storage};
use crate::host::servers::connect::InProcessServers;
use crate::model::Model;
use crate::model::openai::OpenAiChat;
use crate::record::DeskRecord;
use crate::recording::{Recorder, Recording};
use crate::tickets::Ticket;

/// The model a config names: `replay:PATH` or `openai:URL`.
pub fn build_model(config: &DeskConfig) -> anyhow::Result<Model> {
    let source = config.model.source.as_str();
    if let Some(path) = source.strip_prefix("replay:") {
        let model = Recording::open_model(Path::new(path))
            .with_context(|| format!("loading the recording for {source}"))?;
        return Ok(Model::Replay(model));
    }
    if let Some(url) = source.strip_prefix("openai:") {
        let key = config
            .model
            .api_key_env
            .as_deref()
            .and_then(|var| std::env::var(var).ok());
        return Ok(Model::OpenAi(
            OpenAiChat::new(
                url,
                &config.model.name,
                key,
                config.model.recipe,
                config.model.sampling(),
                config.limits.model_timeout(),
                config.model.ca_file.as_deref(),
            )?
            .streaming(config.model.stream),
        ));
    }
    bail!("model.source \"{source}\" is neither replay:PATH nor openai:URL")
}

/// The tickets a config names.
pub fn load_tickets(config: &DeskConfig) -> anyhow::Result<Vec<Ticket>> {
    Ok(crate::tickets::load(&config.tickets.source)?)
}

/// Where the desk keeps its state: `--data-dir`, `SUPPORT_DESK_DATA_DIR`, or the user's data dir.
pub fn data_dir(explicit: Option<&Path>) -> Option<PathBuf> {
    explicit
        .map(Path::to_path_buf)
        .or_else(|| std::env::var_os("SUPPORT_DESK_DATA_DIR").map(PathBuf::from))
        .or_else(|| {
            directories::ProjectDirs::from("", "", "support-desk")
                .map(|d| d.data_dir().to_path_buf())
        })
}
/// What the command line may change in the config, flag by flag.
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    /// `--model`: `replay:PATH` or `openai:URL`.
    pub model: Option<String>,
    /// `--model-name`.
    pub model_name: Option<String>,
    /// `--recipe`.
    pub recipe: Option<String>,
    /// `--concurrency`.
    pub concurrency: Option<usize>,
}

/// The built-in config, the user's file and `--config`, layered, then the flags.
pub fn config(file: Option<&Path>, overrides: &Overrides) -> anyhow::Result<DeskConfig> {
    let mut config = DeskConfig::load(&crate::config::layered_files(file))?;
    if let Some(model) = &overrides.model {
        config.model.source = model.clone();
    }
    if let Some(name) = &overrides.model_name {
        config.model.name = name.clone();
    }
    if let Some(recipe) = &overrides.recipe {
        config.model.recipe = serde_json::from_value(serde_json::Value::String(recipe.clone()))
            .map_err(|_| {
                anyhow::anyhow!(
                    "--recipe {recipe}: use native_tools, llama_cpp_prefill or text_calls"
                )
            })?;
    }
    if let Some(n) = overrides.concurrency {
        config.limits.concurrency = n.max(1);
    }
    // The keys are checked wherever the config is read, so a clash stops every command.
    keymap(&config)?;
    crate::views::saved_views(&config.views)?;
    crate::replies::load(&config.replies, None)?;
    Ok(config)
}

/// The desk's keys with the config's `[keys]` applied.
pub fn keymap(
    config: &DeskConfig,
) -> Result<crate::ui::keymap::Keymap, crate::ui::keymap::KeysError> {
    crate::ui::keymap::Keymap::with(&config.key_lists())
}

/// Who sits at this desk: `SUPPORT_DESK_STAFF`, else the login name.
pub fn staff() -> String {
    std::env::var("SUPPORT_DESK_STAFF")
        .or_else(|_| std::env::var("USER"))
        .unwrap_or_else(|_| "staff".to_owned())
}

/// The data directory a desk keeps its record in (see [`data_dir`]); created when missing.
pub fn desk_data_dir(explicit: Option<&Path>) -> anyhow::Result<PathBuf> {
    let Some(dir) = data_dir(explicit) else {
        bail!("no home directory to keep the desk's record in; pass --data-dir DIR");
    };
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    Ok(dir)
}

/// The record of an existing desk, for reading it (`queue`, `export`), and its file.
pub fn existing_record(explicit: Option<&Path>) -> anyhow::Result<(DeskRecord, PathBuf)> {
    let Some(dir) = data_dir(explicit) else {
        bail!("no home directory to find the desk's record in; pass --data-dir DIR");
    };
    let path = dir.join(crate::record::RECORD_FILE);
    if !path.exists() {
        bail!(
            "there is no desk record at {}: open the desk there first (support-desk --data-dir {}), or name the right --data-dir",
            path.display(),
            dir.display()
        );
    }
    Ok((DeskRecord::open(&path, None, "reader", &[])?, path))
}

/// The servers this binary carries, for `in_process = "…"` in the config: the parcel
/// partner, and the shop on a database in memory.
pub fn bundled_servers() -> InProcessServers {
    use std::sync::Arc;
    InProcessServers::default()
        .with("partner", || {
            let parcels = Arc::new(crate::partner::Parcels::bundled());
            Ok(crate::serve::in_process(
                crate::partner::PartnerServer::new(parcels),
            ))
        })
        .with("shop", || {
            let world = Arc::new(crate::shop::ShopWorld::bundled());
            let memory = Path::new(":memory:");
            let store =
                crate::shop::SqliteStore::open(memory, &world, crate::shop::QuoteIds::Random)
                    .map_err(|e| e.to_string())?;
            let key: [u8; 32] = rand::random();
            let server = crate::shop::ShopServer::new(world, Arc::new(store), &key)
                .map_err(|e| e.message.to_string())?;
            Ok(crate::serve::in_process(server))
        })
}

/// What the host is made of, with this binary's own servers.
pub fn host_parts(
    config: DeskConfig,
    model: Model,
    tickets: Vec<Ticket>,
    storage: Storage,
    recorder: Option<Recorder>,
) -> HostParts {
    HostParts {
        config,
        model,
        tickets,
        storage,
        recorder,
        servers: bundled_servers(),
        mailroom: None,
    }
}

/// Whether the mailbox can be read now: the Maildir is one, the IMAP account logs in and
/// its folder exists.
pub async fn check_mailbox(mailroom: &crate::mailroom::Mailroom) -> anyhow::Result<()> {
    match &mailroom.inbound {
        crate::mailroom::Inbound::Maildir(dir) => {
            crate::mailroom::maildir::waiting(dir, 0)?;
        }
        crate::mailroom::Inbound::Imap(account) => {
            crate::mail::imap::Imap::connect(account)
                .await?
                .logout()
                .await;
        }
    }
    Ok(())
}

/// The tickets mail opened in `record`, as they stand.
pub async fn mail_tickets(
    config: &DeskConfig,
    record: &crate::record::Record,
) -> anyhow::Result<Vec<Ticket>> {
    let address = config.mail.as_ref().map_or("", |m| m.address.as_str());
    let tickets = std::sync::Mutex::new(crate::mailroom::MailTickets::new(address));
    crate::mailroom::intake::load(record, &tickets).await?;
    let tickets = tickets.into_inner().unwrap_or_else(|p| p.into_inner());
    Ok(tickets.tickets().cloned().collect())
}

/// The mailroom `[mail]` describes, if any; a password the config names must be set.
pub fn mailroom(config: &DeskConfig) -> anyhow::Result<Option<Arc<crate::mailroom::Mailroom>>> {
    let Some(mail) = &config.mail else {
        return Ok(None);
    };
    Ok(Some(Arc::new(crate::mailroom::Mailroom::from_config(
        mail,
    )?)))
}

/// The team's record this desk works on, if any: `--store`, else `[desk] store`. A password
/// the config's `password_env` names is put into the address in memory only.
pub fn team_url(config: &DeskConfig, store: Option<&str>) -> anyhow::Result<Option<String>> {
    let Some(url) = store
        .map(str::to_owned)
        .or_else(|| config.desk.store.clone())
    else {
        return Ok(None);
    };
    let Some(var) = &config.desk.password_env else {
        return Ok(Some(url));
    };
    let password = std::env::var(var)
        .map_err(|_| anyhow::anyhow!("[desk] password_env names {var}, which is not set"))?;
    let Some((scheme, rest)) = url.split_once("://") else {
        bail!("{url} is not a postgres:// address");
    };
    let Some((user, host)) = rest.split_once('@') else {
        bail!("{url} names no person: write postgres://NAME@HOST:PORT/DB");
    };
    let user = user.split(':').next().unwrap_or(user);
    let password = password
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                char::from(b).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect::<String>();
    Ok(Some(format!("{scheme}://{user}:{password}@{host}")))
}

/// The desk's record: the team's when one is named, else the data directory's own file.
pub async fn storage(
    config: &DeskConfig,
    store: Option<&str>,
    data_dir: PathBuf,
    person: &str,
) -> anyhow::Result<Storage> {
    let allow = &config.consent.allow;
    Ok(match team_url(config, store)? {
        Some(url) => Storage::team(&url, data_dir, allow).await?,
        None => Storage::open(data_dir, person, allow)?,
    })
}

/// The runtime of the desk and of every command but `serve`: one thread, which looks at the
/// pipe of a stdio server it awaits a tool call's answer from for a moment before it sleeps
/// ([`crate::wire::busy_poll`]).
pub fn desk_runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .on_thread_park(crate::wire::busy_poll::before_park)
        .build()
}
