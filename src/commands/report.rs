//! `support-desk report [--since DATE] [--at MOMENT] [--json]`: the lead's report, computed
//! from the desk's record (one person's SQLite file, or the team's PostgreSQL as `--store`
//! names it).

use anyhow::bail;
use clap::Args;
use jiff::civil::{Date, DateTime};
use jiff::tz::TimeZone;

use super::{CommonArgs, write_stdout};
use crate::record::Record;
use crate::report::Settings;
use crate::startup::{self, Overrides};

#[derive(Debug, Args)]
pub struct ReportArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// Count only tickets that arrived on this day or later (YYYY-MM-DD, in the shop's time
    /// zone from [sla]; UTC without it).
    #[arg(long, value_name = "DATE")]
    pub since: Option<String>,
    /// The report as the record stood at this moment (2026-12-07T17:00 in the shop's time
    /// zone, or RFC 3339 with an offset) instead of now: later events are left out.
    #[arg(long, value_name = "MOMENT")]
    pub at: Option<String>,
    /// Print it as one JSON object: {"as_of", "time_zone", "since", "tickets",
    /// "first_response", "resolution", "backlog", "late", "replies", "approvals",
    /// "refunds_released", "daily"}.
    #[arg(long)]
    pub json: bool,
}

pub async fn execute(args: ReportArgs) -> anyhow::Result<()> {
    let config = startup::config(args.common.config.as_deref(), &Overrides::default())?;
    let tickets = startup::load_tickets(&config)?;
    let sla = config
        .sla
        .as_ref()
        .map(crate::config::SlaConfig::build)
        .transpose()?;
    let mut settings = Settings::new(&config, sla.as_ref(), &tickets, crate::clock::unix_ms());
    if let Some(at) = &args.at {
        settings.now = moment(at, &settings.zone)?;
    }
    settings.since = args.since.as_deref().map(day).transpose()?;
    let record = match startup::team_url(&config, args.common.store())? {
        Some(url) => Record::team(&url, &config.consent.allow).await?,
        None => Record::Sqlite(startup::existing_record(args.common.data_dir.as_deref())?.0),
    };
    let report = crate::report::read(&record, &settings).await?;
    let text = if args.json {
        format!("{}\n", serde_json::to_string(&report)?)
    } else {
        report.to_text()
    };
    write_stdout(&text)
}

/// `--since`: a day as `2026-12-07`.
fn day(text: &str) -> anyhow::Result<Date> {
    match text.trim().parse::<Date>() {
        Ok(day) => Ok(day),
        Err(_) => bail!("--since {text}: write the day as YYYY-MM-DD, like 2026-12-07"),
    }
}

/// `--at`: RFC 3339 with an offset, or a time of day in the shop's zone.
fn moment(text: &str, zone: &TimeZone) -> anyhow::Result<i64> {
    let text = text.trim();
    if let Ok(at) = text.parse::<jiff::Timestamp>() {
        return Ok(at.as_millisecond());
    }
    let civil = text.parse::<DateTime>().or_else(|_| {
        text.parse::<Date>()
            .map(|day| day.to_datetime(jiff::civil::Time::midnight()))
    });
    match civil
        .ok()
        .and_then(|t| t.to_zoned_datetime(zone.clone()).ok())
    {
        Some(zoned) => Ok(zoned.timestamp().as_millisecond()),
        None => bail!(
            "--at {text}: write a moment as 2026-12-07T17:00 (in the shop's time zone) or 2026-12-07T16:00:00Z"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_moment_is_read_in_the_shops_zone_unless_it_says_its_offset() {
        let berlin = TimeZone::get("Europe/Berlin").expect("zone");
        // Monday 7 December 2026, 17:00 in Berlin is 16:00 UTC.
        let utc = 1_796_601_600_000 + 16 * 3_600_000;
        assert_eq!(moment("2026-12-07T17:00", &berlin).ok(), Some(utc));
        assert_eq!(moment("2026-12-07T16:00:00Z", &berlin).ok(), Some(utc));
        assert!(moment("tomorrow", &berlin).is_err());
        assert!(day("07/12/2026").is_err());
        assert_eq!(day("2026-12-07").ok(), Some(jiff::civil::date(2026, 12, 7)));
    }
}
