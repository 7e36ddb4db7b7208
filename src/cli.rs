//! The command line: clap's view of every subcommand, and the process around it (the
//! terminal check, where logs go, the runtime). Each subcommand's arguments and body live in
//! [`crate::commands`]; nothing here builds a host or a server.

use std::io::Write as _;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::commands;

pub use crate::commands::serve::STATE_KEY_ENV;

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
    pub desk: commands::desk::DeskArgs,
    /// Log lines on stderr for a command without a terminal of its own (the servers always
    /// log there; the desk logs to its data directory).
    #[arg(short, long, global = true)]
    pub verbose: bool,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// The desk (what runs with no subcommand).
    Desk(commands::desk::DeskArgs),
    /// Open a recorded run read-only and step through it turn by turn.
    Review(commands::review::ReviewArgs),
    /// Serve one of the bundled MCP servers.
    Serve {
        #[command(subcommand)]
        server: commands::serve::ServeCommand,
    },
    /// Work the ticket queue without a person: scripted consent and lead answers.
    Run(commands::run::RunArgs),
    /// Connect to every configured server and describe it, with your sign-in to each.
    Servers(commands::servers::ServersArgs),
    /// Sign in to a server that asks for it (OAuth): prints the address to open.
    Login(commands::login::LoginArgs),
    /// Remove your sign-in to a server.
    Logout(commands::logout::LogoutArgs),
    /// Print every ticket's state as the desk's record has it.
    Queue(commands::queue::QueueArgs),
    /// Write the desk's record as a JSONL recording (for review, summary and replay:).
    Export(commands::export::ExportArgs),
    /// Set up a team's record in PostgreSQL, and its people.
    Team {
        #[command(subcommand)]
        command: commands::team::TeamCommand,
    },
    /// List the team's open approvals: forms that wait for a lead.
    Approvals(commands::approvals::ApprovalsArgs),
    /// Answer one open approval as the person the store logs in as (a lead who did not ask).
    Approve(commands::approve::ApproveArgs),
    /// Call a tool on a ticket yourself, through the desk's gate and record (as `c` does).
    Call(commands::call::CallArgs),
    /// Line up two recordings ticket by ticket: their figures, and what each run did differently.
    Compare(commands::compare::CompareArgs),
    /// The lead's report from the desk's record: response and resolution times, the backlog,
    /// what is late, how replies were written, approvals and each day's volume.
    Report(commands::report::ReportArgs),
    /// Print the summary of a recorded run, computed from the recording alone.
    Summary(commands::summary::SummaryArgs),
    /// Read the support mailbox into the record: once (`pull`), or as mail arrives (`serve`).
    Mail {
        #[command(subcommand)]
        command: commands::mail::MailCommand,
    },
    /// Send a ticket's reply (its draft), as at the desk: by mail for a ticket that came by mail.
    Send(commands::send::SendArgs),
    /// Say a ticket's conversation is done, with an optional note.
    Solve(commands::solve::SolveArgs),
    /// Give a ticket to a person (a name, me, or nobody).
    Assign(commands::owners::AssignArgs),
    /// Put a tag on a ticket, or take it off (--remove).
    Tag(commands::owners::TagArgs),
    /// List the saved replies and macros the desk loads; on a team, a lead sets or removes
    /// the team's.
    Replies(commands::replies::RepliesArgs),
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
    // A headless command says what went wrong as one sentence; its log lines are for -v (or
    // RUST_LOG). A server's stderr is its log, which the desk that started it keeps.
    let serving = matches!(command, Command::Serve { .. });
    if owns_terminal {
        commands::desk::no_huge_pages();
    } else if serving || cli.verbose || std::env::var_os("RUST_LOG").is_some() {
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
        Err(e) if serving => {
            tracing::error!("{}", in_words(&e));
            ExitCode::FAILURE
        }
        Err(e) => {
            let said = crate::ui::sanitize::clean(&in_words(&e));
            let _ = writeln!(std::io::stderr(), "support-desk: {said}");
            ExitCode::FAILURE
        }
    }
}

/// The runtime a command runs on. Serving (`serve … --http`) takes many clients at once and
/// gets a thread per core. Everything else is one person's work, waiting on servers and a
/// model: one thread, so a tool call's messages, its caller and the UI never hand each
/// other across threads (BENCHMARKS.md, 'A queue of 10,000 tickets', measures the desk as a whole on it).
/// Nothing on it blocks for long: a record append takes tens of microseconds (one during a
/// checkpoint, milliseconds), and a stdio server gets a thread of its own
/// ([`crate::serve::stdio`]).
pub fn runtime_for(command: &Command) -> std::io::Result<tokio::runtime::Runtime> {
    match command {
        Command::Serve { .. } => tokio::runtime::Runtime::new(),
        _ => crate::startup::desk_runtime(),
    }
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
        Command::Desk(args) => commands::desk::execute(args).await,
        Command::Review(args) => commands::review::execute(args).await,
        Command::Serve { server } => commands::serve::execute(server).await,
        Command::Run(args) => commands::run::execute(args).await,
        Command::Servers(args) => commands::servers::execute(args).await,
        Command::Login(args) => commands::login::execute(args).await,
        Command::Logout(args) => commands::logout::execute(args).await,
        Command::Queue(args) => commands::queue::execute(args).await,
        Command::Export(args) => commands::export::execute(args).await,
        Command::Team { command } => commands::team::execute(command).await,
        Command::Approvals(args) => commands::approvals::execute(args).await,
        Command::Approve(args) => commands::approve::execute(args).await,
        Command::Call(args) => commands::call::execute(args).await,
        Command::Compare(args) => commands::compare::execute(args).await,
        Command::Summary(args) => commands::summary::execute(args).await,
        Command::Report(args) => commands::report::execute(args).await,
        Command::Mail { command } => commands::mail::execute(command).await,
        Command::Send(args) => commands::send::execute(args).await,
        Command::Solve(args) => commands::solve::execute(args).await,
        Command::Assign(args) => commands::owners::assign(args).await,
        Command::Tag(args) => commands::owners::tag(args).await,
        Command::Replies(args) => commands::replies::execute(args).await,
    }
}
