//! A lead hears of approvals: one this lead may answer that is new to the desk, and one that
//! was passed to them because no lead answered it in time, are each announced once, on the
//! terminal (`[approvals] notice`: the bell or a desktop notice) besides the status bar,
//! which shows how long the oldest has waited.

use std::collections::BTreeSet;

use super::App;
use crate::config::Notice;
use crate::host::api::ApprovalView;
use crate::ui::sanitize::one_line;

/// Terminals known to show OSC 9 as a desktop notice, by `TERM_PROGRAM`.
const DESKTOP_TERMINALS: [&str; 3] = ["iTerm.app", "WezTerm", "ghostty"];

/// What the desk has announced of the team's approvals: each approval once as new, and once
/// more if it is passed to this lead.
#[derive(Debug, Clone, Default)]
pub struct Announced {
    new: BTreeSet<i64>,
    passed: BTreeSet<i64>,
}

impl App {
    /// The desk with `notice` for how the terminal announces an approval.
    pub fn with_notice(mut self, notice: Notice) -> Self {
        self.notice = notice;
        self
    }

    /// Reads the team's open approvals for what is news to this lead, and queues a notice of
    /// it for the terminal. Staff hear nothing: they do not answer approvals.
    pub(super) fn hear_of_approvals(&mut self, open: &[ApprovalView]) {
        if self.lead != Some(true) {
            return;
        }
        let answerable: Vec<&ApprovalView> =
            open.iter().filter(|a| a.asked_by != self.staff).collect();
        let new: Vec<&ApprovalView> = answerable
            .iter()
            .copied()
            .filter(|a| self.announced.new.insert(a.id))
            .collect();
        let passed: Vec<&ApprovalView> = answerable
            .iter()
            .copied()
            .filter(|a| a.passed_to.as_deref() == Some(self.staff.as_str()))
            .filter(|a| self.announced.passed.insert(a.id))
            .collect();
        for approval in passed {
            self.notices.push(format!(
                "approval {} is yours: no lead answered it in time ({}, {}, asked by {})",
                approval.id,
                one_line(&approval.ticket),
                one_line(&approval.tool),
                one_line(&approval.asked_by)
            ));
        }
        match new.as_slice() {
            [] => {}
            [one] => self.notices.push(format!(
                "approval {} waits for a lead: {}, {}, asked by {}",
                one.id,
                one_line(&one.ticket),
                one_line(&one.tool),
                one_line(&one.asked_by)
            )),
            many => self
                .notices
                .push(format!("{} approvals wait for a lead", many.len())),
        }
    }

    /// The notices the terminal has not given yet, taken once.
    pub fn take_notices(&mut self) -> Vec<String> {
        std::mem::take(&mut self.notices)
    }
}

/// What the terminal is sent to announce `text`: a desktop notice (OSC 9) where `notice`
/// asks for one, or is `auto` on a terminal known to show it (`term_program`), else the bell;
/// nothing for `none`. The text is one line with no control characters, so it cannot end
/// the sequence early or start another.
pub fn notice_bytes(notice: Notice, term_program: Option<&str>, text: &str) -> Vec<u8> {
    let desktop = match notice {
        Notice::None => return Vec::new(),
        Notice::Bell => false,
        Notice::Desktop => true,
        Notice::Auto => term_program.is_some_and(|t| DESKTOP_TERMINALS.contains(&t)),
    };
    if desktop {
        format!("\x1b]9;{}\x07", one_line(text)).into_bytes()
    } else {
        b"\x07".to_vec()
    }
}
