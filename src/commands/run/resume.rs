//! Continuing a recorded run that was stopped (`run --resume`): only its unfinished tickets,
//! appended to the same recording, and never one that may already have changed something
//! (those go to a person). It trusts the recording alone.

use std::path::Path;

use anyhow::bail;

use crate::commands::run::script::{Script, answerers};
use crate::commands::run::{RunOptions, checked_tickets, work};
use crate::config::DeskConfig;
use crate::record::{Event, Manifest};
use crate::recording::summary::Summary;
use crate::recording::{Recorder, Recording};
use crate::startup::build_model;

/// A ticket left unfinished after a call outside the allow list may already have changed
/// something (a refund made). It is not worked again; a person looks at it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForPerson {
    pub ticket: String,
    /// What may have happened, in words for that person.
    pub reason: String,
}

/// What a stopped run leaves to do, read from its recording alone.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ResumePlan {
    /// Unfinished tickets that changed nothing yet, in queue order: worked again from the start.
    pub to_work: Vec<String>,
    /// Unfinished tickets that may have changed something: settled as handed to a person.
    pub for_person: Vec<ForPerson>,
}

/// Splits the tickets of `queue` that have no `ticket_done` in `recording` into those that
/// can be worked again and those a person must look at. `allow` is the recording's own list
/// of tools that change nothing.
pub fn resume_plan(recording: &Recording, queue: &[String], allow: &[String]) -> ResumePlan {
    let finished: std::collections::BTreeSet<&str> =
        recording.finished_tickets().into_iter().collect();
    let by_ticket = recording.by_ticket();
    let mut plan = ResumePlan::default();
    for id in queue.iter().filter(|id| !finished.contains(id.as_str())) {
        let events = by_ticket.get(id.as_str()).map_or(&[][..], Vec::as_slice);
        match side_effect(events, allow) {
            Some(reason) => plan.for_person.push(ForPerson {
                ticket: id.clone(),
                reason,
            }),
            None => plan.to_work.push(id.clone()),
        }
    }
    plan
}

/// The first call outside the allow list that may have reached its server: one that came
/// back with anything but a refusal by the desk itself (a tool error can still leave a held
/// refund behind; a failed call may have run), or one a person approved whose outcome the
/// recording never got.
fn side_effect(events: &[&Event], allow: &[String]) -> Option<String> {
    use crate::host::api::Outcome;
    let mut approved: Vec<(u32, &str)> = Vec::new();
    for event in events {
        match event {
            Event::Consent {
                turn,
                tool,
                approved: true,
                ..
            } if !allow.contains(tool) => approved.push((*turn, tool)),
            Event::Outcome {
                turn,
                tool,
                outcome,
                ..
            } => {
                approved.retain(|&(t, name)| (t, name) != (*turn, tool.as_str()));
                let reached = match outcome {
                    Outcome::Result => Some("returned a result"),
                    Outcome::ToolError => Some("ran and returned an error"),
                    Outcome::Failed => Some("may have run before it failed"),
                    Outcome::Declined | Outcome::UnknownTool => None,
                };
                if let Some(what) = reached.filter(|_| !allow.contains(tool)) {
                    return Some(interrupted(&format!("{tool} {what} (turn {turn})")));
                }
            }
            _ => {}
        }
    }
    approved.first().map(|(turn, tool)| {
        interrupted(&format!(
            "{tool} was approved and sent (turn {turn}) but the run stopped before it answered"
        ))
    })
}

fn interrupted(what: &str) -> String {
    format!(
        "the run stopped in the middle of this ticket after {what}; it was not worked again so nothing happens twice: check what the call did before answering the customer"
    )
}

/// A resumed run: the summary of the whole recording, and the tickets handed to a person.
#[derive(Debug, Clone, PartialEq)]
pub struct Resumed {
    pub summary: Summary,
    pub for_person: Vec<ForPerson>,
}

/// Continues the recorded run at `path` that was stopped (a crash, a kill): works only the
/// tickets without a `ticket_done`, in queue order, appending to the same recording, and
/// never works again a ticket that may already have changed something (see [`resume_plan`]).
/// The settings must be the recording's own. Returns the summary of the whole recording.
pub async fn resume(
    config: DeskConfig,
    options: RunOptions,
    path: &Path,
) -> anyhow::Result<Resumed> {
    let recording = Recording::read(path)?;
    if recording.truncated {
        tracing::warn!(path = %path.display(), "the last line was cut off mid-write; continuing after the last whole event");
    }
    let allow = match recording.manifests.first() {
        Some(manifest) => {
            same_settings(manifest, &config, options.script, path)?;
            manifest.host.allow.clone()
        }
        // Stopped before its servers were up: nothing ran, so everything is still to do.
        None if recording.events.is_empty() => config.consent.allow.clone(),
        None => bail!(
            "{} has events but no manifest, so it was not written by `support-desk run --record` and cannot be continued",
            path.display()
        ),
    };
    let model = build_model(&config)?;
    let tickets = checked_tickets(&config, &options.tickets)?;
    let queue: Vec<String> = if options.tickets.is_empty() {
        tickets.iter().map(|t| t.ticket_id.clone()).collect()
    } else {
        options.tickets.clone()
    };
    let plan = resume_plan(&recording, &queue, &allow);
    if !plan.for_person.is_empty() || !plan.to_work.is_empty() {
        let recorder = Recorder::append(path)?;
        // Settled before any work, so the recording says so even if this run is stopped too.
        for person in &plan.for_person {
            tracing::warn!(ticket = %person.ticket, reason = %person.reason, "handed to a person");
            let model_calls = recording
                .events
                .iter()
                .filter(
                    |e| matches!(e, Event::ModelCall { ticket, .. } if *ticket == person.ticket),
                )
                .count();
            recorder.write(&Event::TicketDone {
                ticket: person.ticket.clone(),
                model_calls: u32::try_from(model_calls).unwrap_or(u32::MAX),
                stopped_at_turn_limit: false,
                error: Some(person.reason.clone()),
            })?;
        }
        if !plan.to_work.is_empty() {
            tracing::info!(tickets = plan.to_work.len(), "resuming");
            let ids = plan.to_work.clone();
            work(config, model, tickets.clone(), ids, Some(recorder), options).await?;
        }
    }
    let whole = Recording::read(path)?;
    Ok(Resumed {
        summary: Summary::from_events(
            &whole.events,
            &crate::evaluation::for_tickets(&tickets),
            &allow,
        ),
        for_person: plan.for_person,
    })
}

/// Refuses to continue a recording with another model or other scripted answers: its
/// summary would mix two runs that cannot be compared.
fn same_settings(
    manifest: &Manifest,
    config: &DeskConfig,
    script: Script,
    path: &Path,
) -> anyhow::Result<()> {
    let here = answerers(script);
    let recipe = config.model.recipe.as_str();
    let pairs = [
        ("--model", &manifest.model.source, &config.model.source),
        ("--model-name", &manifest.model.name, &config.model.name),
        ("--recipe", &manifest.model.recipe, &recipe.to_owned()),
        ("--consent", &manifest.host.consent, &here.consent),
        ("--lead", &manifest.host.lead, &here.lead),
    ];
    let differences: Vec<String> = pairs
        .iter()
        .filter(|(_, recorded, now)| recorded != now)
        .map(|(flag, recorded, now)| {
            format!("{flag}: \"{recorded}\" in the recording, \"{now}\" now")
        })
        .collect();
    if differences.is_empty() {
        return Ok(());
    }
    bail!(
        "cannot resume {} with other settings than it was recorded with ({}); give the flags the run was started with, or start a new recording with --record",
        path.display(),
        differences.join("; ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::api::Outcome;

    const ALLOW: [&str; 1] = ["shop.quote_refund"];

    fn consent(ticket: &str, turn: u32, tool: &str, approved: bool) -> Event {
        Event::Consent {
            ticket: ticket.into(),
            turn,
            tool: tool.into(),
            reason: String::new(),
            unseen: vec![],
            approved,
            by: "script".into(),
            shown: None,
            rule: None,
        }
    }

    fn outcome(ticket: &str, turn: u32, tool: &str, outcome: Outcome) -> Event {
        Event::Outcome {
            ticket: ticket.into(),
            turn,
            tool: tool.into(),
            outcome,
            text: String::new(),
            truncated: false,
        }
    }

    fn done(ticket: &str) -> Event {
        Event::TicketDone {
            ticket: ticket.into(),
            model_calls: 2,
            stopped_at_turn_limit: false,
            error: None,
        }
    }

    fn plan(events: Vec<Event>) -> ResumePlan {
        let recording = Recording {
            events,
            ..Recording::default()
        };
        let queue: Vec<String> = ["T-1", "T-2", "T-3", "T-4"].map(String::from).into();
        let allow: Vec<String> = ALLOW.map(String::from).into();
        resume_plan(&recording, &queue, &allow)
    }

    fn tickets(plan: &ResumePlan) -> (Vec<&str>, Vec<&str>) {
        let to_work = plan.to_work.iter().map(String::as_str).collect();
        let for_person = plan.for_person.iter().map(|p| p.ticket.as_str()).collect();
        (to_work, for_person)
    }

    #[test]
    fn unfinished_tickets_that_changed_nothing_are_worked_again_in_queue_order() {
        let plan = plan(vec![
            done("T-2"),
            outcome("T-3", 1, "shop.quote_refund", Outcome::Result),
            consent("T-4", 1, "shop.issue_refund", false),
            outcome("T-4", 1, "shop.issue_refund", Outcome::Declined),
        ]);
        assert_eq!(tickets(&plan), (vec!["T-1", "T-3", "T-4"], vec![]));
    }

    #[test]
    fn a_ticket_stopped_after_a_side_effect_goes_to_a_person() {
        let plan = plan(vec![
            consent("T-1", 2, "shop.issue_refund", true),
            outcome("T-1", 2, "shop.issue_refund", Outcome::Result),
            consent("T-3", 1, "shop.issue_refund", true),
        ]);
        assert_eq!(tickets(&plan), (vec!["T-2", "T-4"], vec!["T-1", "T-3"]));
        assert!(
            plan.for_person[0]
                .reason
                .contains("shop.issue_refund returned a result"),
            "{:?}",
            plan.for_person
        );
        assert!(
            plan.for_person[1]
                .reason
                .contains("the run stopped before it answered"),
            "{:?}",
            plan.for_person
        );
    }

    #[test]
    fn a_finished_ticket_is_never_planned_again() {
        let plan = plan(vec![
            outcome("T-1", 2, "shop.issue_refund", Outcome::Result),
            done("T-1"),
        ]);
        assert_eq!(tickets(&plan), (vec!["T-2", "T-3", "T-4"], vec![]));
    }
}
