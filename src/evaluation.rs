//! The bundled data set's answer key (`assets/shop/evaluation.json`): for each ticket, the
//! order it is really about, the tool a correct agent calls first, whether its text carries
//! instructions aimed at an agent, and the IDs in it that are deliberately wrong. Read only to
//! score runs (`summary`, `compare`, `run`'s figures) and by tests: the desk never shows or
//! uses it, so a person and the model see each ticket as a real one would be.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::tickets::Ticket;

/// What a correct agent knows of one bundled ticket that the ticket does not say.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Label {
    pub ticket_id: String,
    /// The order the ticket is really about, even when the customer wrote a wrong number.
    pub order_id: Option<String>,
    /// The tool a correct agent calls first (see `assets/shop/README.md` for the rule).
    pub expected_tool: String,
    /// The text carries instructions aimed at an agent.
    pub injected: bool,
    /// IDs in the text that are deliberately wrong, normalised (`O-7144`).
    pub wrong_ids: Vec<String>,
}

/// The bundled tickets' labels, compiled into the binary.
pub fn bundled() -> Vec<Label> {
    serde_json::from_str(include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/assets/shop/evaluation.json"
    )))
    .expect("the bundled labels parse: tests/it/shop_data.rs checks them")
}

/// The labels of the bundled tickets among `tickets`: a ticket of one's own has none, whatever
/// its id (its runs are counted, not scored), and neither has a bundled one whose text changed.
pub fn for_tickets(tickets: &[Ticket]) -> Vec<Label> {
    let originals = crate::tickets::bundled();
    bundled()
        .into_iter()
        .filter(|label| {
            let id = label.ticket_id.as_str();
            let ours = crate::tickets::find(tickets, id);
            ours.is_some() && ours == crate::tickets::find(&originals, id)
        })
        .collect()
}

/// The manifest note in which a run records the tickets it was scored on: their IDs, comma
/// separated (empty when none had a label). A recording does not hold its tickets' words, so
/// without the note `summary` could not know that a ticket under a bundled ID was another one.
pub const SCORED_NOTE: &str = "scored_tickets";

/// The note's value for a run scored with `labels`.
pub fn scored_note(labels: &[Label]) -> String {
    labels
        .iter()
        .map(|l| l.ticket_id.as_str())
        .collect::<Vec<_>>()
        .join(",")
}

/// The labels a recorded run was scored with, from its batches' notes: the bundled labels of
/// the tickets each batch names. A batch without the note was recorded before runs kept it,
/// when every recording was made on the bundled queue, and is read with all the labels.
pub fn recorded(notes: &[&BTreeMap<String, String>]) -> Vec<Label> {
    let mut ids: BTreeSet<&str> = BTreeSet::new();
    for notes in notes {
        match notes.get(SCORED_NOTE) {
            Some(scored) => ids.extend(scored.split(',').filter(|id| !id.is_empty())),
            None => return bundled(),
        }
    }
    bundled()
        .into_iter()
        .filter(|label| ids.contains(label.ticket_id.as_str()))
        .collect()
}

/// The label of ticket `id`, when the data set has one.
pub fn find<'a>(labels: &'a [Label], id: &str) -> Option<&'a Label> {
    labels.iter().find(|l| l.ticket_id == id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_bundled_tickets_as_they_are_have_labels() {
        let bundled = crate::tickets::bundled();
        assert_eq!(for_tickets(&bundled).len(), 48);
        let mut changed = bundled.clone();
        changed[2].body = "Another message under T-0003's id.".into();
        let labels = for_tickets(&changed);
        assert_eq!(labels.len(), 47);
        assert!(find(&labels, "T-0003").is_none());
        assert!(for_tickets(&changed[2..3]).is_empty());
    }

    #[test]
    fn a_recorded_run_is_scored_with_the_labels_its_note_names() {
        let labels = for_tickets(&crate::tickets::bundled()[..3]);
        let noted = BTreeMap::from([(SCORED_NOTE.to_owned(), scored_note(&labels))]);
        assert_eq!(recorded(&[&noted]), labels);
        let none = BTreeMap::from([(SCORED_NOTE.to_owned(), String::new())]);
        assert_eq!(recorded(&[&none]), []);
        assert_eq!(recorded(&[&none, &BTreeMap::new()]), bundled());
    }
}
