//! Approvals across desks: a form the config gives to a lead (`lead_forms`) never reaches
//! the person whose run asked for it. On a team's desk the call stops there and the form is
//! filed in the team's record; a lead, at their own desk, opens it, answers it, and their desk
//! sends the call's next round over its own connection as them, so the server sees the lead.
//! The server's answer becomes the call's outcome on the ticket, and the asking desk's run
//! goes on from it (see [`crate::host::run::continuation`]).

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{ElicitRequestParams, InputResponses};
use serde_json::Value;

use crate::host::api::{ApprovalView, FormAnswer, FormKind};
use crate::host::core::Host;
use crate::host::events::HostEvent;
use crate::host::run::ask::Consent;
use crate::host::servers::calls::{self, CallPlan, CallRun, NextRound, Parked};
use crate::host::servers::connect::ServerConn;
use crate::host::servers::elicitation::ask_person;
use crate::host::servers::form_wire;
use crate::record::postgres::{Approval, NewApproval};
use crate::record::{Event, Outcome};

impl Host {
    /// Whether this tool's forms go to the team's leads from this desk: the config says they
    /// are a lead's, and the record is a team's (on one person's desk its person is every
    /// role, and answers them).
    pub(in crate::host) fn forms_go_to_leads(&self, conn: &ServerConn, tool: &str) -> bool {
        self.record.team_url().is_some() && conn.config.lead_forms.iter().any(|t| t == tool)
    }

    /// Files a call's parked form for the team's leads; the approval's ID, or why not.
    pub(in crate::host) async fn park(
        &self,
        asked: &Consent<'_>,
        parked: &Parked,
    ) -> Result<i64, String> {
        let new = NewApproval {
            ticket: asked.ticket.to_owned(),
            turn: asked.turn,
            server: asked.conn.prefix.clone(),
            origin: asked.conn.origin.clone(),
            tool: asked.name.tool.clone(),
            canonical: asked.canonical.to_owned(),
            arguments: asked.call.arguments.clone(),
            request_key: parked.key.clone(),
            form: parked.form.clone(),
            message: parked.message.clone(),
            request_state: parked.request_state.clone(),
            task: parked.task.clone(),
            // Checked when the config was loaded.
            fallback: self
                .config
                .approvals
                .fallback()
                .ok()
                .flatten()
                .map(|f| (f.after, f.to)),
        };
        let (approval, appended) = self
            .record
            .ask_approval(&new)
            .await
            .map_err(|e| e.to_string())?;
        self.announce(appended);
        self.approvals_changed().await;
        Ok(approval.id)
    }

    /// The team's open approvals, oldest first, as people read them.
    pub async fn approvals(&self) -> Result<Vec<ApprovalView>, String> {
        let open = self
            .record
            .open_approvals()
            .await
            .map_err(|e| e.to_string())?;
        Ok(open.iter().map(view).collect())
    }

    /// Tells the driver the open approvals as they are now.
    pub async fn approvals_changed(&self) {
        if self.record.team_url().is_none() {
            return;
        }
        match self.approvals().await {
            Ok(open) => {
                let _ = self.events.send(HostEvent::Approvals(open));
            }
            Err(problem) => tracing::warn!(%problem, "could not list the open approvals"),
        }
    }

    /// Watches the team's approvals while the desk is open: carries out each fallback as it
    /// falls due (any desk of the team may; the record lets each happen once), and tells the
    /// driver the open ones again every minute, so their ages on screen move. `None` on one
    /// person's desk, where nothing is filed.
    pub fn watch_approvals(self: &Arc<Self>) -> Option<tokio::task::JoinHandle<()>> {
        self.record.team_url()?;
        let host = Arc::clone(self);
        Some(tokio::spawn(async move {
            let mut ticks = 0u32;
            loop {
                tokio::time::sleep(WATCH_EVERY).await;
                ticks = ticks.wrapping_add(1);
                let fell_back = match host.record.fall_back_due().await {
                    Ok(done) => done,
                    Err(e) => {
                        tracing::warn!(error = %e, "could not carry out the approvals' fallbacks; trying again");
                        vec![]
                    }
                };
                let changed = !fell_back.is_empty();
                for appended in fell_back {
                    host.announce(appended);
                }
                if changed || ticks.is_multiple_of(AGES_EVERY) {
                    host.approvals_ageing(changed).await;
                }
            }
        }))
    }

    /// The open approvals to the driver: always after a change, else only while some are
    /// open (an idle desk with nothing waiting is not woken).
    async fn approvals_ageing(&self, changed: bool) {
        match self.approvals().await {
            Ok(open) if changed || !open.is_empty() => {
                let _ = self.events.send(HostEvent::Approvals(open));
            }
            Ok(_) => {}
            Err(problem) => tracing::warn!(%problem, "could not list the open approvals"),
        }
    }

    /// This desk's person, a lead, answers approval `id`: with `answer` when a script gives
    /// it, else through the server's form at this desk. Their desk then sends the call's next
    /// round as them; the server's answer is recorded on the ticket as the call's outcome.
    pub async fn answer_approval(
        &self,
        id: i64,
        answer: Option<FormAnswer>,
    ) -> Result<CallRun, String> {
        let approval = self.answerable(id).await?;
        let conn = self.server(&approval.server).ok_or_else(|| {
            format!(
                "this desk has no server \"{}\", which asked for approval {id}; its config must name the server as the asking desk's does",
                approval.server
            )
        })?;
        // Only the server that asked may get the answer: a desk whose config reaches another
        // server under the same prefix (the bundled shop for the team's) would send it there.
        if conn.origin != approval.origin {
            return Err(format!(
                "approval {id} was asked of {server} at {asked}, and this desk's {server} is {here}: answer it from a desk whose config reaches the server that asked (give its --config)",
                server = approval.server,
                asked = approval.origin,
                here = conn.origin,
            ));
        }
        // The asker's row says which tool, with what, and the server's state; this desk acts
        // only on a tool its own config gives to leads, and never calls one afresh.
        if !conn.config.lead_forms.contains(&approval.tool) {
            return Err(format!(
                "approval {id} is for {}.{}, whose forms this desk's config does not give to leads (lead_forms): it answers only what it would have asked a lead itself",
                approval.server, approval.tool
            ));
        }
        // A task's question is answered in the task (`tasks/update`), which holds the call.
        if approval.request_state.is_none() && approval.task.is_none() {
            return Err(format!(
                "approval {id} holds no state from {} to answer: answering it would call {}.{} afresh, which could make a new side effect rather than answer the one held; nothing was sent, and its asker's run must ask again",
                approval.server, approval.server, approval.tool
            ));
        }
        // The form as the server says it now, for that state, over this desk's own
        // connection: a lead reads the server's words, never what the asker stored.
        let form = self.current_form(&conn, &approval).await?;
        let params: ElicitRequestParams =
            serde_json::from_value(form.form.clone()).map_err(|e| {
                format!(
                    "{} sent approval {id} a form this desk cannot read ({e})",
                    conn.prefix
                )
            })?;
        let mut ask =
            form_wire::form_ask(&conn.prefix, &conn.origin, Some(&approval.ticket), &params)
                .map_err(|e| format!("approval {id}: {e}"))?;
        ask.asked_by = Some(format!(
            "approval {id}, asked by {} at {}",
            approval.asked_by,
            crate::record::rfc3339(approval.asked_at)
        ));
        let answer = match answer {
            Some(answer) => answer,
            None => match ask_person(&self.questions, ask.clone()).await {
                // A lead who closes the form has not answered: the approval stays open, for
                // them later or another lead.
                FormAnswer::Cancel => {
                    return Err(format!(
                        "approval {id} stays open: its form was closed without an answer"
                    ));
                }
                answer => answer,
            },
        };
        if let Err(problems) = crate::host::api::check_answer(&ask.kind, &answer) {
            return Err(format!(
                "the answer does not fit the form of approval {id}: {}",
                crate::host::api::in_words(&problems)
            ));
        }
        // Held from here to the record's answer, so no other lead sends the round meanwhile.
        let approval = self
            .record
            .take_approval(id)
            .await
            .map_err(|e| e.to_string())?;
        let result = form_wire::elicit_result(&answer);
        let run = match self.send_next_round(&conn, &approval, &form, &result).await {
            Ok(run) => run,
            Err(refused) => {
                self.let_go(id).await;
                return Err(refused);
            }
        };
        // A yes the server did not take (a state it refused, a quote it does not know, a
        // releaser it does not count as a lead) is no answer: the approval stays open, nothing
        // is recorded as answered, and this desk lets go of it so another lead may answer at
        // once. A no closes it whatever the server says of it.
        if matches!(answer, FormAnswer::Accept(_)) && run.outcome != Outcome::Result {
            self.let_go(id).await;
            return Err(format!(
                "{} did not take the answer to approval {id} ({}: {}); the approval stays open: check the server, then answer it again",
                approval.server,
                run.outcome.label(),
                run.text
            ));
        }
        let event = Event::ApprovalAnswered {
            ticket: approval.ticket.clone(),
            turn: approval.turn,
            approval: id,
            by: self.record.person().to_owned(),
            tool: format!("{}.{}", approval.server, approval.tool),
            action: format!("{:?}", result.action).to_lowercase(),
            content: result.content.as_ref().map(Value::to_string),
            outcome: run.outcome,
            text: run.text.clone(),
            truncated: run.truncated,
        };
        let appended = self
            .record
            .answer_approval(&event)
            .await
            .map_err(|e| e.to_string())?;
        self.announce(appended);
        self.approvals_changed().await;
        Ok(run)
    }

    /// The friendlier refusals, before anything is sent (the record refuses them anyway).
    async fn answerable(&self, id: i64) -> Result<Approval, String> {
        let approval = self.record.approval(id).await.map_err(|e| e.to_string())?;
        if let Some((closed, by)) = &approval.closed {
            return Err(format!(
                "approval {id} was {closed} by {by} already; nothing more to answer"
            ));
        }
        let person = self.record.person();
        if approval.asked_by == person {
            return Err(format!(
                "approval {id} is your own request: another lead must answer it"
            ));
        }
        if self.record.is_lead().await.map_err(|e| e.to_string())? != Some(true) {
            return Err(format!(
                "{person} is not a lead: only a lead answers approval {id}; ask a lead to open it"
            ));
        }
        Ok(approval)
    }

    /// Ends this desk's hold on approval `id` so another lead may answer it at once; when the
    /// record cannot be reached, the hold runs out by itself.
    async fn let_go(&self, id: i64) {
        if let Err(e) = self.record.let_go_of_approval(id).await {
            tracing::warn!(approval = id, error = %e, "could not let go of the approval; the hold runs out by itself");
        }
    }

    /// The server's form for the approval's state now: the call's round sent again with that
    /// state and no answer, which a server asks again from. Refused in words when the server
    /// refuses the state or asks nothing (its answer is then what it did).
    async fn current_form(&self, conn: &ServerConn, approval: &Approval) -> Result<Parked, String> {
        let id = approval.id;
        if let Some(task) = &approval.task {
            return crate::host::servers::tasks::current_question(conn, task)
                .await
                .map_err(|problem| format!("{problem}; approval {id} stays open"));
        }
        let next = NextRound {
            responses: InputResponses::new(),
            request_state: approval.request_state.clone(),
            task: None,
        };
        let plan = CallPlan {
            lead_forms: true,
            ..self.approval_plan(approval)
        };
        match calls::resume(conn, plan, next).await {
            Err(stale) => Err(format!(
                "{} refused the state of approval {id} ({}): nothing was answered and it stays open; its asker withdraws it and works the ticket again",
                conn.prefix, stale.text
            )),
            Ok(CallRun {
                parked: Some(form), ..
            }) => Ok(form),
            Ok(run) => Err(format!(
                "{} asks no lead's answer for approval {id} now; it said {}: {}",
                conn.prefix,
                run.outcome.label(),
                run.text
            )),
        }
    }

    /// The call's next round with the lead's answer to `form`, over this desk's own
    /// connection. A state the server refuses now is said, never answered by calling again.
    async fn send_next_round(
        &self,
        conn: &Arc<ServerConn>,
        approval: &Approval,
        form: &Parked,
        result: &rmcp::model::ElicitResult,
    ) -> Result<CallRun, String> {
        let mut responses = InputResponses::new();
        responses.insert(
            form.key.clone(),
            serde_json::to_value(result).unwrap_or(Value::Null),
        );
        let next = NextRound {
            responses,
            request_state: form.request_state.clone(),
            task: form.task.clone(),
        };
        calls::resume(conn, self.approval_plan(approval), next)
            .await
            .map_err(|stale| {
                format!(
                    "{} refused the answer to approval {} ({}); nothing was answered and it stays open",
                    conn.prefix, approval.id, stale.text
                )
            })
    }

    fn approval_plan(&self, approval: &Approval) -> CallPlan {
        let limits = &self.config.limits;
        CallPlan {
            ticket: approval.ticket.clone(),
            tool: approval.tool.clone(),
            arguments: approval.arguments.clone(),
            request_id: format!("{}-approval-{}", approval.ticket, approval.id),
            retry_if_lost: false,
            timeout: limits.request_timeout(),
            max_time: limits.call_max(),
            max_rounds: limits.input_rounds,
            max_result_bytes: limits.result_max_bytes,
            // The lead answers at this desk: a fresh form is theirs to fill in.
            lead_forms: false,
            progress: None,
            task_pace: crate::host::servers::tasks::TaskPace::of(limits),
        }
    }

    /// Takes back the open approval of `ticket`, which this desk's person asked for.
    pub async fn withdraw_approval(&self, ticket: &str, reason: &str) -> Result<(), String> {
        let state = self.record.state(ticket).await.map_err(|e| e.to_string())?;
        let id = state
            .filter(|s| s.state == crate::record::Lifecycle::WaitingForLead)
            .and_then(|s| s.approval)
            .ok_or_else(|| format!("{ticket} waits for no lead: there is nothing to withdraw"))?;
        let appended = self
            .record
            .withdraw_approval(id, reason)
            .await
            .map_err(|e| e.to_string())?;
        self.announce(appended);
        self.approvals_changed().await;
        Ok(())
    }
}

/// How often a team's desk looks for approvals whose fallback is due.
const WATCH_EVERY: Duration = Duration::from_secs(5);
/// Every this many looks (a minute), the open approvals go to the driver again for their ages.
const AGES_EVERY: u32 = 12;

/// An approval as people read it: the form's fields as the host shows any form.
pub fn view(approval: &Approval) -> ApprovalView {
    let params: Option<ElicitRequestParams> = serde_json::from_value(approval.form.clone()).ok();
    let ask = params.as_ref().and_then(|p| {
        form_wire::form_ask(
            &approval.server,
            &approval.origin,
            Some(&approval.ticket),
            p,
        )
        .ok()
    });
    ApprovalView {
        id: approval.id,
        ticket: approval.ticket.clone(),
        server: approval.server.clone(),
        origin: approval.origin.clone(),
        tool: format!("{}.{}", approval.server, approval.tool),
        arguments: crate::record::transcript::display_arguments(&approval.arguments),
        asked_by: approval.asked_by.clone(),
        asked_at: approval.asked_at,
        message: ask.as_ref().map(|a| a.message.clone()).unwrap_or_default(),
        fields: match ask.map(|a| a.kind) {
            Some(FormKind::Fields(fields)) => fields,
            _ => vec![],
        },
        answering_by: approval.answering_by.clone(),
        passed_to: approval
            .fell_back
            .then(|| approval.fallback.as_ref().and_then(|(_, to)| to.clone()))
            .flatten(),
    }
}
