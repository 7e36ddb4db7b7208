//! The command line's edges a new user meets first, through the built binary.

use std::process::{Output, Stdio};

use crate::support::BIN;

async fn run(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = tokio::process::Command::new(BIN);
    command
        .args(args)
        .stdin(Stdio::null())
        .env_remove("SHOP_STAFF_TOKENS");
    for (key, value) in env {
        command.env(key, value);
    }
    command.output().await.expect("run the binary")
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[tokio::test]
async fn the_desks_flags_work_without_the_word_desk_and_without_a_terminal_it_names_run() {
    let dir = tempfile::tempdir().expect("temp dir");
    let data = dir.path().to_string_lossy().into_owned();
    let output = run(&["--data-dir", &data], &[]).await;
    assert!(!output.status.success());
    assert_eq!(
        stderr(&output).trim(),
        "support-desk: the desk needs a terminal to draw in, and this is not one; to work the queue without one, use `support-desk run` (see --help)"
    );
}

#[tokio::test]
async fn a_run_whose_model_cannot_be_reached_fails_at_once_naming_the_url() {
    let dir = tempfile::tempdir().expect("temp dir");
    let data = dir.path().to_string_lossy().into_owned();
    let model = "openai:http://127.0.0.1:9/v1";
    let output = run(
        &[
            "run",
            "--model",
            model,
            "--consent",
            "approve",
            "--json",
            "--data-dir",
            &data,
        ],
        &[],
    )
    .await;
    assert!(!output.status.success(), "exit non-zero");
    assert!(output.stdout.is_empty(), "no summary of 48 errors");
    let said = stderr(&output);
    assert!(
        said.contains("could not reach the model server at http://127.0.0.1:9/v1"),
        "{said}"
    );
}

/// Approving must be said: against a live model, `run` without `--consent` starts nothing
/// and says what each answer would do; nothing is worked, so no call runs unasked.
#[tokio::test]
async fn a_run_against_a_live_model_without_consent_refuses_to_start() {
    let dir = tempfile::tempdir().expect("temp dir");
    let data = dir.path().to_string_lossy().into_owned();
    let model = "openai:http://127.0.0.1:9/v1";
    let output = run(
        &["run", "--model", model, "--json", "--data-dir", &data],
        &[],
    )
    .await;
    assert!(!output.status.success(), "exit non-zero");
    assert!(output.stdout.is_empty(), "no summary");
    let said = stderr(&output);
    assert!(
        said.contains("`run` against a live model (openai:http://127.0.0.1:9/v1) asks no person, so it needs --consent"),
        "{said}"
    );
    assert!(
        !dir.path().join("desk.sqlite3").exists(),
        "no desk was opened"
    );
}

/// A server that cannot be reached is said in one sentence, with what to check, and a command
/// that needs it exits non-zero unless a partial start is allowed.
#[tokio::test]
async fn a_server_that_is_not_there_is_one_sentence_and_a_failed_start() {
    let dir = tempfile::tempdir().expect("temp dir");
    let config = dir.path().join("desk.toml");
    std::fs::write(
        &config,
        "[servers.shop]\nurl = \"http://127.0.0.1:9/mcp\"\n",
    )
    .expect("config");
    let config = config.to_string_lossy().into_owned();
    let data = dir.path().to_string_lossy().into_owned();
    let servers = run(&["servers", "--config", &config, "--data-dir", &data], &[]).await;
    assert!(!servers.status.success(), "exit non-zero");
    let out = String::from_utf8_lossy(&servers.stdout).into_owned();
    let line = out
        .lines()
        .find(|line| line.contains("not connected"))
        .unwrap_or_else(|| panic!("a line for the shop: {out}"));
    assert!(
        line.starts_with("  not connected: server 'shop' (http://127.0.0.1:9/mcp) did not complete the handshake:")
            && line.ends_with("is it running there, and is the url in [servers.shop] right?"),
        "{line}"
    );
    assert!(
        !line.contains("::") && !line.contains('<'),
        "no type names: {line}"
    );
    assert!(
        stderr(&servers).contains("not connected: shop;"),
        "{}",
        stderr(&servers)
    );
    let allowed = run(
        &[
            "servers",
            "--allow-missing",
            "--config",
            &config,
            "--data-dir",
            &data,
        ],
        &[],
    )
    .await;
    assert!(allowed.status.success(), "{}", stderr(&allowed));

    let model = "replay:recordings/ticket-runs";
    let args = [
        "run",
        "--model",
        model,
        "--json",
        "--config",
        &config,
        "--data-dir",
        &data,
    ];
    let refused = run(&args, &[]).await;
    assert!(
        !refused.status.success(),
        "a run without its shop starts nothing"
    );
    assert!(refused.stdout.is_empty(), "no summary");
    assert!(
        stderr(&refused).contains("nothing was worked: fix it, or give --allow-missing"),
        "{}",
        stderr(&refused)
    );
}

#[tokio::test]
async fn the_shop_over_http_checks_its_tokens_before_it_creates_a_database() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("shop.sqlite3");
    let db_arg = db.to_string_lossy().into_owned();
    let args = ["serve", "shop", "--http", "127.0.0.1:0", "--db", &db_arg];
    let output = run(&args, &[("SHOP_STAFF_TOKENS", "nonsense")]).await;
    assert!(!output.status.success());
    assert!(
        stderr(&output).contains("SHOP_STAFF_TOKENS entry 1 is not staff-id=token"),
        "{}",
        stderr(&output)
    );
    assert!(
        !db.exists(),
        "no database was created for a shop that could not start"
    );
}

#[tokio::test]
async fn an_errors_cause_is_said_once() {
    let args = [
        "serve",
        "shop",
        "--stdio",
        "--db",
        "/nonexistent/dir/x.sqlite3",
    ];
    let said = stderr(&run(&args, &[]).await);
    assert_eq!(
        said.matches("nable to open").count(),
        1,
        "the cause once, not in every layer's words: {said}"
    );
}

#[tokio::test]
async fn the_shops_roster_file_names_where_each_token_is_and_says_which_is_missing() {
    let dir = tempfile::tempdir().expect("temp dir");
    let roster = dir.path().join("staff.toml");
    std::fs::write(
        &roster,
        "[[staff]]\nid = \"lead-0002\"\nrole = \"lead\"\ntoken_env = \"DESK_TEST_LEAD_TOKEN\"\n",
    )
    .expect("roster");
    let db = dir.path().join("shop.sqlite3");
    let (roster, db_arg) = (
        roster.to_string_lossy().into_owned(),
        db.to_string_lossy().into_owned(),
    );
    let args = [
        "serve",
        "shop",
        "--http",
        "127.0.0.1:0",
        "--staff",
        &roster,
        "--db",
        &db_arg,
    ];
    let output = run(&args, &[]).await;
    assert!(!output.status.success());
    assert!(
        stderr(&output).contains(
            "the staff roster's lead-0002 takes its token from DESK_TEST_LEAD_TOKEN, which is not set"
        ),
        "{}",
        stderr(&output)
    );
    assert!(!db.exists(), "no database for a shop that could not start");
}

/// A server's name alone earns no trust: an import may not take a configured server's name,
/// and a configured server that now runs elsewhere has its tools held until a person
/// approves them there, however the allow list names them.
#[tokio::test]
async fn a_server_is_known_by_where_it_runs_not_by_its_name_alone() {
    let dir = tempfile::tempdir().expect("temp dir");
    let data = dir.path().join("data").to_string_lossy().into_owned();
    let servers = |config: &std::path::Path| {
        let config = config.to_string_lossy().into_owned();
        let data = data.clone();
        async move { run(&["servers", "--config", &config, "--data-dir", &data], &[]).await }
    };

    let imported = dir.path().join("mcp.json");
    std::fs::write(
        &imported,
        r#"{"mcpServers": {"shop": {"command": "/bin/true"}}}"#,
    )
    .expect("mcp.json");
    let importing = dir.path().join("importing.toml");
    std::fs::write(
        &importing,
        format!(
            "mcp_servers_json = [{:?}]\n",
            imported.display().to_string()
        ),
    )
    .expect("config");
    let refused = servers(&importing).await;
    assert!(!refused.status.success(), "exit non-zero");
    let said = stderr(&refused);
    assert!(
        said.contains("names a server 'shop', which the config already has"),
        "{said}"
    );

    let here = dir.path().join("here.toml");
    std::fs::write(&here, "[servers.partner]\nin_process = \"partner\"\n").expect("config");
    let first = servers(&here).await;
    assert!(first.status.success(), "{}", stderr(&first));
    let out = String::from_utf8_lossy(&first.stdout).into_owned();
    assert!(
        out.contains("partner.track_parcel: pinned now (first seen)"),
        "{out}"
    );
    let again = String::from_utf8_lossy(&servers(&here).await.stdout).into_owned();
    assert!(
        again.contains("partner.track_parcel: matches its pin"),
        "{again}"
    );

    let moved = dir.path().join("moved.toml");
    std::fs::write(
        &moved,
        "[servers.partner]\ncommand = \"@self\"\nargs = [\"serve\", \"partner\", \"--stdio\"]\n",
    )
    .expect("config");
    let elsewhere = servers(&moved).await;
    let out = String::from_utf8_lossy(&elsewhere.stdout).into_owned();
    assert!(
        out.contains(
            "partner.track_parcel: CHANGED since pinned: blocked until a person approves it"
        ),
        "the allow list names partner.track_parcel, but not where it runs now: {out}"
    );
}
