//! Due times: when a ticket's next answer is due, in the shop's business hours and time zone.
//!
//! A ticket's clock starts when the customer's unanswered message came in (the first
//! response target until the desk has replied once, the next-reply target after) and stops
//! when a reply goes or the conversation is solved; a pending ticket is not due. Only time
//! inside the business hours counts: a message on Friday evening with a four-hour target is
//! due on Monday at 13:00. Everything here is arithmetic on plain values.
//!
//! A tag can carry targets of its own (`[sla.tags.NAME]`): a ticket is timed against the
//! tightest targets among the tags it carries now, or the defaults when none of them has any.
//! [`Sla::targets`] is the one place that choice is made, so the desk, `queue` and the report
//! cannot disagree on when a ticket is due.

use std::collections::BTreeMap;
use std::time::Duration;

use jiff::Timestamp;
use jiff::civil::{Date, Time};
use jiff::tz::TimeZone;

use crate::record::{Conversation, TicketState};
use crate::tickets::Ticket;

/// The shop's week: for each weekday (Monday first) the hours it works, if any, in its time
/// zone, and the days it does not work at all.
#[derive(Debug, Clone)]
pub struct BusinessHours {
    zone: TimeZone,
    week: [Option<(Time, Time)>; 7],
    holidays: Vec<Date>,
}

/// The due-time settings, ready to use.
#[derive(Debug, Clone)]
pub struct Sla {
    pub hours: BusinessHours,
    /// "Due soon" within this much wall-clock time of the due moment.
    pub warn_within: Duration,
    /// Every ticket's targets unless its tags have their own.
    defaults: Targets,
    /// The tags with targets of their own, each filled from the defaults where its table
    /// leaves a clock out.
    by_tag: BTreeMap<String, Targets>,
}

/// The business time a ticket's answers may take, one target per clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Targets {
    /// The first answer to a ticket.
    pub first_response: Duration,
    /// Every answer after the customer writes again.
    pub next_reply: Duration,
}

impl Targets {
    /// The target of the clock that runs: next reply once the desk has answered before.
    pub fn of(self, replied: bool) -> Duration {
        if replied {
            self.next_reply
        } else {
            self.first_response
        }
    }

    /// The tighter of the two, clock by clock.
    fn tightest(self, other: Self) -> Self {
        Self {
            first_response: self.first_response.min(other.first_response),
            next_reply: self.next_reply.min(other.next_reply),
        }
    }
}

/// Where a ticket stands against its target, at a moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Due {
    /// Due at this unix millisecond, more than the warning window away.
    At(i64),
    /// Due within the warning window.
    Soon(i64),
    /// Past its due moment.
    Late(i64),
}

impl Due {
    /// A ticket due at `at`, seen at `now`, with the warning window `warn_within`.
    pub fn of(at: i64, now: i64, warn_within: Duration) -> Self {
        let warn = i64::try_from(warn_within.as_millis()).unwrap_or(i64::MAX);
        if now > at {
            Due::Late(at)
        } else if at - now <= warn {
            Due::Soon(at)
        } else {
            Due::At(at)
        }
    }

    /// The due moment (unix ms).
    pub fn at(self) -> i64 {
        match self {
            Due::At(at) | Due::Soon(at) | Due::Late(at) => at,
        }
    }

    /// `due 1h 20m` or `late 35m`, from `now`.
    pub fn words(self, now: i64) -> String {
        match self {
            Due::Late(at) => format!("late {}", span(now - at)),
            Due::At(at) | Due::Soon(at) => format!("due {}", span(at - now)),
        }
    }

    /// `late`, `due soon` or `due`, as `queue --json` writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Due::Late(_) => "late",
            Due::Soon(_) => "due_soon",
            Due::At(_) => "due",
        }
    }
}

/// When `ticket`'s next answer is due (unix ms): `None` when nothing waits for one (a
/// conversation pending, solved or closed). A ticket by mail is timed from the customer's
/// unanswered message; one from a tickets.json from the time it says it was received (in the
/// shop's zone) until the desk replies. The targets are those of the tags `state` carries.
pub fn due_at(sla: &Sla, ticket: &Ticket, state: &TicketState) -> Option<i64> {
    if state.conversation != Conversation::Open {
        return None;
    }
    let since = match state.waiting_since {
        Some(since) => since,
        None if state.messages == 0 && state.sent.is_none() => {
            sla.hours.local_moment(&ticket.received_at)?
        }
        None => return None,
    };
    Some(sla.due(&state.tags, since, state.replied, since).at())
}

/// `3d 4h`, `1h 20m`, `35m`, `0m`.
fn span(ms: i64) -> String {
    let minutes = ms.max(0) / 60_000;
    let (days, hours, minutes) = (minutes / 1440, minutes / 60 % 24, minutes % 60);
    match (days, hours) {
        (0, 0) => format!("{minutes}m"),
        (0, _) => format!("{hours}h {minutes}m"),
        _ => format!("{days}d {hours}h"),
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SlaError {
    #[error("[sla] {what} \"{value}\" is not a duration; write it as 30m, 4h, 1h30m or 2d")]
    Duration { what: &'static str, value: String },
    #[error(
        "[sla] business_hours \"{0}\" cannot be read; write days and hours as Mon-Fri 09:00-17:00, with more separated by commas (Mon-Fri 09:00-17:00, Sat 10:00-14:00)"
    )]
    Hours(String),
    #[error(
        "[sla] time_zone \"{0}\" is not a time zone the desk knows; write an IANA name such as Europe/Berlin"
    )]
    Zone(String),
    #[error("[sla] holiday \"{0}\" is not a date; write it as 2026-12-25")]
    Holiday(String),
    #[error("[sla] business_hours names no working time at all, so nothing could ever be due")]
    NoHours,
    #[error(
        "[sla.tags.{tag}] {what} \"{value}\" is not a duration; write it as 30m, 4h, 1h30m or 2d"
    )]
    TagDuration {
        tag: String,
        what: &'static str,
        value: String,
    },
    #[error("[sla.tags.{tag}] is not a tag: {why}")]
    TagName { tag: String, why: String },
    #[error("[sla.tags.{tag}] names the tag {kept:?}; write the table as [sla.tags.{kept}]")]
    TagSpelling { tag: String, kept: String },
    #[error(
        "[sla.tags.{0}] sets no target; give it first_response, next_reply or both, or remove it"
    )]
    TagEmpty(String),
}

impl Sla {
    /// The settings from the config's words.
    pub fn new(
        first_response: &str,
        next_reply: &str,
        business_hours: &str,
        time_zone: &str,
        holidays: &[String],
        warn_within: &str,
    ) -> Result<Self, SlaError> {
        Ok(Self {
            hours: BusinessHours::new(business_hours, time_zone, holidays)?,
            warn_within: duration("warn_within", warn_within)?,
            defaults: Targets {
                first_response: duration("first_response", first_response)?,
                next_reply: duration("next_reply", next_reply)?,
            },
            by_tag: BTreeMap::new(),
        })
    }

    /// The settings with targets for tickets tagged `tag` (`[sla.tags.TAG]`): a clock left
    /// out keeps the default. The tag must be written as the desk keeps tags (`refund`, not
    /// `Refund`), so the table is found by what `support-desk tag` records.
    pub fn with_tag(
        mut self,
        tag: &str,
        first_response: Option<&str>,
        next_reply: Option<&str>,
    ) -> Result<Self, SlaError> {
        let kept = crate::record::tag_name(tag).map_err(|why| SlaError::TagName {
            tag: tag.to_owned(),
            why,
        })?;
        if kept != tag {
            return Err(SlaError::TagSpelling {
                tag: tag.to_owned(),
                kept,
            });
        }
        if first_response.is_none() && next_reply.is_none() {
            return Err(SlaError::TagEmpty(tag.to_owned()));
        }
        let read = |what: &'static str, text: Option<&str>, default: Duration| match text {
            None => Ok(default),
            Some(text) => duration(what, text).map_err(|_| SlaError::TagDuration {
                tag: tag.to_owned(),
                what,
                value: text.to_owned(),
            }),
        };
        let targets = Targets {
            first_response: read(
                "first_response",
                first_response,
                self.defaults.first_response,
            )?,
            next_reply: read("next_reply", next_reply, self.defaults.next_reply)?,
        };
        self.by_tag.insert(kept, targets);
        Ok(self)
    }

    /// The targets of a ticket tagged `tags`: for each clock the tightest of its tags that
    /// have targets, or the defaults when none has.
    pub fn targets(&self, tags: &[String]) -> Targets {
        tags.iter()
            .filter_map(|tag| self.by_tag.get(tag).copied())
            .reduce(Targets::tightest)
            .unwrap_or(self.defaults)
    }

    /// Where a ticket tagged `tags` whose clock started at `since` stands at `now` (unix
    /// ms); `replied` says whether the desk has answered it before (the next-reply target
    /// then).
    pub fn due(&self, tags: &[String], since: i64, replied: bool, now: i64) -> Due {
        let target = self.targets(tags).of(replied);
        Due::of(self.hours.add(since, target), now, self.warn_within)
    }
}

impl BusinessHours {
    /// The shop's time zone, which these hours and holidays are in.
    pub fn zone(&self) -> &TimeZone {
        &self.zone
    }

    pub fn new(hours: &str, zone: &str, holidays: &[String]) -> Result<Self, SlaError> {
        let zone = TimeZone::get(zone).map_err(|_| SlaError::Zone(zone.to_owned()))?;
        let mut week = [None; 7];
        for part in hours.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let bad = || SlaError::Hours(hours.to_owned());
            let (days, times) = part.split_once(' ').ok_or_else(bad)?;
            let (open, close) = times.trim().split_once('-').ok_or_else(bad)?;
            let (open, close) = (clock(open).ok_or_else(bad)?, clock(close).ok_or_else(bad)?);
            if open >= close {
                return Err(bad());
            }
            let (first, last) = match days.split_once('-') {
                Some((first, last)) => (weekday(first), weekday(last)),
                None => (weekday(days), weekday(days)),
            };
            let (first, last) = (first.ok_or_else(bad)?, last.ok_or_else(bad)?);
            if first > last {
                return Err(bad());
            }
            for day in &mut week[first..=last] {
                *day = Some((open, close));
            }
        }
        if week.iter().all(Option::is_none) {
            return Err(SlaError::NoHours);
        }
        let holidays = holidays
            .iter()
            .map(|h| {
                h.trim()
                    .parse::<Date>()
                    .map_err(|_| SlaError::Holiday(h.clone()))
            })
            .collect::<Result<_, _>>()?;
        Ok(Self {
            zone,
            week,
            holidays,
        })
    }

    /// The moment `work` of business time after `start` (unix ms): time outside the hours,
    /// on a holiday or on a day off does not count.
    pub fn add(&self, start: i64, work: Duration) -> i64 {
        let Ok(start) = Timestamp::from_millisecond(start) else {
            return start;
        };
        let mut left = i64::try_from(work.as_millis()).unwrap_or(i64::MAX);
        let mut day = start.to_zoned_datetime(self.zone.clone()).date();
        // A week of days off ends this search long before it matters; ten years is a bound.
        for _ in 0..3660 {
            if let Some((open, close)) = self.hours_on(day) {
                let opens = self.moment(day, open).max(start.as_millisecond());
                let closes = self.moment(day, close);
                if opens < closes {
                    if closes - opens >= left {
                        return opens + left;
                    }
                    left -= closes - opens;
                }
            }
            match day.tomorrow() {
                Ok(next) => day = next,
                Err(_) => break,
            }
        }
        start.as_millisecond() + left
    }

    /// Midnight of the day `at` falls on, in the shop's zone (unix ms).
    pub fn day_start(&self, at: i64) -> i64 {
        Timestamp::from_millisecond(at)
            .ok()
            .and_then(|t| t.to_zoned_datetime(self.zone.clone()).start_of_day().ok())
            .map_or(at - at.rem_euclid(86_400_000), |day| {
                day.timestamp().as_millisecond()
            })
    }

    /// A time as a tickets.json writes it (`2026-06-22T07:18`, in the shop's zone, or with
    /// an offset), as unix ms.
    pub fn local_moment(&self, text: &str) -> Option<i64> {
        if let Ok(at) = text.parse::<Timestamp>() {
            return Some(at.as_millisecond());
        }
        let civil: jiff::civil::DateTime = text.parse().ok()?;
        let zoned = civil.to_zoned_datetime(self.zone.clone()).ok()?;
        Some(zoned.timestamp().as_millisecond())
    }

    fn hours_on(&self, day: Date) -> Option<(Time, Time)> {
        if self.holidays.contains(&day) {
            return None;
        }
        let index = usize::try_from(day.weekday().to_monday_zero_offset()).ok()?;
        self.week.get(index).copied().flatten()
    }

    /// `day` at `time` in the shop's zone, as unix ms (a time a clock change skips is taken
    /// as the zone's rules say).
    fn moment(&self, day: Date, time: Time) -> i64 {
        day.to_datetime(time)
            .to_zoned_datetime(self.zone.clone())
            .map(|zoned| zoned.timestamp().as_millisecond())
            .unwrap_or(i64::MAX)
    }
}

/// `09:00` as a time of day (`24:00` is the day's end).
fn clock(text: &str) -> Option<Time> {
    let (h, m) = text.trim().split_once(':')?;
    let (h, m): (i8, i8) = (h.parse().ok()?, m.parse().ok()?);
    match (h, m) {
        (24, 0) => Time::new(23, 59, 59, 999_999_999).ok(),
        _ => Time::new(h, m, 0, 0).ok(),
    }
}

/// `Mon` … `Sun` (any case, or the whole name) as Monday-first index.
fn weekday(text: &str) -> Option<usize> {
    let text = text.trim().to_lowercase();
    ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
        .iter()
        .position(|day| text.starts_with(day))
}

/// `30m`, `4h`, `1h30m`, `2d` (a day is 24 hours of business time).
pub fn duration(what: &'static str, text: &str) -> Result<Duration, SlaError> {
    let bad = || SlaError::Duration {
        what,
        value: text.to_owned(),
    };
    let mut total = 0u64;
    let mut number = String::new();
    for c in text.trim().chars() {
        match c {
            '0'..='9' => number.push(c),
            'd' | 'h' | 'm' => {
                let n: u64 = number.parse().map_err(|_| bad())?;
                number.clear();
                total += n * match c {
                    'd' => 86_400,
                    'h' => 3_600,
                    _ => 60,
                };
            }
            ' ' => {}
            _ => return Err(bad()),
        }
    }
    if !number.is_empty() || total == 0 {
        return Err(bad());
    }
    Ok(Duration::from_secs(total))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(text: &str) -> i64 {
        text.parse::<Timestamp>()
            .expect("a timestamp")
            .as_millisecond()
    }

    fn berlin() -> Sla {
        Sla::new(
            "4h",
            "8h",
            "Mon-Fri 09:00-17:00",
            "Europe/Berlin",
            &["2026-12-25".to_owned()],
            "1h",
        )
        .expect("settings")
    }

    #[test]
    fn time_outside_the_hours_a_weekend_and_a_holiday_does_not_count() {
        let sla = berlin();
        // Monday 10:00 in Berlin (UTC+1): four hours later, 14:00.
        assert_eq!(
            sla.hours
                .add(ms("2026-12-07T09:00:00Z"), Duration::from_secs(4 * 3600)),
            ms("2026-12-07T13:00:00Z")
        );
        // Friday 15:30 Berlin: 1.5 h on Friday, 2.5 h on Monday: Monday 11:30 Berlin.
        assert_eq!(
            sla.hours
                .add(ms("2026-12-04T14:30:00Z"), Duration::from_secs(4 * 3600)),
            ms("2026-12-07T10:30:00Z")
        );
        // Saturday night: the clock starts on Monday at 09:00.
        assert_eq!(
            sla.hours
                .add(ms("2026-12-05T22:00:00Z"), Duration::from_secs(3600)),
            ms("2026-12-07T09:00:00Z")
        );
        // Thursday 24 December 16:00 Berlin: an hour that day, Friday the 25th a holiday,
        // the weekend, then Monday 28th from 09:00: due 12:00 Berlin.
        assert_eq!(
            sla.hours
                .add(ms("2026-12-24T15:00:00Z"), Duration::from_secs(4 * 3600)),
            ms("2026-12-28T11:00:00Z")
        );
    }

    #[test]
    fn due_soon_and_late_are_said_from_now() {
        let sla = berlin();
        let since = ms("2026-12-07T09:00:00Z");
        assert_eq!(
            sla.due(&[], since, false, ms("2026-12-07T10:00:00Z")),
            Due::At(ms("2026-12-07T13:00:00Z"))
        );
        let soon = sla.due(&[], since, false, ms("2026-12-07T12:10:00Z"));
        assert_eq!(soon, Due::Soon(ms("2026-12-07T13:00:00Z")));
        assert_eq!(soon.words(ms("2026-12-07T12:10:00Z")), "due 50m");
        let late = sla.due(&[], since, false, ms("2026-12-07T13:35:00Z"));
        assert_eq!(late.words(ms("2026-12-07T13:35:00Z")), "late 35m");
        // After a first reply, the next-reply target: eight business hours, seven on
        // Monday from 10:00 and one on Tuesday: 10:00 Berlin.
        assert_eq!(
            sla.due(&[], since, true, since).at(),
            ms("2026-12-08T09:00:00Z")
        );
    }

    const HOUR: Duration = Duration::from_secs(3600);

    fn tags(names: &[&str]) -> Vec<String> {
        names.iter().map(|&name| name.to_owned()).collect()
    }

    /// Berlin's week with a one-hour first response for refunds, two hours on both clocks
    /// for `vip`, a one-hour next reply for `chatty`, and a looser two days for `wholesale`.
    fn berlin_with_tags() -> Sla {
        berlin()
            .with_tag("refund", Some("1h"), None)
            .and_then(|sla| sla.with_tag("vip", Some("2h"), Some("2h")))
            .and_then(|sla| sla.with_tag("chatty", None, Some("1h")))
            .and_then(|sla| sla.with_tag("wholesale", Some("16h"), None))
            .expect("tag settings")
    }

    #[test]
    fn the_tightest_target_of_a_tickets_tags_wins_clock_by_clock() {
        let sla = berlin_with_tags();
        let both = tags(&["refund", "vip"]);
        assert_eq!(
            sla.targets(&both),
            Targets {
                first_response: HOUR,
                next_reply: 2 * HOUR,
            },
            "refund's first response, vip's next reply"
        );
        // Friday 16:30 Berlin: half an hour on Friday, the weekend off, half an hour on
        // Monday: the first answer is due Monday 09:30 Berlin, where the default four hours
        // would run to 12:30.
        let friday = ms("2026-12-04T15:30:00Z");
        assert_eq!(
            sla.due(&both, friday, false, friday).at(),
            ms("2026-12-07T08:30:00Z")
        );
        assert_eq!(
            sla.due(&[], friday, false, friday).at(),
            ms("2026-12-07T11:30:00Z")
        );
        // The next reply: vip's two hours, Monday 10:30 Berlin.
        assert_eq!(
            sla.due(&both, friday, true, friday).at(),
            ms("2026-12-07T09:30:00Z")
        );
        // Seen at Monday 09:45 Berlin, the tagged ticket is late and the untagged one due.
        let monday = ms("2026-12-07T08:45:00Z");
        assert_eq!(
            sla.due(&both, friday, false, monday),
            Due::Late(ms("2026-12-07T08:30:00Z"))
        );
        assert_eq!(
            sla.due(&[], friday, false, monday),
            Due::At(ms("2026-12-07T11:30:00Z"))
        );
    }

    #[test]
    fn a_tag_with_only_a_next_reply_keeps_the_default_first_response() {
        let sla = berlin_with_tags();
        let chatty = tags(&["chatty"]);
        assert_eq!(
            sla.targets(&chatty),
            Targets {
                first_response: 4 * HOUR,
                next_reply: HOUR,
            }
        );
        // Monday 16:00 Berlin: an hour that day, three on Tuesday for the first response;
        // the one-hour next reply ends at Monday's close.
        let since = ms("2026-12-07T15:00:00Z");
        assert_eq!(
            sla.due(&chatty, since, false, since).at(),
            ms("2026-12-08T11:00:00Z")
        );
        assert_eq!(
            sla.due(&chatty, since, true, since).at(),
            ms("2026-12-07T16:00:00Z")
        );
        // Beside refund, whose table leaves next_reply out (the default eight hours),
        // chatty's hour is still the tighter next reply.
        assert_eq!(
            sla.targets(&tags(&["chatty", "refund"])),
            Targets {
                first_response: HOUR,
                next_reply: HOUR,
            }
        );
    }

    #[test]
    fn a_ticket_without_tagged_targets_keeps_the_defaults_and_a_looser_tag_loosens() {
        let sla = berlin_with_tags();
        let defaults = berlin().targets(&[]);
        assert_eq!(
            defaults,
            Targets {
                first_response: 4 * HOUR,
                next_reply: 8 * HOUR,
            }
        );
        assert_eq!(sla.targets(&[]), defaults);
        assert_eq!(sla.targets(&tags(&["late-parcel"])), defaults);
        // A ticket of tickets.json, received Thursday 24 December 16:00 Berlin, untagged and
        // tagged with a tag without targets: due as before, Monday the 28th 12:00 Berlin (the
        // 25th a holiday).
        let ticket = Ticket {
            ticket_id: "T-0001".into(),
            received_at: "2026-12-24T16:00".into(),
            ..Ticket::default()
        };
        let mut state = TicketState::new("T-0001");
        assert_eq!(
            due_at(&sla, &ticket, &state),
            Some(ms("2026-12-28T11:00:00Z"))
        );
        state.tags = tags(&["late-parcel"]);
        assert_eq!(
            due_at(&sla, &ticket, &state),
            Some(ms("2026-12-28T11:00:00Z"))
        );
        // Tagged wholesale: sixteen business hours, one on Thursday, eight on Monday and seven
        // on Tuesday: Tuesday 29th 16:00 Berlin.
        state.tags = tags(&["late-parcel", "wholesale"]);
        assert_eq!(
            due_at(&sla, &ticket, &state),
            Some(ms("2026-12-29T15:00:00Z"))
        );
        // And tagged refund now, as well: the tighter hour, Thursday's last, 17:00 Berlin.
        state.tags = tags(&["refund", "wholesale"]);
        assert_eq!(
            due_at(&sla, &ticket, &state),
            Some(ms("2026-12-24T16:00:00Z"))
        );
    }

    #[test]
    fn a_tag_table_that_cannot_be_read_names_its_table() {
        let bad = |tag: &str, first: Option<&str>, next: Option<&str>| {
            berlin()
                .with_tag(tag, first, next)
                .expect_err("refused")
                .to_string()
        };
        assert_eq!(
            bad("refund", Some("soon"), None),
            "[sla.tags.refund] first_response \"soon\" is not a duration; write it as 30m, 4h, 1h30m or 2d"
        );
        assert_eq!(
            bad("refund", Some("1h"), Some("0m")),
            "[sla.tags.refund] next_reply \"0m\" is not a duration; write it as 30m, 4h, 1h30m or 2d"
        );
        assert_eq!(
            bad("late parcel", Some("1h"), None),
            "[sla.tags.late parcel] is not a tag: a tag is letters, digits, - and _; \"late parcel\" holds ' '"
        );
        assert_eq!(
            bad("Refund", Some("1h"), None),
            "[sla.tags.Refund] names the tag \"refund\"; write the table as [sla.tags.refund]"
        );
        assert_eq!(
            bad("refund", None, None),
            "[sla.tags.refund] sets no target; give it first_response, next_reply or both, or remove it"
        );
    }

    #[test]
    fn settings_that_cannot_be_read_say_how_to_write_them() {
        let bad = |hours: &str, zone: &str| {
            Sla::new("4h", "8h", hours, zone, &[], "1h")
                .expect_err("refused")
                .to_string()
        };
        assert!(bad("weekdays 9 to 5", "Europe/Berlin").contains("Mon-Fri 09:00-17:00"));
        assert!(bad("Mon-Fri 09:00-17:00", "Mars/Olympus").contains("IANA"));
        assert!(bad("Fri-Mon 09:00-17:00", "UTC").contains("cannot be read"));
        assert_eq!(duration("x", "1h30m"), Ok(Duration::from_secs(5400)));
        assert!(duration("x", "soon").is_err());
        assert!(duration("x", "0m").is_err());
    }
}
