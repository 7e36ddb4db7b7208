//! `[approvals]`: how a lead hears of an approval waiting, and what happens to one no lead
//! answers in time.
//!
//! ```toml
//! [approvals]
//! fallback_after = "30m"   # how long an approval waits for any lead
//! fallback = "declined"    # then: "declined" (back to its asker), or a lead's name
//! notice = "auto"          # a lead's desk on a new approval: auto, bell, desktop or none
//! ```
//!
//! The asking desk's config decides its approval's fallback: it is filed with the approval,
//! and whichever desk of the team sees it due carries it out.

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// `[approvals]` as written.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ApprovalsConfig {
    /// How long an approval waits for any lead before its fallback (`30m`, `2h`); without
    /// it, an approval waits until a lead answers it or its asker withdraws it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fallback_after: Option<String>,
    /// `declined`, or the name of the lead it then goes to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fallback: Option<String>,
    /// How a lead's desk announces an approval that is new to it.
    #[serde(default)]
    pub notice: Notice,
}

/// How a lead's desk announces a new approval, besides its status bar.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Notice {
    /// A desktop notice where the terminal is known to take one (OSC 9), else the bell.
    #[default]
    Auto,
    /// The terminal's bell.
    Bell,
    /// A desktop notice (OSC 9), whatever the terminal.
    Desktop,
    /// The status bar only.
    None,
}

/// What becomes of an approval no lead answered in time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fallback {
    pub after: Duration,
    /// The lead it goes to; `None`: declined, back to its asker.
    pub to: Option<String>,
}

/// The word for "back to the asker as declined".
const DECLINED: &str = "declined";

impl ApprovalsConfig {
    /// The fallback, read and checked; `None` when approvals wait for ever.
    pub fn fallback(&self) -> Result<Option<Fallback>, String> {
        let (after, to) = match (&self.fallback_after, &self.fallback) {
            (None, None) => return Ok(None),
            (Some(after), Some(to)) => (after, to),
            (Some(_), None) => {
                return Err(
                    "fallback_after needs a fallback: \"declined\" (back to its asker) or a lead's name"
                        .to_owned(),
                );
            }
            (None, Some(_)) => {
                return Err(
                    "fallback needs fallback_after: how long an approval waits first (30m, 2h)"
                        .to_owned(),
                );
            }
        };
        let after = crate::sla::duration("fallback_after", after)
            .map_err(|e| e.to_string().replacen("[sla] ", "", 1))?;
        let to = match to.trim() {
            DECLINED => None,
            name if !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | '@')) =>
            {
                Some(name.to_owned())
            }
            other => {
                return Err(format!(
                    "fallback {other:?} is neither \"declined\" nor a lead's name (their login to the team's record)"
                ));
            }
        };
        Ok(Some(Fallback { after, to }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(after: Option<&str>, fallback: Option<&str>) -> ApprovalsConfig {
        ApprovalsConfig {
            fallback_after: after.map(str::to_owned),
            fallback: fallback.map(str::to_owned),
            notice: Notice::Auto,
        }
    }

    #[test]
    fn a_fallback_is_declined_or_a_lead_after_a_wait() {
        assert_eq!(config(None, None).fallback(), Ok(None));
        assert_eq!(
            config(Some("30m"), Some("declined")).fallback(),
            Ok(Some(Fallback {
                after: Duration::from_secs(1800),
                to: None
            }))
        );
        assert_eq!(
            config(Some("1h30m"), Some("lou")).fallback(),
            Ok(Some(Fallback {
                after: Duration::from_secs(5400),
                to: Some("lou".to_owned())
            }))
        );
    }

    #[test]
    fn half_a_fallback_or_a_bad_one_is_said() {
        let missing = config(Some("30m"), None)
            .fallback()
            .expect_err("no fallback");
        assert!(missing.contains("needs a fallback"), "{missing}");
        let missing = config(None, Some("declined"))
            .fallback()
            .expect_err("no wait");
        assert!(missing.contains("needs fallback_after"), "{missing}");
        let bad = config(Some("soon"), Some("declined"))
            .fallback()
            .expect_err("no duration");
        assert!(
            bad.contains("fallback_after \"soon\" is not a duration") && !bad.contains("[sla]"),
            "{bad}"
        );
        let bad = config(Some("30m"), Some("the night shift"))
            .fallback()
            .expect_err("no name");
        assert!(
            bad.contains("neither \"declined\" nor a lead's name"),
            "{bad}"
        );
    }
}
