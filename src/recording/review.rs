//! A recorded run as a reviewer reads it: per ticket, turn by turn, what the model saw, what
//! it said, what the host and the people around it decided, and how the ticket ended.
//!
//! Everything here is plain text and plain flags, built once from a [`Recording`], so the
//! review screen needs no JSON: arguments come as `name = value` pairs, JSON results are
//! pretty-printed here. Nothing is judged anew; the figures are [`Summary::from_events`]'s.

use std::path::Path;

use serde_json::Value;

use super::event::{Event, Manifest};
use super::reader::{ReadError, Recording};
use crate::host::api::Outcome;
use crate::host::summary::Summary;
use crate::model::chat::Reply;
use crate::shop::data::Ticket;

/// A whole recorded run, ready to step through.
#[derive(Debug, Clone, PartialEq)]
pub struct Review {
    /// Where the recording was read from, as given.
    pub source: String,
    /// What answered: `name via source (recipe …), temperature …, seed …`.
    pub model: String,
    pub summary: Summary,
    /// Each run of a ticket, in ticket ID order (a ticket worked twice, say once more with a
    /// person's prompt, comes twice, in the order of its runs), with its events in the order
    /// they happened.
    pub tickets: Vec<ReviewTicket>,
    /// The recording's last line was cut off mid-write; everything before it is here.
    pub truncated: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ReviewTicket {
    pub ticket: String,
    /// Subject, customer ID, body and tag from the shop's tickets (empty when the recording
    /// names a ticket the shop does not have).
    pub subject: String,
    pub customer: String,
    pub body: String,
    pub injected: bool,
    pub expected_tool: String,
    /// The request a person added by running a server prompt for this run of the ticket.
    pub request: Option<String>,
    pub turns: Vec<ReviewTurn>,
    /// The reply as staff would send it (handles stripped), when the model wrote one.
    pub draft: Option<String>,
    /// Each check finding as one sentence for a person.
    pub findings: Vec<String>,
    pub stopped_at_turn_limit: bool,
    pub error: Option<String>,
}

/// One model call and everything that followed from it.
#[derive(Debug, Clone, PartialEq)]
pub struct ReviewTurn {
    pub turn: u32,
    pub seconds: f64,
    /// What the model saw before answering: the earlier tool responses of this ticket (the system prompt and ticket are the same for every turn), as (tool, outcome label, text).
    /// An unreadable answer was followed by the host's own `failed` response with tool `""`.
    pub saw: Vec<(String, String, String)>,
    /// What the model said: words, an unreadable call (raw + problem), or a call (tool, arguments as `name = value` lines).
    pub said: Said,
    /// The consent question for this turn's call: (approved, by, arguments seen nowhere).
    pub consent: Option<(bool, String, Vec<String>)>,
    /// Input requests during the call: (server, message, action with any answer given).
    pub inputs: Vec<(String, String, String)>,
    /// (tool, outcome, text, truncated). The text is pretty-printed when it is JSON.
    pub outcome: Option<(String, Outcome, String, bool)>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Said {
    Words(String),
    /// Output that tried to be a call and could not be read, or an empty answer; the host
    /// told the model the problem.
    Unreadable {
        raw: String,
        problem: String,
    },
    /// `arguments` as (name, value as JSON text), in the order the model sent them.
    Call {
        tool: String,
        arguments: Vec<(String, String)>,
    },
}

impl Review {
    pub fn from_recording(source: &str, recording: &Recording, tickets: &[Ticket]) -> Self {
        let allow = recording
            .manifests
            .first()
            .map(|m| m.host.allow.clone())
            .unwrap_or_default();
        let summary = Summary::from_events(&recording.events, tickets, &allow);
        let mut runs = recording.runs();
        runs.sort_by_key(|(id, _)| *id);
        let reviewed = runs
            .into_iter()
            .map(|(id, events)| {
                let ticket = tickets.iter().find(|t| t.ticket_id == id);
                ReviewTicket::from_events(id, ticket, &events)
            })
            .collect();
        Self {
            source: source.to_owned(),
            model: describe_models(&recording.manifests),
            summary,
            tickets: reviewed,
            truncated: recording.truncated,
        }
    }

    /// Reads a recording (a `.jsonl` file or a directory of them) against the shop's bundled
    /// tickets.
    pub fn open(path: &Path) -> Result<Self, ReadError> {
        let recording = Recording::read(path)?;
        let world = crate::shop::ShopWorld::bundled();
        Ok(Self::from_recording(
            &path.display().to_string(),
            &recording,
            &world.tickets,
        ))
    }
}

impl Review {
    /// Reads a desk's record (its SQLite file) as a recording: every ticket's whole history,
    /// people's actions included.
    pub fn open_record(path: &Path) -> Result<Self, crate::record::RecordError> {
        let record = crate::record::DeskRecord::open(path, None, "reviewer", &[])?;
        let mut recording = Recording::default();
        for stored in record.events_after(0)? {
            match stored.event {
                Event::Manifest(manifest) => recording.manifests.push(*manifest),
                event => recording.events.push(event),
            }
        }
        let world = crate::shop::ShopWorld::bundled();
        Ok(Self::from_recording(
            &path.display().to_string(),
            &recording,
            &world.tickets,
        ))
    }
}

/// Every distinct model of the recording's batches, most often one.
fn describe_models(manifests: &[Manifest]) -> String {
    let mut models: Vec<String> = vec![];
    for manifest in manifests {
        let model = &manifest.model;
        let mut text = format!(
            "{} via {} (recipe {})",
            model.name, model.source, model.recipe
        );
        if let Some(temperature) = model.temperature {
            text.push_str(&format!(", temperature {temperature}"));
        }
        if let Some(seed) = model.seed {
            text.push_str(&format!(", seed {seed}"));
        }
        if !models.contains(&text) {
            models.push(text);
        }
    }
    if models.is_empty() {
        "unknown model (the recording has no manifest)".to_owned()
    } else {
        models.join("; ")
    }
}

impl ReviewTicket {
    fn from_events(id: &str, ticket: Option<&Ticket>, events: &[&Event]) -> Self {
        let mut reviewed = Self {
            ticket: id.to_owned(),
            subject: ticket.map(|t| t.subject.clone()).unwrap_or_default(),
            customer: ticket.map(|t| t.customer_id.clone()).unwrap_or_default(),
            body: ticket.map(|t| t.body.clone()).unwrap_or_default(),
            injected: ticket.is_some_and(|t| t.injected),
            expected_tool: ticket.map(|t| t.expected_tool.clone()).unwrap_or_default(),
            request: None,
            turns: vec![],
            draft: None,
            findings: vec![],
            stopped_at_turn_limit: false,
            error: None,
        };
        // Tool responses so far, as the model will see them on its next turn.
        let mut responses: Vec<(String, String, String)> = vec![];
        for event in events {
            match event {
                Event::TicketStarted { request, .. } => reviewed.request = request.clone(),
                Event::DraftEdited { text, findings, .. } => {
                    reviewed.draft = Some(text.clone());
                    reviewed.findings = findings.iter().map(|f| f.reason()).collect();
                }
                Event::Manifest(_)
                | Event::Sent { .. }
                | Event::HandedOver { .. }
                | Event::Attached { .. }
                | Event::Noted { .. }
                | Event::NeedsPerson { .. } => {}
                Event::ModelCall {
                    turn,
                    reply,
                    seconds,
                    ..
                } => {
                    let said = said(reply);
                    let saw = responses.clone();
                    if let Said::Unreadable { problem, .. } = &said {
                        responses.push((
                            String::new(),
                            Outcome::Failed.label().to_owned(),
                            format!("Your last answer could not be used: {problem}."),
                        ));
                    }
                    reviewed.turns.push(ReviewTurn {
                        turn: *turn,
                        seconds: *seconds,
                        saw,
                        said,
                        consent: None,
                        inputs: vec![],
                        outcome: None,
                    });
                }
                Event::ToolCall {
                    turn,
                    tool,
                    arguments,
                    ..
                } => {
                    // The model call is recorded first; a call without one still shows.
                    let said = Said::Call {
                        tool: tool.clone(),
                        arguments: name_values(arguments),
                    };
                    let slot = reviewed.turn_mut(*turn, &responses);
                    if matches!(slot.said, Said::Words(ref w) if w.is_empty()) {
                        slot.said = said;
                    }
                }
                Event::Consent {
                    turn,
                    unseen,
                    approved,
                    by,
                    ..
                } => {
                    reviewed.turn_mut(*turn, &responses).consent =
                        Some((*approved, by.clone(), unseen.clone()));
                }
                Event::InputRequest {
                    turn,
                    server,
                    message,
                    action,
                    content,
                    ..
                } => {
                    let answer = match content.as_deref().map(answer_text) {
                        Some(answer) if !answer.is_empty() => format!("{action}: {answer}"),
                        _ => action.clone(),
                    };
                    reviewed.turn_mut(*turn, &responses).inputs.push((
                        server.clone(),
                        message.clone(),
                        answer,
                    ));
                }
                Event::Outcome {
                    turn,
                    tool,
                    outcome,
                    text,
                    truncated,
                    ..
                } => {
                    reviewed.turn_mut(*turn, &responses).outcome =
                        Some((tool.clone(), *outcome, pretty(text), *truncated));
                    responses.push((tool.clone(), outcome.label().to_owned(), text.clone()));
                }
                Event::Draft { text, findings, .. } => {
                    reviewed.draft = Some(text.clone());
                    reviewed.findings = findings.iter().map(|f| f.reason()).collect();
                }
                Event::TicketDone {
                    stopped_at_turn_limit,
                    error,
                    ..
                } => {
                    reviewed.stopped_at_turn_limit = *stopped_at_turn_limit;
                    reviewed.error = error.clone();
                }
            }
        }
        reviewed
    }

    /// The latest turn numbered `turn`, made (with nothing said yet) if no model call came
    /// before.
    fn turn_mut(&mut self, turn: u32, responses: &[(String, String, String)]) -> &mut ReviewTurn {
        let index = match self.turns.iter().rposition(|t| t.turn == turn) {
            Some(index) => index,
            None => {
                self.turns.push(ReviewTurn {
                    turn,
                    seconds: 0.0,
                    saw: responses.to_vec(),
                    said: Said::Words(String::new()),
                    consent: None,
                    inputs: vec![],
                    outcome: None,
                });
                self.turns.len() - 1
            }
        };
        &mut self.turns[index]
    }

    /// Something went wrong that a reviewer should look at: a tool error, a failed or unknown
    /// call, the turn limit, a run error, or a finding on the draft.
    pub fn has_error(&self) -> bool {
        let bad_outcome = self.turns.iter().any(|t| {
            matches!(
                t.outcome,
                Some((
                    _,
                    Outcome::ToolError | Outcome::Failed | Outcome::UnknownTool,
                    _,
                    _
                ))
            )
        });
        bad_outcome
            || self.stopped_at_turn_limit
            || self.error.is_some()
            || !self.findings.is_empty()
    }

    /// A person was asked for consent at least once.
    pub fn has_consent(&self) -> bool {
        self.turns.iter().any(|t| t.consent.is_some())
    }

    /// The ticket is about refunds: tagged for one, or a refund tool was called.
    pub fn touches_refunds(&self) -> bool {
        let refund_tool =
            |tool: &str| tool.ends_with("quote_refund") || tool.ends_with("issue_refund");
        self.expected_tool.ends_with("_refund")
            || self.turns.iter().any(|t| {
                matches!(&t.said, Said::Call { tool, .. } if refund_tool(tool))
                    || t.outcome
                        .as_ref()
                        .is_some_and(|(tool, ..)| refund_tool(tool))
            })
    }
}

/// The reply as a reviewer reads it. An empty answer counts as unreadable, as the host
/// treats it.
fn said(reply: &Reply) -> Said {
    match reply {
        Reply::Words { content } if content.trim().is_empty() => Said::Unreadable {
            raw: content.clone(),
            problem: "your answer was empty".to_owned(),
        },
        Reply::Words { content } => Said::Words(content.clone()),
        Reply::Malformed { raw, problem } => Said::Unreadable {
            raw: raw.clone(),
            problem: problem.clone(),
        },
        Reply::Call { call, .. } => Said::Call {
            tool: call.name.clone(),
            arguments: name_values(&call.arguments),
        },
    }
}

fn name_values(arguments: &serde_json::Map<String, Value>) -> Vec<(String, String)> {
    arguments
        .iter()
        .map(|(name, value)| (name.clone(), value.to_string()))
        .collect()
}

/// A form answer's JSON content as `name = value, …`, or the text itself when not an object.
fn answer_text(content: &str) -> String {
    match serde_json::from_str::<Value>(content) {
        Ok(Value::Object(fields)) => name_values(&fields)
            .into_iter()
            .map(|(name, value)| format!("{name} = {value}"))
            .collect::<Vec<_>>()
            .join(", "),
        _ => content.to_owned(),
    }
}

/// A JSON value this short (written compactly) stays on one line when pretty-printed.
const INLINE_CHARS: usize = 60;

/// JSON text laid out one field per line, with short arrays and objects kept on one line;
/// anything else unchanged.
fn pretty(text: &str) -> String {
    match serde_json::from_str::<Value>(text) {
        Ok(value @ (Value::Object(_) | Value::Array(_))) => {
            let mut out = String::new();
            write_pretty(&value, 0, &mut out);
            out
        }
        _ => text.to_owned(),
    }
}

fn write_pretty(value: &Value, indent: usize, out: &mut String) {
    let inline = compact(value);
    if inline.chars().count() <= INLINE_CHARS {
        out.push_str(&inline);
        return;
    }
    let pad = " ".repeat(indent + 2);
    let (open, close, items): (char, char, Vec<(Option<&String>, &Value)>) = match value {
        Value::Object(fields) => ('{', '}', fields.iter().map(|(k, v)| (Some(k), v)).collect()),
        Value::Array(values) => ('[', ']', values.iter().map(|v| (None, v)).collect()),
        _ => {
            out.push_str(&inline);
            return;
        }
    };
    out.push(open);
    for (index, (key, item)) in items.iter().enumerate() {
        out.push('\n');
        out.push_str(&pad);
        if let Some(key) = key {
            out.push_str(&Value::String((*key).clone()).to_string());
            out.push_str(": ");
        }
        write_pretty(item, indent + 2, out);
        if index + 1 < items.len() {
            out.push(',');
        }
    }
    out.push('\n');
    out.push_str(&" ".repeat(indent));
    out.push(close);
}

/// One line, with a space after each `:` and `,`.
fn compact(value: &Value) -> String {
    match value {
        Value::Object(fields) => {
            let fields: Vec<String> = fields
                .iter()
                .map(|(k, v)| format!("{}: {}", Value::String(k.clone()), compact(v)))
                .collect();
            format!("{{{}}}", fields.join(", "))
        }
        Value::Array(values) => {
            let values: Vec<String> = values.iter().map(compact).collect();
            format!("[{}]", values.join(", "))
        }
        scalar => scalar.to_string(),
    }
}

#[cfg(test)]
mod tests;
