//! Now, as unix time, and UTC calendar times from unix seconds, for every time the desk writes
//! for people or files.

use std::time::{SystemTime, UNIX_EPOCH};

/// Seconds since 1970-01-01T00:00:00Z; 0 on a clock set before it.
pub fn unix_secs() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

/// Milliseconds since 1970-01-01T00:00:00Z; 0 on a clock set before it.
pub fn unix_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// A UTC time's calendar parts: year, month, day, hour, minute, second.
pub struct Civil {
    pub year: i64,
    pub month: i64,
    pub day: i64,
    pub hour: i64,
    pub minute: i64,
    pub second: i64,
}

impl Civil {
    /// The calendar time `secs` seconds after 1970-01-01T00:00:00Z (Howard Hinnant's
    /// civil-from-days).
    pub fn from_unix(secs: i64) -> Self {
        let (days, rest) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
        let z = days + 719_468;
        let era = z.div_euclid(146_097);
        let doe = z.rem_euclid(146_097);
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let day = doy - (153 * mp + 2) / 5 + 1;
        let month = if mp < 10 { mp + 3 } else { mp - 9 };
        Self {
            year: yoe + era * 400 + i64::from(month <= 2),
            month,
            day,
            hour: rest / 3600,
            minute: rest % 3600 / 60,
            second: rest % 60,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{unix_ms, unix_secs};

    #[test]
    fn seconds_and_milliseconds_tell_the_same_time_after_this_was_written() {
        let (secs, ms) = (unix_secs(), unix_ms());
        // 2026-12-01T00:00:00Z: a clock before it is broken, not early.
        assert!(secs > 1_796_083_200, "{secs}");
        assert!((ms / 1000 - secs).abs() <= 1, "{ms} ms against {secs} s");
    }
}
