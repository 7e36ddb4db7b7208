//! Whose ticket it is and how it is tagged, as events: a person gives a ticket to someone
//! (themselves, another person, or nobody) and tags it, one event a change. On a team the
//! database decides who may give whose ticket away (`schema_5.sql`); the checks here spare a
//! person a pointless event and make the words one shape.
//!
//! A tag is a short word of letters, digits, `-` and `_`, lower-cased, so that `refund`,
//! `Refund` and ` #refund ` are one tag, and a tag never carries markup or control
//! characters.

use super::{Event, TicketState};

/// What a person writes for "nobody" when assigning.
pub const NOBODY: &str = "nobody";

/// What a person writes for themselves when assigning.
pub const ME: &str = "me";

/// The longest tag, in characters.
pub const MAX_LEN: usize = 32;

/// `raw` as a tag (trimmed, lower-cased, a leading `#` dropped), or why it cannot be one.
pub fn tag_name(raw: &str) -> Result<String, String> {
    let tag = raw.trim().trim_start_matches('#').to_lowercase();
    if tag.is_empty() {
        return Err("a tag needs a name: letters, digits and -".to_owned());
    }
    if tag.chars().count() > MAX_LEN {
        return Err(format!(
            "the tag {tag:?} is longer than {MAX_LEN} characters"
        ));
    }
    match tag
        .chars()
        .find(|c| !(c.is_alphanumeric() || *c == '-' || *c == '_'))
    {
        Some(c) => Err(format!(
            "a tag is letters, digits, - and _; {tag:?} holds {c:?}"
        )),
        None => Ok(tag),
    }
}

/// The event that gives `state`'s ticket to `to` (`me` is `person`; `None` or `nobody`: to
/// nobody), by `person`; refused when it is theirs already.
pub fn assignment(state: &TicketState, person: &str, to: Option<&str>) -> Result<Event, String> {
    let to = match to.map(str::trim).filter(|t| !t.is_empty()) {
        None | Some(NOBODY) => None,
        Some(ME) => Some(person.to_owned()),
        Some(name) => Some(person_name(name)?),
    };
    let ticket = &state.ticket;
    if state.assignee == to {
        return Err(match to {
            Some(to) => format!("{ticket} is {to}'s already"),
            None => format!("{ticket} is nobody's already"),
        });
    }
    Ok(Event::Assigned {
        ticket: ticket.clone(),
        by: person.to_owned(),
        to,
    })
}

/// The event that puts `tag` on `state`'s ticket (or takes it off, `removed`), by `person`;
/// refused when there is nothing to change.
pub fn tagging(
    state: &TicketState,
    person: &str,
    tag: &str,
    removed: bool,
) -> Result<Event, String> {
    let tag = tag_name(tag)?;
    let ticket = &state.ticket;
    if state.tags.contains(&tag) == removed {
        Ok(Event::Tagged {
            ticket: ticket.clone(),
            by: person.to_owned(),
            tag,
            removed,
        })
    } else if removed {
        Err(format!("{ticket} has no tag {tag}"))
    } else {
        Err(format!("{ticket} is tagged {tag} already"))
    }
}

/// A person's name as a ticket's assignee: one word, no control characters. On a team the
/// database holds the names it knows.
fn person_name(name: &str) -> Result<String, String> {
    if name.chars().count() > 63 {
        return Err(format!(
            "{:?}… is too long for a person's name",
            name.chars().take(20).collect::<String>()
        ));
    }
    if name.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(format!(
            "{name:?} is not a person's name: one word, as the team knows them"
        ));
    }
    Ok(name.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_assignment_names_the_person_and_changes_something() {
        let mut state = TicketState::new("T-0001");
        let event = assignment(&state, "ana", Some("me")).expect("assigned");
        assert_eq!(
            event,
            Event::Assigned {
                ticket: "T-0001".to_owned(),
                by: "ana".to_owned(),
                to: Some("ana".to_owned()),
            }
        );
        state.assignee = Some("ana".to_owned());
        assert!(
            assignment(&state, "ana", Some("ana"))
                .expect_err("refused")
                .contains("already")
        );
        assert!(assignment(&state, "ana", Some("two words")).is_err());
        assert!(matches!(
            assignment(&state, "bo", Some("nobody")),
            Ok(Event::Assigned { to: None, .. })
        ));
        assert!(assignment(&TicketState::new("T-2"), "bo", None).is_err());
    }

    #[test]
    fn a_tag_goes_on_once_and_comes_off_once() {
        let mut state = TicketState::new("T-0001");
        assert!(tagging(&state, "ana", "#Refund", false).is_ok());
        assert!(
            tagging(&state, "ana", "refund", true)
                .expect_err("refused")
                .contains("no tag")
        );
        state.tags.push("refund".to_owned());
        assert!(
            tagging(&state, "ana", "REFUND", false)
                .expect_err("refused")
                .contains("already")
        );
        assert!(matches!(
            tagging(&state, "ana", "refund", true),
            Ok(Event::Tagged { removed: true, .. })
        ));
    }

    #[test]
    fn a_tag_is_one_lower_case_word() {
        assert_eq!(tag_name(" #Refund ").as_deref(), Ok("refund"));
        assert_eq!(tag_name("late-parcel").as_deref(), Ok("late-parcel"));
        assert_eq!(tag_name("größe").as_deref(), Ok("größe"));
        for bad in ["", "#", "two words", "x\u{1b}[31m", "a,b", &"x".repeat(33)] {
            assert!(tag_name(bad).is_err(), "{bad:?} was taken as a tag");
        }
    }
}
