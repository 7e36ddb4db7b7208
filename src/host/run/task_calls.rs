//! A call its server runs as a task, on the ticket: recorded when it starts, followed to its
//! end as the run's call (its result is the call's outcome), and recorded when it ends. A
//! task that runs past `[limits] task_max_secs` hands the ticket to a person; the task goes
//! on at the server, and the desk (this one, or the next one opened on the record) follows
//! it to its end and records that, so a task outlives the desk that started it and no call
//! is ever sent twice for it.

use std::sync::Arc;
use std::time::Duration;

use crate::host::core::Host;
use crate::host::run::ask::Consent;
use crate::host::servers::calls::{CallPlan, CallRun, ProgressShown};
use crate::host::servers::tasks::{self, TaskEnd, TaskPace, TaskRef};
use crate::record::event::PERSON_TURN;
use crate::record::{Event, OpenTask};

/// How often an open desk looks for tasks in its record that nobody here follows.
const WATCH_EVERY: Duration = Duration::from_secs(5);

impl Host {
    /// The call's task, when its server made one: recorded as started, followed, and its
    /// end recorded. A task the desk stopped waiting on comes back with
    /// [`CallRun::to_person`] set: the ticket goes to a person.
    pub(in crate::host) async fn follow_task(
        &self,
        asked: &Consent<'_>,
        plan: &CallPlan,
        mut run: CallRun,
    ) -> CallRun {
        let Some(task) = run.task.take() else {
            return run;
        };
        // Followed here before it is in the record, so the desk's watcher never takes it up
        // as well.
        let _following = self.tasks_followed.follow(&asked.conn.prefix, &task.id);
        // Looked at again once the run lets go of it (a stop, the limit, a lead's answer).
        self.tasks_followed.watch(asked.ticket);
        self.report_in_run(Event::TaskStarted {
            ticket: asked.ticket.to_owned(),
            turn: asked.turn,
            server: asked.conn.prefix.clone(),
            tool: asked.canonical.to_owned(),
            task: task.id.clone(),
        })
        .await;
        let exchanges = std::mem::take(&mut run.exchanges);
        let (run, end) = tasks::follow(asked.conn, plan, &task, &plan.task_pace, exchanges).await;
        // Still open: parked for a lead (whose answer goes on from here), or the desk
        // stopped waiting and a person takes the ticket while the task runs on.
        if end != TaskEnd::Open {
            self.report_in_run(ended(asked.ticket, &asked.conn.prefix, &task.id, end, &run))
                .await;
        }
        run
    }

    /// A person asks the servers to cancel `ticket`'s tasks still running; the request is
    /// noted on the ticket as theirs, and each task is followed to the end the server gives
    /// it (a task may still finish), which is recorded. `Err` in words when there is none,
    /// or a server would not take the request.
    pub async fn cancel_tasks(self: &Arc<Self>, ticket: &str) -> Result<(), String> {
        let state = self.record.state(ticket).await.map_err(|e| e.to_string())?;
        let open = state.map(|s| s.tasks).unwrap_or_default();
        if open.is_empty() {
            return Err(format!(
                "{ticket} has no task running at a server, so there is nothing to cancel"
            ));
        }
        for task in open {
            let conn = self.server(&task.server).ok_or_else(|| {
                format!(
                    "{}'s task {} cannot be cancelled from this desk: it has no server \"{}\"",
                    ticket, task.task, task.server
                )
            })?;
            let live = conn.live().await.map_err(|e| {
                format!(
                    "{} is not reachable to cancel its task {}: {e}",
                    task.server, task.task
                )
            })?;
            live.service
                .peer()
                .cancel_task(rmcp::model::CancelTaskParams::new(&task.task))
                .await
                .map_err(|e| {
                    format!(
                        "{} would not cancel its task {}: {e}",
                        task.server, task.task
                    )
                })?;
            self.report(Event::Noted {
                ticket: ticket.to_owned(),
                by: self.record.person().to_owned(),
                text: format!(
                    "asked {} to cancel its task {} ({})",
                    task.server, task.task, task.tool
                ),
            })
            .await
            .map_err(|e| e.to_string())?;
            // Followed to its end here unless this desk follows it already.
            self.follow_in_background(ticket, task);
        }
        Ok(())
    }

    /// Follows, while the desk is open, every task its record holds open that this desk
    /// does not follow yet and that its own person started: after a restart, or after a
    /// run stopped waiting on it. Each is followed to its end, and the end recorded. The
    /// whole record is read once, when the desk opens; after that only the tickets that may
    /// hold such a task are looked at again, so an idle desk reads nothing.
    pub fn watch_tasks(self: &Arc<Self>) -> tokio::task::JoinHandle<()> {
        let host = Arc::clone(self);
        tokio::spawn(async move {
            match host.record.states().await {
                Ok(states) => {
                    for state in states.iter().filter(|s| !s.tasks.is_empty()) {
                        host.tasks_followed.watch(&state.ticket);
                    }
                }
                Err(e) => {
                    tracing::warn!(error = %e, "could not read the record's open tasks; they are followed when their tickets are worked")
                }
            }
            loop {
                host.follow_open_tasks().await;
                tokio::time::sleep(WATCH_EVERY).await;
            }
        })
    }

    async fn follow_open_tasks(self: &Arc<Self>) {
        let person = self.record.person().to_owned();
        for ticket in self.tasks_followed.watched() {
            let state = match self.record.state(&ticket).await {
                Ok(Some(state)) => state,
                Ok(None) => continue,
                Err(e) => {
                    tracing::warn!(%ticket, error = %e, "could not read a ticket's open tasks; trying again");
                    continue;
                }
            };
            let mine: Vec<_> = state.tasks.iter().filter(|t| t.by == person).collect();
            if mine.is_empty() {
                self.tasks_followed.unwatch(&ticket);
                continue;
            }
            // A task whose question waits for a lead is the lead's to answer; it is followed
            // again once answered.
            if state.state == crate::record::Lifecycle::WaitingForLead {
                continue;
            }
            for open in mine {
                self.follow_in_background(&ticket, open.clone());
            }
        }
    }

    /// Follows `open` to its end on a task of its own, unless this desk follows it already.
    fn follow_in_background(self: &Arc<Self>, ticket: &str, open: OpenTask) {
        let Some(following) = self.tasks_followed.follow(&open.server, &open.task) else {
            return;
        };
        let host = Arc::clone(self);
        let ticket = ticket.to_owned();
        tokio::spawn(async move {
            host.follow_to_its_end(&ticket, &open).await;
            drop(following);
        });
    }

    /// Follows a task no run waits on, and records how it ended.
    async fn follow_to_its_end(&self, ticket: &str, open: &OpenTask) {
        let Some(conn) = self.server(&open.server) else {
            tracing::warn!(server = %open.server, task = %open.task, "the task's server is not connected; its task is followed when it is");
            return;
        };
        let limits = &self.config.limits;
        let plan = CallPlan {
            ticket: ticket.to_owned(),
            tool: open.tool.clone(),
            arguments: Default::default(),
            request_id: format!("{ticket}-{}", open.task),
            retry_if_lost: false,
            timeout: limits.request_timeout(),
            max_time: limits.call_max(),
            max_rounds: limits.input_rounds,
            max_result_bytes: limits.result_max_bytes,
            lead_forms: false,
            progress: Some(ProgressShown {
                events: self.events.clone(),
                turn: PERSON_TURN,
                tool: open.tool.clone(),
            }),
            // No run waits: it is followed for as long as it takes. On a team a question
            // may be a lead's, and no run filed it for the leads: it is shown as the task's
            // status, never put to this desk's person; on one person's desk it is theirs.
            task_pace: TaskPace {
                max: Duration::MAX,
                asks: self.record.team_url().is_none(),
                ..TaskPace::of(limits)
            },
        };
        let task = TaskRef {
            id: open.task.clone(),
            poll: None,
        };
        let (run, end) = tasks::follow(&conn, &plan, &task, &plan.task_pace, Vec::new()).await;
        if end == TaskEnd::Open {
            tracing::warn!(task = %open.task, problem = %run.text, "stopped following a task; it is followed again later");
            return;
        }
        if let Err(e) = self
            .report(ended(ticket, &open.server, &open.task, end, &run))
            .await
        {
            tracing::warn!(task = %open.task, error = %e, "the record did not take a task's end");
        }
    }
}

fn ended(ticket: &str, server: &str, task: &str, end: TaskEnd, run: &CallRun) -> Event {
    Event::TaskEnded {
        ticket: ticket.to_owned(),
        server: server.to_owned(),
        task: task.to_owned(),
        status: end.label().to_owned(),
        outcome: run.outcome,
        text: run.text.clone(),
        truncated: run.truncated,
    }
}
