//! The data set's answer key never reaches the desk or the model: a `tickets.json` without
//! labels loads, and for every bundled ticket whose text does not name the order it is
//! really about, neither the rendered screens nor what the model is first told name that
//! order; no screen and no request carries a label's field.

use std::process::Stdio;

use support_desk::evaluation::bundled as labels;
use support_desk::tickets::bundled as tickets;

use crate::mock_model::{MockModel, first_user_message, queue_worker, system_prompt};
use crate::support::BIN;
use crate::ui_desk::{answer_asks, app, record, screen, select};

/// The digits of an order ID (`O-1587` → `1587`), as a customer might write it.
fn digits(order: &str) -> &str {
    order.trim_start_matches("O-")
}

/// Tickets whose own text does not name the order their label says they are about.
fn hidden_orders() -> Vec<(String, String)> {
    let tickets = tickets();
    labels()
        .into_iter()
        .filter_map(|label| {
            let order = label.order_id?;
            let ticket = tickets.iter().find(|t| t.ticket_id == label.ticket_id)?;
            let text = format!("{} {}", ticket.subject, ticket.body);
            (!text.contains(digits(&order))).then_some((label.ticket_id, order))
        })
        .collect()
}

/// The answer key's own fields (`order_id` is also a tool's argument, so it is checked by
/// value above).
const FIELDS: [&str; 3] = ["expected_tool", "wrong_ids", "injected"];

#[test]
fn no_screen_names_a_labels_order_or_field() {
    let hidden = hidden_orders();
    assert!(
        hidden.len() >= 3,
        "the data set has tickets with wrong or missing numbers: {hidden:?}"
    );
    let record = record();
    let mut desk = app();
    for ticket in tickets() {
        select(&mut desk, &ticket.ticket_id);
        answer_asks(&mut desk, &record);
        let shown = screen(&desk, 160, 48);
        for (id, order) in &hidden {
            if *id == ticket.ticket_id {
                assert!(
                    !shown.contains(digits(order)),
                    "{id} shows {order}: {shown}"
                );
            }
        }
        for field in FIELDS {
            assert!(!shown.contains(field), "{} shows {field}", ticket.ticket_id);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_the_model_is_first_told_of_a_ticket_carries_no_label() {
    let model = MockModel::start(queue_worker()).await;
    let data = tempfile::tempdir().expect("dir");
    let out = tokio::process::Command::new(BIN)
        .args(["run", "--json", "--consent", "decline", "--model"])
        .arg(format!("openai:{}", model.url))
        .arg("--data-dir")
        .arg(data.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .await
        .expect("run");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let requests = model.requests();
    assert!(
        requests.len() >= 48,
        "every ticket was worked: {}",
        requests.len()
    );
    let hidden = hidden_orders();
    for request in &requests {
        let messages = request["messages"].as_array().cloned().unwrap_or_default();
        let told = format!(
            "{}\n{}",
            system_prompt(request),
            first_user_message(&messages)
        );
        for field in FIELDS {
            assert!(!told.contains(field), "{field} in {told}");
        }
        for (id, order) in &hidden {
            if told.contains(&format!("Ticket {id} ")) {
                assert!(
                    !told.contains(digits(order)),
                    "{id}'s label {order} told: {told}"
                );
            }
        }
    }
}
