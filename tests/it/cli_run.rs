//! `support-desk run` as a person runs it: the built binary, a mock model on 127.0.0.1.

use std::process::Output;

use serde_json::Value;

use crate::mock_model::{MockModel, queue_worker};
use crate::support::BIN;

async fn run(args: &[&str], data_dir: &std::path::Path) -> Output {
    tokio::process::Command::new(BIN)
        .args(args)
        .arg("--data-dir")
        .arg(data_dir)
        .env("RUST_LOG", "warn")
        .output()
        .await
        .expect("run the binary")
}

fn summary(output: &Output) -> Value {
    assert!(
        output.status.success(),
        "run failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("one JSON object on stdout")
}

#[tokio::test]
async fn the_whole_queue_is_worked_against_an_openai_compatible_model_and_replays_the_same() {
    let model = MockModel::start(queue_worker()).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let recording = dir.path().join("run");
    let source = format!("openai:{}", model.url);
    let live = summary(
        &run(
            &[
                "run",
                "--consent",
                "approve",
                "--model",
                &source,
                "--model-name",
                "mock",
                "--json",
                "--record",
                recording.to_str().expect("utf-8"),
                "--concurrency",
                "4",
            ],
            dir.path(),
        )
        .await,
    );
    assert_eq!(live["tickets_worked"], 48);
    assert_eq!(live["model_calls"], 96);
    assert_eq!(live["tool_calls"], 48);
    assert_eq!(live["outcomes"]["result"], 48);
    assert_eq!(live["first_tool_as_tagged"]["of"], 48);
    assert_eq!(
        live["first_tool_as_tagged"]["right"], 6,
        "find_orders is the tag of six tickets"
    );
    for key in [
        "stopped_at_turn_limit",
        "refunds_issued",
        "refund_tickets_reaching_issue_refund",
        "unbacked_refund_promises",
        "flagged_for_person",
        "consent_questions",
        "consent_asked_for",
        "input_requests",
        "injected_tickets_with_side_effects",
    ] {
        assert!(live.get(key).is_some(), "the summary has {key}");
    }
    assert_eq!(model.requests().len(), 96);

    // The same data directory is the same desk: every ticket was worked, so none is again.
    let again = summary(
        &run(
            &["run", "--model", &source, "--consent", "approve", "--json"],
            dir.path(),
        )
        .await,
    );
    assert_eq!(again["tickets_worked"], 0);
    assert_eq!(model.requests().len(), 96, "no ticket was worked twice");

    // A fresh data directory is a fresh desk and a fresh shop: the replay follows the run.
    let fresh = tempfile::tempdir().expect("temp dir");
    let replay = format!("replay:{}", recording.display());
    let replayed = summary(&run(&["run", "--model", &replay, "--json"], fresh.path()).await);
    assert_eq!(replayed, live);
    assert_eq!(model.requests().len(), 96, "the replay asked no model");
}

#[tokio::test]
async fn a_missing_recording_is_a_clear_error() {
    let dir = tempfile::tempdir().expect("temp dir");
    let output = run(
        &["run", "--model", "replay:/nonexistent/recording", "--json"],
        dir.path(),
    )
    .await;
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("no recording at /nonexistent/recording"),
        "{stderr}"
    );
}

/// The desk's record in its interchange format: a run's data directory exported to JSONL,
/// summarised, gives the run's own figures; and it replays like any recording.
#[tokio::test]
async fn an_exported_record_summarises_and_replays_as_the_run_that_made_it() {
    let dir = tempfile::tempdir().expect("temp dir");
    let queue = "replay:recordings/ticket-runs/events.jsonl";
    let live = summary(
        &run(
            &["run", "--model", queue, "--consent", "approve", "--json"],
            dir.path(),
        )
        .await,
    );
    assert_eq!(live["tickets_worked"], 48);

    let exported = dir.path().join("export.jsonl");
    let export_to = |out: std::path::PathBuf| {
        tokio::process::Command::new(BIN)
            .args(["export", "--data-dir"])
            .arg(dir.path())
            .arg(out)
            .output()
    };
    let export = export_to(exported.clone()).await.expect("export");
    assert!(
        export.status.success(),
        "{}",
        String::from_utf8_lossy(&export.stderr)
    );
    let text = std::fs::read_to_string(&exported).expect("the export");
    // The record is exported a page at a time; the run's events fill more than one, and
    // none is lost or written twice between them.
    let seqs: Vec<i64> = text
        .lines()
        .map(|line| {
            let event: Value = serde_json::from_str(line).expect("JSON");
            event["seq"].as_i64().expect("a seq")
        })
        .collect();
    assert!(
        seqs.len() > support_desk::record::Record::PAGE,
        "{} events",
        seqs.len()
    );
    assert_eq!(seqs, (1..=seqs.len() as i64).collect::<Vec<_>>());
    let first: Value = serde_json::from_str(text.lines().next().expect("a line")).expect("JSON");
    assert_eq!(first["event"], "manifest");
    assert_eq!(
        (first["seq"].as_i64(), first["by"].as_str()),
        (Some(1), Some("script"))
    );

    let summarised = tokio::process::Command::new(BIN)
        .args(["summary", "--json"])
        .arg(&exported)
        .output()
        .await
        .expect("summary");
    assert!(
        summarised.status.success(),
        "{}",
        String::from_utf8_lossy(&summarised.stderr)
    );
    let from_export: Value = serde_json::from_slice(&summarised.stdout).expect("JSON");
    assert_eq!(from_export, live);

    let again = tempfile::tempdir().expect("temp dir");
    let source = format!("replay:{}", exported.display());
    let replayed = summary(&run(&["run", "--model", &source, "--json"], again.path()).await);
    assert_eq!(replayed, live, "the export replays as the run did");

    let refused = export_to(exported.clone()).await.expect("export");
    assert!(
        !refused.status.success(),
        "an export never overwrites a file"
    );
}
