//! `[keys]` in the config: any action of the desk bound to keys of the person's choosing.
//! The names are the actions' own (`work_selected = "x"`, `solve = ["d", "ctrl-d"]`); a name
//! the desk does not know, a key it cannot read, or a key bound to two actions is an error
//! when the config is loaded, by every command.

use std::collections::BTreeMap;

use crossterm::event::{KeyCode, KeyEvent};

use super::{Action, Binding, DESK, FOUND, Key, QUESTION};

/// A key binding with keys of its own.
#[derive(Debug, Clone)]
pub struct Bound {
    pub keys: Vec<Key>,
    pub shown: String,
    pub action: Action,
    pub help: &'static str,
}

/// The desk's keys as this person has them: the built-in tables with `[keys]` applied.
#[derive(Debug, Clone)]
pub struct Keymap {
    pub desk: Vec<Bound>,
    pub found: Vec<Bound>,
    pub question: Vec<Bound>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeysError {
    #[error(
        "[keys] names {0:?}, which is no action of the desk; write an action's name like work_selected or solve (README, 'Keys and colours')"
    )]
    Action(String),
    #[error(
        "[keys] {action} = {key:?}: a key is one character, ctrl-X, or one of enter, esc, tab, space, up, down, left, right, home, end, pageup, pagedown"
    )]
    Key { action: String, key: String },
    #[error("[keys] binds {key} to both {first} and {second}; give one of them another key")]
    Clash {
        key: String,
        first: String,
        second: String,
    },
}

impl Default for Keymap {
    fn default() -> Self {
        let own = |table: &[Binding]| {
            table
                .iter()
                .map(|b| Bound {
                    keys: b.keys.to_vec(),
                    shown: b.shown.to_owned(),
                    action: b.action,
                    help: b.help,
                })
                .collect()
        };
        Self {
            desk: own(DESK),
            found: own(FOUND),
            question: own(QUESTION),
        }
    }
}

impl Keymap {
    /// The built-in keys with `keys` (action name → its keys) in place of the actions'
    /// own.
    pub fn with(keys: &BTreeMap<String, Vec<String>>) -> Result<Self, KeysError> {
        let mut map = Self::default();
        for (name, written) in keys {
            let Some(bound) = map
                .desk
                .iter_mut()
                .chain(map.found.iter_mut())
                .chain(map.question.iter_mut())
                .find(|b| action_name(b.action) == *name)
            else {
                return Err(KeysError::Action(name.clone()));
            };
            let parsed = written
                .iter()
                .map(|key| {
                    parse(key).ok_or_else(|| KeysError::Key {
                        action: name.clone(),
                        key: key.clone(),
                    })
                })
                .collect::<Result<Vec<_>, _>>()?;
            bound.shown = written.join(" or ");
            bound.keys = parsed;
        }
        for table in [&map.desk, &map.found, &map.question] {
            clash(table)?;
        }
        Ok(map)
    }

    /// The action `key` asks for in the desk's table.
    pub fn desk_action(&self, key: KeyEvent) -> Option<Action> {
        lookup(&self.desk, key)
    }

    /// The action `key` asks for after a search found a ticket.
    pub fn found_action(&self, key: KeyEvent) -> Option<Action> {
        lookup(&self.found, key)
    }

    /// The action `key` asks for while a question is open.
    pub fn question_action(&self, key: KeyEvent) -> Option<Action> {
        lookup(&self.question, key)
    }

    /// The help screen's key lines, in the tables' order.
    pub fn help_lines(&self) -> Vec<(String, &'static str)> {
        self.desk
            .iter()
            .chain(&self.found)
            .chain(&self.question)
            .filter(|b| !b.shown.is_empty())
            .map(|b| (b.shown.clone(), b.help))
            .chain(
                super::ELSEWHERE
                    .iter()
                    .map(|(key, what)| ((*key).to_owned(), *what)),
            )
            .collect()
    }
}

/// The action `key` asks for in `table`; Up and `k` select the previous ticket while Down
/// and `j` select the next (they share a help line).
fn lookup(table: &[Bound], key: KeyEvent) -> Option<Action> {
    let next = table.iter().find(|b| b.action == Action::SelectNext);
    if matches!(key.code, KeyCode::Up | KeyCode::Char('k'))
        && next.is_some_and(|b| b.keys.iter().any(|k| k.matches(key)))
    {
        return Some(Action::SelectPrevious);
    }
    table
        .iter()
        .find(|b| b.keys.iter().any(|k| k.matches(key)))
        .map(|b| b.action)
}

fn clash(table: &[Bound]) -> Result<(), KeysError> {
    for (at, bound) in table.iter().enumerate() {
        for key in &bound.keys {
            if let Some(other) = table[at + 1..].iter().find(|b| b.keys.contains(key)) {
                return Err(KeysError::Clash {
                    key: written(*key),
                    first: action_name(bound.action),
                    second: action_name(other.action),
                });
            }
        }
    }
    Ok(())
}

/// An action's name in `[keys]`: `WorkSelected` is `work_selected`.
pub fn action_name(action: Action) -> String {
    let mut name = String::new();
    for (at, c) in format!("{action:?}").chars().enumerate() {
        if c.is_uppercase() && at > 0 {
            name.push('_');
        }
        name.extend(c.to_lowercase());
    }
    name
}

/// `x`, `X`, `ctrl-x`, `enter`, `esc`, `space`, `up`, …
fn parse(text: &str) -> Option<Key> {
    let lower = text.trim().to_lowercase();
    let code = match lower.as_str() {
        "enter" => KeyCode::Enter,
        "esc" | "escape" => KeyCode::Esc,
        "tab" => KeyCode::Tab,
        "space" => KeyCode::Char(' '),
        "up" => KeyCode::Up,
        "down" => KeyCode::Down,
        "left" => KeyCode::Left,
        "right" => KeyCode::Right,
        "home" => KeyCode::Home,
        "end" => KeyCode::End,
        "pageup" => KeyCode::PageUp,
        "pagedown" => KeyCode::PageDown,
        _ => {
            if let Some(c) = lower.strip_prefix("ctrl-") {
                let mut chars = c.chars();
                return match (chars.next(), chars.next()) {
                    (Some(c), None) if c.is_ascii_alphanumeric() => Some(Key::Ctrl(c)),
                    _ => None,
                };
            }
            let mut chars = text.trim().chars();
            return match (chars.next(), chars.next()) {
                (Some(c), None) if !c.is_control() => Some(Key::Char(c)),
                _ => None,
            };
        }
    };
    Some(Key::Code(code))
}

/// A key as `[keys]` writes it.
fn written(key: Key) -> String {
    match key {
        Key::Char(' ') => "space".to_owned(),
        Key::Char(c) | Key::Shifted(c) => c.to_string(),
        Key::Ctrl(c) => format!("ctrl-{c}"),
        Key::Code(code) => format!("{code:?}").to_lowercase(),
    }
}

#[cfg(test)]
mod tests {
    use crossterm::event::KeyModifiers;

    use super::*;

    fn keys(pairs: &[(&str, &[&str])]) -> BTreeMap<String, Vec<String>> {
        pairs
            .iter()
            .map(|(a, k)| ((*a).to_owned(), k.iter().map(|k| (*k).to_owned()).collect()))
            .collect()
    }

    #[test]
    fn an_action_takes_the_keys_given_and_lets_go_of_its_own() {
        let map = Keymap::with(&keys(&[
            ("work_selected", &["x", "ctrl-w"]),
            ("withdraw", &["X"]),
        ]))
        .expect("a keymap");
        let press = |c| KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE);
        assert_eq!(map.desk_action(press('x')), Some(Action::WorkSelected));
        assert_eq!(
            map.desk_action(KeyEvent::new(KeyCode::Char('w'), KeyModifiers::CONTROL)),
            Some(Action::WorkSelected)
        );
        assert_eq!(map.desk_action(press('w')), None);
        assert!(map.help_lines().iter().any(|(k, _)| k == "x or ctrl-w"));
    }

    #[test]
    fn an_unknown_action_a_bad_key_and_a_clash_are_said() {
        let unknown = Keymap::with(&keys(&[("launch_rockets", &["r"])])).expect_err("unknown");
        assert!(unknown.to_string().contains("launch_rockets"));
        let bad = Keymap::with(&keys(&[("solve", &["ctrl-"])])).expect_err("bad key");
        assert!(bad.to_string().contains("ctrl-X"));
        let clash = Keymap::with(&keys(&[("solve", &["w"])])).expect_err("clash");
        assert_eq!(
            clash.to_string(),
            "[keys] binds w to both work_selected and solve; give one of them another key"
        );
    }

    #[test]
    fn the_built_in_keys_do_not_clash() {
        Keymap::with(&BTreeMap::new()).expect("the defaults are one key one action");
        assert_eq!(action_name(Action::WorkSelected), "work_selected");
    }
}
