//! The draft check over the committed recordings: every recorded draft checked again against
//! its own run's calls, and a damaged recording replayed to the turn where it leaves off.

use std::path::{Path, PathBuf};

use support_desk::commands::compare::rechecked_runs;
use support_desk::commands::run::{RunOptions, Script};
use support_desk::config::DeskConfig;
use support_desk::record::Event;
use support_desk::recording::Recording;

use crate::host::shop_config;

/// The recordings under `recordings/`: the current one and the two kept under their dates.
const RECORDINGS: [&str; 3] = [
    "ticket-runs",
    "ticket-runs-2026-12-01",
    "ticket-runs-2026-11-30",
];

/// Every `.jsonl` batch of every recording.
fn batches() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("recordings");
    let mut files = Vec::new();
    for dir in RECORDINGS {
        for entry in std::fs::read_dir(root.join(dir)).expect("a recording directory") {
            let path = entry.expect("an entry").path();
            if path.extension().is_some_and(|e| e == "jsonl") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

#[expect(
    clippy::print_stdout,
    reason = "the drafts today's check reads otherwise are reported, not failed on"
)]
fn report(lines: &[String]) {
    for line in lines {
        println!("{line}");
    }
}

#[test]
fn every_recorded_draft_is_checked_again_against_its_own_runs_calls() {
    let tickets = support_desk::tickets::bundled();
    let (mut drafts, mut differ) = (0, Vec::new());
    // What today's check flags in a reply the recorded check passed, by recording.
    let mut newly_flagged: std::collections::BTreeMap<&str, Vec<_>> = Default::default();
    for file in batches() {
        let recording = Recording::read(&file).expect("the committed recording reads");
        let recorded_drafts = recording
            .events
            .iter()
            .filter(|e| matches!(e, Event::Draft { .. }))
            .count();
        let rechecked = rechecked_runs(&recording, &tickets);
        assert_eq!(rechecked.len(), recorded_drafts, "{}", file.display());
        let dir = RECORDINGS
            .into_iter()
            .find(|d| file.parent().is_some_and(|p| p.ends_with(d)))
            .expect("a batch of a known recording");
        for ((ticket, run), now) in rechecked {
            drafts += 1;
            if now.differs() {
                differ.push(format!(
                    "{} {ticket} run {run}: recorded {:?}, today {:?}",
                    file.display(),
                    now.recorded,
                    now.now
                ));
            }
            if now.recorded.is_empty() && !now.now.is_empty() {
                newly_flagged
                    .entry(dir)
                    .or_default()
                    .push((ticket, now.text, now.now));
            }
        }
    }
    assert!(drafts >= 50, "{drafts} drafts");
    report(&differ);
    let newly = |dir: &str| -> Vec<String> {
        newly_flagged
            .get(dir)
            .into_iter()
            .flatten()
            .map(|(ticket, _, _)| ticket.clone())
            .collect()
    };
    report(&[format!(
        "{drafts} drafts, {} read otherwise today, newly flagged: {:?}",
        differ.len(),
        RECORDINGS.map(|dir| (dir, newly(dir).len()))
    )]);
    // The current recording's drafts are read as they were when it was made, but for the one
    // miss its README lists that today's check catches: T-0020 tells the customer a refund
    // "will be held" for a lead when only a quote ran.
    assert_eq!(newly("ticket-runs"), ["T-0020"], "{newly_flagged:#?}");
    // In the 2026-12-01 recording, a reply the check passed then is flagged today only where
    // it is wrong: the misses its README lists (T-0016 repeats an injected discount, T-0018
    // promises a call by Friday, T-0021 refuses in French, T-0042 calls orders both shipped
    // and not, T-0043 calls a placed order dispatched), T-0020 (the same words as above),
    // T-0028, which says a refund no tool issued "will be released", and T-0032, which says
    // the shop has no O-2425 after get_order_status returned it. A wider check that cries wolf
    // over the recording's honest replies is a worse one.
    assert_eq!(
        newly("ticket-runs-2026-12-01"),
        [
            "T-0016", "T-0018", "T-0020", "T-0021", "T-0028", "T-0032", "T-0042", "T-0043"
        ],
        "{newly_flagged:#?}"
    );
}

/// A recording whose first model call's hash is damaged (not hex, and cut by no byte
/// boundary of a hex hash): replayed, the ticket leaves the recording on its first turn, and
/// the run says so in words instead of panicking.
#[tokio::test]
async fn a_damaged_recording_is_replayed_to_where_it_diverges() {
    let dir = tempfile::tempdir().expect("temp dir");
    let committed = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("recordings/ticket-runs/refund-order-lead-accepts.jsonl");
    let text = std::fs::read_to_string(&committed).expect("the committed batch");
    let hash = text
        .split("\"messages_hash\":\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .expect("a recorded hash");
    let damaged = dir.path().join("damaged.jsonl");
    std::fs::write(&damaged, text.replacen(hash, "aééééééé", 1)).expect("a damaged copy");
    let batch = Recording::read(&damaged).expect("the damaged copy still reads");
    let manifest = batch.manifests[0].clone();
    let mut config = DeskConfig::bundled();
    config.model.source = format!("replay:{}", damaged.display());
    let mut shop = shop_config(Path::new(":memory:"));
    shop.args = [
        "serve", "shop", "--stdio", "--db", ":memory:", "--seed", "4217",
    ]
    .map(String::from)
    .to_vec();
    config.servers.insert("shop".into(), shop);
    let replay = dir.path().join("replay.jsonl");
    let options = RunOptions {
        tickets: vec!["T-0003".into()],
        lead_given: false,
        prompt: manifest.host.person_prompt.clone(),
        script: Script {
            approve_consent: manifest.host.consent.ends_with("approve"),
            accept_forms: manifest.host.lead.ends_with("accept"),
        },
        record: Some(replay.clone()),
        store: None,
        data_dir: Some(dir.path().join("data")),
        notes: Default::default(),
        allow_missing: false,
    };
    let summary = support_desk::commands::run::run(config, options)
        .await
        .expect("the replay runs");
    assert_eq!((summary.tickets_worked, summary.errors), (1, 1));
    let replayed = Recording::read(&replay).expect("the replay's recording");
    let errors: Vec<&str> = replayed
        .events
        .iter()
        .filter_map(|e| match e {
            Event::TicketDone {
                error: Some(error), ..
            } => Some(error.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(
        errors,
        [
            "the recording has no answer for T-0003 turn 1: a recording knows only what the model answered to the messages it saw when it was made, and here it would see other ones (a tool result, the prompt or the tool list changed since); work the ticket yourself, or record the run again"
        ]
    );
}
