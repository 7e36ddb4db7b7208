//! Release forms across replicas: the two-person rule, forged and replayed `requestState`,
//! two leads answering one form at once. Each scenario runs on either record.

use rmcp::model::{CallToolResponse, CallToolResult, ErrorCode};
use rmcp::service::ServiceError;
use serde_json::{Value, json};

use super::{Replica, Shop, as_staff, delivered_orders, quote};
use crate::shop_http::{Form, answer_as, held_for_a_lead, release_as};
use crate::support::*;

/// The answer a person gives the form: yes, or a decline.
fn yes() -> Value {
    json!({"action": "accept", "content": {"release": true}})
}

fn declined() -> Value {
    json!({"action": "decline"})
}

async fn completed(
    client: &Client,
    quote_id: &Value,
    form: &Form,
    answer: Value,
) -> CallToolResult {
    match answer_as(client, quote_id, form, answer).await {
        Ok(CallToolResponse::Complete(result)) => result,
        other => panic!("an answer, not {other:?}"),
    }
}

/// The refund's status and who released it, as the record holds them.
async fn standing(shop: &Shop, order_id: &str) -> (String, Option<String>) {
    let refunds = shop.refunds(order_id).await;
    assert_eq!(refunds.len(), 1, "{order_id}: one refund");
    let refund = &refunds[0];
    let status = serde_json::to_value(refund.status).expect("a status");
    (
        status.as_str().expect("a word").to_owned(),
        refund.released_by.clone(),
    )
}

/// Over both replicas: the issuer's and a non-lead's yes are refused and the refund stays
/// held; a lead who issued a refund cannot release it; another lead can, once.
pub(super) async fn two_person_rule(shop: &Shop, replicas: &[Replica; 2]) {
    let [(order_id, sku), (own_order, own_sku)] = delivered_orders(true, 2)
        .try_into()
        .expect("two orders above the limit");
    let issuer = as_staff(&replicas[0], "staff-0007").await;
    let quoted = quote(&issuer, &order_id, Some(&sku)).await;
    let form = held_for_a_lead(&issuer, &quoted["quote_id"]).await;
    for who in ["staff-0007", "staff-0008"] {
        let client = as_staff(&replicas[1], who).await;
        let refused = release_as(&client, &quoted["quote_id"], &form).await;
        let said = tool_error(&refused);
        assert!(
            said.contains(&format!("{who} is not one: a lead other than staff-0007 must release this refund; it stays held")),
            "{said}"
        );
        assert_eq!(standing(shop, &order_id).await, ("held".into(), None));
    }
    let lead = as_staff(&replicas[1], "lead-0002").await;
    let own = quote(&lead, &own_order, Some(&own_sku)).await;
    let own_form = held_for_a_lead(&lead, &own["quote_id"]).await;
    let refused = release_as(&lead, &own["quote_id"], &own_form).await;
    let said = tool_error(&refused);
    assert!(
        said.starts_with("A lead other than lead-0002 must release refund R-")
            && said
                .ends_with(": the one who issued a refund cannot release it too; it stays held."),
        "{said}"
    );
    assert_eq!(standing(shop, &own_order).await, ("held".into(), None));

    let released = json(&release_as(&lead, &quoted["quote_id"], &form).await);
    assert_eq!(
        (&released["status"], &released["released_by"]),
        (&json!("released"), &json!("lead-0002"))
    );
    assert_eq!(
        standing(shop, &order_id).await,
        ("released".into(), Some("lead-0002".into()))
    );
}

/// The people the state scenarios need: staff-0007 on one replica, a lead on each.
struct People {
    staff: Client,
    lead_a: Client,
    lead_b: Client,
}

/// A forged state is refused; a state replayed after its form was answered (released, or
/// declined) is refused with words that teach; two leads answering one form at once on two
/// replicas release it once.
pub(super) async fn spent_and_forged_states(shop: &Shop, replicas: &[Replica; 2]) {
    let orders = delivered_orders(true, 5);
    let people = People {
        staff: as_staff(&replicas[0], "staff-0007").await,
        lead_a: as_staff(&replicas[0], "lead-0003").await,
        lead_b: as_staff(&replicas[1], "lead-0002").await,
    };
    forged_state(shop, &people, &orders[2]).await;
    raced_and_replayed_release(shop, &people, &orders[3]).await;
    replayed_after_a_decline(shop, &people, &orders[4]).await;
}

async fn forged_state(shop: &Shop, people: &People, (order_id, sku): &(String, String)) {
    let quoted = quote(&people.staff, order_id, Some(sku)).await;
    let (key, _) = held_for_a_lead(&people.staff, &quoted["quote_id"]).await;
    let forged = (key, Some("rs1.forged.state".to_owned()));
    match answer_as(&people.lead_b, &quoted["quote_id"], &forged, yes()).await {
        Err(ServiceError::McpError(error)) => {
            assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
            assert!(
                error.message.contains("call issue_refund again without it"),
                "{}",
                error.message
            );
        }
        other => panic!("a forged state is refused, not {other:?}"),
    }
    assert_eq!(standing(shop, order_id).await, ("held".into(), None));
}

/// Two leads on two replicas answer one form at once: one release, the other refused; the
/// form replayed after the release is refused too, and it stays released once.
async fn raced_and_replayed_release(
    shop: &Shop,
    people: &People,
    (order_id, sku): &(String, String),
) {
    let quoted = quote(&people.staff, order_id, Some(sku)).await;
    let form = held_for_a_lead(&people.staff, &quoted["quote_id"]).await;
    let (first, second) = tokio::join!(
        release_as(&people.lead_a, &quoted["quote_id"], &form),
        release_as(&people.lead_b, &quoted["quote_id"], &form),
    );
    let results = [first, second];
    let winner = results
        .iter()
        .find(|r| r.is_error == Some(false))
        .map(|r| {
            json(r)["released_by"]
                .as_str()
                .unwrap_or_default()
                .to_owned()
        })
        .expect("one lead released it");
    let loser = results
        .iter()
        .find(|r| r.is_error == Some(true))
        .expect("the other was refused");
    assert!(
        tool_error(loser).contains(&format!(
            "was answered already: {winner} released it, and nothing is paid twice"
        )),
        "{}",
        tool_error(loser)
    );
    let replayed = release_as(&people.lead_a, &quoted["quote_id"], &form).await;
    assert!(tool_error(&replayed).contains(&format!("{winner} released it")));
    assert_eq!(
        standing(shop, order_id).await,
        ("released".into(), Some(winner))
    );
}

/// Replayed after a decline: refused, still held; a fresh form can still release it.
async fn replayed_after_a_decline(
    shop: &Shop,
    people: &People,
    (order_id, sku): &(String, String),
) {
    let quoted = quote(&people.staff, order_id, Some(sku)).await;
    let form = held_for_a_lead(&people.staff, &quoted["quote_id"]).await;
    let no = completed(&people.lead_b, &quoted["quote_id"], &form, declined()).await;
    assert!(tool_error(&no).contains("declined to release refund"));
    let replayed = completed(&people.lead_a, &quoted["quote_id"], &form, yes()).await;
    assert!(
        tool_error(&replayed).contains(
            "was answered already: lead-0002 declined it, so the shop still holds it. To ask a lead again, call issue_refund again without requestState."
        ),
        "{}",
        tool_error(&replayed)
    );
    assert_eq!(standing(shop, order_id).await, ("held".into(), None));
    let fresh = held_for_a_lead(&people.staff, &quoted["quote_id"]).await;
    let released = json(&release_as(&people.lead_a, &quoted["quote_id"], &fresh).await);
    assert_eq!(released["released_by"], "lead-0003");
    assert_eq!(
        standing(shop, order_id).await,
        ("released".into(), Some("lead-0003".into()))
    );
}
