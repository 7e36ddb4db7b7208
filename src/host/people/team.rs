//! A desk among others on one team's record: a ticket is worked, and its reply changed, only by
//! the desk that holds its claim; the claim is renewed while the work goes on and let go after,
//! and a desk that dies frees its tickets when the claim runs out. What other desks do reaches
//! this one live. On one person's desk every claim is its own and nothing is followed.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use crate::host::core::{Host, TicketRun};
use crate::host::events::HostEvent;
use crate::record::Event;
use crate::record::postgres::{Live, subscribe};
use crate::tickets::Ticket;

/// How often a desk renews the claim on a ticket it is working (a claim lasts 30 s).
const RENEW_EVERY: Duration = Duration::from_secs(10);

impl Host {
    /// Works `ticket` holding its claim: refused, with who holds it, while another desk does.
    /// With `only_new`, a ticket someone worked meanwhile is left alone (the queue's rule).
    pub async fn work_claimed(
        &self,
        ticket: &Ticket,
        extra: Option<String>,
        only_new: bool,
    ) -> Option<TicketRun> {
        let id = ticket.ticket_id.as_str();
        // A machine's message (an auto-reply, a bounce) is kept, never put to a model.
        if let Err(why) = crate::mailroom::intake::answerable(ticket) {
            if !only_new {
                let _ = self.events.send(HostEvent::Problem(why));
            }
            return None;
        }
        if let Err(e) = self.record.claim(id).await {
            if !only_new {
                let _ = self.events.send(HostEvent::Problem(e.to_string()));
            }
            return None;
        }
        let run = self
            .while_holding(id, async {
                if only_new && !self.is_new(id).await {
                    return Err(format!("{id} was worked meanwhile"));
                }
                Ok(self.work_ticket(ticket, extra).await)
            })
            .await;
        run.ok()
    }

    async fn is_new(&self, ticket: &str) -> bool {
        match self.record.state(ticket).await {
            Ok(state) => state.is_none_or(|s| s.is_for_the_queue()),
            Err(_) => false,
        }
    }

    /// Does `work` while holding `ticket`'s claim (taken first when needed, renewed while the
    /// work goes on, let go after). `Err`: the claim was refused, in words for the person.
    pub(in crate::host) async fn holding<T>(
        &self,
        ticket: &str,
        work: impl Future<Output = Result<T, String>>,
    ) -> Result<T, String> {
        self.record.claim(ticket).await.map_err(|e| e.to_string())?;
        self.while_holding(ticket, work).await
    }

    async fn while_holding<T>(
        &self,
        ticket: &str,
        work: impl Future<Output = Result<T, String>>,
    ) -> Result<T, String> {
        let renew = async {
            loop {
                tokio::time::sleep(RENEW_EVERY).await;
                if let Err(e) = self.record.renew(ticket).await {
                    tracing::warn!(ticket, error = %e, "could not renew the claim");
                }
            }
        };
        let done = tokio::select! {
            done = work => done,
            () = renew => unreachable!("renewing never ends by itself"),
        };
        if let Err(e) = self.record.release(ticket).await {
            tracing::warn!(ticket, error = %e, "could not let the claim go");
        }
        done
    }

    /// A lead answered an approval this desk's person asked for: the ticket's run goes on
    /// from the answer here, at once (another desk of the same person may get there first;
    /// the claim keeps it to one).
    async fn go_on_after(self: &Arc<Self>, ticket: &str, approval: i64) {
        let asked_here = self
            .record
            .approval(approval)
            .await
            .is_ok_and(|a| a.asked_by == self.record.person());
        let Some(ticket) = self.ticket(ticket) else {
            return;
        };
        if asked_here {
            let host = Arc::clone(self);
            tokio::spawn(async move {
                host.work_claimed(&ticket, None, false).await;
            });
        }
    }

    /// Takes `ticket` over from the desk that holds it, with why (a lead's call; the record
    /// refuses anyone else). The note reaches every desk, the previous holder's too.
    pub async fn take_over(&self, ticket: &str, reason: &str) -> Result<(), String> {
        let noted = self
            .record
            .take_over(ticket, reason)
            .await
            .map_err(|e| e.to_string())?;
        let Some(appended) = noted else {
            return Err(match self.record.team_url() {
                Some(_) => format!(
                    "no other desk held {ticket}, so there was nothing to take over: it is this desk's now (w works it, e answers it)"
                ),
                None => {
                    format!("{ticket} is already this desk's: on one person's desk every ticket is")
                }
            });
        };
        self.told_of(appended.stored.seq);
        if let Some(happened) = appended
            .state
            .and_then(|state| HostEvent::happened(&appended.stored, state))
        {
            let _ = self.events.send(happened);
        }
        Ok(())
    }

    /// Follows a team's record from the first event after `from`: what other desks append
    /// reaches this desk's driver as it happens; a lost database is said, and the desk
    /// catches up when it is back. `None` on one person's desk.
    pub fn follow_the_team(self: &Arc<Self>, from: i64) -> Option<tokio::task::JoinHandle<()>> {
        let url = self.record.team_url()?.to_owned();
        let host = Arc::clone(self);
        Some(tokio::spawn(async move {
            let mut live = match subscribe(&url, from).await {
                Ok(live) => live,
                Err(e) => {
                    let _ = host.events.send(HostEvent::Problem(format!(
                        "cannot follow the team's record live ({e}); other desks' work shows after a restart"
                    )));
                    return;
                }
            };
            while let Some(heard) = live.recv().await {
                Host::heard(&host, heard).await;
            }
        }))
    }

    async fn heard(self: &Arc<Self>, heard: Live) {
        let said = match heard {
            Live::Event(stored) => {
                // This desk's own events were reported when it appended them; the same
                // person's other desks and commands are followed like anyone's.
                let told = self
                    .told
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .remove(&stored.seq);
                if told {
                    return;
                }
                let Some(ticket) = stored.event.ticket().map(str::to_owned) else {
                    self.fold_mail(&stored);
                    return;
                };
                if stored.event.kind().starts_with("approval_") {
                    self.approvals_changed().await;
                }
                self.fold_mail(&stored);
                if let Event::ApprovalAnswered { approval, .. } = &stored.event {
                    self.go_on_after(&ticket, *approval).await;
                }
                let Ok(Some(state)) = self.record.state(&ticket).await else {
                    return;
                };
                if let Some(happened) = HostEvent::happened(&stored, state) {
                    let _ = self.events.send(happened);
                }
                return;
            }
            Live::Lost(why) => format!(
                "the team's database is unreachable ({why}); what you type is kept, and the desk catches up when it is back"
            ),
            Live::Back => "the team's database is back; the desk has caught up".to_owned(),
            Live::Unreadable { seq, error } => format!(
                "event {seq} of the team's record is of a newer desk and was passed over ({error})"
            ),
        };
        let _ = self.events.send(HostEvent::Problem(said));
    }
}
