//! The command line: what each subcommand takes, and which part of the library runs it.
//! Nothing here builds a host or a server: `startup` does.

use std::io::Write as _;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::bail;
use clap::{Args, Parser, Subcommand};

use crate::headless::{RunOptions, Script};
use crate::host::api::PersonPrompt;
use crate::host::task::{Answerers, HostSetup};
use crate::record::DeskRecord;
use crate::startup::{self, Overrides};

pub use crate::startup::serve::STATE_KEY_ENV;

#[derive(Debug, Parser)]
#[command(
    name = "support-desk",
    version,
    about = "A terminal support desk that is an MCP host"
)]
#[command(args_conflicts_with_subcommands = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    /// The desk's own flags work without the word `desk`: `support-desk --data-dir D`.
    #[command(flatten)]
    pub desk: DeskArgs,
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
        /// Another recording to hold it against: the two runs of each ticket side by side
        /// (`c`), and both runs' figures as a chart (`g`).
        #[arg(long)]
        against: Option<PathBuf>,
    },
    /// Serve one of the bundled MCP servers.
    Serve {
        #[command(subcommand)]
        server: ServeCommand,
    },
    /// Work the ticket queue without a person: scripted consent and lead answers.
    Run(RunArgs),
    /// Connect to every configured server and describe it, with your sign-in to each.
    Servers(CommonArgs),
    /// Sign in to a server that asks for it (OAuth): prints the address to open.
    Login(crate::auth::commands::LoginArgs),
    /// Remove your sign-in to a server.
    Logout(crate::auth::commands::LogoutArgs),
    /// Print every ticket's state as the desk's record has it.
    Queue(QueueArgs),
    /// Write the desk's record as a JSONL recording (for review, summary and replay:).
    Export(ExportArgs),
    /// Set up a team's record in PostgreSQL, and its people.
    Team {
        #[command(subcommand)]
        command: TeamCommand,
    },
    /// List the team's open approvals: forms that wait for a lead.
    Approvals(ApprovalsArgs),
    /// Answer one open approval as the person the store logs in as (a lead who did not ask).
    Approve(ApproveArgs),
    /// Line up two recordings ticket by ticket: their figures, and what each run did differently.
    Compare {
        old: PathBuf,
        new: PathBuf,
        /// Print it as one JSON object.
        #[arg(long)]
        json: bool,
    },
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
    /// A team's record: postgres://NAME@HOST:PORT/DB (the password from PGPASSWORD, a
    /// .pgpass file, or the variable [desk] password_env names; never on the command line).
    #[arg(long, value_name = "URL")]
    pub store: Option<String>,
}

#[derive(Debug, Subcommand)]
pub enum TeamCommand {
    /// Create the schema and the group roles (desk_staff, desk_leads), as an admin role.
    Init {
        /// The admin's address: postgres://ADMIN@HOST:PORT/DB.
        #[arg(long, value_name = "URL")]
        store: String,
    },
    /// Add a person: their own login role, staff or lead.
    Add {
        /// The role's name, which is who the person is at every desk.
        name: String,
        /// A lead, who may also release refunds and take tickets over.
        #[arg(long)]
        lead: bool,
        /// Take the password from this variable; without it one is made and printed once.
        #[arg(long, value_name = "VAR")]
        password_env: Option<String>,
        /// The admin's address: postgres://ADMIN@HOST:PORT/DB.
        #[arg(long, value_name = "URL")]
        store: String,
    },
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
pub struct ApprovalsArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// Print them as one JSON object: {"approvals": [{"id", "ticket", "server", "tool", …}]}.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
#[group(id = "answer", required = true, args = ["accept", "decline", "cancel"])]
pub struct ApproveArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// The approval's ID, as `approvals` lists it.
    pub id: i64,
    /// Accept, with the form's fields from --field (its defaults fill the rest).
    #[arg(long)]
    pub accept: bool,
    /// Decline the form: the server is told no (the shop keeps the refund held).
    #[arg(long)]
    pub decline: bool,
    /// Close the form without an answer: never a yes (the shop keeps the refund held, and the
    /// run that asked goes on from there).
    #[arg(long)]
    pub cancel: bool,
    /// A field of the form, as name=value (with --accept).
    #[arg(long = "field", value_name = "NAME=VALUE", requires = "accept")]
    pub fields: Vec<String>,
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
    /// The scripted lead's answer to every form a server asks (decline when not given). On a
    /// team's record a lead's forms go to the team's leads instead, unless this is given and
    /// the person the store logs in as is a lead.
    #[arg(long, value_enum)]
    pub lead: Option<LeadScript>,
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
    /// The staff roster for --http, instead of SHOP_STAFF_TOKENS: a TOML file of [[staff]]
    /// tables with id, role (staff or lead) and token_env (the variable holding the token).
    #[arg(long, value_name = "FILE", requires = "http")]
    pub staff: Option<PathBuf>,
    /// The SQLite file of record (created and seeded when new), ":memory:", or a
    /// postgres://NAME@HOST:PORT/DB address that replicas share (password from the address or
    /// PGPASSWORD). Default: shop.sqlite3 in the user's data directory.
    #[arg(long, value_name = "PATH|URL")]
    pub db: Option<PathBuf>,
    /// Derive quote IDs from this seed instead of at random, so a recorded run replays.
    /// For replays and tests only: seeded quote IDs can be worked out by anyone.
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    /// Read the shop's world from this directory instead of the bundled one.
    #[arg(long, value_name = "DIR")]
    pub assets: Option<PathBuf>,
    /// With --stdio: how many microseconds to poll stdin for the client's next request after
    /// each answer, before the server's thread sleeps (0: never).
    #[arg(long, value_name = "US", default_value_t = crate::wire::busy_poll::DEFAULT_WINDOW_US)]
    pub busy_poll_us: u64,
    #[command(flatten)]
    pub oauth: Box<crate::shop::oauth::OAuthArgs>,
}

#[derive(Debug, Args)]
pub struct PartnerArgs {
    /// Serve over stdin/stdout.
    #[arg(long, required = true)]
    pub stdio: bool,
    /// Read parcels from this JSON file instead of the bundled ones.
    #[arg(long, value_name = "FILE")]
    pub parcels: Option<PathBuf>,
    /// How many microseconds to poll stdin for the client's next request after each answer,
    /// before the server's thread sleeps (0: never).
    #[arg(long, value_name = "US", default_value_t = crate::wire::busy_poll::DEFAULT_WINDOW_US)]
    pub busy_poll_us: u64,
}

/// Runs the command line and turns any error into a message and exit code 1.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    // ring for any rustls client in the process, not only the desk's own.
    crate::tls::install_default_provider();
    let command = cli.command.unwrap_or(Command::Desk(cli.desk));
    // The desk and review mode own the terminal: their logs go to a file, or nowhere.
    let owns_terminal = matches!(command, Command::Desk(_) | Command::Review { .. });
    if owns_terminal && !has_terminal() {
        let _ = writeln!(
            std::io::stderr(),
            "support-desk: the desk needs a terminal to draw in, and this is not one; \
             to work the queue without one, use `support-desk run` (see --help)"
        );
        return ExitCode::FAILURE;
    }
    if owns_terminal {
        no_huge_pages();
    } else {
        crate::logging::to_stderr();
    }
    let runtime = match runtime_for(&command) {
        Ok(runtime) => runtime,
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(dispatch(command)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if owns_terminal => {
            let _ = writeln!(std::io::stderr(), "support-desk: {}", in_words(&e));
            ExitCode::FAILURE
        }
        Err(e) => {
            tracing::error!("{}", in_words(&e));
            ExitCode::FAILURE
        }
    }
}

/// The desk and review mode stay open for hours, mostly idle, so their resident memory should
/// be what they touch. mimalloc (the allocator, `src/lib.rs`) asks for transparent huge pages
/// on its arenas, and the kernel's `khugepaged` then fills each partly used 2 MiB region in
/// the background: a desk that had opened a day's record grew by about 9 MiB over its first
/// minute while doing nothing (BENCHMARKS.md section 00000000000000). This turns huge pages
/// off for the process and for the servers it starts, which inherit the flag. A kernel that
/// refuses leaves things as they were: nothing but memory depends on it.
fn no_huge_pages() {
    #[cfg(target_os = "linux")]
    let _ = rustix::thread::disable_transparent_huge_pages(true);
}

/// The runtime a command runs on. Serving (`serve … --http`) takes many clients at once and
/// gets a thread per core. Everything else is one person's work, waiting on servers and a
/// model: one thread, so a tool call's messages, its caller and the UI never hand each
/// other across threads (BENCHMARKS.md section 000 measures both for the desk as a whole).
/// Nothing on it blocks for long: a record append takes tens of microseconds (one during a
/// checkpoint, milliseconds), and a stdio server gets a thread of its own
/// ([`crate::serve::stdio`]).
pub fn runtime_for(command: &Command) -> std::io::Result<tokio::runtime::Runtime> {
    match command {
        Command::Serve { .. } => tokio::runtime::Runtime::new(),
        _ => desk_runtime(),
    }
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

/// Whether the desk has a terminal on both ends.
fn has_terminal() -> bool {
    use std::io::IsTerminal;
    std::io::stdin().is_terminal() && std::io::stdout().is_terminal()
}

/// An error and its causes, each said once: a message that already quotes its cause (many
/// do, to be read alone) has said that cause and everything beneath it.
pub fn in_words(error: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in error.chain() {
        let cause = cause.to_string();
        if text.contains(&cause) {
            break;
        }
        if !text.is_empty() {
            text.push_str(": ");
        }
        text.push_str(&cause);
    }
    text
}

async fn dispatch(command: Command) -> anyhow::Result<()> {
    match command {
        Command::Desk(args) => run_desk(args).await,
        Command::Review { path, against } => run_review(&path, against.as_deref()).await,
        Command::Serve { server } => crate::startup::serve::serve(server).await,
        Command::Run(args) => run(args).await,
        Command::Queue(args) => queue(args).await,
        Command::Login(args) => crate::auth::commands::login(args).await,
        Command::Logout(args) => crate::auth::commands::logout(args).await,
        Command::Team { command } => team(command).await,
        Command::Approvals(args) => approvals(args).await,
        Command::Approve(args) => approve(args).await,
        Command::Export(args) => {
            let (record, _) = startup::existing_record(args.common.data_dir.as_deref())?;
            let count = crate::record::export(&record, &args.out)?;
            write_stdout(&format!(
                "{count} events written to {}\n",
                args.out.display()
            ))
        }
        Command::Compare { old, new, json } => write_stdout(&format!(
            "{}\n",
            crate::recording::compare::run(
                &startup::recording_path(&old.to_string_lossy()),
                &startup::recording_path(&new.to_string_lossy()),
                json
            )?
        )),
        Command::Summary { path, json } => {
            let summary =
                crate::headless::summarize(&startup::recording_path(&path.to_string_lossy()))?;
            let text = if json {
                serde_json::to_string(&summary)?
            } else {
                summary.to_text()
            };
            write_stdout(&format!("{text}\n"))
        }
        Command::Servers(args) => {
            let config = startup::config(args.config.as_deref(), &Overrides::default())?;
            let data_dir = startup::data_dir(args.data_dir.as_deref());
            write_stdout(&crate::headless::servers(config, data_dir).await?)
        }
    }
}

async fn run_desk(args: DeskArgs) -> anyhow::Result<()> {
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
    let review_source = startup::recording_path(
        config
            .model
            .source
            .strip_prefix("replay:")
            .unwrap_or("recordings/ticket-runs"),
    );
    let tickets = startup::load_tickets(&config)?;
    let storage =
        startup::storage(&config, &args.common, data_dir.clone(), &startup::staff()).await?;
    let staff = storage.person();
    let lead = match &storage.record {
        Some(record) => record.is_lead().await?,
        None => None,
    };
    let handle = crate::host::task::spawn(HostSetup {
        parts: startup::host_parts(config, model, tickets.clone(), storage, None),
        answerers: Answerers {
            consent: format!("person: {staff}"),
            lead: format!("person: {staff}"),
        },
        notes: Default::default(),
        person_prompt: None,
    });
    let mut app = crate::ui::app::App::new(tickets, described, staff)
        .with_review_source(review_source)
        .with_record(data_dir.join(crate::record::RECORD_FILE));
    if let Some(lead) = lead {
        app = app.on_team(lead);
    }
    crate::ui::terminal::run_desk(handle, app).await
}

async fn run_review(
    path: &std::path::Path,
    against: Option<&std::path::Path>,
) -> anyhow::Result<()> {
    let open = |path: &std::path::Path| {
        crate::recording::review::Review::open(&startup::recording_path(&path.to_string_lossy()))
    };
    let screen = match against {
        Some(other) => crate::ui::review::ReviewScreen::against(open(path)?, open(other)?),
        None => crate::ui::review::ReviewScreen::new(open(path)?),
    };
    crate::ui::terminal::run_review(screen).await
}

async fn queue(args: QueueArgs) -> anyhow::Result<()> {
    let config = startup::config(args.common.config.as_deref(), &Overrides::default())?;
    let tickets = startup::load_tickets(&config)?;
    let allow = &config.consent.allow;
    let rows = match startup::team_url(&config, &args.common)? {
        Some(url) => {
            let record = crate::record::Record::team(&url, allow).await?;
            let owners = record.owners().await?;
            let mut rows = crate::record::queue(&tickets, &record.states().await?, true, allow);
            crate::record::with_owners(&mut rows, &owners, crate::record::store::now_ms());
            rows
        }
        None => {
            let (record, path) = startup::existing_record(args.common.data_dir.as_deref())?;
            let in_use = DeskRecord::in_use(&path);
            crate::record::queue(&tickets, &record.states()?, in_use, allow)
        }
    };
    let text = if args.json {
        format!("{}\n", serde_json::json!({ "tickets": rows }))
    } else {
        crate::record::queue_text(&rows)
    };
    write_stdout(&text)
}

async fn approvals(args: ApprovalsArgs) -> anyhow::Result<()> {
    let config = startup::config(args.common.config.as_deref(), &Overrides::default())?;
    let store = needs_store(&config, &args.common)?;
    write_stdout(&crate::headless::approvals::list(&config, &store, args.json).await?)
}

async fn approve(args: ApproveArgs) -> anyhow::Result<()> {
    use crate::headless::approvals::Answer;
    let config = startup::config(args.common.config.as_deref(), &Overrides::default())?;
    let store = needs_store(&config, &args.common)?;
    let answer = if args.accept {
        Answer::Accept(pairs("--field", &args.fields)?)
    } else if args.decline {
        Answer::Decline
    } else {
        Answer::Cancel
    };
    let said = crate::headless::approvals::approve(
        config,
        &store,
        args.common.data_dir.clone(),
        args.id,
        answer,
    )
    .await?;
    write_stdout(&said)
}

/// The team's record a command needs: approvals live only there.
fn needs_store(config: &crate::config::DeskConfig, common: &CommonArgs) -> anyhow::Result<String> {
    startup::team_url(config, common)?.ok_or_else(|| {
        anyhow::anyhow!(
            "approvals live in a team's record: give --store postgres://NAME@HOST:PORT/DB (or [desk] store in the config)"
        )
    })
}

async fn run(args: RunArgs) -> anyhow::Result<()> {
    let overrides = Overrides {
        model: args.model,
        model_name: args.model_name,
        recipe: args.recipe,
        concurrency: args.concurrency,
    };
    let config = startup::config(args.common.config.as_deref(), &overrides)?;
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
            accept_forms: matches!(args.lead, Some(LeadScript::Accept)),
        },
        lead_given: args.lead.is_some(),
        record: args.record,
        store: startup::team_url(&config, &args.common)?,
        data_dir: args.common.data_dir.clone(),
        notes: pairs("--note", &args.notes)?,
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

async fn team(command: TeamCommand) -> anyhow::Result<()> {
    match command {
        TeamCommand::Init { store } => {
            crate::record::postgres::team_init(&store).await?;
            write_stdout(
                "the team's record is set up: add people with `support-desk team add NAME --store URL`\n",
            )
        }
        TeamCommand::Add {
            name,
            lead,
            password_env,
            store,
        } => {
            let given = match &password_env {
                Some(var) => Some(std::env::var(var).map_err(|_| {
                    anyhow::anyhow!("--password-env {var}: the variable is not set")
                })?),
                None => None,
            };
            let password =
                crate::record::postgres::team_add(&store, &name, lead, given.clone()).await?;
            let role = if lead { "a lead" } else { "staff" };
            let text = match given {
                Some(_) => format!(
                    "{name} is {role}, with the password from {}\n",
                    password_env.unwrap_or_default()
                ),
                None => format!("{name} is {role}; their password (shown once): {password}\n"),
            };
            write_stdout(&text)
        }
    }
}
