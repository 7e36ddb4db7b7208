//! `file_damage_claim`: a damage claim with the carrier, answered as a task (the MCP tasks
//! extension, `io.modelcontextprotocol/tasks`) and never inline.
//!
//! The task is the claim's row in the shop's record: `tasks/get` reads it and works out where
//! it stands from its times and answer, so any replica, or a shop restarted on the same
//! record, answers for every claim. A claim above the refund limit waits for a lead's
//! `lead_claim_approval` form; a dismissed form is never a yes. Offered only when the shop is
//! started with claims on ([`ShopServer::with_claims`]); otherwise no task is known.

use std::time::Duration;

use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolResponse, CallToolResult, ContentBlock, CreateTaskResult, DetailedTask, GetTaskResult,
    InputRequest, InputRequests, Task, TaskPayload, TaskStatus,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, tool, tool_router};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::super::store::{
    AnswerTaken, Claim, ClaimOutcome, ClaimSchedule, ClaimStage, ShopError, claim_clock_ms,
};
use super::super::{CURRENCY, REFUND_LIMIT};
use super::views::{self, shop_error, tool_error};
use super::{ShopServer, staff_of};

mod form;

/// The key of the lead's form in a claim task's input requests.
pub const CLAIM_APPROVAL_REQUEST: &str = "lead_claim_approval";

/// How long a client may count on a claim task being kept.
const CLAIM_TASK_TTL_MS: u64 = 7 * 24 * 60 * 60 * 1000;
/// The longest and the shortest poll interval the shop suggests.
const POLL_MAX_MS: i64 = 1000;
const POLL_MIN_MS: i64 = 50;

/// How long a claim spends with the carrier. The defaults are the carrier's; tests shorten
/// them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClaimTimes {
    /// From filing until the carrier has reviewed the claim.
    pub review: Duration,
    /// From the lead's answer (or the end of review) until the carrier has settled it.
    pub settle: Duration,
}

impl Default for ClaimTimes {
    fn default() -> Self {
        Self {
            review: Duration::from_secs(20),
            settle: Duration::from_secs(10),
        }
    }
}

impl ClaimTimes {
    fn schedule(self) -> ClaimSchedule {
        let ms = |d: Duration| i64::try_from(d.as_millis()).unwrap_or(i64::MAX);
        ClaimSchedule {
            review_ms: ms(self.review),
            settle_ms: ms(self.settle),
        }
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ClaimArgs {
    /// The order whose parcel arrived damaged: "O-" followed by four digits, from the ticket
    /// or a tool result. Never make one up.
    pub order_id: String,
    /// What arrived damaged, in a few words.
    pub damage: String,
}

#[tool_router(router = claims_router, vis = "pub(super)")]
impl ShopServer {
    #[tool(
        title = "File a damage claim",
        description = "File a damage claim with the carrier for a parcel that arrived damaged. The claim is for the order's total. It runs as a task (the client must support the io.modelcontextprotocol/tasks extension): the carrier reviews it, a lead confirms a claim above the refund limit, then the carrier settles it as accepted or withdrawn.",
        annotations(
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = true
        )
    )]
    async fn file_damage_claim(
        &self,
        Parameters(args): Parameters<ClaimArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> CallToolResponse {
        let Some(times) = self.claims else {
            // The tool is routed only with claims on; this is a second lock on that door.
            return tool_error("This shop does not file damage claims.").into();
        };
        // rmcp would turn a task for such a client into a protocol error; the model should
        // read why instead, and nothing is filed.
        if !ctx
            .client_capabilities()
            .is_some_and(|caps| caps.supports_tasks())
        {
            return tool_error(format!(
                "file_damage_claim runs as a task, and this client did not declare the {} extension: the client must declare it in its capabilities to file a claim. Nothing was filed.",
                rmcp::model::TASKS_EXTENSION_ID
            ))
            .into();
        }
        let staff = staff_of(&ctx);
        let filed_by = staff.as_ref().map(|s| s.id.as_str());
        match Box::pin(self.store.file_claim(
            &args.order_id,
            &args.damage,
            filed_by,
            times.schedule(),
        ))
        .await
        {
            Ok(claim) => {
                tracing::info!(claim = %claim.claim_id, order = %claim.order_id, "filed a damage claim");
                CallToolResponse::Task(CreateTaskResult::new(task_of(&claim, claim_clock_ms())))
            }
            Err(e) => shop_error(e).into(),
        }
    }
}

impl ShopServer {
    /// `tasks/get`: the claim as it stands now.
    pub(super) async fn claim_task(
        &self,
        task_id: &str,
        ctx: &RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        let claim = self.known_claim(task_id).await?;
        let knows_who = staff_of(ctx).is_some();
        Ok(GetTaskResult::new(detailed(
            &claim,
            claim_clock_ms(),
            knows_who,
        )?))
    }

    /// `tasks/update`: a lead's answer to the outstanding form. Only that key is read;
    /// others, and a form no longer outstanding, are ignored. A dismissed form changes
    /// nothing.
    pub(super) async fn update_claim_task(
        &self,
        task_id: &str,
        responses: &rmcp::model::InputResponses,
        ctx: &RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let claim = self.known_claim(task_id).await?;
        let now = claim_clock_ms();
        let Some(response) = responses.get(CLAIM_APPROVAL_REQUEST) else {
            return Ok(());
        };
        if !matches!(claim.stage(now), ClaimStage::AwaitingLead { .. }) {
            return Ok(());
        }
        let (approve, note) = match form::read_answer(response)? {
            form::Answered::Yes(note) => (true, note),
            form::Answered::No | form::Answered::Declined => (false, None),
            form::Answered::Dismissed => return Ok(()),
        };
        let staff = staff_of(ctx);
        let by = staff.as_ref().map(|s| (s.id.as_str(), s.lead));
        match self
            .store
            .answer_claim(task_id, approve, note.as_deref(), by, now)
            .await
        {
            Ok(Some(AnswerTaken::Stored)) => {
                tracing::info!(claim = task_id, approve, by = ?by.map(|(id, _)| id), "a lead answered a damage claim");
                Ok(())
            }
            Ok(Some(AnswerTaken::NotOutstanding)) => Ok(()),
            Ok(None) => Err(unknown_task(task_id)),
            Err(e) => Err(refusal(e)),
        }
    }

    /// `tasks/cancel`: cancels a claim that has not settled; a settled one stays as it is.
    pub(super) async fn cancel_claim_task(&self, task_id: &str) -> Result<(), ErrorData> {
        self.known_claim(task_id).await?;
        match self.store.cancel_claim(task_id, claim_clock_ms()).await {
            Ok(Some(_)) => Ok(()),
            Ok(None) => Err(unknown_task(task_id)),
            Err(e) => Err(refusal(e)),
        }
    }

    /// The claim behind `task_id`; with claims off, or without such a claim, it is unknown.
    async fn known_claim(&self, task_id: &str) -> Result<Claim, ErrorData> {
        if self.claims.is_none() {
            return Err(unknown_task(task_id));
        }
        match self.store.claim(task_id).await {
            Ok(Some(claim)) => Ok(claim),
            Ok(None) => Err(unknown_task(task_id)),
            Err(e) => Err(refusal(e)),
        }
    }
}

fn unknown_task(task_id: &str) -> ErrorData {
    ErrorData::invalid_params(
        format!(
            "unknown task: the shop has no task {}; task IDs come only from file_damage_claim",
            views::quoted(task_id)
        ),
        None,
    )
}

/// A store refusal on a task request: the rule's own words, or the database's failure.
fn refusal(error: ShopError) -> ErrorData {
    match error {
        ShopError::Database(_)
        | ShopError::Postgres(_)
        | ShopError::Unreachable { .. }
        | ShopError::Corrupt(_) => {
            tracing::error!(%error, "shop store failed");
            ErrorData::internal_error(error.to_string(), None)
        }
        rule => ErrorData::invalid_params(rule.to_string(), None),
    }
}

/// The task's base fields for `claim` at `now_ms`.
fn task_of(claim: &Claim, now_ms: i64) -> Task {
    let stage = claim.stage(now_ms);
    let status = match stage {
        ClaimStage::Reviewing { .. } | ClaimStage::Settling { .. } => TaskStatus::Working,
        ClaimStage::AwaitingLead { .. } => TaskStatus::InputRequired,
        ClaimStage::Settled { .. } => TaskStatus::Completed,
        ClaimStage::Cancelled { .. } => TaskStatus::Cancelled,
    };
    Task::new(
        claim.claim_id.clone(),
        status,
        iso8601(claim.created_at_ms),
        iso8601(stage.since_ms()),
    )
    .with_status_message(status_message(claim, stage))
    .with_ttl_ms(CLAIM_TASK_TTL_MS)
    .with_poll_interval_ms(poll_interval_ms(claim.schedule))
}

/// The claim as `tasks/get` answers it: its form while it waits for a lead, its result once
/// settled.
fn detailed(claim: &Claim, now_ms: i64, knows_who: bool) -> Result<DetailedTask, ErrorData> {
    let task = task_of(claim, now_ms);
    let payload = match claim.stage(now_ms) {
        ClaimStage::Reviewing { .. } | ClaimStage::Settling { .. } => TaskPayload::Working,
        ClaimStage::AwaitingLead { .. } => TaskPayload::InputRequired {
            input_requests: InputRequests::from([(
                CLAIM_APPROVAL_REQUEST.to_owned(),
                InputRequest::Elicitation(form::approval_form(claim, knows_who)?),
            )]),
        },
        ClaimStage::Settled { outcome, .. } => TaskPayload::Completed {
            result: as_object(settled_result(claim, outcome))?,
        },
        ClaimStage::Cancelled { .. } => TaskPayload::Cancelled,
    };
    Ok(DetailedTask::new(task, payload))
}

fn status_message(claim: &Claim, stage: ClaimStage) -> String {
    match stage {
        ClaimStage::Reviewing { .. } => "The carrier is reviewing the claim.".to_owned(),
        ClaimStage::AwaitingLead { .. } => format!(
            "The claim of {CURRENCY} {} is above the {CURRENCY} {REFUND_LIMIT} refund limit, so a lead must confirm filing it with the carrier.",
            claim.amount
        ),
        ClaimStage::Settling { .. } => "The carrier is settling the claim.".to_owned(),
        ClaimStage::Settled {
            outcome: ClaimOutcome::Accepted,
            ..
        } => "The carrier accepted the claim.".to_owned(),
        ClaimStage::Settled {
            outcome: ClaimOutcome::Withdrawn,
            ..
        } => "A lead declined to file the claim, so it was withdrawn.".to_owned(),
        ClaimStage::Cancelled { .. } => {
            "The claim was cancelled before the carrier settled it; nothing was claimed.".to_owned()
        }
    }
}

/// What a settled claim answers: words for people and the model, and the same facts as
/// structured content.
fn settled_result(claim: &Claim, outcome: ClaimOutcome) -> CallToolResult {
    let (text, reference) = match outcome {
        ClaimOutcome::Accepted => {
            let reference = claim.carrier_reference();
            (
                format!(
                    "The carrier accepted damage claim {} on order {} for {CURRENCY} {} ({}). Carrier reference {reference}.",
                    claim.claim_id,
                    claim.order_id,
                    claim.amount,
                    views::quoted(&claim.damage)
                ),
                Some(reference),
            )
        }
        ClaimOutcome::Withdrawn => (
            format!(
                "Damage claim {} on order {} for {CURRENCY} {} was withdrawn: a lead declined to file it with the carrier, so nothing was claimed.",
                claim.claim_id, claim.order_id, claim.amount
            ),
            None,
        ),
    };
    let mut structured = json!({
        "claim_id": claim.claim_id,
        "order_id": claim.order_id,
        "status": outcome.as_str(),
        "amount": claim.amount,
        "currency": CURRENCY,
    });
    if let Some(reference) = reference {
        structured["carrier_reference"] = json!(reference);
    }
    let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
    result.structured_content = Some(structured);
    result
}

fn as_object(result: CallToolResult) -> Result<rmcp::model::JsonObject, ErrorData> {
    match serde_json::to_value(result) {
        Ok(serde_json::Value::Object(object)) => Ok(object),
        Ok(_) => Err(ErrorData::internal_error(
            "a tool result is not a JSON object",
            None,
        )),
        Err(e) => Err(ErrorData::internal_error(
            format!("cannot write the claim's result: {e}"),
            None,
        )),
    }
}

/// A quarter of the shorter wait, between 50 ms and a second.
fn poll_interval_ms(schedule: ClaimSchedule) -> u64 {
    let quarter = schedule.review_ms.min(schedule.settle_ms) / 4;
    u64::try_from(quarter.clamp(POLL_MIN_MS, POLL_MAX_MS)).unwrap_or(1000)
}

/// Unix milliseconds as an ISO 8601 UTC time.
fn iso8601(ms: i64) -> String {
    jiff::Timestamp::from_millisecond(ms)
        .map(|t| t.to_string())
        .unwrap_or_else(|_| jiff::Timestamp::UNIX_EPOCH.to_string())
}

#[cfg(test)]
mod tests;
