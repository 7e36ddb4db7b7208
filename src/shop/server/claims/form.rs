//! The lead's `lead_claim_approval` form for a claim above the refund limit, and how its
//! answer reads. A dismissed form is never a yes.

use rmcp::ErrorData;
use rmcp::model::{ElicitRequest, ElicitRequestParams, ElicitResult, ElicitationSchema};

use super::super::super::store::Claim;
use super::super::super::{CURRENCY, REFUND_LIMIT};
use super::super::views;
use super::CLAIM_APPROVAL_REQUEST;

pub(super) use super::super::lead_form::Answered;
use super::super::lead_form::YesNo;

/// The claim form's one question.
const APPROVE: YesNo = YesNo {
    field: "approve",
    title: "File the claim",
    description: "Yes files the claim with the carrier; no withdraws it.",
    why: "A damage claim above the refund limit waits for a lead.",
    note: "Optional: why you confirm or withdraw this claim.",
    form: "the claim approval form",
};

/// The form asking a lead to confirm filing `claim` with the carrier.
pub(super) fn approval_form(claim: &Claim, knows_who: bool) -> Result<ElicitRequest, ErrorData> {
    Ok(ElicitRequest::new(
        ElicitRequestParams::FormElicitationParams {
            meta: None,
            message: format!(
                "File a damage claim of {CURRENCY} {} with the carrier for order {} ({})? It is above the {CURRENCY} {REFUND_LIMIT} refund limit, so a lead must confirm it; no withdraws the claim.{}",
                claim.amount,
                claim.order_id,
                views::quoted(&claim.damage),
                if knows_who {
                    " Only a lead who did not file it may confirm it."
                } else {
                    " This shop is reached without staff identities (stdio), so it cannot check that whoever answers is a lead other than the one who filed it."
                }
            ),
            requested_schema: schema()?,
        },
    ))
}

/// The form's answer; a malformed one is a protocol error.
pub(super) fn read_answer(response: &serde_json::Value) -> Result<Answered, ErrorData> {
    let answer: ElicitResult = serde_json::from_value(response.clone()).map_err(|e| {
        ErrorData::invalid_params(
            format!("the {CLAIM_APPROVAL_REQUEST} input response is not a form answer: {e}"),
            None,
        )
    })?;
    APPROVE.read(answer)
}

fn schema() -> Result<ElicitationSchema, ErrorData> {
    APPROVE.schema()
}
