//! The bounded loop that works one ticket: at most `model_calls_per_ticket` model calls, each
//! tool call routed, put through consent, called with its timeouts and reported; the last
//! words checked as a draft. It never answers a question for a person.

use std::sync::Arc;
use std::time::Instant;

use rmcp::model::Tool;
use tokio::sync::Semaphore;

use super::continuation::Continued;
use crate::host::api::{Outcome, PersonPrompt};
use crate::host::checks;
use crate::host::core::Attached;
use crate::host::core::{Host, TicketRun};
use crate::host::events::HostEvent;
use crate::host::gate::names::ToolName;
use crate::host::gate::tools::Offered;
use crate::host::gate::{provenance, schema};
use crate::host::run::ask::Consent;
use crate::host::run::conversation::{Called, Conversation, Taken};
use crate::host::run::system_prompt;
use crate::host::servers::calls::{self, CallPlan, ProgressShown};
use crate::host::servers::connect::ServerConn;
use crate::model::chat::{ChatRequest, Message, Reply, ToolCall, ToolSpec};
use crate::record::Event;
use crate::tickets::Ticket;

impl Host {
    /// Works a list of tickets (all when empty), `concurrency` at a time; how many it worked
    /// (a ticket another desk holds, or worked meanwhile, is left alone).
    /// With `prompt`, every ticket is worked as a person who ran that server prompt for it.
    pub async fn work_queue(
        self: &Arc<Self>,
        ids: &[String],
        concurrency: usize,
        prompt: Option<&PersonPrompt>,
    ) -> Result<usize, String> {
        let request = match prompt {
            Some(prompt) => Some(self.person_request(prompt).await?),
            None => None,
        };
        let tickets: Vec<Ticket> = if ids.is_empty() {
            self.tickets.clone()
        } else {
            ids.iter()
                .filter_map(|id| self.ticket(id).cloned())
                .collect()
        };
        // The queue takes only tickets nobody has touched, and those whose run stopped for a
        // lead who has answered since: a sent, handed-over or interrupted ticket is a person's
        // to take up again. A person's prompt is their own request.
        let only_new = prompt.is_none();
        let tickets: Vec<Ticket> = if prompt.is_some() {
            tickets
        } else {
            let states = self.record.states().await.map_err(|e| e.to_string())?;
            tickets
                .into_iter()
                .filter(|t| {
                    states
                        .iter()
                        .find(|s| s.ticket == t.ticket_id)
                        .is_none_or(|s| s.is_for_the_queue())
                })
                .collect()
        };
        let gate = Arc::new(Semaphore::new(concurrency.max(1)));
        let mut tasks = tokio::task::JoinSet::new();
        let mut worked = 0;
        let stopped = self.stops.queue_begins();
        for ticket in tickets {
            // Taking the permit before the task starts keeps tickets starting in queue order,
            // so a run at concurrency 1 is the same sequence every time (a replay needs that).
            let permit = Arc::clone(&gate)
                .acquire_owned()
                .await
                .expect("the queue's semaphore is never closed");
            if stopped.is_cancelled() {
                break;
            }
            // What finished is counted and let go as the queue goes: a long queue keeps no
            // more in memory than the runs under way.
            while let Some(done) = tasks.try_join_next() {
                worked += count(done);
            }
            let host = Arc::clone(self);
            let request = request.clone();
            tasks.spawn(async move {
                let _permit = permit;
                host.work_claimed(&ticket, request, only_new)
                    .await
                    .is_some()
            });
        }
        while let Some(done) = tasks.join_next().await {
            worked += count(done);
        }
        self.stops.queue_ends();
        Ok(worked)
    }

    /// Works one ticket: at most `model_calls_per_ticket` model calls, every tool call routed,
    /// gated and timed, every outcome back to the model, the last words checked as a draft.
    /// `extra_prompt` is a server prompt a person chose to run for this ticket. A person may
    /// stop it ([`Host::stop`]).
    pub async fn work_ticket(&self, ticket: &Ticket, extra_prompt: Option<String>) -> TicketRun {
        let run = self.run_ticket(ticket, extra_prompt);
        self.until_stopped(&ticket.ticket_id, run).await
    }

    async fn run_ticket(&self, ticket: &Ticket, extra_prompt: Option<String>) -> TicketRun {
        let id = ticket.ticket_id.as_str();
        if extra_prompt.is_none() || self.tools.read().await.0.is_empty() {
            self.refresh_tools().await;
        }
        self.review_held_tools(id, 0).await;
        let mut run = TicketRun {
            ticket: id.to_owned(),
            model_calls: 0,
            draft: None,
            findings: vec![],
            stopped_at_turn_limit: false,
            error: None,
            waiting_for: None,
        };
        let (mut conversation, first_turn) = match self.continued(ticket).await {
            Continued::Fresh => match self.start_run(ticket, extra_prompt).await {
                Ok(conversation) => (conversation, 1),
                Err(refused) => {
                    run.error = Some(refused);
                    return run;
                }
            },
            Continued::From { conversation, turn } => (conversation, turn + 1),
            Continued::Refused(problem) => {
                let _ = self.events.send(HostEvent::Problem(problem.clone()));
                run.error = Some(problem);
                return run;
            }
        };
        let limit = self.config.limits.model_calls_per_ticket;
        for turn in first_turn..=limit {
            run.model_calls = turn;
            // A server that said its tools changed since the last call has been listed again.
            self.keep_offer_current(ticket, turn, &mut conversation)
                .await;
            if turn == limit && turn > 1 {
                conversation.last_turn();
            }
            let reply = match self.ask_model(id, turn, &conversation).await {
                Ok(reply) => reply,
                Err(error) => {
                    run.error = Some(error);
                    break;
                }
            };
            if let Some(draft) = self
                .take_reply(ticket, turn, reply, &mut conversation)
                .await
            {
                run.draft = Some(draft);
                break;
            }
            if conversation.parked.is_some() {
                break;
            }
        }
        self.finish_run(ticket, &conversation, run).await
    }

    /// A fresh run's conversation, its start recorded; `Err` when the record refused it.
    async fn start_run(
        &self,
        ticket: &Ticket,
        extra_prompt: Option<String>,
    ) -> Result<Conversation, String> {
        let (mut conversation, attached) = self
            .open_conversation(ticket, extra_prompt.as_deref())
            .await;
        self.tell_of_person_calls(&ticket.ticket_id, &mut conversation)
            .await;
        let started = self
            .report(Event::TicketStarted {
                ticket: ticket.ticket_id.clone(),
                tools: conversation.specs.iter().map(|s| s.name.clone()).collect(),
                attached,
                request: extra_prompt,
            })
            .await;
        if let Err(refused) = started {
            let _ = self.events.send(HostEvent::Problem(refused.to_string()));
            return Err(refused.to_string());
        }
        Ok(conversation)
    }

    /// The conversation a ticket starts with: the system prompt (tools, then attached
    /// documents), the ticket, and the request a person added; and the attached URIs.
    pub(in crate::host) async fn open_conversation(
        &self,
        ticket: &Ticket,
        extra_prompt: Option<&str>,
    ) -> (Conversation, Vec<String>) {
        let specs = self.tool_specs().await;
        let (system, attached) = self.told_first(ticket, &specs).await;
        let mut messages = system.to_vec();
        if let Some(extra) = extra_prompt {
            messages.push(Message::User {
                content: extra.to_owned(),
            });
        }
        let ticket_text = format!("{}\n{}", ticket.subject, ticket.body);
        let customer_text = format!("{ticket_text}\n{}", ticket.customer_id);
        let conversation = Conversation {
            messages,
            tool_list_chars: system_prompt::tool_list_chars(&specs),
            context_chars: attached.iter().map(|a| a.text.len()).sum(),
            offered: specs.clone(),
            specs,
            customer_text,
            ticket_text,
            facts: Vec::new(),
            parked: None,
        };
        (
            conversation,
            attached.iter().map(|a| a.uri.clone()).collect(),
        )
    }

    /// What a run of `ticket` with `specs` offered starts with: the system prompt (the tools,
    /// then the documents attached) and the ticket's message; and those documents.
    pub(in crate::host) async fn told_first(
        &self,
        ticket: &Ticket,
        specs: &[ToolSpec],
    ) -> ([Message; 2], Vec<Attached>) {
        let mut attached = self.attached.clone();
        let extra = self.extra.lock().await.get(&ticket.ticket_id).cloned();
        attached.extend(extra.unwrap_or_default());
        let limit = self.config.limits.model_calls_per_ticket;
        let desk = &self.config.desk;
        let system = system_prompt::system_prompt(specs, &attached, limit, desk.signature());
        let triage = system_prompt::Triage {
            first_tool: &desk.first_tool,
            identifiers: &self.identifiers,
        };
        let messages = [
            Message::System { content: system },
            Message::User {
                content: system_prompt::ticket_message(ticket, &triage, specs),
            },
        ];
        (messages, attached)
    }

    /// One model call, within the model timeout, recorded with the hash of what it saw.
    async fn ask_model(
        &self,
        id: &str,
        turn: u32,
        conversation: &Conversation,
    ) -> Result<Reply, String> {
        let request = ChatRequest {
            messages: conversation.messages.clone(),
            tools: conversation.offered.clone(),
        };
        tracing::info!(
            ticket = id,
            turn,
            tools = conversation.specs.len(),
            tool_list_chars = conversation.tool_list_chars,
            context_chars = conversation.context_chars,
            "model call"
        );
        let limits = &self.config.limits;
        let started = Instant::now();
        let events = self.events.clone();
        let mut first_visible = None;
        let mut watch = |partial: &crate::model::openai::Partial| {
            if first_visible.is_none()
                && (!partial.content.trim().is_empty() || partial.calling.is_some())
            {
                first_visible = Some(started.elapsed().as_secs_f64());
            }
            let _ = events.send(HostEvent::Writing {
                ticket: id.to_owned(),
                turn,
                content: partial.content.clone(),
                calling: partial.calling.clone(),
            });
        };
        let asked = self.model.reply(id, turn, &request, &mut watch);
        let reply = tokio::time::timeout(limits.model_timeout(), asked)
            .await
            .map_err(|_| {
                format!(
                    "the model did not answer within {} s",
                    limits.model_timeout_secs
                )
            })?
            .map_err(|e| e.to_string())?;
        // The host names each call after its turn. A model's own call IDs are random, and two
        // conversations that differ only in them must read as one to a replay.
        let reply = reply.with_call_id(format!("call_{turn}"));
        self.report_in_run(Event::ModelCall {
            ticket: id.to_owned(),
            turn,
            messages_hash: request.hash(),
            reply: reply.clone(),
            seconds: started.elapsed().as_secs_f64(),
            first_visible_seconds: first_visible,
            tool_list_chars: conversation.tool_list_chars,
            context_chars: conversation.context_chars,
        })
        .await;
        Ok(reply)
    }

    /// What the model's reply leads to: words are the draft; an unusable answer is told to
    /// the model; a call is routed, gated and run, and its outcome goes back to the model.
    async fn take_reply(
        &self,
        ticket: &Ticket,
        turn: u32,
        reply: Reply,
        conversation: &mut Conversation,
    ) -> Option<String> {
        match conversation.take_reply(reply) {
            Taken::Draft(content) => Some(content),
            Taken::Unusable => None,
            Taken::Call { call, dropped } => {
                let last_turn = turn == self.config.limits.model_calls_per_ticket;
                let called = if last_turn {
                    self.refuse_at_limit(&ticket.ticket_id, turn, &call).await
                } else {
                    self.run_call(ticket, turn, &call, conversation).await
                };
                match called.parked {
                    // The run stops here; a lead's answer is the call's outcome.
                    Some(approval) => conversation.parked = Some(approval),
                    None => conversation.push_outcome(
                        &call,
                        turn,
                        (&called.tool, called.outcome),
                        called.text,
                        dropped,
                    ),
                }
                None
            }
        }
    }

    /// The run's end: the draft checked against the call log, and the ticket done.
    async fn finish_run(
        &self,
        ticket: &Ticket,
        conversation: &Conversation,
        mut run: TicketRun,
    ) -> TicketRun {
        let id = ticket.ticket_id.as_str();
        if conversation.parked.is_some() {
            // Not done: the ticket waits for a lead, and a run goes on from the answer.
            run.waiting_for = conversation.parked;
            return run;
        }
        if run.draft.is_none() && run.error.is_none() {
            run.stopped_at_turn_limit = true;
        }
        if let Some(draft) = &run.draft {
            let tools: Vec<String> = conversation.specs.iter().map(|s| s.name.clone()).collect();
            let checked = checks::check_reply(
                draft,
                &conversation.facts,
                &conversation.ticket_text,
                &tools,
                self.config.desk.signature(),
            );
            run.findings = checked.findings.clone();
            run.draft = Some(checked.text.clone());
            self.report_in_run(Event::Draft {
                ticket: id.to_owned(),
                text: checked.text.clone(),
                findings: checked.findings,
            })
            .await;
        }
        self.report_in_run(Event::TicketDone {
            ticket: id.to_owned(),
            model_calls: run.model_calls,
            stopped_at_turn_limit: run.stopped_at_turn_limit,
            error: run.error.clone(),
        })
        .await;
        run
    }

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
        Called::new(run.outcome, run.text, canonical)
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
        let mut run = calls::call(
            asked.conn,
            CallPlan {
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
            },
        )
        .await;
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

/// 1 for a ticket a queue's task worked, 0 for one it left alone or whose task failed.
fn count(done: Result<bool, tokio::task::JoinError>) -> usize {
    match done {
        Ok(worked) => usize::from(worked),
        Err(e) => {
            tracing::error!(error = %e, "a ticket's task failed");
            0
        }
    }
}
