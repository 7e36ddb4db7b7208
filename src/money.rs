//! Money as the shop keeps it: whole euro cents inside, two-decimal strings on the wire.
//!
//! Amounts never pass through floating point; "24.90" parses to 2490 cents and prints back
//! exactly, which is what lets the host compare an amount in a reply with one a tool returned.

use std::fmt;
use std::str::FromStr;

use serde::de::{self, Visitor};
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

/// Room for any amount as text: a sign, up to 17 whole digits, the point and two decimals.
type AmountText = [u8; 24];

impl Cents {
    /// The amount as the shop writes it (`-`, whole euros, `.`, two decimals), written into
    /// `room` from its end. Every amount a tool answers with is written this way, so it is
    /// done digit by digit rather than through the formatting machinery.
    fn text(self, room: &mut AmountText) -> &str {
        let mut left = self.0.unsigned_abs();
        let mut at = room.len();
        // The two decimals, the point, then the whole euros, at least one digit of them.
        for place in 0.. {
            if place == 2 {
                at -= 1;
                room[at] = b'.';
            }
            at -= 1;
            room[at] = b'0' + (left % 10) as u8;
            left /= 10;
            if place >= 2 && left == 0 {
                break;
            }
        }
        if self.0 < 0 {
            at -= 1;
            room[at] = b'-';
        }
        std::str::from_utf8(&room[at..]).expect("an amount's text is ASCII")
    }
}

impl fmt::Display for Cents {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.text(&mut AmountText::default()))
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
        serializer.serialize_str(self.text(&mut AmountText::default()))
    }
}

impl<'de> Deserialize<'de> for Cents {
    /// From the text as the input holds it, with no copy of it.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Amount;

        impl Visitor<'_> for Amount {
            type Value = Cents;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an amount as a string with two decimals, like \"12.50\"")
            }

            fn visit_str<E: de::Error>(self, text: &str) -> Result<Cents, E> {
                text.parse().map_err(E::custom)
            }
        }

        deserializer.deserialize_str(Amount)
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
    fn every_amount_is_written_as_the_formatting_machinery_writes_it() {
        let amounts = [
            0,
            5,
            99,
            100,
            2490,
            15000,
            34349,
            1,
            -1,
            -50,
            -2490,
            i64::MAX,
            i64::MIN,
        ]
        .into_iter()
        .chain((0..2_000).map(|n| n * 7919 - 3_000_000));
        for cents in amounts {
            let abs = cents.unsigned_abs();
            let sign = if cents < 0 { "-" } else { "" };
            let expected = format!("{sign}{}.{:02}", abs / 100, abs % 100);
            assert_eq!(Cents(cents).to_string(), expected);
            assert_eq!(
                serde_json::to_string(&Cents(cents)).ok(),
                Some(format!("\"{expected}\""))
            );
        }
    }

    #[test]
    fn amounts_are_read_from_json_strings_only() {
        let read = |json: &str| serde_json::from_str::<Cents>(json).map_err(|e| e.to_string());
        assert_eq!(read(r#""24.90""#), Ok(Cents(2490)));
        // Escaped text is read as its characters, as any string is.
        assert_eq!(read(r#""\u0032\u0034.90""#), Ok(Cents(2490)));
        let refused = read(r#""24.9""#).err().unwrap_or_default();
        assert!(refused.contains("'24.9' is not an amount"), "{refused}");
        let not_text = read("24.90").err().unwrap_or_default();
        assert!(
            not_text.contains("expected an amount as a string"),
            "{not_text}"
        );
        let from_value = serde_json::from_value::<Cents>(serde_json::json!("0.05"));
        assert_eq!(from_value.ok(), Some(Cents(5)));
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
