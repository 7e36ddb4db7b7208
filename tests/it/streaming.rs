//! The model's replies stream: the desk is told what the model has written while it writes,
//! and the record holds the same whole reply a model that does not stream would have left.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use support_desk::record::Event;

use crate::host::{Harness, Setup, harness};
use crate::mock_model::{Brain, call, scripted, words};

const REPLY: &str =
    "Your parcel left our warehouse on Monday and should reach you within three working days.";

/// Each model call the record holds: the hash of what the model saw, and its reply.
async fn model_calls(h: &Harness) -> Vec<(String, serde_json::Value)> {
    h.host
        .events()
        .await
        .into_iter()
        .filter_map(|e| match e {
            Event::ModelCall {
                messages_hash,
                reply,
                ..
            } => Some((messages_hash, serde_json::to_value(reply).expect("a reply"))),
            _ => None,
        })
        .collect()
}

fn order_then_reply() -> Brain {
    scripted(vec![
        call("shop__get_order_status", json!({"order_id": "O-1744"})),
        words(REPLY),
    ])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_desk_sees_the_reply_before_it_ends_and_the_record_holds_it_whole() {
    let hold = Arc::new(tokio::sync::Notify::new());
    let mut setup = Setup::new(scripted(vec![words(REPLY)]));
    setup.stream = Some((Duration::from_millis(2), Some(Arc::clone(&hold))));
    let h = harness(setup).await;

    // The model holds its reply's last chunk until the desk has been shown some of it.
    let watch = async {
        let started = std::time::Instant::now();
        loop {
            let seen = h.written.lock().expect("lock").clone();
            if let Some((ticket, turn, words)) = seen.last() {
                assert_eq!((ticket.as_str(), *turn), ("T-0001", 1));
                assert!(REPLY.starts_with(words.as_str()), "{words:?}");
                break;
            }
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "nothing of the reply was shown while it was written"
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        hold.notify_one();
    };
    let (run, ()) = tokio::join!(h.work("T-0001"), watch);
    assert_eq!(run.draft.as_deref(), Some(REPLY));
    assert_eq!(h.model.requests()[0]["stream"], json!(true));
    let shown = h.written.lock().expect("lock").clone();
    assert!(
        shown
            .iter()
            .all(|(_, _, words)| REPLY.starts_with(words.as_str())),
        "each view is the reply so far: {shown:?}"
    );
    let recorded = model_calls(&h).await;
    assert_eq!(recorded.len(), 1);
    assert_eq!(
        recorded[0].1,
        json!({"kind": "words", "content": REPLY}),
        "the record holds the whole reply"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_streamed_call_and_reply_leave_the_record_a_whole_one_would() {
    let mut streamed = Setup::new(order_then_reply());
    streamed.stream = Some((Duration::from_millis(1), None));
    let streamed = harness(streamed).await;
    let whole = harness(Setup::new(order_then_reply())).await;
    let a = streamed.work("T-0009").await;
    let b = whole.work("T-0009").await;
    assert_eq!(a.draft, b.draft);
    assert_eq!(a.draft.as_deref(), Some(REPLY));
    assert_eq!(streamed.outcomes().await, whole.outcomes().await);
    let (a, b) = (model_calls(&streamed).await, model_calls(&whole).await);
    assert_eq!(a.len(), 2);
    assert_eq!(
        a, b,
        "same requests, same replies: a replay cannot tell them apart"
    );
    assert!(
        !streamed.written.lock().expect("lock").is_empty(),
        "the streamed run was watched"
    );
}
