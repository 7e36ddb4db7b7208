//! Two recordings side by side (`support-desk compare OLD NEW`): their figures, then ticket by
//! ticket what each run did (first tool, outcomes, consent questions, refunds, whether it ended
//! with a draft, the findings) and what changed. Every change to the prompt, a tool's
//! description or the model is judged this way.
//!
//! Runs are matched by ticket and by their order within it, so a ticket worked again with a
//! person's prompt (its own batch) meets its counterpart in the other recording.
//!
//! Each draft's findings are shown as recorded and as today's check finds them in the same
//! words (`host::checks::recheck`): a check that widened since a recording was made is said
//! so beside the run, and is not a change of the run.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;

use crate::host::checks::recheck::{Rechecked, recheck};
use crate::record::Outcome;
use crate::record::event::Event;
use crate::recording::reader::{ReadError, Recording};
use crate::recording::summary::Summary;
use crate::tickets::Ticket;

/// What one run of a ticket did, as a reviewer compares it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RunFacts {
    pub first_tool: Option<String>,
    pub model_calls: u32,
    /// Each call's tool and its arguments as JSON, in order.
    pub calls: Vec<(String, String)>,
    /// Each call's tool and outcome, in order.
    pub outcomes: Vec<(String, Outcome)>,
    pub consent_questions: usize,
    pub refunds_issued: usize,
    pub draft: bool,
    /// The draft's words, when the run ended with one.
    pub draft_text: Option<String>,
    /// The draft's findings as recorded, by check name.
    pub findings: Vec<String>,
    /// The same draft's findings as today's check finds them, by check name.
    pub findings_now: Vec<String>,
    pub stopped_at_turn_limit: bool,
}

/// One run of a ticket in both recordings, and what differs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TicketComparison {
    pub ticket: String,
    /// 1 for a ticket's first run in a recording, 2 for its second…
    pub run: usize,
    pub old: Option<RunFacts>,
    pub new: Option<RunFacts>,
    /// Each difference in words; empty when the runs did the same.
    pub changes: Vec<String>,
    /// Each side whose recorded findings today's check would not make, in words.
    pub rechecked: Vec<String>,
}

/// The two recordings' figures and every ticket's runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    pub old: Summary,
    pub new: Summary,
    pub tickets: Vec<TicketComparison>,
}

impl Comparison {
    /// Reads both recordings (a directory of batches or one `.jsonl` file each).
    pub fn read(old: &Path, new: &Path) -> Result<Self, ReadError> {
        let tickets = crate::tickets::bundled();
        let (old, new) = (Recording::read(old)?, Recording::read(new)?);
        Ok(Self::of(&old, &new, &tickets))
    }

    pub fn of(old: &Recording, new: &Recording, tickets: &[Ticket]) -> Self {
        let (old_runs, new_runs) = (facts_by_run(old, tickets), facts_by_run(new, tickets));
        let keys: std::collections::BTreeSet<&(String, usize)> =
            old_runs.keys().chain(new_runs.keys()).collect();
        let compared = keys
            .into_iter()
            .map(|key| {
                let (old, new) = (old_runs.get(key).cloned(), new_runs.get(key).cloned());
                let rechecked = [("old", &old), ("new", &new)]
                    .into_iter()
                    .filter_map(|(side, facts)| rechecked(side, facts.as_ref()?))
                    .collect();
                TicketComparison {
                    ticket: key.0.clone(),
                    run: key.1,
                    changes: changes(old.as_ref(), new.as_ref()),
                    rechecked,
                    old,
                    new,
                }
            })
            .collect();
        Self {
            old: summary_of(old, tickets),
            new: summary_of(new, tickets),
            tickets: compared,
        }
    }

    /// The runs that differ.
    pub fn changed(&self) -> impl Iterator<Item = &TicketComparison> {
        self.tickets.iter().filter(|t| !t.changes.is_empty())
    }

    /// The runs whose recorded findings differ from today's check of the same draft.
    pub fn rechecked(&self) -> impl Iterator<Item = &TicketComparison> {
        self.tickets.iter().filter(|t| !t.rechecked.is_empty())
    }

    /// The figures side by side, then one line per run that changed, then the drafts today's
    /// check reads otherwise than the recording says.
    pub fn to_text(&self) -> String {
        let mut out = String::from("figure                                      old        new\n");
        for (name, old, new) in figures(&self.old, &self.new) {
            out.push_str(&format!("{name:<44}{old:<11}{new}\n"));
        }
        let changed: Vec<&TicketComparison> = self.changed().collect();
        out.push_str(&format!(
            "\nruns that changed: {} of {}\n",
            changed.len(),
            self.tickets.len()
        ));
        for ticket in changed {
            let run = run_label(ticket.run);
            out.push_str(&format!(
                "{}{run}: {}\n",
                ticket.ticket,
                ticket.changes.join("; ")
            ));
        }
        let rechecked: Vec<&TicketComparison> = self.rechecked().collect();
        if !rechecked.is_empty() {
            out.push_str(&format!(
                "\ndrafts today's check reads otherwise than recorded: {}\n",
                rechecked.len()
            ));
            for ticket in rechecked {
                out.push_str(&format!(
                    "{}{}: {}\n",
                    ticket.ticket,
                    run_label(ticket.run),
                    ticket.rechecked.join("; ")
                ));
            }
        }
        out
    }
}

/// ` (run 2)` for a ticket's second run; nothing for its first.
fn run_label(run: usize) -> String {
    if run > 1 {
        format!(" (run {run})")
    } else {
        String::new()
    }
}

/// `old: recorded none, today amount_not_from_tool` when today's check differs.
fn rechecked(side: &str, facts: &RunFacts) -> Option<String> {
    (facts.draft && facts.findings != facts.findings_now).then(|| {
        format!(
            "{side}: recorded {}, today {}",
            names(&facts.findings),
            names(&facts.findings_now)
        )
    })
}

fn names(findings: &[String]) -> String {
    if findings.is_empty() {
        "none".to_owned()
    } else {
        findings.join(", ")
    }
}

/// Each run's draft checked again by today's check, keyed as [`facts_by_run`] keys runs:
/// against the run's own calls, `tickets`' words and the bundled desk's signature.
pub fn rechecked_runs(
    recording: &Recording,
    tickets: &[Ticket],
) -> BTreeMap<(String, usize), Rechecked> {
    let config = crate::config::DeskConfig::bundled();
    let signature = config.desk.signature();
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    let mut out = BTreeMap::new();
    for (ticket, events) in recording.runs() {
        let run = seen.entry(ticket).or_default();
        *run += 1;
        let text = crate::tickets::find(tickets, ticket)
            .map(crate::host::run::system_prompt::ticket_text)
            .unwrap_or_default();
        if let Some(rechecked) = recheck(&events, &text, signature) {
            out.insert((ticket.to_owned(), *run), rechecked);
        }
    }
    out
}

fn summary_of(recording: &Recording, tickets: &[Ticket]) -> Summary {
    let allow = recording
        .manifests
        .first()
        .map(|m| m.host.allow.clone())
        .unwrap_or_default();
    // A recording that notes its scored tickets is scored as its run was; one that does
    // not is scored on `tickets` as they are.
    let labels = if recording.manifests.is_empty() {
        crate::evaluation::for_tickets(tickets)
    } else {
        super::summary::scored_with(recording)
    };
    Summary::from_events(&recording.events, &labels, &allow)
}

/// How one figure is read from a summary.
type Figure = fn(&Summary) -> String;

/// Each figure of the two summaries, as a name and the two values.
pub fn figures(old: &Summary, new: &Summary) -> Vec<(&'static str, String, String)> {
    let pairs: [(&str, Figure); 21] = [
        ("tickets worked", |s| s.tickets_worked.to_string()),
        ("model calls", |s| s.model_calls.to_string()),
        ("tool calls", |s| s.tool_calls.to_string()),
        ("outcomes: result", |s| s.outcomes.result.to_string()),
        ("outcomes: tool error", |s| {
            s.outcomes.tool_error.to_string()
        }),
        ("outcomes: declined", |s| s.outcomes.declined.to_string()),
        ("outcomes: failed", |s| s.outcomes.failed.to_string()),
        ("first tool as tagged", |s| score(s.first_tool_as_tagged)),
        ("stopped at the turn limit", |s| {
            s.stopped_at_turn_limit.to_string()
        }),
        ("ended with a draft", |s| s.drafts.to_string()),
        ("refunds issued", |s| s.refunds_issued.to_string()),
        ("refund tickets that reached issue_refund", |s| {
            score(s.refund_tickets_reaching_issue_refund)
        }),
        ("unbacked refund promises flagged", |s| {
            s.unbacked_refund_promises.to_string()
        }),
        ("drafts with findings", |s| {
            s.drafts_with_findings.to_string()
        }),
        ("drafts with placeholder/markup/JSON/tool", |s| {
            s.drafts_not_for_a_customer.to_string()
        }),
        ("  of those, unflagged by the check", |s| {
            s.drafts_not_for_a_customer_unflagged.to_string()
        }),
        ("tickets flagged for a person", |s| {
            s.flagged_for_person.to_string()
        }),
        ("consent questions", |s| s.consent_questions.to_string()),
        ("input requests", |s| s.input_requests.to_string()),
        ("prompt tokens from the server's cache", |s| {
            s.prompts.as_ref().map_or("-".into(), |p| {
                let share = p.cached_per_mille();
                format!("{}.{} %", share / 10, share % 10)
            })
        }),
        ("model seconds a ticket", |s| {
            s.prompts.as_ref().map_or("-".into(), |p| {
                let ms = p.model_ms.checked_div(p.tickets as u64).unwrap_or(0);
                format!("{:.1}", ms as f64 / 1000.0)
            })
        }),
    ];
    pairs
        .iter()
        .map(|(name, get)| (*name, get(old), get(new)))
        .collect()
}

fn score(s: crate::recording::summary::Score) -> String {
    format!("{} of {}", s.right, s.of)
}

/// Every run's facts, by ticket and the run's order within the ticket.
fn facts_by_run(recording: &Recording, tickets: &[Ticket]) -> BTreeMap<(String, usize), RunFacts> {
    let mut rechecked = rechecked_runs(recording, tickets);
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    let mut facts = BTreeMap::new();
    for (ticket, events) in recording.runs() {
        let run = seen.entry(ticket).or_default();
        *run += 1;
        let key = (ticket.to_owned(), *run);
        let mut run_facts = RunFacts::of(&events);
        if let Some(now) = rechecked.remove(&key) {
            run_facts.findings_now = now.now.iter().map(check_name).collect();
        }
        facts.insert(key, run_facts);
    }
    facts
}

impl RunFacts {
    fn of(events: &[&Event]) -> Self {
        let mut facts = RunFacts {
            first_tool: None,
            model_calls: 0,
            calls: vec![],
            outcomes: vec![],
            consent_questions: 0,
            refunds_issued: 0,
            draft: false,
            draft_text: None,
            findings: vec![],
            findings_now: vec![],
            stopped_at_turn_limit: false,
        };
        for event in events {
            match event {
                Event::ToolCall {
                    tool, arguments, ..
                } => {
                    facts.first_tool.get_or_insert_with(|| tool.clone());
                    let arguments = serde_json::Value::Object(arguments.clone()).to_string();
                    facts.calls.push((tool.clone(), arguments));
                }
                Event::Outcome { tool, outcome, .. } => {
                    facts.outcomes.push((tool.clone(), *outcome));
                    if *outcome == Outcome::Result && tool.ends_with("issue_refund") {
                        facts.refunds_issued += 1;
                    }
                }
                event @ Event::Consent { .. } if event.is_consent_question() => {
                    facts.consent_questions += 1
                }
                Event::Draft { findings, text, .. } => {
                    facts.draft = true;
                    facts.draft_text = Some(text.clone());
                    facts.findings = findings.iter().map(check_name).collect();
                }
                Event::TicketDone {
                    model_calls,
                    stopped_at_turn_limit,
                    ..
                } => {
                    facts.model_calls = *model_calls;
                    facts.stopped_at_turn_limit = *stopped_at_turn_limit;
                }
                _ => {}
            }
        }
        facts
    }
}

/// A finding's check name, as the recording writes it (`refund_promised_without_refund`).
fn check_name(finding: &crate::record::Finding) -> String {
    serde_json::to_value(finding)
        .ok()
        .and_then(|v| v.get("check").and_then(|c| c.as_str()).map(str::to_owned))
        .unwrap_or_default()
}

/// What differs between two runs of one ticket, in words.
fn changes(old: Option<&RunFacts>, new: Option<&RunFacts>) -> Vec<String> {
    let (old, new) = match (old, new) {
        (Some(old), Some(new)) => (old, new),
        (Some(_), None) => return vec!["only in the old recording".to_owned()],
        (None, Some(_)) => return vec!["only in the new recording".to_owned()],
        (None, None) => return vec![],
    };
    let mut out = Vec::new();
    let mut differ = |what: &str, a: String, b: String| {
        if a != b {
            out.push(format!("{what} {a} → {b}"));
        }
    };
    let tool = |f: &RunFacts| f.first_tool.clone().unwrap_or_else(|| "none".to_owned());
    differ("first tool", tool(old), tool(new));
    differ(
        "model calls",
        old.model_calls.to_string(),
        new.model_calls.to_string(),
    );
    // The same tools called with other arguments: a changed run, however it ended.
    let tools = |f: &RunFacts| f.calls.iter().map(|(t, _)| t.clone()).collect::<Vec<_>>();
    if tools(old) == tools(new) {
        for ((tool, a), (_, b)) in old.calls.iter().zip(&new.calls) {
            differ(&format!("{tool} arguments"), cut(a), cut(b));
        }
    }
    differ("outcomes", outcomes(old), outcomes(new));
    differ(
        "consent questions",
        old.consent_questions.to_string(),
        new.consent_questions.to_string(),
    );
    differ(
        "refunds",
        old.refunds_issued.to_string(),
        new.refunds_issued.to_string(),
    );
    let ending = |f: &RunFacts| {
        if f.draft {
            "a draft".to_owned()
        } else if f.stopped_at_turn_limit {
            "the turn limit".to_owned()
        } else {
            "no draft".to_owned()
        }
    };
    differ("ended with", ending(old), ending(new));
    differ("findings", names(&old.findings), names(&new.findings));
    if let (Some(a), Some(b)) = (&old.draft_text, &new.draft_text)
        && a != b
    {
        out.push(format!(
            "the draft's words changed ({} → {} characters)",
            a.chars().count(),
            b.chars().count()
        ));
    }
    out
}

/// A call's arguments, short enough for one line of the comparison.
fn cut(arguments: &str) -> String {
    crate::text::cut(arguments, 80)
}

fn outcomes(facts: &RunFacts) -> String {
    if facts.outcomes.is_empty() {
        return "none".to_owned();
    }
    facts
        .outcomes
        .iter()
        .map(|(tool, outcome)| {
            let tool = tool.split_once('.').map_or(tool.as_str(), |(_, t)| t);
            format!("{tool}:{}", outcome.label())
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// `support-desk compare OLD NEW [--json]`: the comparison, as text or one JSON object.
#[derive(Debug, clap::Args)]
pub struct CompareArgs {
    pub old: std::path::PathBuf,
    pub new: std::path::PathBuf,
    /// Print it as one JSON object.
    #[arg(long)]
    pub json: bool,
}

pub async fn execute(args: CompareArgs) -> anyhow::Result<()> {
    let text = run(&args.old, &args.new, args.json)?;
    super::write_stdout(&format!("{text}\n"))
}

pub fn run(old: &Path, new: &Path, json: bool) -> anyhow::Result<String> {
    let comparison = Comparison::read(old, new)?;
    Ok(if json {
        serde_json::to_string(&comparison)?
    } else {
        comparison.to_text()
    })
}

#[cfg(test)]
mod tests;
