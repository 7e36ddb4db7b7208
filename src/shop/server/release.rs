//! The lead's half of `issue_refund`: the release form, its sealed `requestState`, and the
//! answer that comes back.
//!
//! The sealed state is bound to the quote and expires; it is opened before anything is
//! believed, and a dismissed form is never a yes. Moving money stays with the store.

use std::time::Duration;

use rmcp::ErrorData;
use rmcp::model::{
    CallToolResponse, ElicitRequest, ElicitRequestParams, ElicitResult, ElicitationSchema,
    InputRequest, InputRequests, InputRequiredResult, SealOptions,
};
use serde::{Deserialize, Serialize};

use super::super::store::{Refund, RefundStatus, ReleaseAnswer};
use super::super::{CURRENCY, REFUND_LIMIT, ids};
use super::lead_form::{Answered, YesNo};
use super::views::{refund_result, shop_error, tool_error};
use super::{IssueArgs, RELEASE_REQUEST, ShopServer};

/// A lead has this long to answer a release form before the sealed state expires.
const RELEASE_STATE_TTL: Duration = Duration::from_secs(15 * 60);

/// What is sealed into `requestState` while a lead decides: the refund, and the form the
/// store opened for it, which is answered once.
#[derive(Debug, Serialize, Deserialize)]
struct ReleaseState {
    refund_id: String,
    ask: String,
    /// The refund's order, to find it again when a client asks for the form once more.
    #[serde(default)]
    order_id: String,
}

impl ShopServer {
    /// Asks a lead, through an input request, to release the held `refund`.
    pub(super) async fn ask_lead(
        &self,
        refund: &Refund,
        knows_who: bool,
    ) -> Result<CallToolResponse, ErrorData> {
        let ask = match self.store.ask(&refund.refund_id).await {
            Ok(ask) => ask,
            Err(e) => return Ok(shop_error(e).into()),
        };
        self.release_form(refund, ask, knows_who)
    }

    /// The release form for `refund` and its open `ask`, with the state sealed for it.
    fn release_form(
        &self,
        refund: &Refund,
        ask: String,
        knows_who: bool,
    ) -> Result<CallToolResponse, ErrorData> {
        let sealed = self
            .codec
            .seal_json_with(
                &ReleaseState {
                    refund_id: refund.refund_id.clone(),
                    ask,
                    order_id: refund.order_id.clone(),
                },
                &SealOptions::new()
                    .associated_data(release_binding(&refund.quote_id).as_bytes())
                    .ttl(RELEASE_STATE_TTL),
            )
            .map_err(|e| {
                ErrorData::internal_error(format!("cannot seal request state: {e}"), None)
            })?;
        let form = ElicitRequest::new(ElicitRequestParams::FormElicitationParams {
            meta: None,
            message: format!(
                "Release refund {} of {CURRENCY} {} on order {}? It is above the {CURRENCY} {REFUND_LIMIT} refund limit, so a lead must confirm it.{}",
                refund.refund_id,
                refund.amount,
                refund.order_id,
                if knows_who {
                    " Only a lead who did not issue it may release it."
                } else {
                    " This shop is reached without staff identities (stdio), so it cannot check that whoever answers is a lead other than the one who issued it."
                }
            ),
            requested_schema: release_form()?,
        });
        let requests =
            InputRequests::from([(RELEASE_REQUEST.to_owned(), InputRequest::Elicitation(form))]);
        Ok(InputRequiredResult::new(Some(requests), Some(sealed)).into())
    }

    /// The second round of `issue_refund`: the lead has answered the release form. The store
    /// takes the answer once; a replayed state is refused there, with words that teach.
    pub(super) async fn finish_release(
        &self,
        args: &IssueArgs,
        sealed: &str,
        responses: Option<rmcp::model::InputResponses>,
        staff: Option<&super::StaffId>,
    ) -> Result<CallToolResponse, ErrorData> {
        let quote_id = ids::quote_id(&args.quote_id)
            .ok_or_else(|| ErrorData::invalid_params("invalid or expired requestState", None))?;
        // Any failure to open is one answer to the client; the detail is for our log.
        let state: ReleaseState = self
            .codec
            .open_json_with(sealed, release_binding(&quote_id).as_bytes())
            .map_err(|e| {
                tracing::warn!(error = %e, %quote_id, "refused a requestState");
                ErrorData::invalid_params(
                    "invalid or expired requestState; call issue_refund again without it",
                    None,
                )
            })?;
        // A round with the state and no answer asks for the form again: a lead's desk shows
        // the shop's own words for the held refund, never what another desk stored of them.
        if !responses
            .as_ref()
            .is_some_and(|r| r.contains_key(RELEASE_REQUEST))
        {
            return self.release_form_again(state, staff.is_some()).await;
        }
        let answered = read_answer(responses)?;
        let (answer, note) = match &answered {
            Answered::Yes(note) => (ReleaseAnswer::Release, note.as_deref()),
            Answered::No | Answered::Declined => (ReleaseAnswer::Hold, None),
            Answered::Dismissed => (ReleaseAnswer::Dismiss, None),
        };
        let by = staff.map(|s| (s.id.as_str(), s.lead));
        let ReleaseState { refund_id, ask, .. } = state;
        let refund = match self.store.answer(&refund_id, &ask, answer, by, note).await {
            Ok(refund) => refund,
            Err(e) => return Ok(shop_error(e).into()),
        };
        let result = match answered {
            Answered::Yes(_) => refund_result(&refund),
            Answered::No => tool_error(format!(
                "The lead did not release refund {refund_id}, so the shop still holds it. Tell the customer the refund awaits a lead's review; do not say it was paid."
            )),
            Answered::Declined => tool_error(format!(
                "The lead declined to release refund {refund_id}, so the shop still holds it. Tell the customer the refund awaits a lead's review; do not say it was paid."
            )),
            Answered::Dismissed => tool_error(format!(
                "The release form for refund {refund_id} was closed without an answer, so the shop still holds it. Nothing was paid."
            )),
        };
        Ok(result.into())
    }
}

impl ShopServer {
    /// The form of a sealed state once more, for the same open ask: the refund as the shop
    /// holds it now. A refund no longer held is what the shop did with it.
    async fn release_form_again(
        &self,
        state: ReleaseState,
        knows_who: bool,
    ) -> Result<CallToolResponse, ErrorData> {
        let refunds = match self.store.order(&state.order_id).await {
            Ok((_, refunds)) => refunds,
            Err(e) => return Ok(shop_error(e).into()),
        };
        let Some(refund) = refunds.into_iter().find(|r| r.refund_id == state.refund_id) else {
            return Ok(tool_error(format!(
                "The shop has no refund {} for this requestState; call issue_refund again without it.",
                state.refund_id
            ))
            .into());
        };
        if refund.status != RefundStatus::Held {
            return Ok(refund_result(&refund).into());
        }
        self.release_form(&refund, state.ask, knows_who)
    }
}

/// The release form's answer among `responses`; a malformed one is a protocol error.
fn read_answer(responses: Option<rmcp::model::InputResponses>) -> Result<Answered, ErrorData> {
    let answer: ElicitResult = responses
        .as_ref()
        .and_then(|r| r.get(RELEASE_REQUEST))
        .cloned()
        .ok_or_else(|| {
            ErrorData::invalid_params(
                format!("missing the {RELEASE_REQUEST} input response"),
                None,
            )
        })
        .and_then(|v| {
            serde_json::from_value(v).map_err(|e| ErrorData::invalid_params(e.to_string(), None))
        })?;
    RELEASE.read(answer)
}

/// What a release form's sealed state is bound to: this tool and this quote.
fn release_binding(quote_id: &str) -> String {
    format!("shop-support|issue_refund|{quote_id}")
}

/// The release form's one question.
const RELEASE: YesNo = YesNo {
    field: "release",
    title: "Release the refund",
    description: "Yes pays the customer now; no keeps the refund held.",
    why: "A refund above the limit waits for a lead.",
    note: "Optional: why you release or hold this refund.",
    form: "the release form",
};

fn release_form() -> Result<ElicitationSchema, ErrorData> {
    RELEASE.schema()
}
