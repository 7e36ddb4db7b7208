//! The lead's report: how fast the desk answers and resolves, what waits and for how long,
//! what is late against the `[sla]` targets, how replies were written, how long approvals
//! wait and what each lead answered, and each day's volume, all from the desk's record.
//!
//! Every figure is computed from the record's events and their times (`Stored::at`: the
//! desk's clock on one person's record, the database's on a team's), folded with the same
//! [`TicketState::apply`] the record uses, so the report and the queue never disagree on where
//! a ticket stands. [`Report::of`] is pure over events and [`Settings`]; [`read`] walks a
//! record on either engine a page at a time into the same tally.
//!
//! A ticket arrives with its first message by mail; a ticket from a tickets.json has no
//! arrival in the record, so it arrives with its first event there (the desk's first touch).
//! Its first response is its first reply sent; its resolution is the first time a person
//! said it was solved.

mod figures;
mod refunds;
mod tally;
mod text;

use std::collections::{BTreeMap, HashMap};

use jiff::Timestamp;
use jiff::civil::Date;
use jiff::tz::TimeZone;
use serde::Serialize;

pub use figures::{Age, Spread, span};
use tally::{Tally, TicketFacts, Written};

use crate::config::DeskConfig;
use crate::record::{Conversation, EngineError, Record, Stored};
use crate::sla::{Due, Sla};
use crate::tickets::Ticket;

/// What a report is computed against besides the record.
#[derive(Debug, Clone)]
pub struct Settings<'a> {
    /// The moment the report describes (unix ms): ages and lateness are as of then, and
    /// events after it are left out.
    pub now: i64,
    /// Only tickets that arrived on this day or later, in `zone`.
    pub since: Option<Date>,
    /// The shop's time zone (`[sla] time_zone`), which days are counted in.
    pub zone: TimeZone,
    /// The due-time targets; without them nothing is late.
    pub sla: Option<&'a Sla>,
    /// The queue's tickets from a tickets.json, for the due time of one not yet answered.
    pub tickets: &'a [Ticket],
    /// The host's tools that change nothing (the state fold needs them).
    pub allow: &'a [String],
    /// How long a solved conversation stays quiet before it is closed.
    pub close_after_days: u32,
}

impl<'a> Settings<'a> {
    /// The report as of `now` over every ticket, with the config's targets (`sla`, built from
    /// its `[sla]`), days counted in their zone (UTC without them), and its allowed tools and
    /// quiet days.
    pub fn new(
        config: &'a DeskConfig,
        sla: Option<&'a Sla>,
        tickets: &'a [Ticket],
        now: i64,
    ) -> Self {
        Self {
            now,
            since: None,
            zone: sla.map_or(TimeZone::UTC, |sla| sla.hours.zone().clone()),
            sla,
            tickets,
            allow: &config.consent.allow,
            close_after_days: config.close_after_days(),
        }
    }
}

/// The lead's report, as `report --json` prints it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    /// The moment described, RFC 3339 in UTC.
    pub as_of: String,
    /// The zone days are counted in (an IANA name, or an offset).
    pub time_zone: String,
    /// `--since`: only tickets that arrived on this day or later.
    pub since: Option<String>,
    /// How many tickets the report counts.
    pub tickets: usize,
    /// From arrival to the first reply sent.
    pub first_response: Spread,
    /// From arrival to the first time a person said it was solved.
    pub resolution: Spread,
    pub backlog: Backlog,
    /// Against the `[sla]` targets; `None` without them.
    pub late: Option<Late>,
    pub replies: Replies,
    pub approvals: Approvals,
    /// Per lead: refunds released by accepting an approval, and how much.
    pub refunds_released: BTreeMap<String, Released>,
    /// Tickets arrived and replies sent, each day from the first ticket's to the report's.
    pub daily: Vec<Day>,
}

/// Where the tickets' conversations stand, and how old the unsolved ones are.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Backlog {
    pub open: usize,
    pub pending: usize,
    pub solved: usize,
    pub closed: usize,
    /// Open and pending tickets by time since they arrived, youngest bucket first.
    pub by_age: Vec<AgeCount>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AgeCount {
    /// `<1h`, `1-4h`, `4-24h`, `1-3d` or `>3d`.
    pub age: &'static str,
    pub tickets: usize,
}

/// Lateness against the `[sla]` targets, in the shop's business hours.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Late {
    /// Tickets whose next answer is past due now, as the queue shows them.
    pub now: usize,
    pub now_tickets: Vec<String>,
    /// First replies sent after the first-response target, and those sent in time.
    pub first_reply_late: usize,
    pub first_reply_in_time: usize,
}

/// Replies sent, by how they were written; and hand-overs, which answer nobody.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Replies {
    pub sent: usize,
    /// The model's draft, sent unchanged.
    pub model_unchanged: usize,
    /// The model's draft, edited by a person first.
    pub model_edited: usize,
    /// Written by a person, with no draft of the model's.
    pub by_hand: usize,
    /// Tickets handed over to someone, instead of (or before) a reply.
    pub handed_over: usize,
}

/// The leads' approvals: how many, how long they waited, what each lead answered.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Approvals {
    pub asked: usize,
    pub answered: usize,
    pub withdrawn: usize,
    /// Declined by the desk's rule when no lead answered in time (`[approvals] fallback`).
    pub lapsed: usize,
    /// Asked and neither answered, withdrawn nor lapsed.
    pub open: usize,
    /// From asked to answered.
    pub wait: Spread,
    pub by_lead: BTreeMap<String, Answers>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Answers {
    pub accepted: usize,
    pub declined: usize,
    pub cancelled: usize,
}

/// The refunds one lead released.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Released {
    pub count: usize,
    /// The sum per currency, as the shop writes amounts (`"250.00"`).
    pub amounts: BTreeMap<String, String>,
    /// Released refunds whose answer carried no amount the desk could read.
    pub without_amount: usize,
}

/// One day's volume, in the shop's time zone.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Day {
    /// `YYYY-MM-DD`.
    pub day: String,
    pub arrived: usize,
    pub replies: usize,
}

/// The report of `events` (in the record's order) against `settings`.
pub fn of<'a>(events: impl IntoIterator<Item = &'a Stored>, settings: &Settings<'_>) -> Report {
    let mut tally = Tally::new(settings.allow, settings.now);
    for stored in events {
        tally.add(stored);
    }
    Report::from_tally(&tally, settings)
}

/// How many events [`read`] asks the record for at a time: more than a walk's
/// [`Record::PAGE`], since a report reads the whole record at once and each page of a team's
/// record is a round trip to the database (a few MiB at most in memory).
const READ_PAGE: usize = 4096;

/// The report of the whole record, on either engine, read [`READ_PAGE`] events at a time.
pub async fn read(record: &Record, settings: &Settings<'_>) -> Result<Report, EngineError> {
    let mut tally = Tally::new(settings.allow, settings.now);
    let mut after = 0;
    loop {
        let page = record.events_page(after, READ_PAGE).await?;
        let Some(last) = page.last() else {
            return Ok(Report::from_tally(&tally, settings));
        };
        after = last.seq;
        page.iter().for_each(|stored| tally.add(stored));
    }
}

impl Report {
    fn from_tally(tally: &Tally, settings: &Settings<'_>) -> Self {
        let zone = &settings.zone;
        let from = settings.since.map(|day| start_of(day, zone));
        let counted: Vec<(&String, &TicketFacts)> = tally
            .tickets
            .iter()
            .filter(|(_, facts)| from.is_none_or(|from| facts.arrived_at() >= from))
            .collect();
        let after_arrival = |at: fn(&TicketFacts) -> Option<i64>| {
            let durations = counted
                .iter()
                .filter_map(|(_, facts)| Some(at(facts)? - facts.arrived_at()))
                .collect();
            Spread::of(durations)
        };
        Report {
            as_of: crate::record::rfc3339(settings.now),
            time_zone: zone_name(zone),
            since: settings.since.map(|day| day.to_string()),
            tickets: counted.len(),
            first_response: after_arrival(|facts| facts.first_sent_at),
            resolution: after_arrival(|facts| facts.first_solved_at),
            backlog: backlog(&counted, settings),
            late: settings.sla.map(|sla| late(&counted, sla, settings)),
            replies: replies(&counted),
            approvals: approvals(&counted),
            refunds_released: refunds::released(&counted),
            daily: daily(&counted, settings, from),
        }
    }
}

fn backlog(counted: &[(&String, &TicketFacts)], settings: &Settings<'_>) -> Backlog {
    let mut backlog = Backlog::default();
    let mut ages = [0; Age::ALL.len()];
    for (_, facts) in counted {
        let conversation = facts
            .state
            .conversation_at(settings.now, settings.close_after_days);
        match conversation {
            Conversation::Open => backlog.open += 1,
            Conversation::Pending => backlog.pending += 1,
            Conversation::Solved => backlog.solved += 1,
            Conversation::Closed => backlog.closed += 1,
        }
        if matches!(conversation, Conversation::Open | Conversation::Pending) {
            ages[Age::of(settings.now - facts.arrived_at()) as usize] += 1;
        }
    }
    backlog.by_age = Age::ALL
        .iter()
        .zip(ages)
        .map(|(age, tickets)| AgeCount {
            age: age.label(),
            tickets,
        })
        .collect();
    backlog
}

/// Late now is what the queue shows ([`crate::sla::due_at`]); a first reply is late when it
/// went after the first-response target counted from the ticket's arrival. Both use the
/// targets of the tags the ticket carries as the record stands at the report's moment, not
/// those it carried when the reply went: a tag put on later moves an old reply's target too.
fn late(counted: &[(&String, &TicketFacts)], sla: &Sla, settings: &Settings<'_>) -> Late {
    let files: HashMap<&str, &Ticket> = settings
        .tickets
        .iter()
        .map(|ticket| (ticket.ticket_id.as_str(), ticket))
        .collect();
    let mut late = Late::default();
    for (id, facts) in counted {
        let unknown = Ticket {
            ticket_id: (*id).clone(),
            ..Ticket::default()
        };
        let ticket = files.get(id.as_str()).copied().unwrap_or(&unknown);
        if crate::sla::due_at(sla, ticket, &facts.state).is_some_and(|at| settings.now > at) {
            late.now += 1;
            late.now_tickets.push((*id).clone());
        }
        if let Some(sent) = facts.first_sent_at {
            match sla.due(&facts.state.tags, facts.arrived_at(), false, sent) {
                Due::Late(_) => late.first_reply_late += 1,
                Due::At(_) | Due::Soon(_) => late.first_reply_in_time += 1,
            }
        }
    }
    late
}

fn replies(counted: &[(&String, &TicketFacts)]) -> Replies {
    let mut replies = Replies::default();
    for (_, facts) in counted {
        replies.handed_over += facts.handed_over;
        for (_, written) in &facts.replies {
            replies.sent += 1;
            match written {
                Written::ModelUnchanged => replies.model_unchanged += 1,
                Written::ModelEdited => replies.model_edited += 1,
                Written::ByHand => replies.by_hand += 1,
            }
        }
    }
    replies
}

fn approvals(counted: &[(&String, &TicketFacts)]) -> Approvals {
    let mut approvals = Approvals::default();
    let mut waits = Vec::new();
    for approval in counted.iter().flat_map(|(_, f)| f.approvals.values()) {
        approvals.asked += usize::from(approval.asked_at.is_some());
        approvals.withdrawn += usize::from(approval.withdrawn);
        approvals.lapsed += usize::from(approval.lapsed);
        let Some(answer) = &approval.answer else {
            approvals.open += usize::from(!approval.withdrawn && !approval.lapsed);
            continue;
        };
        approvals.answered += 1;
        if let Some(asked) = approval.asked_at {
            waits.push(answer.at - asked);
        }
        let lead = approvals.by_lead.entry(answer.by.clone()).or_default();
        match answer.action.as_str() {
            "accept" => lead.accepted += 1,
            "decline" => lead.declined += 1,
            // A form closed without an answer, and anything a later protocol adds.
            _ => lead.cancelled += 1,
        }
    }
    approvals.wait = Spread::of(waits);
    approvals
}

/// Every day from the first counted ticket's arrival (or `--since`) to the report's own.
fn daily(
    counted: &[(&String, &TicketFacts)],
    settings: &Settings<'_>,
    from: Option<i64>,
) -> Vec<Day> {
    let zone = &settings.zone;
    let mut arrived: BTreeMap<Date, usize> = BTreeMap::new();
    let mut sent: BTreeMap<Date, usize> = BTreeMap::new();
    for (_, facts) in counted {
        *arrived.entry(day_of(facts.arrived_at(), zone)).or_default() += 1;
        for (at, _) in &facts.replies {
            *sent.entry(day_of(*at, zone)).or_default() += 1;
        }
    }
    let first = match (from, arrived.keys().next()) {
        (Some(from), _) => day_of(from, zone),
        (None, Some(first)) => *first,
        (None, None) => return Vec::new(),
    };
    let last = day_of(settings.now, zone);
    let mut days = Vec::new();
    let mut day = first;
    while day <= last {
        days.push(Day {
            day: day.to_string(),
            arrived: arrived.get(&day).copied().unwrap_or(0),
            replies: sent.get(&day).copied().unwrap_or(0),
        });
        match day.tomorrow() {
            Ok(next) => day = next,
            Err(_) => break,
        }
    }
    days
}

/// The first moment of `day` in `zone` (unix ms).
fn start_of(day: Date, zone: &TimeZone) -> i64 {
    day.to_zoned_datetime(zone.clone())
        .map(|zoned| zoned.timestamp().as_millisecond())
        .unwrap_or(i64::MIN)
}

/// The day in `zone` that `ms` (unix ms) falls on.
fn day_of(ms: i64, zone: &TimeZone) -> Date {
    Timestamp::from_millisecond(ms)
        .unwrap_or(Timestamp::UNIX_EPOCH)
        .to_zoned_datetime(zone.clone())
        .date()
}

fn zone_name(zone: &TimeZone) -> String {
    zone.iana_name().unwrap_or("UTC").to_owned()
}

#[cfg(test)]
mod tests;
