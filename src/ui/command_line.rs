//! The command line (`:`, as in k9s and vim): every action of the desk's keys by its name
//! (`:work_selected`), and the commands no key reaches (`:assign ana`, `:tag refund`,
//! `:view late`), with Tab completing names and their arguments. This module reads and
//! completes a line; `App` carries it out.

use super::keymap::{Action, Keymap, action_name};

/// What a command's argument is, for completion and for the check before it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArgKind {
    None,
    /// A person's name, `me` or `nobody`.
    Person,
    Tag,
    View,
    /// A saved reply's name.
    Reply,
    /// Free text, required.
    Text,
    /// Free text, optional.
    MaybeText,
}

/// A command of the command line that no key has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Verb {
    pub name: &'static str,
    /// The argument as the help shows it.
    pub args: &'static str,
    pub kind: ArgKind,
    pub help: &'static str,
}

const fn verb(name: &'static str, args: &'static str, kind: ArgKind, help: &'static str) -> Verb {
    Verb {
        name,
        args,
        kind,
        help,
    }
}

/// The command line's own commands, in the order the help lists them. Those that act on a
/// ticket act on every marked ticket when any is marked, else on the selected one.
pub const VERBS: &[Verb] = &[
    verb(
        "assign",
        "PERSON",
        ArgKind::Person,
        "give the ticket to a person (a name, me, or nobody)",
    ),
    verb("take", "", ArgKind::None, "make the ticket yours"),
    verb("unassign", "", ArgKind::None, "make the ticket nobody's"),
    verb("tag", "TAG", ArgKind::Tag, "tag the ticket"),
    verb("untag", "TAG", ArgKind::Tag, "take a tag off the ticket"),
    verb(
        "view",
        "VIEW",
        ArgKind::View,
        "show a view: mine, unassigned, due-soon, late, waiting-for-a-lead, solved-today, … or one of your [views]",
    ),
    verb(
        "reply",
        "NAME",
        ArgKind::Reply,
        "a saved reply into the editor, its variables filled from the ticket",
    ),
    verb(
        "macro",
        "NAME",
        ArgKind::Reply,
        "a saved reply into the editor, and its tags, assignee and note on the ticket",
    ),
    verb(
        "solve",
        "[NOTE]",
        ArgKind::MaybeText,
        "solve the conversation, with a note if you like",
    ),
    verb(
        "note",
        "TEXT",
        ArgKind::Text,
        "add an internal note (never sent, never shown to the model)",
    ),
    verb("work", "", ArgKind::None, "let the model work the ticket"),
    verb(
        "cancel_task",
        "",
        ArgKind::None,
        "ask the server to cancel the ticket's running task (its end shows when it comes)",
    ),
    verb(
        "mark_all",
        "",
        ArgKind::None,
        "mark every ticket the view shows",
    ),
    verb("unmark", "", ArgKind::None, "clear every mark"),
];

/// A line, read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Parsed {
    /// One of the command line's own commands, with its argument (trimmed; may be empty).
    Verb(Verb, String),
    /// An action of the desk's keys, by its name.
    Action(Action),
}

/// Why a line cannot run, in words for the status bar.
pub fn parse(line: &str, keymap: &Keymap) -> Result<Parsed, String> {
    let line = line.trim().trim_start_matches(':').trim_start();
    let (name, arg) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
    let (name, arg) = (name.replace('-', "_"), arg.trim().to_owned());
    if name.is_empty() {
        return Err("type a command, or Tab to see them all".to_owned());
    }
    if let Some(verb) = VERBS.iter().find(|v| v.name == name) {
        let needs = matches!(
            verb.kind,
            ArgKind::Person | ArgKind::Tag | ArgKind::View | ArgKind::Reply | ArgKind::Text
        );
        return match (needs, arg.is_empty(), verb.kind) {
            (true, true, _) => Err(format!(":{} needs {}", verb.name, verb.args)),
            (false, false, ArgKind::None) => Err(format!(":{} takes no argument", verb.name)),
            _ => Ok(Parsed::Verb(*verb, arg)),
        };
    }
    match actions(keymap).into_iter().find(|(n, _, _)| *n == name) {
        Some((_, action, _)) if arg.is_empty() => Ok(Parsed::Action(action)),
        Some(_) => Err(format!(":{name} takes no argument")),
        None => Err(format!(
            "no command {name:?}; press : then Tab to list them, or ? for help"
        )),
    }
}

/// Every action of the desk's keys: its name, the action, and the help's words for it.
pub fn actions(keymap: &Keymap) -> Vec<(String, Action, &'static str)> {
    keymap
        .desk
        .iter()
        .chain(&keymap.found)
        .filter(|b| !b.help.is_empty())
        .map(|b| (action_name(b.action), b.action, b.help))
        .collect()
}

/// What a line's arguments may be, as the desk knows them now.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Known {
    pub people: Vec<String>,
    pub tags: Vec<String>,
    pub views: Vec<String>,
    /// Saved replies: each name, with its first words.
    pub replies: Vec<(String, String)>,
}

/// One way to go on from what is typed: the whole word, and what it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Completion {
    pub word: String,
    pub help: String,
}

/// The ways to go on with the word being typed at the end of `line`.
pub fn completions(line: &str, keymap: &Keymap, known: &Known) -> Vec<Completion> {
    let line = line.trim_start().trim_start_matches(':');
    match line.split_once(char::is_whitespace) {
        None => {
            let typed = line.replace('-', "_");
            let own = VERBS.iter().map(|v| Completion {
                word: v.name.to_owned(),
                help: match v.args {
                    "" => v.help.to_owned(),
                    args => format!("{args}: {}", v.help),
                },
            });
            let keyed = actions(keymap)
                .into_iter()
                .map(|(name, _, help)| Completion {
                    word: name,
                    help: help.to_owned(),
                });
            own.chain(keyed)
                .filter(|c| c.word.starts_with(&typed))
                .collect()
        }
        Some((name, arg)) => {
            let name = name.replace('-', "_");
            let Some(verb) = VERBS.iter().find(|v| v.name == name) else {
                return vec![];
            };
            if verb.kind == ArgKind::Reply {
                let typed = arg.trim_start();
                return known
                    .replies
                    .iter()
                    .filter(|(name, _)| name.starts_with(typed))
                    .map(|(word, help)| Completion {
                        word: word.clone(),
                        help: help.clone(),
                    })
                    .collect();
            }
            let words: Vec<String> = match verb.kind {
                ArgKind::Person => ["me", "nobody"]
                    .into_iter()
                    .map(str::to_owned)
                    .chain(known.people.iter().cloned())
                    .collect(),
                ArgKind::Tag => known.tags.clone(),
                ArgKind::View => known.views.clone(),
                ArgKind::Reply | ArgKind::None | ArgKind::Text | ArgKind::MaybeText => vec![],
            };
            let typed = arg.trim_start();
            let mut seen = Vec::new();
            words
                .into_iter()
                .filter(|w| {
                    w.starts_with(typed) && !seen.contains(w) && {
                        seen.push(w.clone());
                        true
                    }
                })
                .map(|word| Completion {
                    word,
                    help: String::new(),
                })
                .collect()
        }
    }
}

/// The line with its last word completed as far as every completion agrees (the whole word
/// and a space when only one is left).
pub fn complete(line: &str, found: &[Completion]) -> String {
    let Some(first) = found.first() else {
        return line.to_owned();
    };
    let common = found.iter().fold(first.word.clone(), |common, c| {
        common
            .chars()
            .zip(c.word.chars())
            .take_while(|(a, b)| a == b)
            .map(|(a, _)| a)
            .collect()
    });
    let start = line
        .rfind(char::is_whitespace)
        .map_or(0, |at| at + 1)
        .max(usize::from(line.starts_with(':')));
    let mut done = format!("{}{common}", &line[..start]);
    if found.len() == 1 {
        done.push(' ');
    }
    done
}

/// The command line while it is open: what is typed, and the completions Tab last offered.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CommandLine {
    pub text: String,
    pub offered: Vec<Completion>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn known() -> Known {
        Known {
            people: vec!["ana".to_owned(), "bo".to_owned()],
            tags: vec!["refund".to_owned(), "rush".to_owned()],
            views: vec!["mine".to_owned(), "late".to_owned()],
            replies: vec![],
        }
    }

    #[test]
    fn a_line_names_a_verb_with_its_argument_or_an_action() {
        let keys = Keymap::default();
        assert_eq!(
            parse(":assign  ana ", &keys),
            Ok(Parsed::Verb(VERBS[0], "ana".to_owned()))
        );
        assert_eq!(
            parse("work-selected", &keys),
            Ok(Parsed::Action(Action::WorkSelected))
        );
        assert!(matches!(
            parse(":cancel-task", &keys),
            Ok(Parsed::Verb(
                Verb {
                    name: "cancel_task",
                    ..
                },
                _
            ))
        ));
        assert!(
            parse("assign", &keys)
                .expect_err("refused")
                .contains("PERSON")
        );
        assert!(
            parse("take ana", &keys)
                .expect_err("refused")
                .contains("no argument")
        );
        assert!(
            parse("frobnicate", &keys)
                .expect_err("refused")
                .contains("Tab")
        );
        assert!(matches!(
            parse("solve", &keys),
            Ok(Parsed::Verb(Verb { name: "solve", .. }, _))
        ));
    }

    #[test]
    fn tab_completes_names_then_arguments() {
        let keys = Keymap::default();
        let found = completions(":ta", &keys, &known());
        let words: Vec<&str> = found.iter().map(|c| c.word.as_str()).collect();
        assert_eq!(words, ["take", "tag", "take_over"]);
        assert_eq!(complete(":ta", &found), ":ta");
        let found = completions(":tag r", &keys, &known());
        assert_eq!(complete(":tag r", &found), ":tag r");
        let found = completions(":tag ref", &keys, &known());
        assert_eq!(complete(":tag ref", &found), ":tag refund ");
        let found = completions("assign ", &keys, &known());
        assert_eq!(found.len(), 4, "me, nobody and the two people");
        let found = completions("vi", &keys, &known());
        assert_eq!(complete("vi", &found), "view ");
    }

    #[test]
    fn every_action_of_the_keys_is_a_command_with_the_keys_help() {
        let keys = Keymap::default();
        let found = completions("", &keys, &known());
        for (name, _, help) in actions(&keys) {
            assert!(
                found.iter().any(|c| c.word == name && c.help == help),
                "{name} is missing"
            );
        }
    }
}
