//! The command line: `support-desk serve shop|partner …`.

use std::io::Write as _;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, bail};
use clap::{Args, Parser, Subcommand};
use tokio_util::sync::CancellationToken;

use crate::config::{DeskConfig, layered_files};
use crate::headless::{RunOptions, Script};
use crate::host::api::PersonPrompt;
use crate::host::core::Storage;
use crate::partner::{Parcels, PartnerServer};
use crate::record::DeskRecord;
use crate::shop::http::{StaffTokens, TOKENS_ENV};
use crate::shop::{QuoteIds, ShopServer, ShopWorld, Store};

/// The environment variable that may hold the key signing the shop's `requestState`
/// (32 bytes or more). HTTP replicas behind one address must share it.
pub const STATE_KEY_ENV: &str = "SHOP_REQUEST_STATE_KEY";

#[derive(Debug, Parser)]
#[command(
    name = "support-desk",
    version,
    about = "A terminal support desk that is an MCP host"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// The desk (what runs with no subcommand).
    Desk(DeskArgs),
    /// Open a recorded run read-only and step through it turn by turn.
    Review {
        /// The recording (a directory of .jsonl batches, or one .jsonl file).
        #[arg(default_value = "recordings/ticket-runs")]
        path: PathBuf,
    },
    /// Serve one of the bundled MCP servers.
    Serve {
        #[command(subcommand)]
        server: ServeCommand,
    },
    /// Work the ticket queue without a person: scripted consent and lead answers.
    Run(RunArgs),
    /// Connect to every configured server and describe it.
    Servers(CommonArgs),
    /// Print every ticket's state as the desk's record has it.
    Queue(QueueArgs),
    /// Write the desk's record as a JSONL recording (for review, summary and replay:).
    Export(ExportArgs),
    /// Print the summary of a recorded run, computed from the recording alone.
    Summary {
        /// The recording (a directory of .jsonl batches, or one .jsonl file).
        path: PathBuf,
        /// Print it as one JSON object.
        #[arg(long)]
        json: bool,
    },
}

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
}

#[derive(Debug, Args, Default)]
pub struct CommonArgs {
    /// A config file overriding the built-in default (and the one in your config directory).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Where pins, remembered server revisions and desk state live.
    #[arg(long, value_name = "DIR")]
    pub data_dir: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct QueueArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// Print it as one JSON object: {"tickets": [{"id", "state", "by", "at", "reason", "sent"}]}.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ExportArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// The .jsonl file to write (never overwritten).
    pub out: PathBuf,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// Work only these tickets (comma-separated IDs).
    #[arg(long, value_delimiter = ',', value_name = "IDS")]
    pub tickets: Vec<String>,
    /// replay:PATH (a recording) or openai:URL (an OpenAI-compatible server).
    #[arg(long, value_name = "SOURCE")]
    pub model: Option<String>,
    /// The model name sent to an OpenAI-compatible server.
    #[arg(long, value_name = "NAME")]
    pub model_name: Option<String>,
    /// How requests are shaped: native_tools, llama_cpp_prefill, text_calls.
    #[arg(long, value_name = "RECIPE")]
    pub recipe: Option<String>,
    /// The scripted person's answer to every consent question.
    #[arg(long, value_enum, default_value = "approve")]
    pub consent: ConsentScript,
    /// The scripted lead's answer to every form a server asks.
    #[arg(long, value_enum, default_value = "decline")]
    pub lead: LeadScript,
    /// Tickets worked at once.
    #[arg(long, value_name = "N")]
    pub concurrency: Option<usize>,
    /// Record the run (append-only JSONL) at PATH (a directory, or a .jsonl file).
    #[arg(long, value_name = "PATH")]
    pub record: Option<PathBuf>,
    /// Continue the recorded run at PATH that was stopped (a crash, kill -9): work only its
    /// tickets without a ticket_done, appending to it, and never again one that may already
    /// have changed something (those go to a person). Give the flags the run was started
    /// with; the summary covers the whole recording.
    #[arg(long, value_name = "PATH", conflicts_with = "record")]
    pub resume: Option<PathBuf>,
    /// Facts for the recording's manifest, as key=value (model_file, model_sha256, runtime, …).
    #[arg(long = "note", value_name = "KEY=VALUE")]
    pub notes: Vec<String>,
    /// Work each ticket as a person at the desk who ran this server prompt for it
    /// (`shop.refund_order`); its arguments come from --prompt-arg.
    #[arg(long, value_name = "PREFIX.PROMPT", conflicts_with = "resume")]
    pub prompt: Option<String>,
    /// An argument for --prompt, as name=value.
    #[arg(long = "prompt-arg", value_name = "NAME=VALUE", requires = "prompt")]
    pub prompt_args: Vec<String>,
    /// Print the summary as one JSON object.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum ConsentScript {
    Approve,
    Decline,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum LeadScript {
    Accept,
    Decline,
}

#[derive(Debug, Subcommand)]
pub enum ServeCommand {
    /// The shop's server, `shop-support`: orders, products, refunds, policies.
    Shop(ShopArgs),
    /// The delivery partner's server, `partner-tracking`: parcel tracking.
    Partner(PartnerArgs),
}

#[derive(Debug, Args)]
pub struct ShopArgs {
    /// Serve over stdin/stdout (for a host that starts this as a child process).
    #[arg(long, conflicts_with = "http", required_unless_present = "http")]
    pub stdio: bool,
    /// Serve Streamable HTTP at http://ADDR/mcp; staff tokens come from SHOP_STAFF_TOKENS.
    #[arg(long, value_name = "ADDR")]
    pub http: Option<SocketAddr>,
    /// The SQLite file of record (created and seeded when new), or ":memory:".
    /// Default: shop.sqlite3 in the user's data directory.
    #[arg(long, value_name = "PATH")]
    pub db: Option<PathBuf>,
    /// Derive quote IDs from this seed instead of at random, so a recorded run replays.
    /// For replays and tests only: seeded quote IDs can be worked out by anyone.
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    /// Read the shop's world from this directory instead of the bundled one.
    #[arg(long, value_name = "DIR")]
    pub assets: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct PartnerArgs {
    /// Serve over stdin/stdout.
    #[arg(long, required = true)]
    pub stdio: bool,
    /// Read parcels from this JSON file instead of the bundled ones.
    #[arg(long, value_name = "FILE")]
    pub parcels: Option<PathBuf>,
}

/// Runs the command line and turns any error into a message and exit code 1.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    // ring for any rustls client in the process, not only the desk's own.
    crate::tls::install_default_provider();
    let command = cli.command.unwrap_or(Command::Desk(DeskArgs::default()));
    // The desk and review mode own the terminal: their logs go to a file, or nowhere.
    let owns_terminal = matches!(command, Command::Desk(_) | Command::Review { .. });
    if !owns_terminal {
        crate::logging::to_stderr();
    }
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(dispatch(command)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if owns_terminal => {
            let _ = writeln!(std::io::stderr(), "support-desk: {e:#}");
            ExitCode::FAILURE
        }
        Err(e) => {
            tracing::error!("{e:#}");
            ExitCode::FAILURE
        }
    }
}

async fn run_desk(args: DeskArgs) -> anyhow::Result<()> {
    let mut config = DeskConfig::load(&layered_files(args.common.config.as_deref()))?;
    if let Some(model) = args.model {
        config.model.source = model;
    }
    if let Some(name) = args.model_name {
        config.model.name = name;
    }
    let data_dir = desk_data_dir(args.common.data_dir.as_deref())?;
    let _log = crate::logging::to_file(&data_dir.join("logs"))?;
    let model = crate::headless::build_model(&config)?;
    let described = model.describe();
    let source = config.model.source.clone();
    let tickets = crate::headless::load_tickets(&config)?;
    let staff = std::env::var("SUPPORT_DESK_STAFF")
        .or_else(|_| std::env::var("USER"))
        .unwrap_or_else(|_| "staff".to_owned());
    let storage = Storage::open(data_dir.clone(), &staff, &config.consent.allow)?;
    let handle = crate::host::task::spawn(crate::host::task::HostSetup {
        config,
        model,
        tickets: tickets.clone(),
        storage,
        recorder: None,
        answerers: crate::host::task::Answerers {
            consent: format!("person: {staff}"),
            lead: format!("person: {staff}"),
        },
        notes: Default::default(),
        person_prompt: None,
    });
    let review_source = crate::headless::recording_path(
        source
            .strip_prefix("replay:")
            .unwrap_or("recordings/ticket-runs"),
    );
    let app = crate::ui::app::App::new(tickets, described, staff)
        .with_review_source(review_source)
        .with_record(data_dir.join(crate::record::RECORD_FILE));
    crate::ui::terminal::run_desk(handle, app).await
}

async fn run_review(path: &std::path::Path) -> anyhow::Result<()> {
    let path = crate::headless::recording_path(&path.to_string_lossy());
    let review = crate::recording::review::Review::open(&path)?;
    crate::ui::terminal::run_review(crate::ui::review::ReviewScreen::new(review)).await
}

async fn dispatch(command: Command) -> anyhow::Result<()> {
    match command {
        Command::Desk(args) => run_desk(args).await,
        Command::Review { path } => run_review(&path).await,
        Command::Serve { server } => serve(server).await,
        Command::Run(args) => run(args).await,
        Command::Queue(args) => queue(args),
        Command::Export(args) => {
            let (record, _) = existing_record(args.common.data_dir.as_deref())?;
            let count = crate::record::export(&record, &args.out)?;
            write_stdout(&format!(
                "{count} events written to {}\n",
                args.out.display()
            ))
        }
        Command::Summary { path, json } => {
            let summary = crate::headless::summarize(&crate::headless::recording_path(
                &path.to_string_lossy(),
            ))?;
            let text = if json {
                serde_json::to_string(&summary)?
            } else {
                summary.to_text()
            };
            write_stdout(&format!("{text}\n"))
        }
        Command::Servers(args) => {
            let config = DeskConfig::load(&layered_files(args.config.as_deref()))?;
            let text = crate::headless::servers(
                config,
                crate::headless::data_dir(args.data_dir.as_deref()),
            )
            .await?;
            write_stdout(&text)
        }
    }
}

/// The data directory a desk keeps its record in: `--data-dir`, `SUPPORT_DESK_DATA_DIR`, or
/// the user's data directory; created when missing.
fn desk_data_dir(explicit: Option<&std::path::Path>) -> anyhow::Result<PathBuf> {
    let Some(dir) = crate::headless::data_dir(explicit) else {
        bail!("no home directory to keep the desk's record in; pass --data-dir DIR");
    };
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    Ok(dir)
}

/// The record of an existing desk, for reading it (`queue`, `export`).
fn existing_record(explicit: Option<&std::path::Path>) -> anyhow::Result<(DeskRecord, PathBuf)> {
    let Some(dir) = crate::headless::data_dir(explicit) else {
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

fn queue(args: QueueArgs) -> anyhow::Result<()> {
    let config = DeskConfig::load(&layered_files(args.common.config.as_deref()))?;
    let tickets = crate::headless::load_tickets(&config)?;
    let (record, path) = existing_record(args.common.data_dir.as_deref())?;
    let in_use = DeskRecord::in_use(&path);
    let rows = crate::record::queue(&tickets, &record.states()?, in_use, &config.consent.allow);
    let text = if args.json {
        format!("{}\n", serde_json::json!({ "tickets": rows }))
    } else {
        crate::record::queue_text(&rows)
    };
    write_stdout(&text)
}

async fn run(args: RunArgs) -> anyhow::Result<()> {
    let mut config = DeskConfig::load(&layered_files(args.common.config.as_deref()))?;
    if let Some(model) = args.model {
        config.model.source = model;
    }
    if let Some(name) = args.model_name {
        config.model.name = name;
    }
    if let Some(recipe) = args.recipe {
        config.model.recipe = serde_json::from_value(serde_json::Value::String(recipe.clone()))
            .map_err(|_| {
                anyhow::anyhow!(
                    "--recipe {recipe}: use native_tools, llama_cpp_prefill or text_calls"
                )
            })?;
    }
    if let Some(n) = args.concurrency {
        config.limits.concurrency = n.max(1);
    }
    let notes = pairs("--note", &args.notes)?;
    let prompt = match args.prompt {
        Some(name) => Some(PersonPrompt {
            name,
            arguments: pairs("--prompt-arg", &args.prompt_args)?,
        }),
        None => None,
    };
    let options = RunOptions {
        tickets: args.tickets,
        prompt,
        script: Script {
            approve_consent: matches!(args.consent, ConsentScript::Approve),
            accept_forms: matches!(args.lead, LeadScript::Accept),
        },
        record: args.record,
        data_dir: args.common.data_dir.clone(),
        notes,
    };
    let (summary, for_person) = match &args.resume {
        Some(path) => {
            let resumed = crate::headless::resume(config, options, path).await?;
            (resumed.summary, resumed.for_person)
        }
        None => (crate::headless::run(config, options).await?, vec![]),
    };
    let text = if args.json {
        serde_json::to_string(&summary)?
    } else {
        let mut text = summary.to_text();
        for person in &for_person {
            text.push_str(&format!(
                "\nhanded to a person: {}: {}",
                person.ticket, person.reason
            ));
        }
        text
    };
    write_stdout(&format!("{text}\n"))
}

/// `key=value` flags as a map; `flag` names them in the error.
fn pairs(
    flag: &str,
    written: &[String],
) -> anyhow::Result<std::collections::BTreeMap<String, String>> {
    written
        .iter()
        .map(|pair| match pair.split_once('=') {
            Some((key, value)) => Ok((key.to_owned(), value.to_owned())),
            None => bail!("{flag} {pair}: write key=value"),
        })
        .collect()
}

/// stdout is the report's here: no terminal UI and no JSON-RPC is running on it.
fn write_stdout(text: &str) -> anyhow::Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(())
}

async fn serve(command: ServeCommand) -> anyhow::Result<()> {
    match command {
        ServeCommand::Shop(args) => serve_shop(args).await,
        ServeCommand::Partner(args) => {
            let parcels = match &args.parcels {
                Some(path) => {
                    let text = std::fs::read_to_string(path)
                        .with_context(|| format!("reading {}", path.display()))?;
                    Parcels::parse(&text).with_context(|| format!("parsing {}", path.display()))?
                }
                None => Parcels::bundled(),
            };
            tracing::info!(parcels = parcels.len(), "partner-tracking serving on stdio");
            crate::serve::stdio(PartnerServer::new(Arc::new(parcels))).await?;
            Ok(())
        }
    }
}

async fn serve_shop(args: ShopArgs) -> anyhow::Result<()> {
    let world = match &args.assets {
        Some(dir) => ShopWorld::from_dir(dir)?,
        None => ShopWorld::bundled(),
    };
    let db = match args.db {
        Some(path) => path,
        None => default_db_path()?,
    };
    let ids = args.seed.map_or(QuoteIds::Random, QuoteIds::Seeded);
    if let QuoteIds::Seeded(seed) = ids {
        tracing::warn!(seed, "quote IDs are seeded: for replays and tests only");
    }
    let store = Store::open(&db, &world, ids)
        .with_context(|| format!("opening the shop's database {}", db.display()))?;
    let server = ShopServer::new(Arc::new(world), Arc::new(store), &state_key()?)?;
    if let Some(addr) = args.http {
        let tokens = StaffTokens::parse(&std::env::var(TOKENS_ENV).unwrap_or_default())?;
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .with_context(|| format!("cannot listen on {addr}"))?;
        let shutdown = CancellationToken::new();
        let on_signal = shutdown.clone();
        tokio::spawn(async move {
            let _ = tokio::signal::ctrl_c().await;
            on_signal.cancel();
        });
        tracing::info!(addr = %listener.local_addr()?, db = %db.display(), "shop-support serving Streamable HTTP at /mcp");
        crate::shop::http::serve(listener, server, tokens, shutdown).await?;
    } else {
        tracing::info!(db = %db.display(), "shop-support serving on stdio");
        crate::serve::stdio(server).await?;
    }
    Ok(())
}

fn default_db_path() -> anyhow::Result<PathBuf> {
    let Some(dirs) = directories::ProjectDirs::from("", "", "support-desk") else {
        bail!("no home directory to keep the shop's database in; pass --db PATH");
    };
    std::fs::create_dir_all(dirs.data_dir())
        .with_context(|| format!("creating {}", dirs.data_dir().display()))?;
    Ok(dirs.data_dir().join("shop.sqlite3"))
}

/// The key that signs lead-form state: from the environment when replicas share one,
/// otherwise fresh for this process (forms then do not survive a restart, which is safe).
fn state_key() -> anyhow::Result<Vec<u8>> {
    match std::env::var(STATE_KEY_ENV) {
        Ok(key) if key.len() >= 32 => Ok(key.into_bytes()),
        Ok(_) => bail!("{STATE_KEY_ENV} must be at least 32 characters"),
        Err(_) => Ok(rand::random::<[u8; 32]>().to_vec()),
    }
}
