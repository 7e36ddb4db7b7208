//! A quote ID is cut from every draft (the customer never sees one). A sentence that was there
//! only to give it ("Your quote ID is Q-….") is left saying nothing: "Your quote ID is." Such a
//! sentence goes to a person rather than to the customer.

use crate::record::Finding;

use super::{find_quote_id, strip_handles, work};

/// Words a sentence may end with only when what followed them was cut.
const DANGLING: &str = "is are was were id ids number reference code quote of for with";

/// The first sentence of `draft` that held a quote ID and, with it cut, ends on a word that
/// wanted it, as the customer would read it.
pub(super) fn emptied_by_a_cut(draft: &str) -> Option<Finding> {
    let mut rest = draft;
    let mut before = 0;
    while let Some((start, end)) = find_quote_id(rest) {
        let (at, to) = (before + start, before + end);
        let opens = draft[..at]
            .rfind(['.', '!', '?', '\n'])
            .map_or(0, |stop| stop + 1);
        let closes = draft[to..]
            .find(['.', '!', '?', '\n'])
            .map_or(draft.len(), |stop| to + stop + 1);
        work::step(closes - opens);
        let sentence = strip_handles(&draft[opens..closes]);
        let said = sentence
            .trim()
            .trim_end_matches(['.', '!', '?', ':', ',', ' ', '`', '"', '\'']);
        let last = said
            .rsplit(|c: char| !c.is_alphanumeric())
            .next()
            .unwrap_or(said);
        if said.is_empty() || super::listed(DANGLING, &last.to_lowercase()) {
            return Some(Finding::NotForCustomer {
                kind: "a sentence left empty where a quote ID was cut".to_owned(),
                words: sentence.trim().to_owned(),
            });
        }
        before = to;
        rest = &draft[to..];
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(draft: &str) -> Option<String> {
        emptied_by_a_cut(draft).map(|finding| match finding {
            Finding::NotForCustomer { words, .. } => words,
            other => panic!("{other:?}"),
        })
    }

    #[test]
    fn a_sentence_that_only_gave_the_quote_id_is_found_as_the_customer_reads_it() {
        assert_eq!(
            words(
                "Hello Hugo,\nThe quote ID for this refund is Q-c532f33765. The total is EUR 188.00."
            ),
            Some("The quote ID for this refund is.".to_owned())
        );
        assert_eq!(
            words("Use the quote_id `Q-52683b7547` when you write back."),
            None,
            "the sentence still says something"
        );
        assert_eq!(
            words("Your refund (quote Q-0ea36122d7) is waiting for a lead."),
            None
        );
        assert_eq!(
            words("Reference: Q-0ea36122d7"),
            Some("Reference".to_owned())
        );
        assert_eq!(words("Q-0ea36122d7."), Some(".".to_owned()));
        assert_eq!(words("No quote here, only O-1587."), None);
    }

    #[test]
    fn any_text_around_a_quote_id_reads_without_a_panic() {
        for draft in [
            "é Q-0ea36122d7 é",
            "Q-0ea36122d7",
            "\nQ-0ea36122d7\n",
            "x.Q-0ea36122d7.x",
        ] {
            let _ = emptied_by_a_cut(draft);
        }
    }
}
