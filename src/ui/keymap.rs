//! The desk's keys: one table from a key to the `Action` it asks for, with the words the `?`
//! screen shows beside it. `App::on_key` and the help screen both read these tables, so what
//! a key does and what the help says it does cannot drift apart. Nothing here changes state:
//! `App::update` applies the action.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

mod rebind;
pub use rebind::{Keymap, KeysError, action_name};

/// What a person asks the desk to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Quit,
    SelectNext,
    SelectPrevious,
    SelectFirst,
    /// Scroll the ticket pane back to the live turn.
    FollowLive,
    ScrollBack,
    ScrollForward,
    CycleFilter,
    WorkSelected,
    WorkNew,
    /// Stop the selected ticket's run (the call in flight is cancelled).
    Stop,
    /// Stop the queue's run (`W`): no other ticket starts, those under way stop.
    StopQueue,
    OpenSelected,
    AnswerNext,
    EditSelected,
    AddNote,
    /// Say the ticket's conversation is done (solved), with an optional note.
    Solve,
    /// Take the ticket over from the desk that holds it (a lead's call on a team).
    TakeOver,
    /// The team's open approvals, to answer one (a lead's).
    PickApproval,
    /// Take back the selected ticket's approval (its asker's).
    Withdraw,
    PickPrompt,
    PickResource,
    /// Call one of the offered tools yourself, with its arguments in a form.
    CallTool,
    /// Take the call the ticket's results offer next, its form filled in from them.
    NextStep,
    PickReview,
    /// The tools people trust: listed, and revoked.
    Trust,
    /// The servers: where each runs, its tools, and what it says of itself.
    Servers,
    /// The lead's report: response and resolution times, the backlog, approvals.
    Report,
    Help,
    /// Start typing a search (`/`).
    Search,
    /// Jump to the next (or previous) ticket the search finds.
    NextMatch,
    PreviousMatch,
    /// Leave the search, keeping the ticket it found.
    EndSearch,
    /// Sign in to the server that asks for it (the status bar says which).
    SignIn,
    /// Leave the open question for later (it stays queued, and stays back until asked for).
    PutBack,
    /// Make the selected ticket yours (again: nobody's).
    Own,
    /// Mark the selected ticket (again: unmark it) for a command to act on every marked one.
    Mark,
    /// Open the command line (`:`).
    CommandLine,
}

/// A key as the tables name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key {
    /// A character typed without Ctrl or Alt.
    Char(char),
    /// A lower-case letter typed with Shift (some terminals send `w` + Shift for `W`).
    Shifted(char),
    Ctrl(char),
    Code(KeyCode),
}

impl Key {
    fn matches(self, key: KeyEvent) -> bool {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let alt = key.modifiers.contains(KeyModifiers::ALT);
        let shift = key.modifiers.contains(KeyModifiers::SHIFT);
        match self {
            // `w` with Shift is `W`, not `w`.
            Key::Char(c) => {
                let shifted_letter = shift && c.is_lowercase();
                key.code == KeyCode::Char(c) && !(ctrl || alt || shifted_letter)
            }
            Key::Shifted(c) => shift && !ctrl && key.code == KeyCode::Char(c),
            Key::Ctrl(c) => ctrl && key.code == KeyCode::Char(c),
            Key::Code(code) => key.code == code,
        }
    }
}

/// Keys, the action they ask for, and the help screen's words for them.
pub struct Binding {
    pub keys: &'static [Key],
    /// The keys as the help screen names them.
    pub shown: &'static str,
    pub action: Action,
    pub help: &'static str,
}

const fn bind(
    keys: &'static [Key],
    shown: &'static str,
    action: Action,
    help: &'static str,
) -> Binding {
    Binding {
        keys,
        shown,
        action,
        help,
    }
}

/// The desk's own keys, when no modal is open, in the order the help lists them.
pub const DESK: &[Binding] = &[
    bind(
        &[
            Key::Code(KeyCode::Down),
            Key::Code(KeyCode::Up),
            Key::Char('j'),
            Key::Char('k'),
        ],
        "↑/↓ or j/k",
        Action::SelectNext,
        "pick a ticket",
    ),
    bind(
        &[Key::Code(KeyCode::Home)],
        "Home",
        Action::SelectFirst,
        "the first ticket",
    ),
    bind(
        &[Key::Char('w')],
        "w",
        Action::WorkSelected,
        "work the selected ticket (again)",
    ),
    bind(
        &[Key::Char('W'), Key::Shifted('w')],
        "W",
        Action::WorkNew,
        "work every new ticket",
    ),
    bind(
        &[Key::Char('s')],
        "s",
        Action::Stop,
        "stop the selected ticket's run",
    ),
    bind(
        &[Key::Char('S'), Key::Shifted('s')],
        "S",
        Action::StopQueue,
        "stop working the queue (W)",
    ),
    bind(
        &[Key::Code(KeyCode::Enter)],
        "Enter",
        Action::OpenSelected,
        "open the ticket's question or reply (w works it)",
    ),
    bind(
        &[Key::Char('a')],
        "a",
        Action::AnswerNext,
        "answer the next waiting question (put-back ones too)",
    ),
    bind(
        &[Key::Char('e')],
        "e",
        Action::EditSelected,
        "write, edit, send or hand over the reply",
    ),
    bind(
        &[Key::Char('n')],
        "n",
        Action::AddNote,
        "add an internal note (never sent, never shown to the model)",
    ),
    bind(
        &[Key::Char('d')],
        "d",
        Action::Solve,
        "done: solve the conversation (the customer's next message opens it again)",
    ),
    bind(
        &[Key::Char('o')],
        "o",
        Action::Own,
        "own: make the ticket yours to answer (again: nobody's)",
    ),
    bind(
        &[Key::Char(' ')],
        "space",
        Action::Mark,
        "mark the ticket (again: unmark it); : commands act on every marked one",
    ),
    bind(
        &[Key::Char(':')],
        ":",
        Action::CommandLine,
        "the command line: :assign, :tag, :view, :solve, every key's action by name (Tab completes)",
    ),
    bind(
        &[Key::Char('t')],
        "t",
        Action::TakeOver,
        "take the ticket over from the desk that holds it, saying why (a lead's call)",
    ),
    bind(
        &[Key::Char('A'), Key::Shifted('a')],
        "A",
        Action::PickApproval,
        "the team's open approvals: answer one (leads)",
    ),
    bind(
        &[Key::Char('x')],
        "x",
        Action::Withdraw,
        "withdraw the ticket's approval, saying why",
    ),
    bind(
        &[Key::Char('L'), Key::Shifted('l')],
        "L",
        Action::SignIn,
        "sign in to a server that asks for it (the status bar names it)",
    ),
    bind(
        &[Key::Char('/')],
        "/",
        Action::Search,
        "find a ticket by id, customer or words",
    ),
    bind(
        &[Key::Char('f')],
        "f",
        Action::CycleFilter,
        "the next view: all, needs me, mine, unassigned, due soon, late, … (:view picks one)",
    ),
    bind(
        &[Key::Char('p')],
        "p",
        Action::PickPrompt,
        "run a server's prompt for this ticket",
    ),
    bind(
        &[Key::Char('c')],
        "c",
        Action::CallTool,
        "call a tool yourself, with its arguments in a form (the results' next steps first)",
    ),
    bind(
        &[Key::Char('C'), Key::Shifted('c')],
        "C",
        Action::NextStep,
        "take the call the ticket's results offer next, filled in from them",
    ),
    bind(
        &[Key::Char('r')],
        "r",
        Action::PickResource,
        "read a server's resource (a policy), or attach it",
    ),
    bind(
        &[Key::Code(KeyCode::PageUp)],
        "PgUp/PgDn",
        Action::ScrollBack,
        "scroll the ticket",
    ),
    bind(
        &[Key::Code(KeyCode::PageDown)],
        "",
        Action::ScrollForward,
        "",
    ),
    bind(
        &[Key::Code(KeyCode::End)],
        "End",
        Action::FollowLive,
        "follow the live turn again",
    ),
    bind(
        &[Key::Char('v')],
        "v",
        Action::PickReview,
        "review this desk's record or a recording (q returns)",
    ),
    bind(
        &[Key::Char('T'), Key::Shifted('t')],
        "T",
        Action::Trust,
        "the tools people trust to run unasked (x revokes)",
    ),
    bind(
        &[Key::Char('i')],
        "i",
        Action::Servers,
        "the servers: where each runs, its tools, and what it says of itself",
    ),
    bind(
        &[Key::Char('R'), Key::Shifted('r')],
        "R",
        Action::Report,
        "the lead's report: response times, backlog, approvals (r reads it again, q returns)",
    ),
    bind(&[Key::Char('?')], "?", Action::Help, "this help"),
    bind(
        &[Key::Char('q'), Key::Ctrl('c')],
        "q or Ctrl-C",
        Action::Quit,
        "quit (servers are stopped)",
    ),
];

/// After a search found a ticket; every other key ends the search and does what it does.
pub const FOUND: &[Binding] = &[
    bind(
        &[Key::Char('n'), Key::Code(KeyCode::Enter)],
        "n or Enter",
        Action::NextMatch,
        "after a search: the next ticket it finds",
    ),
    bind(
        &[Key::Char('N'), Key::Shifted('n')],
        "N",
        Action::PreviousMatch,
        "after a search: the previous one",
    ),
    bind(
        &[Key::Code(KeyCode::Esc)],
        "Esc",
        Action::EndSearch,
        "after a search: end it, staying on this ticket",
    ),
];

/// While a question's modal is open, before the modal sees the key.
pub const QUESTION: &[Binding] = &[bind(
    &[Key::Ctrl('b')],
    "Ctrl-B",
    Action::PutBack,
    "in a question: leave it for later (it waits until you ask for it)",
)];

/// Keys a modal or the mouse handles itself, listed for the help screen only.
pub const ELSEWHERE: &[(&str, &str)] = &[
    (
        "typing after /",
        "Enter finds the first ticket · Esc cancels",
    ),
    ("mouse", "click a ticket; wheel scrolls"),
    ("y / n", "in a consent question: approve / decline"),
    (
        "s / a",
        "in a consent question for a read-only tool: approve and trust it for the session / always",
    ),
    ("Esc", "in a consent question: decline and close"),
    ("Ctrl-D / Esc", "in a server's form: decline / cancel"),
    (
        "Ctrl-K",
        "in the draft: check your edit against the call log",
    ),
];

#[cfg(test)]
mod tests {
    use super::*;

    fn press(code: KeyCode, modifiers: KeyModifiers) -> KeyEvent {
        KeyEvent::new(code, modifiers)
    }

    fn action(key: KeyEvent) -> Option<Action> {
        Keymap::default().desk_action(key)
    }

    #[test]
    fn shift_w_works_the_queue_and_plain_w_the_ticket() {
        let plain = press(KeyCode::Char('w'), KeyModifiers::NONE);
        let upper = press(KeyCode::Char('W'), KeyModifiers::SHIFT);
        let shifted = press(KeyCode::Char('w'), KeyModifiers::SHIFT);
        assert_eq!(action(plain), Some(Action::WorkSelected));
        assert_eq!(action(upper), Some(Action::WorkNew));
        assert_eq!(action(shifted), Some(Action::WorkNew));
    }

    #[test]
    fn up_and_k_select_the_previous_ticket() {
        for code in [KeyCode::Up, KeyCode::Char('k')] {
            let key = press(code, KeyModifiers::NONE);
            assert_eq!(action(key), Some(Action::SelectPrevious));
        }
    }

    #[test]
    fn every_action_of_the_desk_is_in_the_help() {
        let help = Keymap::default().help_lines();
        for binding in DESK.iter().chain(FOUND).chain(QUESTION) {
            assert!(
                binding.shown.is_empty()
                    || help.contains(&(binding.shown.to_owned(), binding.help)),
                "{:?} is missing from the help",
                binding.action
            );
        }
    }
}
