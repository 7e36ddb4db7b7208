//! The report as a table for a lead to read in a terminal. Names in it (leads, tickets) come
//! from the record; the command cleans everything it prints.

use std::fmt::Write as _;

use super::{Report, Spread, span};

/// How many late tickets are named before the rest are counted.
const NAMED_LATE: usize = 10;
/// How many of the latest days the table lists.
const DAYS_SHOWN: usize = 14;

impl Report {
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        let since = self.since.as_deref().map_or(String::new(), |day| {
            format!(", tickets that arrived since {day}")
        });
        line(
            &mut out,
            format!(
                "The desk's report as of {} ({}){since}: {} tickets",
                self.as_of, self.time_zone, self.tickets
            ),
        );
        line(&mut out, String::new());
        line(
            &mut out,
            format!("{:<16} {:>7} {:>9} {:>9}", "", "count", "median", "p90"),
        );
        for (name, spread) in [
            ("First response", &self.first_response),
            ("Resolution", &self.resolution),
            ("Approval wait", &self.approvals.wait),
        ] {
            line(&mut out, spread_row(name, spread));
        }
        line(&mut out, String::new());
        let b = &self.backlog;
        line(
            &mut out,
            format!(
                "Backlog          open {} · pending {} · solved {} · closed {}",
                b.open, b.pending, b.solved, b.closed
            ),
        );
        let ages: Vec<String> = b
            .by_age
            .iter()
            .map(|a| format!("{} {}", a.age, a.tickets))
            .collect();
        line(
            &mut out,
            format!("  unsolved, by age  {}", ages.join(" · ")),
        );
        line(&mut out, late_row(self));
        let r = &self.replies;
        line(
            &mut out,
            format!(
                "Replies          {} sent: {} the model's draft as written · {} edited · {} by hand · {} handed over",
                r.sent, r.model_unchanged, r.model_edited, r.by_hand, r.handed_over
            ),
        );
        let a = &self.approvals;
        line(
            &mut out,
            format!(
                "Approvals        {} asked · {} answered · {} withdrawn · {} lapsed · {} open",
                a.asked, a.answered, a.withdrawn, a.lapsed, a.open
            ),
        );
        for (lead, answers) in &a.by_lead {
            let mut row = format!(
                "  {lead:<14} {} accepted · {} declined · {} cancelled",
                answers.accepted, answers.declined, answers.cancelled
            );
            if let Some(released) = self.refunds_released.get(lead) {
                let amounts: Vec<String> = released
                    .amounts
                    .iter()
                    .map(|(currency, amount)| format!("{currency} {amount}"))
                    .collect();
                let refunds = match released.count {
                    1 => "refund",
                    _ => "refunds",
                };
                let _ = write!(row, " · {} {refunds} released", released.count);
                if !amounts.is_empty() {
                    let _ = write!(row, ": {}", amounts.join(" + "));
                }
                if released.without_amount > 0 {
                    let _ = write!(row, " ({} without an amount)", released.without_amount);
                }
            }
            line(&mut out, row);
        }
        if !self.daily.is_empty() {
            line(&mut out, String::new());
            line(
                &mut out,
                format!("{:<16} {:>7} {:>9}", "Day", "arrived", "replies"),
            );
            let skip = self.daily.len().saturating_sub(DAYS_SHOWN);
            if skip > 0 {
                line(&mut out, format!("  ({skip} earlier days in --json)"));
            }
            for day in &self.daily[skip..] {
                line(
                    &mut out,
                    format!("{:<16} {:>7} {:>9}", day.day, day.arrived, day.replies),
                );
            }
        }
        out
    }
}

fn spread_row(name: &str, spread: &Spread) -> String {
    let said = |seconds: Option<u64>| seconds.map_or("-".to_owned(), span);
    format!(
        "{name:<16} {:>7} {:>9} {:>9}",
        spread.count,
        said(spread.median_seconds),
        said(spread.p90_seconds)
    )
}

fn late_row(report: &Report) -> String {
    let Some(late) = &report.late else {
        return "Late             no [sla] targets in the config".to_owned();
    };
    let mut row = format!("Late             {} past due now", late.now);
    if !late.now_tickets.is_empty() {
        let named: Vec<&str> = late
            .now_tickets
            .iter()
            .take(NAMED_LATE)
            .map(String::as_str)
            .collect();
        let more = late.now_tickets.len().saturating_sub(NAMED_LATE);
        let _ = write!(row, " ({}", named.join(", "));
        if more > 0 {
            let _ = write!(row, " and {more} more");
        }
        row.push(')');
    }
    let _ = write!(
        row,
        " · first replies: {} late, {} in time",
        late.first_reply_late, late.first_reply_in_time
    );
    row
}

fn line(out: &mut String, text: String) {
    out.push_str(text.trim_end());
    out.push('\n');
}
