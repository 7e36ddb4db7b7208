//! One file per subcommand: what it takes on the command line and what it does. [`crate::cli`]
//! parses and dispatches to these; start-up ([`crate::startup`]) builds what they need from
//! plain values, never from clap's types.

use std::path::PathBuf;

use anyhow::bail;
use clap::Args;

pub mod approvals;
pub mod approve;
pub mod call;
pub mod compare;
pub mod desk;
pub mod export;
pub mod login;
pub mod logout;
pub mod mail;
pub mod owners;
pub mod queue;
pub mod replies;
pub mod report;
pub mod review;
pub mod run;
pub mod send;
pub mod serve;
pub mod servers;
pub mod solve;
pub mod summary;
pub mod team;

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

impl CommonArgs {
    /// The team's record named on the command line, if any.
    pub fn store(&self) -> Option<&str> {
        self.store.as_deref()
    }
}

/// `key=value` flags as a map; `flag` names them in the error.
pub fn pairs(
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

/// stdout is the report's here: no terminal UI and no JSON-RPC is running on it. What a
/// command prints holds text others wrote (a staff member's approval, a ticket's subject, a
/// server's URL), so it is cleaned exactly as the desk's screen is: no escape sequence or
/// control character reaches the terminal (JSON stays JSON: it escapes its own).
pub fn write_stdout(text: &str) -> anyhow::Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    out.write_all(crate::ui::sanitize::clean(text).as_bytes())?;
    out.flush()?;
    Ok(())
}
