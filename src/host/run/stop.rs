//! A person stops a run: the ticket's run, or the queue's. Stopping drops the run where it
//! is: a call in flight is dropped (the server gets `notifications/cancelled`), a model
//! request is dropped, a question waiting for a person is withdrawn. The ticket then needs a
//! person, with who stopped it and what was under way, in the record.

use tokio_util::sync::CancellationToken;

use crate::host::core::{Host, TicketRun};
use crate::record::Event;

impl Host {
    /// Runs `run` for `ticket` until it ends or a person stops it; a stopped run is recorded
    /// as needing a person, "stopped by NAME", with what was under way.
    pub(in crate::host) async fn until_stopped(
        &self,
        ticket: &str,
        run: impl Future<Output = TicketRun>,
    ) -> TicketRun {
        let stop = CancellationToken::new();
        self.stops.runs().insert(ticket.to_owned(), stop.clone());
        let finished = tokio::select! {
            run = run => Some(run),
            () = stop.cancelled() => None,
        };
        self.stops.runs().remove(ticket);
        match finished {
            Some(run) => run,
            None => self.stopped(ticket).await,
        }
    }

    async fn stopped(&self, ticket: &str) -> TicketRun {
        let person = self.record.person().to_owned();
        let under_way = match self.record.state(ticket).await {
            Ok(Some(state)) if state.run.is_some() => state.under_way(&self.config.consent.allow),
            _ => "before the run began".to_owned(),
        };
        let reason = format!("stopped by {person} {under_way}");
        self.report_in_run(Event::NeedsPerson {
            ticket: ticket.to_owned(),
            reason: reason.clone(),
        })
        .await;
        TicketRun {
            ticket: ticket.to_owned(),
            model_calls: 0,
            draft: None,
            findings: vec![],
            stopped_at_turn_limit: false,
            error: Some(reason),
            waiting_for: None,
        }
    }

    /// Stops `ticket`'s run on this desk; `Err` in words when none is under way here.
    pub async fn stop(&self, ticket: &str) -> Result<(), String> {
        match self.stops.runs().get(ticket) {
            Some(stop) => {
                stop.cancel();
                Ok(())
            }
            None => Err(format!(
                "{ticket} is not being worked on this desk, so there is nothing to stop"
            )),
        }
    }

    /// Stops the queue's run: no other ticket starts, and the ones under way stop; tickets it
    /// finished stay as they are. `Err` when nothing runs.
    pub async fn stop_queue(&self) -> Result<(), String> {
        let queue = self.stops.queue_taken();
        let runs: Vec<CancellationToken> = self.stops.runs().values().cloned().collect();
        if queue.is_none() && runs.is_empty() {
            return Err("nothing is being worked on this desk, so there is nothing to stop".into());
        }
        queue
            .iter()
            .chain(&runs)
            .for_each(CancellationToken::cancel);
        Ok(())
    }
}
