//! A round's time: how long its server may stay silent, how long it may take however much
//! progress it reports, neither counting a person's time on its forms; and its progress shown
//! as it comes.

use std::time::Duration;

use rmcp::model::ProgressNotificationParam;
use tokio::sync::mpsc;

use super::CallPlan;
use crate::host::events::HostEvent;
use crate::host::servers::connect::ServerConn;

/// How much of a server's progress message is shown, in characters.
const PROGRESS_MESSAGE_SHOWN: usize = 200;

/// Why a round was given up on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum TimedOut {
    /// The server said nothing, neither an answer nor progress, for the plan's `timeout`.
    Silent,
    /// The server kept reporting progress past the plan's `max_time`.
    TooLong,
}

/// Awaits `call` while its server keeps to the plan's time: it may stay silent for at most
/// `timeout`, and each progress it reports (`heard`, shown as it comes) starts that wait
/// again, up to `max_time` in all. Time a person spends on one of this server's questions
/// meanwhile (an older server asks in the middle of a call) counts against neither.
pub(super) async fn within_server_time<T>(
    conn: &ServerConn,
    plan: &CallPlan,
    heard: &mut mpsc::Receiver<ProgressNotificationParam>,
    call: impl Future<Output = T>,
) -> Result<T, TimedOut> {
    let started = tokio::time::Instant::now();
    let (people_before, _) = conn.handler().time_with_people();
    // The wait runs from the last sign of life: the start, or the last progress reported.
    let (mut lively, mut people_then) = (started, people_before);
    let mut last_progress: Option<f64> = None;
    tokio::pin!(call);
    let mut deadline = started + plan.timeout.min(plan.max_time);
    loop {
        tokio::select! {
            done = &mut call => return Ok(done),
            Some(progress) = heard.recv() => {
                // Progress goes up with every report; a report that does not is no news.
                if last_progress.is_some_and(|last| progress.progress <= last) {
                    continue;
                }
                last_progress = Some(progress.progress);
                lively = tokio::time::Instant::now();
                people_then = conn.handler().time_with_people().0;
                show(plan, progress);
                deadline = (lively + plan.timeout).min(started + plan.max_time);
            }
            _ = tokio::time::sleep_until(deadline) => {
                let (people_now, open) = conn.handler().time_with_people();
                let now = tokio::time::Instant::now();
                if open {
                    // Look again shortly: the clock resumes once the person has answered.
                    deadline = now + Duration::from_millis(100);
                    continue;
                }
                let most = started + plan.max_time + people_now.saturating_sub(people_before);
                let silent = lively + plan.timeout + people_now.saturating_sub(people_then);
                if most <= now {
                    return Err(TimedOut::TooLong);
                }
                if silent <= now {
                    return Err(TimedOut::Silent);
                }
                deadline = silent.min(most);
            }
        }
    }
}

/// A server's progress on the call, where the plan shows it: its own words cut short, as
/// data for people, never for the model.
fn show(plan: &CallPlan, progress: ProgressNotificationParam) {
    let Some(shown) = &plan.progress else {
        return;
    };
    let message = progress
        .message
        .filter(|m| !m.trim().is_empty())
        .map(|m| crate::text::cut(&m, PROGRESS_MESSAGE_SHOWN));
    let total = progress
        .total
        .filter(|total| total.is_finite() && *total > 0.0);
    let _ = shown.events.send(HostEvent::Progress {
        ticket: plan.ticket.clone(),
        turn: shown.turn,
        tool: shown.tool.clone(),
        progress: progress.progress,
        total,
        message,
    });
}
