//! The arithmetic of the lead's report: a spread of durations (median and 90th percentile) and
//! the age buckets of the backlog. Plain values in, plain values out.

use serde::Serialize;

/// How long something took across tickets: how many, the median and the 90th percentile, in
/// whole seconds (`None` when nothing was counted).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Spread {
    pub count: usize,
    pub median_seconds: Option<u64>,
    pub p90_seconds: Option<u64>,
}

impl Spread {
    /// The spread of `durations` (milliseconds; negative ones, from clocks that disagree,
    /// count as zero).
    pub fn of(mut durations: Vec<i64>) -> Self {
        durations.sort_unstable();
        Self {
            count: durations.len(),
            median_seconds: median(&durations).map(seconds),
            p90_seconds: nearest_rank(&durations, 90).map(seconds),
        }
    }
}

/// The middle value of `sorted`, or the mean of the two middle values when there is an even
/// number of them.
pub fn median(sorted: &[i64]) -> Option<i64> {
    let n = sorted.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(sorted[n / 2]),
        _ => Some((sorted[n / 2 - 1] + sorted[n / 2]) / 2),
    }
}

/// The `percent`th percentile of `sorted` by nearest rank: the smallest value with at least
/// `percent` % of the values at or below it, always one of the values themselves.
pub fn nearest_rank(sorted: &[i64], percent: usize) -> Option<i64> {
    let rank = (sorted.len() * percent).div_ceil(100);
    sorted.get(rank.max(1) - 1).copied()
}

/// Milliseconds as whole seconds, rounded to the nearest.
fn seconds(ms: i64) -> u64 {
    u64::try_from((ms.max(0) + 500) / 1000).unwrap_or(0)
}

/// How long ago a ticket of the backlog arrived, in the buckets a lead reads at a glance.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Age {
    UnderAnHour,
    OneToFourHours,
    FourHoursToADay,
    OneToThreeDays,
    OverThreeDays,
}

impl Age {
    pub const ALL: [Age; 5] = [
        Age::UnderAnHour,
        Age::OneToFourHours,
        Age::FourHoursToADay,
        Age::OneToThreeDays,
        Age::OverThreeDays,
    ];

    /// The bucket of an age in milliseconds; each bucket holds its lower bound (exactly an
    /// hour is `1-4h`).
    pub fn of(ms: i64) -> Self {
        const HOUR: i64 = 3_600_000;
        if ms < HOUR {
            Age::UnderAnHour
        } else if ms < 4 * HOUR {
            Age::OneToFourHours
        } else if ms < 24 * HOUR {
            Age::FourHoursToADay
        } else if ms < 72 * HOUR {
            Age::OneToThreeDays
        } else {
            Age::OverThreeDays
        }
    }

    /// As the report names it, in JSON and on screen.
    pub fn label(self) -> &'static str {
        match self {
            Age::UnderAnHour => "<1h",
            Age::OneToFourHours => "1-4h",
            Age::FourHoursToADay => "4-24h",
            Age::OneToThreeDays => "1-3d",
            Age::OverThreeDays => ">3d",
        }
    }
}

/// `3d 4h`, `1h 05m`, `35m`, `40s`: a duration for a lead to read.
pub fn span(seconds: u64) -> String {
    let minutes = seconds / 60;
    let (days, hours, minutes) = (minutes / 1440, minutes / 60 % 24, minutes % 60);
    match (days, hours, minutes) {
        (0, 0, 0) => format!("{seconds}s"),
        (0, 0, _) => format!("{minutes}m"),
        (0, _, _) => format!("{hours}h {minutes:02}m"),
        _ => format!("{days}d {hours}h"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIN: i64 = 60_000;

    #[test]
    fn the_median_of_an_odd_count_is_the_middle_one_and_of_an_even_count_the_mean_of_two() {
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[7]), Some(7));
        assert_eq!(median(&[1, 5, 9]), Some(5));
        assert_eq!(median(&[1, 4, 8, 100]), Some(6));
    }

    #[test]
    fn p90_is_the_nearest_rank_so_always_a_value_that_happened() {
        assert_eq!(nearest_rank(&[], 90), None);
        assert_eq!(nearest_rank(&[3], 90), Some(3));
        // Ten values: the ninth. Eleven: rank ceil(9.9) = 10, the tenth.
        let ten: Vec<i64> = (1..=10).collect();
        assert_eq!(nearest_rank(&ten, 90), Some(9));
        let eleven: Vec<i64> = (1..=11).collect();
        assert_eq!(nearest_rank(&eleven, 90), Some(10));
        // Four values: rank ceil(3.6) = 4, the largest.
        assert_eq!(nearest_rank(&[1, 2, 3, 4], 90), Some(4));
    }

    #[test]
    fn a_spread_sorts_its_durations_and_says_them_in_seconds() {
        let spread = Spread::of(vec![30 * MIN, 10 * MIN, 20 * MIN, 90 * MIN]);
        assert_eq!(
            spread,
            Spread {
                count: 4,
                median_seconds: Some(25 * 60),
                p90_seconds: Some(90 * 60),
            }
        );
        assert_eq!(
            Spread::of(vec![]),
            Spread {
                count: 0,
                median_seconds: None,
                p90_seconds: None,
            }
        );
        assert_eq!(Spread::of(vec![-5_000, 1_499]).median_seconds, Some(0));
    }

    #[test]
    fn each_age_bucket_holds_its_lower_bound() {
        let hour = 60 * MIN;
        let ages = [
            0,
            hour - 1,
            hour,
            4 * hour - 1,
            4 * hour,
            24 * hour,
            72 * hour - 1,
            72 * hour,
        ];
        let labels: Vec<&str> = ages.iter().map(|&ms| Age::of(ms).label()).collect();
        assert_eq!(
            labels,
            ["<1h", "<1h", "1-4h", "1-4h", "4-24h", "1-3d", "1-3d", ">3d"]
        );
    }

    #[test]
    fn spans_read_as_a_lead_would_write_them() {
        assert_eq!(span(40), "40s");
        assert_eq!(span(35 * 60), "35m");
        assert_eq!(span(65 * 60), "1h 05m");
        assert_eq!(span(76 * 3600), "3d 4h");
    }
}
