//! The committed recording of a real local model working the queue: what made it, and a
//! replay against the bundled servers that reproduces every call and the summary offline.

use std::path::{Path, PathBuf};

use support_desk::config::DeskConfig;
use support_desk::headless::{RunOptions, Script, summarize};
use support_desk::recording::{Event, Recording};

use crate::host::shop_config;

fn recording_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("recordings/ticket-runs")
}

fn recording() -> Recording {
    Recording::read(&recording_dir()).expect("the committed recording reads")
}

#[test]
fn the_recording_was_made_by_a_real_local_model_through_this_host() {
    let recording = recording();
    assert!(!recording.truncated);
    let manifest = recording.manifests.first().expect("a manifest");
    assert!(
        manifest
            .model
            .source
            .starts_with("openai:http://127.0.0.1:"),
        "{}",
        manifest.model.source
    );
    assert_eq!(manifest.model.name, "qwen2.5-coder-1.5b-instruct");
    assert_eq!(manifest.model.recipe, "llama_cpp_prefill");
    assert_eq!(
        manifest.model.sha256.as_deref(),
        Some("cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046")
    );
    assert!(
        manifest
            .model
            .runtime
            .as_deref()
            .is_some_and(|r| r.contains("llama.cpp"))
    );
    assert_eq!(
        (manifest.model.temperature, manifest.model.seed),
        (Some(0.7), Some(4217))
    );
    assert_eq!(
        manifest.prompt_hash,
        support_desk::host::prompt::prompt_hash(),
        "recorded with today's prompt"
    );
    assert_eq!(
        (manifest.host.consent.as_str(), manifest.host.lead.as_str()),
        ("approve", "decline")
    );
    assert_eq!(recording.finished_tickets().len(), 48);
    let timings: Vec<f64> = recording
        .events
        .iter()
        .filter_map(|e| match e {
            Event::ModelCall { seconds, .. } => Some(*seconds),
            _ => None,
        })
        .collect();
    assert!(
        timings.iter().all(|s| *s > 0.05),
        "every call took real model time"
    );
}

#[test]
fn the_default_config_replays_the_committed_recording() {
    assert_eq!(
        DeskConfig::bundled().model.source,
        "replay:recordings/ticket-runs"
    );
}

#[tokio::test]
async fn replaying_the_recording_reproduces_every_call_and_the_summary() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut config = DeskConfig::bundled();
    config.model.source = format!("replay:{}", recording_dir().display());
    // The bundled shop, started from the built binary (the test harness is not it).
    let mut shop = shop_config(Path::new(":memory:"));
    shop.args = vec![
        "serve".into(),
        "shop".into(),
        "--stdio".into(),
        "--db".into(),
        ":memory:".into(),
        "--seed".into(),
        "4217".into(),
    ];
    config.servers.insert("shop".into(), shop);
    let options = RunOptions {
        tickets: vec![],
        script: Script {
            approve_consent: true,
            accept_forms: false,
        },
        record: Some(dir.path().join("replay")),
        data_dir: Some(dir.path().join("data")),
        notes: Default::default(),
    };
    let replayed = support_desk::headless::run(config, options)
        .await
        .expect("replay runs");
    let recorded = summarize(&recording_dir()).expect("summary of the recording");
    assert_eq!(replayed, recorded);
    assert_eq!(replayed.errors, 0, "no ticket diverged");

    let calls = |recording: &Recording| -> Vec<(String, String, String)> {
        let mut calls: Vec<_> = recording
            .events
            .iter()
            .filter_map(|e| match e {
                Event::Outcome {
                    ticket, tool, text, ..
                } => Some((ticket.clone(), tool.clone(), text.clone())),
                _ => None,
            })
            .collect();
        calls.sort_by(|a, b| a.0.cmp(&b.0));
        calls
    };
    let again = Recording::read(&dir.path().join("replay")).expect("the replay's own recording");
    assert_eq!(
        calls(&again),
        calls(&recording()),
        "every call, outcome and result text"
    );
}

#[test]
fn the_recordings_readme_shows_the_summary_read_from_the_recording() {
    let readme = std::fs::read_to_string(recording_dir().join("README.md"))
        .expect("recordings/ticket-runs/README.md");
    let summary = summarize(&recording_dir()).expect("summary");
    assert!(
        readme.contains(&summary.to_text()),
        "the README's summary block must be `support-desk summary recordings/ticket-runs` output:\n{}",
        summary.to_text()
    );
}
