//! A task's question on a team goes to a lead, through the real binary and a real
//! PostgreSQL (a throwaway cluster; skipped in one line without one): a staff member's run
//! calls a tool its server runs as a task, the task asks a question the config gives to the
//! leads, and the run stops there with the task's id filed in the team's record; a lead
//! answers it from their own seat, their desk sends the answer to the task and follows it to
//! its end; the staff's ticket goes on from that, and the call was sent once.

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::{Value, json};
use support_desk::record::postgres::PgRecord;
use support_desk::record::{Event, Lifecycle};

use crate::mock_model::{Brain, MockModel, call, tool_messages, words};
use crate::pg_cluster::{self, Person};
use crate::task_fixture::{INSPECTED_AFTER_YES, serve_tasks};

const OPENED: &str = "We opened your parcel with your go-ahead: it is intact.";

/// Inspects T-0003's parcel (a task that asks before it opens it), then answers by what
/// the task came to.
fn inspector() -> Brain {
    Arc::new(|request: &Value| match tool_messages(request).len() {
        0 => call("tasks__inspect", json!({"mode": "ask"})),
        _ => words(OPENED),
    })
}

struct Seat {
    person: Person,
    dir: tempfile::TempDir,
    config: PathBuf,
}

impl Seat {
    fn new(person: &Person, tasks_url: &str) -> Self {
        let dir = tempfile::tempdir().expect("dir");
        let config = dir.path().join("desk.toml");
        std::fs::write(
            &config,
            format!("[servers.tasks]\nurl = \"{tasks_url}\"\nlead_forms = [\"inspect\"]\n"),
        )
        .expect("write the config");
        Self {
            person: person.clone(),
            dir,
            config,
        }
    }

    async fn command(&self, args: &[&str]) -> (bool, String) {
        crate::support::seat_command(args, &self.person.url, &self.config, self.dir.path()).await
    }

    async fn run_t0003(&self, model: &str) -> (bool, String) {
        self.command(&[
            "run",
            "--tickets",
            "T-0003",
            "--model",
            model,
            "--consent",
            "approve",
            "--json",
        ])
        .await
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tasks_question_goes_to_a_lead_on_another_seat_who_answers_the_task() {
    let Some(pg) = pg_cluster::start().await else {
        return;
    };
    let team = pg.team().await;
    let (url, stop, counts) = serve_tasks().await;
    let model = MockModel::start(inspector()).await;
    let source = format!("openai:{}", model.url);
    let (ana, lee) = (Seat::new(&team.ana, &url), Seat::new(&team.lee, &url));
    let allow = support_desk::config::DeskConfig::bundled().consent.allow;
    let record = PgRecord::connect(&team.lee.url, &allow).await.expect("lee");

    // ana's run stops at the task's question, filed for the leads with the task's id.
    let (ok, said) = ana.run_t0003(&source).await;
    assert!(ok, "{said}");
    let state = record
        .state("T-0003")
        .await
        .expect("state")
        .expect("T-0003");
    assert_eq!(state.state, Lifecycle::WaitingForLead, "{said}");
    assert_eq!(state.tasks.len(), 1, "its task is open: {state:?}");
    let open = record.open_approvals().await.expect("approvals");
    assert_eq!(open.len(), 1, "{open:?}");
    assert_eq!(open[0].task.as_deref(), Some(state.tasks[0].task.as_str()));
    assert_eq!(counts.updates(), 0, "nobody answered the task yet");

    // Staff cannot answer it; lee can, and lee's desk follows the task to its end.
    let id = open[0].id.to_string();
    let (ok, said) = ana
        .command(&["approve", &id, "--accept", "--field", "open=true"])
        .await;
    assert!(!ok, "the asker cannot answer: {said}");
    assert_eq!(counts.updates(), 0);
    let (ok, said) = lee
        .command(&["approve", &id, "--accept", "--field", "open=true"])
        .await;
    assert!(ok, "{said}");
    assert_eq!(counts.updates(), 1, "the answer went to the task once");
    let events: Vec<Event> = record
        .ticket_events("T-0003")
        .await
        .expect("events")
        .into_iter()
        .map(|s| s.event)
        .collect();
    let answered = events.iter().find_map(|e| match e {
        Event::ApprovalAnswered { by, text, .. } => Some((by.clone(), text.clone())),
        _ => None,
    });
    assert_eq!(
        answered,
        Some((team.lee.name.clone(), INSPECTED_AFTER_YES.to_owned()))
    );

    // ana works the ticket again: it goes on from the task's result; the call went once.
    let (ok, said) = ana.run_t0003(&source).await;
    assert!(ok, "{said}");
    let state = record
        .state("T-0003")
        .await
        .expect("state")
        .expect("T-0003");
    assert_eq!(state.state, Lifecycle::Drafted, "{state:?}");
    assert_eq!(state.draft.as_deref(), Some(OPENED));
    assert_eq!(counts.calls(), 1, "the call was sent once");
    let last = model.requests().pop().expect("a request");
    assert!(
        tool_messages(&last)
            .last()
            .is_some_and(|t| t.contains(INSPECTED_AFTER_YES)),
        "the model read the task's result"
    );
    stop.cancel();
}
