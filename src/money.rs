//! Money as the shop keeps it: whole euro cents inside, two-decimal strings on the wire.
//!
//! Amounts never pass through floating point; "24.90" parses to 2490 cents and prints back
//! exactly, which is what lets the host compare an amount in a reply with one a tool returned.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// An amount in euro cents.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Cents(pub i64);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("'{0}' is not an amount; amounts are written with two decimals, like 12.50")]
pub struct BadAmount(pub String);

impl Cents {
    pub const fn new(cents: i64) -> Self {
        Self(cents)
    }

    pub fn times(self, quantity: u32) -> Self {
        Self(self.0 * i64::from(quantity))
    }
}

impl std::ops::Add for Cents {
    type Output = Cents;
    fn add(self, other: Cents) -> Cents {
        Cents(self.0 + other.0)
    }
}

impl std::iter::Sum for Cents {
    fn sum<I: Iterator<Item = Cents>>(iter: I) -> Cents {
        iter.fold(Cents(0), |a, b| a + b)
    }
}

impl fmt::Display for Cents {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sign = if self.0 < 0 { "-" } else { "" };
        let abs = self.0.unsigned_abs();
        write!(f, "{sign}{}.{:02}", abs / 100, abs % 100)
    }
}

impl FromStr for Cents {
    type Err = BadAmount;

    /// Accepts exactly `digits.dd`: the shop's own format, nothing looser.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let bad = || BadAmount(text.to_owned());
        let (whole, fraction) = text.split_once('.').ok_or_else(bad)?;
        let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        if !digits(whole) || fraction.len() != 2 || !digits(fraction) || whole.len() > 12 {
            return Err(bad());
        }
        let whole: i64 = whole.parse().map_err(|_| bad())?;
        let fraction: i64 = fraction.parse().map_err(|_| bad())?;
        Ok(Cents(whole * 100 + fraction))
    }
}

impl Serialize for Cents {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Cents {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amounts_round_trip_through_text() {
        for text in ["0.00", "0.05", "24.90", "150.00", "343.49"] {
            assert_eq!(
                text.parse::<Cents>().map(|c| c.to_string()),
                Ok(text.to_owned())
            );
        }
    }

    #[test]
    fn loose_or_foreign_formats_are_refused() {
        for text in ["24.9", "24", "€24.90", "24,90", "-1.00", "1.000", ".50", ""] {
            assert_eq!(
                text.parse::<Cents>(),
                Err(BadAmount(text.to_owned())),
                "{text}"
            );
        }
    }
}
