//! The lead's `lead_claim_approval` form for a claim above the refund limit, and how its
//! answer reads. A dismissed form is never a yes.

use rmcp::ErrorData;
use rmcp::model::{
    BooleanSchema, ElicitRequest, ElicitRequestParams, ElicitResult, ElicitationAction,
    ElicitationSchema, PrimitiveSchemaDefinition, StringSchema,
};

use super::super::super::store::Claim;
use super::super::super::{CURRENCY, REFUND_LIMIT};
use super::super::views;
use super::CLAIM_APPROVAL_REQUEST;

/// Longest note a lead may leave on a claim.
const NOTE_MAX_CHARS: u32 = 500;

/// How the person answered the form, read before anything is believed.
pub(super) enum Answered {
    Yes(Option<String>),
    No,
    Declined,
    Dismissed,
}

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
    match answer.action {
        ElicitationAction::Accept => {
            let content = answer.content.unwrap_or_default();
            let note = content
                .get("note")
                .and_then(|v| v.as_str())
                .map(str::trim)
                .filter(|n| !n.is_empty());
            match (content.get("approve").and_then(|v| v.as_bool()), note) {
                (None, _) => Err(ErrorData::invalid_params(
                    "the claim approval form needs a yes or no in 'approve'",
                    None,
                )),
                (Some(_), Some(note)) if note.chars().count() > NOTE_MAX_CHARS as usize => {
                    Err(ErrorData::invalid_params(
                        format!("the note is longer than {NOTE_MAX_CHARS} characters"),
                        None,
                    ))
                }
                (Some(true), note) => Ok(Answered::Yes(note.map(str::to_owned))),
                (Some(false), _) => Ok(Answered::No),
            }
        }
        ElicitationAction::Decline => Ok(Answered::Declined),
        // Cancel, and anything a later revision adds: a dismissed form is never a yes.
        _ => Ok(Answered::Dismissed),
    }
}

fn schema() -> Result<ElicitationSchema, ErrorData> {
    let note = StringSchema::new()
        .title("Note for the record")
        .description("Optional: why you confirm or withdraw this claim.")
        .with_length(0, NOTE_MAX_CHARS)
        .map_err(|e| ErrorData::internal_error(e, None))?;
    let approve = BooleanSchema::new()
        .title("File the claim")
        .description("Yes files the claim with the carrier; no withdraws it.");
    let mut schema = ElicitationSchema::new(
        [
            (
                "approve".to_owned(),
                PrimitiveSchemaDefinition::Boolean(approve),
            ),
            ("note".to_owned(), PrimitiveSchemaDefinition::String(note)),
        ]
        .into(),
    )
    .with_required(vec!["approve".to_owned()])
    .with_description("A damage claim above the refund limit waits for a lead.");
    schema.property_order = Some(vec!["approve".to_owned(), "note".to_owned()]);
    Ok(schema)
}
