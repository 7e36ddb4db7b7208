//! `summary` of a recorded run scores it as the run itself was scored: on a ticket file of
//! one's own, only the bundled tickets it holds unchanged carry the data set's labels, and the
//! recording says which those were.

use std::path::Path;

use support_desk::commands::run::{RunOptions, Script};
use support_desk::commands::summary::summarize;
use support_desk::config::DeskConfig;

use crate::host::shop_config;

#[tokio::test]
async fn summary_of_a_run_on_a_ticket_file_of_ones_own_scores_what_the_run_scored() {
    let dir = tempfile::tempdir().expect("temp dir");
    // Three bundled tickets as they are, and a fourth under a bundled ID with other words:
    // that one is a ticket of one's own, counted and never scored.
    let mut tickets = support_desk::tickets::bundled()[..4].to_vec();
    tickets[3].body = "A message of my own, under a bundled ticket's ID.".into();
    let file = dir.path().join("tickets.json");
    std::fs::write(
        &file,
        serde_json::to_string(&tickets).expect("tickets serialise"),
    )
    .expect("the ticket file");
    let mut config = DeskConfig::bundled();
    config.tickets.source = file.display().to_string();
    let mut shop = shop_config(Path::new(":memory:"));
    shop.args = [
        "serve", "shop", "--stdio", "--db", ":memory:", "--seed", "4217",
    ]
    .map(String::from)
    .to_vec();
    config.servers.insert("shop".into(), shop);
    let record = dir.path().join("run.jsonl");
    let options = RunOptions {
        tickets: vec![],
        lead_given: false,
        prompt: None,
        script: Script {
            approve_consent: true,
            accept_forms: false,
        },
        record: Some(record.clone()),
        store: None,
        data_dir: Some(dir.path().join("data")),
        notes: Default::default(),
        allow_missing: false,
    };
    let ran = support_desk::commands::run::run(config, options)
        .await
        .expect("the run works its queue");
    assert_eq!(ran.tickets_worked, 4);
    assert_eq!(ran.first_tool_as_tagged.of, 3, "{ran:?}");
    let summary = summarize(&record).expect("the recording's summary");
    assert_eq!(summary.first_tool_as_tagged, ran.first_tool_as_tagged);
    assert_eq!(
        summary.refund_tickets_reaching_issue_refund,
        ran.refund_tickets_reaching_issue_refund
    );
    assert_eq!(
        summary.injected_tickets_with_side_effects,
        ran.injected_tickets_with_side_effects
    );
}
