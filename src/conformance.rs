//! `desk-conformance`: the desk's own MCP client, driven by the official conformance suite
//! (`@modelcontextprotocol/conformance`) instead of a person.
//!
//! The suite starts a mock server per scenario and runs this binary with the server's URL as
//! the last argument, the scenario's name in `MCP_CONFORMANCE_SCENARIO` and, for some
//! scenarios, tool calls in `MCP_CONFORMANCE_CONTEXT` (JSON). The binary connects exactly as
//! the desk does ([`ServerConn`](crate::host::servers::connect::ServerConn): the discover probe,
//! falling back to `initialize`), calls tools through [`host::servers::calls`](crate::host::servers::calls), and
//! answers every form with each field's default. Auto-accepting is allowed here only: in the
//! desk a person answers every form.
//!
//! In the OAuth scenarios the desk signs in whenever the server asks, as it does for a
//! person, except that the suite's authorization server approves at once and its redirect is
//! read instead of followed. Flows the desk leaves out on purpose (DPoP, enterprise-managed
//! authorization, workload identity, skills) are tried the way the desk would try them,
//! then the binary exits 0 and logs why: the suite records the failed checks, and
//! `tests/conformance/baseline-*.yml` says why each one is expected.

mod context;
mod drive;
mod scenario;

use std::process::ExitCode;
use std::time::Duration;

pub use context::{Context, ToolCall};
pub use drive::Verdict;
pub use scenario::Scenario;

/// The suite kills a client after 30 s; finishing first keeps its report readable.
const SCENARIO_DEADLINE: Duration = Duration::from_secs(25);

pub fn main() -> ExitCode {
    crate::logging::to_stderr();
    crate::tls::install_default_provider();
    // The suite appends the URL to whatever command line it was given.
    let Some(url) = std::env::args().skip(1).next_back() else {
        tracing::error!("usage: desk-conformance <server-url> (run by the conformance suite)");
        return ExitCode::from(2);
    };
    let name = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let context = match Context::from_env() {
        Ok(context) => context,
        Err(e) => {
            tracing::error!(error = %e, "MCP_CONFORMANCE_CONTEXT is not the JSON the suite sends");
            return ExitCode::FAILURE;
        }
    };
    let scenario = Scenario::named(&name);
    tracing::info!(
        scenario = %name,
        %url,
        wire = std::env::var("MCP_CONFORMANCE_PROTOCOL_VERSION").unwrap_or_default(),
        plan = ?scenario,
        "running"
    );
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(e) => {
            tracing::error!(error = %e, "cannot start the async runtime");
            return ExitCode::FAILURE;
        }
    };
    let verdict = runtime.block_on(async {
        tokio::time::timeout(SCENARIO_DEADLINE, drive::run(&scenario, &url, &context)).await
    });
    // Whatever is still in flight (a dangling SSE stream) must not hold the exit.
    runtime.shutdown_timeout(Duration::from_millis(200));
    match verdict {
        Ok(Verdict::Done) => ExitCode::SUCCESS,
        Ok(Verdict::Unsupported) => ExitCode::SUCCESS,
        Ok(Verdict::Failed) => ExitCode::FAILURE,
        Err(_) => {
            tracing::error!(
                "the scenario did not finish within {} s",
                SCENARIO_DEADLINE.as_secs()
            );
            ExitCode::FAILURE
        }
    }
}
