//! Where logs go: stderr for servers (stdout carries JSON-RPC), never the terminal's stdout.

use tracing_subscriber::EnvFilter;

/// What is logged when `RUST_LOG` is not set. rmcp logs every notification at info.
const DEFAULT_FILTER: &str = "info,rmcp=warn";

/// Sends `tracing` output to stderr, filtered by `RUST_LOG`.
pub fn to_stderr() {
    let filter =
        EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(DEFAULT_FILTER));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .try_init();
}

/// Sends `tracing` output to `dir/desk.log`: the terminal belongs to the desk. The guard
/// must live as long as the desk, or the last lines are lost.
pub fn to_file(
    dir: &std::path::Path,
) -> std::io::Result<tracing_appender::non_blocking::WorkerGuard> {
    std::fs::create_dir_all(dir)?;
    let appender = tracing_appender::rolling::never(dir, "desk.log");
    let (writer, guard) = tracing_appender::non_blocking(appender);
    let filter =
        EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(DEFAULT_FILTER));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(writer)
        .with_ansi(false)
        .try_init();
    Ok(guard)
}
