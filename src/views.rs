//! A person's own views of the queue, saved in the config (`[views.NAME]`): the tickets that
//! meet every criterion given (a state, a tag, an assignee, a customer, words, an amount).
//! Checked when the config is loaded, by every command; the desk lists them after its own
//! views (`f`, `:view NAME`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::money::Cents;
use crate::record::{Conversation, Lifecycle, TicketState, tag_name};
use crate::tickets::Ticket;

/// `[views.NAME]` as written.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ViewConfig {
    /// A ticket's state (`needs_person`, `drafted`, …) or its conversation's (`open`,
    /// `pending`, `solved`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tag: Option<String>,
    /// A person's name, `me` or `nobody`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub assignee: Option<String>,
    /// The customer's ID or address, or part of it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub customer: Option<String>,
    /// Words the ticket's subject or text holds, every one of them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub words: Option<String>,
    /// At least this many euros named in the customer's text (`"100"`, `"150.00"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub amount: Option<String>,
}

/// Why a saved view cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("[views.{name}]: {problem} (README, 'Owners, tags and views')")]
pub struct ViewError {
    pub name: String,
    pub problem: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum StateIs {
    Run(Lifecycle),
    Conversation(Conversation),
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum AssigneeIs {
    Me,
    Nobody,
    Person(String),
}

/// A saved view, read and checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SavedView {
    pub name: String,
    state: Option<StateIs>,
    tag: Option<String>,
    assignee: Option<AssigneeIs>,
    customer: Option<String>,
    words: Vec<String>,
    amount: Option<Cents>,
}

const RUN_STATES: [Lifecycle; 7] = [
    Lifecycle::New,
    Lifecycle::Working,
    Lifecycle::Drafted,
    Lifecycle::NeedsPerson,
    Lifecycle::WaitingForLead,
    Lifecycle::Sent,
    Lifecycle::HandedOver,
];

const CONVERSATIONS: [Conversation; 4] = [
    Conversation::Open,
    Conversation::Pending,
    Conversation::Solved,
    Conversation::Closed,
];

impl SavedView {
    pub fn new(name: &str, config: &ViewConfig) -> Result<Self, ViewError> {
        let problem = |problem: String| ViewError {
            name: name.to_owned(),
            problem,
        };
        if name.is_empty() || name.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(problem(
                "a view's name is one word, so that :view NAME finds it".to_owned(),
            ));
        }
        let state = config
            .state
            .as_deref()
            .map(|word| state_is(word).ok_or_else(|| problem(unknown_state(word))))
            .transpose()?;
        let tag = config
            .tag
            .as_deref()
            .map(tag_name)
            .transpose()
            .map_err(problem)?;
        let assignee = config.assignee.as_deref().map(|who| match who.trim() {
            "me" => AssigneeIs::Me,
            "nobody" => AssigneeIs::Nobody,
            person => AssigneeIs::Person(person.to_owned()),
        });
        let amount = config
            .amount
            .as_deref()
            .map(|text| {
                euros(text).ok_or_else(|| {
                    problem(format!(
                        "amount = {text:?} is not an amount in euros; write it like \"100\" or \"150.00\""
                    ))
                })
            })
            .transpose()?;
        Ok(Self {
            name: name.to_owned(),
            state,
            tag,
            assignee,
            customer: config.customer.as_deref().map(str::to_lowercase),
            words: config
                .words
                .as_deref()
                .unwrap_or_default()
                .split_whitespace()
                .map(str::to_lowercase)
                .collect(),
            amount,
        })
    }

    /// Whether the ticket meets every criterion of the view, for the person `me`.
    pub fn admits(&self, ticket: &Ticket, state: &TicketState, me: &str) -> bool {
        let state_fits = match &self.state {
            None => true,
            Some(StateIs::Run(run)) => state.state == *run,
            Some(StateIs::Conversation(c)) => state.conversation == *c,
        };
        let tag_fits = self.tag.as_ref().is_none_or(|t| state.tags.contains(t));
        let assignee_fits = match &self.assignee {
            None => true,
            Some(AssigneeIs::Me) => state.assignee.as_deref() == Some(me),
            Some(AssigneeIs::Nobody) => state.assignee.is_none(),
            Some(AssigneeIs::Person(p)) => state.assignee.as_deref() == Some(p.as_str()),
        };
        let customer_fits = self.customer.as_ref().is_none_or(|c| {
            let name = ticket.customer_name.as_deref().unwrap_or_default();
            format!("{} {name}", ticket.who())
                .to_lowercase()
                .contains(c)
        });
        let text = || format!("{} {}", ticket.subject, ticket.body).to_lowercase();
        let words_fit = self.words.is_empty() || {
            let text = text();
            self.words.iter().all(|w| text.contains(w.as_str()))
        };
        let amount_fits = self
            .amount
            .is_none_or(|least| amounts(&text()).into_iter().any(|a| a >= least));
        state_fits && tag_fits && assignee_fits && customer_fits && words_fit && amount_fits
    }
}

/// Every saved view of the config, in name order, each checked.
pub fn saved_views(views: &BTreeMap<String, ViewConfig>) -> Result<Vec<SavedView>, ViewError> {
    views
        .iter()
        .map(|(name, config)| SavedView::new(name, config))
        .collect()
}

/// The view `name` for a command without a desk (`queue --view`): one of the config's, or
/// one of the desk's own that reads only the record (mine, unassigned, open, pending,
/// solved).
pub fn named(name: &str, views: &BTreeMap<String, ViewConfig>) -> Result<SavedView, String> {
    if let Some(config) = views.get(name) {
        return SavedView::new(name, config).map_err(|e| e.to_string());
    }
    let config = match name {
        "mine" => ViewConfig {
            assignee: Some("me".to_owned()),
            ..ViewConfig::default()
        },
        "unassigned" => ViewConfig {
            assignee: Some("nobody".to_owned()),
            ..ViewConfig::default()
        },
        "open" | "pending" | "solved" => ViewConfig {
            state: Some(name.to_owned()),
            ..ViewConfig::default()
        },
        _ => {
            let mut known: Vec<&str> = vec!["mine", "unassigned", "open", "pending", "solved"];
            known.extend(views.keys().map(String::as_str));
            return Err(format!(
                "there is no view {name:?} here; use one of {} (the desk itself has more: due-soon, late, …)",
                known.join(", ")
            ));
        }
    };
    SavedView::new(name, &config).map_err(|e| e.to_string())
}

fn state_is(word: &str) -> Option<StateIs> {
    let word = word.trim();
    RUN_STATES
        .into_iter()
        .find(|s| s.as_str() == word)
        .map(StateIs::Run)
        .or_else(|| {
            CONVERSATIONS
                .into_iter()
                .find(|c| c.as_str() == word)
                .map(StateIs::Conversation)
        })
}

fn unknown_state(word: &str) -> String {
    let known: Vec<&str> = RUN_STATES
        .iter()
        .map(|s| s.as_str())
        .chain(CONVERSATIONS.iter().map(|c| c.as_str()))
        .collect();
    format!(
        "state = {word:?} is no state of a ticket; write one of {}",
        known.join(", ")
    )
}

/// `100`, `150.5`, `150.00`, `150,00` as cents.
fn euros(text: &str) -> Option<Cents> {
    let text = text.trim().replace(',', ".");
    let (whole, fraction) = text.split_once('.').unwrap_or((&text, ""));
    if whole.is_empty()
        || fraction.len() > 2
        || !whole
            .chars()
            .chain(fraction.chars())
            .all(|c| c.is_ascii_digit())
    {
        return None;
    }
    let whole: i64 = whole.parse().ok()?;
    let cents: i64 = format!("{fraction:0<2}").parse().ok()?;
    whole.checked_mul(100)?.checked_add(cents).map(Cents)
}

/// The amounts in euros a customer's text names: a number next to `€`, `eur` or `euro(s)`.
fn amounts(text: &str) -> Vec<Cents> {
    let words: Vec<&str> = text.split_whitespace().collect();
    let is_currency = |w: &str| {
        let w = w
            .trim_matches(|c: char| !c.is_alphanumeric() && c != '€')
            .to_lowercase();
        matches!(w.as_str(), "€" | "eur" | "euro" | "euros")
    };
    let mut found = Vec::new();
    for (at, word) in words.iter().enumerate() {
        let sign = word.contains('€');
        let number = word.trim_matches(|c: char| !c.is_ascii_digit()).to_owned();
        let Some(amount) = euros(&number) else {
            continue;
        };
        let beside = (at > 0 && is_currency(words[at - 1]))
            || words.get(at + 1).is_some_and(|w| is_currency(w));
        if sign || beside {
            found.push(amount);
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ticket(subject: &str, body: &str) -> Ticket {
        Ticket {
            ticket_id: "T-0001".to_owned(),
            customer_id: "C-0101".to_owned(),
            customer_name: Some("Ana Lima".to_owned()),
            subject: subject.to_owned(),
            body: body.to_owned(),
            ..Ticket::default()
        }
    }

    fn view(config: ViewConfig) -> SavedView {
        SavedView::new("mine", &config).expect("a good view")
    }

    #[test]
    fn every_criterion_must_hold() {
        let t = ticket("Broken lamp", "It arrived broken, I paid €180.00 for it.");
        let mut state = TicketState::new("T-0001");
        state.tags = vec!["refund".to_owned()];
        state.assignee = Some("ana".to_owned());
        state.state = Lifecycle::NeedsPerson;
        let all = view(ViewConfig {
            state: Some("needs_person".to_owned()),
            tag: Some("Refund".to_owned()),
            assignee: Some("me".to_owned()),
            customer: Some("lima".to_owned()),
            words: Some("ARRIVED broken".to_owned()),
            amount: Some("150".to_owned()),
        });
        assert!(all.admits(&t, &state, "ana"));
        assert!(!all.admits(&t, &state, "bo"), "not bo's");
        let dearer = view(ViewConfig {
            amount: Some("180.01".to_owned()),
            ..ViewConfig::default()
        });
        assert!(!dearer.admits(&t, &state, "ana"));
        let nobody = view(ViewConfig {
            assignee: Some("nobody".to_owned()),
            ..ViewConfig::default()
        });
        assert!(!nobody.admits(&t, &state, "ana"));
        let open = view(ViewConfig {
            state: Some("open".to_owned()),
            ..ViewConfig::default()
        });
        assert!(
            open.admits(&t, &state, "ana"),
            "a new ticket's conversation is open"
        );
    }

    #[test]
    fn amounts_are_the_ones_with_a_currency() {
        assert_eq!(
            amounts("order 1873 cost 24,90 eur and EUR 30 and €5 and 12 items"),
            vec![Cents(2490), Cents(3000), Cents(500)]
        );
    }

    #[test]
    fn a_view_that_cannot_work_says_which_and_why() {
        let bad = |config: ViewConfig| {
            SavedView::new("v", &config)
                .expect_err("a bad view was taken")
                .to_string()
        };
        assert!(
            bad(ViewConfig {
                state: Some("shipped".to_owned()),
                ..ViewConfig::default()
            })
            .contains("needs_person")
        );
        assert!(
            bad(ViewConfig {
                amount: Some("lots".to_owned()),
                ..ViewConfig::default()
            })
            .contains("[views.v]")
        );
        assert!(
            bad(ViewConfig {
                tag: Some("two words".to_owned()),
                ..ViewConfig::default()
            })
            .contains("tag")
        );
        assert!(SavedView::new("two words", &ViewConfig::default()).is_err());
    }
}
