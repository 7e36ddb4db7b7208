use super::*;
use crate::money::Cents;

fn claim(amount: Cents) -> Claim {
    Claim {
        claim_id: "claim-00112233445566778899aabbccddeeff".to_owned(),
        order_id: "O-1001".to_owned(),
        damage: "cracked lid".to_owned(),
        amount,
        filed_by: None,
        created_at_ms: 1_800_000_000_000,
        schedule: ClaimSchedule {
            review_ms: 2_000,
            settle_ms: 1_000,
        },
        answer: None,
        cancelled_at_ms: None,
    }
}

#[test]
fn the_poll_interval_is_a_quarter_of_the_shorter_wait_between_fifty_ms_and_a_second() {
    let at = |review_ms, settle_ms| {
        poll_interval_ms(ClaimSchedule {
            review_ms,
            settle_ms,
        })
    };
    assert_eq!(at(20_000, 10_000), 1000);
    assert_eq!(at(2_000, 1_000), 250);
    assert_eq!(at(100, 100), 50);
}

#[test]
fn a_reviewing_claim_is_a_working_task_with_iso_times_and_a_week_to_live() {
    let claim = claim(Cents(40_00));
    let task = task_of(&claim, claim.created_at_ms + 10);
    assert_eq!(
        serde_json::to_value(&task).expect("task as JSON"),
        json!({
            "taskId": claim.claim_id,
            "status": "working",
            "statusMessage": "The carrier is reviewing the claim.",
            "createdAt": "2027-01-15T08:00:00Z",
            "lastUpdatedAt": "2027-01-15T08:00:00Z",
            "ttlMs": 604_800_000,
            "pollIntervalMs": 250,
        })
    );
}

#[test]
fn a_large_claim_after_review_asks_for_the_lead_form_with_approve_then_note() {
    let claim = claim(Cents(REFUND_LIMIT.0 + 1));
    let task = detailed(&claim, claim.created_at_ms + 2_000, false).expect("task");
    let value = serde_json::to_value(&task).expect("task as JSON");
    assert_eq!(value["status"], "input_required");
    assert_eq!(value["lastUpdatedAt"], "2027-01-15T08:00:02Z");
    let form = &value["inputRequests"][CLAIM_APPROVAL_REQUEST];
    assert_eq!(form["method"], "elicitation/create");
    assert_eq!(
        form["params"]["requestedSchema"]["required"],
        json!(["approve"])
    );
    let message = form["params"]["message"].as_str().expect("message");
    assert!(
        message.starts_with("File a damage claim of EUR 150.01 with the carrier for order O-1001"),
        "{message}"
    );
    assert!(
        message.contains("cannot check that whoever answers"),
        "{message}"
    );
}

#[test]
fn a_settled_claim_completes_with_words_and_structured_content() {
    let claim = claim(Cents(40_00));
    let task = detailed(&claim, claim.created_at_ms + 3_000, false).expect("task");
    let value = serde_json::to_value(&task).expect("task as JSON");
    assert_eq!(value["status"], "completed");
    assert_eq!(value["result"]["isError"], false);
    assert_eq!(
        value["result"]["structuredContent"],
        json!({
            "claim_id": claim.claim_id,
            "order_id": "O-1001",
            "status": "accepted",
            "amount": "40.00",
            "currency": "EUR",
            "carrier_reference": claim.carrier_reference(),
        })
    );
    let text = value["result"]["content"][0]["text"]
        .as_str()
        .expect("text");
    assert!(
        text.contains("accepted") && text.contains(&claim.carrier_reference()),
        "{text}"
    );
}

#[test]
fn only_an_accepted_form_with_a_yes_is_a_yes() {
    let read = |value: serde_json::Value| form::read_answer(&value);
    assert!(matches!(
        read(json!({"action": "accept", "content": {"approve": true, "note": " ok "}})),
        Ok(form::Answered::Yes(Some(note))) if note == "ok"
    ));
    assert!(matches!(
        read(json!({"action": "accept", "content": {"approve": false}})),
        Ok(form::Answered::No)
    ));
    assert!(matches!(
        read(json!({"action": "decline"})),
        Ok(form::Answered::Declined)
    ));
    assert!(matches!(
        read(json!({"action": "cancel"})),
        Ok(form::Answered::Dismissed)
    ));
    assert!(read(json!({"action": "accept", "content": {}})).is_err());
    let long = "x".repeat(501);
    assert!(read(json!({"action": "accept", "content": {"approve": true, "note": long}})).is_err());
}
