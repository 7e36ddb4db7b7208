//! One tool call of a ticket's run, the model's or a person's: routed to its server under the
//! host's name, the host's own refusals, consent, the call with its timeouts and its result
//! checked against the tool's output schema, and the outcome reported.

use std::sync::Arc;

use rmcp::model::Tool;

use crate::host::api::Outcome;
use crate::host::core::Host;
use crate::host::gate::names::ToolName;
use crate::host::gate::tools::Offered;
use crate::host::gate::{provenance, schema};
use crate::host::run::ask::Consent;
use crate::host::run::conversation::{Called, Conversation};
use crate::host::servers::calls::{self, CallPlan, ProgressShown};
use crate::host::servers::connect::ServerConn;
use crate::host::servers::tasks::TaskPace;
use crate::model::chat::ToolCall;
use crate::record::Event;
use crate::tickets::Ticket;

impl Host {
    /// The model asked for a tool on its last allowed turn: nothing would read the result.
    pub(in crate::host) async fn refuse_at_limit(
        &self,
        ticket: &str,
        turn: u32,
        call: &ToolCall,
    ) -> Called {
        let text = format!(
            "not run: the ticket reached its limit of {} model calls, so nothing could read the result",
            self.config.limits.model_calls_per_ticket
        );
        // No tools were offered on this turn, so the name is the model's own: the host's
        // table says which tool it meant.
        let (tool, _) = self.route(call).await;
        self.report_in_run(Event::ToolCall {
            ticket: ticket.to_owned(),
            turn,
            tool: tool.clone(),
            arguments: call.arguments.clone(),
        })
        .await;
        self.finish_call(ticket, turn, &tool, Outcome::Failed, &text, false)
            .await;
        Called::new(Outcome::Failed, text, tool)
    }

    pub(in crate::host) async fn finish_call(
        &self,
        ticket: &str,
        turn: u32,
        tool: &str,
        outcome: Outcome,
        text: &str,
        truncated: bool,
    ) {
        self.report_in_run(Event::Outcome {
            ticket: ticket.to_owned(),
            turn,
            tool: tool.to_owned(),
            outcome,
            text: text.to_owned(),
            truncated,
        })
        .await;
    }

    /// A call the host did not send: recorded with its outcome, and told to the model.
    async fn refused(
        &self,
        ticket: &str,
        turn: u32,
        tool: &str,
        outcome: Outcome,
        text: String,
    ) -> Called {
        self.finish_call(ticket, turn, tool, outcome, &text, false)
            .await;
        Called::new(outcome, text, tool.to_owned())
    }

    /// Route → the host's own refusals → consent → call. Returns the outcome, the text for
    /// the model, and the tool's canonical name (or the name as the model wrote it, when
    /// unknown).
    pub(in crate::host) async fn run_call(
        &self,
        ticket: &Ticket,
        turn: u32,
        call: &ToolCall,
        conversation: &Conversation,
    ) -> Called {
        let id = ticket.ticket_id.as_str();
        let (canonical, routed) = self.route(call).await;
        self.report_in_run(Event::ToolCall {
            ticket: id.to_owned(),
            turn,
            tool: canonical.clone(),
            arguments: call.arguments.clone(),
        })
        .await;
        if let Some(text) = conversation.repeats_a_failure(&canonical, call) {
            return self
                .refused(id, turn, &canonical, Outcome::Failed, text)
                .await;
        }
        let (name, conn, tool) = match routed {
            Ok(routed) => routed,
            Err(text) => {
                return self
                    .refused(id, turn, &canonical, Outcome::UnknownTool, text)
                    .await;
            }
        };
        let problems = schema::problems(&tool.input_schema, &call.arguments);
        if !problems.is_empty() {
            let text = format!(
                "not run: the arguments do not fit {canonical}'s input schema: {}. Fix the call and send it again, or write the reply to the customer.",
                problems.join("; ")
            );
            return self
                .refused(id, turn, &canonical, Outcome::Failed, text)
                .await;
        }
        let traced = provenance::trace(
            &call.arguments,
            &conversation.customer_text,
            &conversation.facts,
        );
        if let Some(text) = provenance::handle_refusal(&canonical, &traced) {
            return self
                .refused(id, turn, &canonical, Outcome::Failed, text)
                .await;
        }
        let asked = Consent {
            ticket: id,
            turn,
            canonical: &canonical,
            name: &name,
            conn: &conn,
            tool: &tool,
            call,
            backing: provenance::backing(&traced, &conversation.facts),
            provenance: traced,
        };
        if let Err(text) = self.ask_consent(&asked).await {
            return self
                .refused(id, turn, &canonical, Outcome::Declined, text)
                .await;
        }
        let mut run = self.call_server(&asked).await;
        if let Some(parked) = &run.parked {
            match self.park(&asked, parked).await {
                Ok(approval) => {
                    let mut called = Called::new(run.outcome, run.text, canonical);
                    called.parked = Some(approval);
                    return called;
                }
                Err(problem) => {
                    run.text = format!(
                        "{} asks a lead to answer, but the desk could not file it for the leads: {problem}",
                        conn.prefix
                    );
                }
            }
        }
        self.finish_call(id, turn, &canonical, run.outcome, &run.text, run.truncated)
            .await;
        Called {
            to_person: run.to_person,
            ..Called::new(run.outcome, run.text, canonical)
        }
    }

    /// The tool the model named, by the host's names: its canonical name (as written when it
    /// names nothing), and its server and definition, or the error the model is told.
    async fn route(
        &self,
        call: &ToolCall,
    ) -> (String, Result<(ToolName, Arc<ServerConn>, Tool), String>) {
        let tools = self.tools.read().await;
        let (names, offered) = &*tools;
        let routed = names.route(&call.name);
        let canonical = routed
            .as_ref()
            .map(ToString::to_string)
            .unwrap_or_else(|_| call.name.clone());
        let found = match routed {
            Err(e) => {
                let listed: Vec<String> = names.canonical().map(ToString::to_string).collect();
                Err(format!("{e}. The tools are: {}.", listed.join(", ")))
            }
            Ok(name) => match offered.get(&name) {
                Some(Offered {
                    conn,
                    tool,
                    held: None,
                }) => Ok((name, Arc::clone(conn), tool.clone())),
                Some(_) | None => Err(format!("there is no tool \"{canonical}\" right now")),
            },
        };
        (canonical, found)
    }

    /// Sends the call to its server, each input-request round timed on its own, and records
    /// the server's questions with their answers.
    pub(in crate::host) async fn call_server(&self, asked: &Consent<'_>) -> calls::CallRun {
        let request_id = format!(
            "{}-{}",
            asked.ticket,
            self.request_counter
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
                + 1
        );
        let limits = &self.config.limits;
        let plan = CallPlan {
            ticket: asked.ticket.to_owned(),
            tool: asked.name.tool.clone(),
            arguments: asked.call.arguments.clone(),
            request_id,
            retry_if_lost: asked
                .tool
                .annotations
                .as_ref()
                .and_then(|a| a.read_only_hint)
                == Some(true),
            timeout: limits.request_timeout(),
            max_time: limits.call_max(),
            max_rounds: limits.input_rounds,
            max_result_bytes: limits.result_max_bytes,
            lead_forms: self.forms_go_to_leads(asked.conn, &asked.name.tool),
            progress: Some(ProgressShown {
                events: self.events.clone(),
                turn: asked.turn,
                tool: asked.canonical.to_owned(),
            }),
            task_pace: TaskPace::of(limits),
        };
        let run = calls::call(asked.conn, plan.clone()).await;
        // A call its server runs as a task is followed here, its start and end recorded.
        let mut run = self.follow_task(asked, &plan, run).await;
        // A result whose tool declared an output schema reaches the model only when its
        // structured content meets the schema as pinned; otherwise the model is told which
        // fields are wrong instead, and the record holds that tool error.
        if run.outcome == Outcome::Result
            && let Some(text) = schema::result_refusal(
                asked.canonical,
                asked.tool.output_schema.as_deref(),
                run.structured.as_ref(),
            )
        {
            tracing::warn!(tool = %asked.canonical, "a result did not meet its tool's output schema");
            run.outcome = Outcome::ToolError;
            run.text = text;
            run.truncated = false;
        }
        for exchange in &run.exchanges {
            self.report_in_run(Event::InputRequest {
                ticket: asked.ticket.to_owned(),
                turn: asked.turn,
                server: asked.conn.prefix.clone(),
                message: exchange.message.clone(),
                action: exchange.action.clone(),
                content: exchange.content.clone(),
            })
            .await;
        }
        run
    }
}
