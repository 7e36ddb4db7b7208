//! A desk killed while a task it started runs: the real binary under a pseudo-terminal, the
//! task server over HTTP on 127.0.0.1 (it outlives the desk, as a server's task does). The
//! desk reopened on the same data directory finds the task open in its record, follows it to
//! its end and shows what it came to; the call was sent once.

use serde_json::json;

use crate::desk_pty::Desk;
use crate::mock_model::{MockModel, call, scripted, words};
use crate::task_fixture::serve_tasks;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_desk_killed_while_its_task_runs_follows_it_to_its_end_when_reopened() {
    let (url, stop, counts) = serve_tasks().await;
    let model = MockModel::start(scripted(vec![
        call("tasks__inspect", json!({"mode": "long"})),
        words("Never asked: the desk was killed."),
    ]))
    .await;
    let source = format!("openai:{}", model.url);
    let dir = tempfile::tempdir().expect("dir");
    let config = dir.path().join("desk.toml");
    std::fs::write(&config, format!("[servers.tasks]\nurl = \"{url}\"\n")).expect("config");
    let config = config.to_str().expect("a UTF-8 path").to_owned();
    let args = ["--config", config.as_str(), "--model", source.as_str()];

    let mut desk = Desk::start_in(dir.path(), &args);
    desk.screen.wait_for("Queue (all) 48/48").await;
    desk.press(b"w");
    let consent = desk.screen.wait_for("y approve").await;
    assert!(consent.contains("tasks.inspect"), "{consent}");
    desk.press(b"y");
    let working = desk.screen.wait_for("task working").await;
    assert!(
        working.contains("scanning the parcel"),
        "the server's words are shown, cleaned: {working}"
    );
    desk.kill().await;
    assert_eq!(counts.calls(), 1);

    // Reopened: the cut-off run needs a person, and the task is followed to its end.
    let desk = Desk::start_in(dir.path(), &args);
    let ended = desk.screen.wait_for("the box is intact").await;
    assert!(ended.contains("completed"), "{ended}");
    desk.quit().await;
    assert_eq!(counts.calls(), 1, "the call was sent once");
    assert_eq!(counts.cancels(), 0, "the task was followed, not cancelled");
    assert_eq!(model.requests().len(), 1, "the model was not asked again");
    stop.cancel();
}
