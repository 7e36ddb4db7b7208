//! The bounded loop that works one ticket: at most `model_calls_per_ticket` model calls, each
//! reply streamed to the desk and recorded whole, each tool call handed to `tool_calls` (routed,
//! put through consent, called with its timeouts, reported); the last words checked as a
//! draft. It never answers a question for a person.

use std::sync::Arc;
use std::time::Instant;

use tokio::sync::Semaphore;

use super::continuation::Continued;
use crate::host::api::PersonPrompt;
use crate::host::checks;
use crate::host::core::Attached;
use crate::host::core::{Host, TicketRun};
use crate::host::events::HostEvent;
use crate::host::run::conversation::{Conversation, Taken};
use crate::host::run::system_prompt;
use crate::model::chat::{ChatRequest, Message, Reply, ToolSpec};
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
            self.tickets()
        } else {
            ids.iter().filter_map(|id| self.ticket(id)).collect()
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
            if conversation.parked.is_some() || conversation.to_person.is_some() {
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
        let ticket_text = system_prompt::ticket_text(ticket);
        let customer_text = format!("{ticket_text}\n{}", ticket.customer_id);
        let conversation = Conversation {
            messages,
            tool_list_chars: system_prompt::tool_list_chars(&specs),
            context_chars: attached.iter().map(|a| a.text.len()).sum(),
            offered: specs.clone(),
            calls_closed: false,
            specs,
            customer_text,
            ticket_text,
            facts: Vec::new(),
            parked: None,
            to_person: None,
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
        self.read_updated_again().await;
        let mut attached = self.attached();
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
            calls_closed: conversation.calls_closed,
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
        let answer = tokio::time::timeout(limits.model_timeout(), asked)
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
        let reply = answer.reply.with_call_id(format!("call_{turn}"));
        if let Some(prompt) = answer.prompt {
            tracing::info!(
                ticket = id,
                turn,
                prompt_tokens = prompt.tokens,
                cached = prompt.cached,
                "prompt read"
            );
        }
        self.report_in_run(Event::ModelCall {
            ticket: id.to_owned(),
            turn,
            messages_hash: request.hash(),
            reply: reply.clone(),
            seconds: started.elapsed().as_secs_f64(),
            first_visible_seconds: first_visible,
            tool_list_chars: conversation.tool_list_chars,
            context_chars: conversation.context_chars,
            prompt: answer.prompt,
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
                    // The run stops here too: the call goes on at its server, and a person
                    // takes the ticket.
                    None if called.to_person => conversation.to_person = Some(called.text),
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
        if let Some(why) = &conversation.to_person {
            run.error = Some(why.clone());
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
