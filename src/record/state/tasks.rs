//! How a server's task moves a ticket: started on a call, open until it ends. An open task
//! is what a desk follows when it opens, so that a task outlives the desk that started it.

use serde::{Deserialize, Serialize};

use super::TicketState;
use crate::record::Event;

/// A call its server runs as a task, not ended yet.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OpenTask {
    /// The config's prefix for the server, and the tool (canonical name).
    pub server: String,
    pub tool: String,
    pub task: String,
    /// Who started it (whose desk follows it), and since when (unix milliseconds).
    pub by: String,
    pub since: i64,
}

impl TicketState {
    pub(super) fn task_moved(&mut self, event: &Event, by: &str, at: i64) {
        match event {
            Event::TaskStarted {
                server, tool, task, ..
            } if !self
                .tasks
                .iter()
                .any(|t| t.task == *task && t.server == *server) =>
            {
                self.tasks.push(OpenTask {
                    server: server.clone(),
                    tool: tool.clone(),
                    task: task.clone(),
                    by: by.to_owned(),
                    since: at,
                });
            }
            Event::TaskEnded { server, task, .. } => {
                self.tasks
                    .retain(|t| !(t.task == *task && t.server == *server));
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::Outcome;
    use crate::record::state::Stamp;

    fn started(task: &str) -> Event {
        Event::TaskStarted {
            ticket: "T-0001".into(),
            turn: 1,
            server: "shop".into(),
            tool: "shop.file_damage_claim".into(),
            task: task.into(),
        }
    }

    #[test]
    fn a_task_is_open_from_its_start_to_its_end_and_counted_once() {
        let mut state = TicketState::new("T-0001");
        let stamp = Stamp { by: "ana", at: 5 };
        state.apply(&started("claim-1"), &stamp, &[]);
        state.apply(&started("claim-1"), &stamp, &[]);
        state.apply(&started("claim-2"), &stamp, &[]);
        assert_eq!(state.tasks.len(), 2);
        assert_eq!(state.tasks[0].since, 5);
        let ended = Event::TaskEnded {
            ticket: "T-0001".into(),
            server: "shop".into(),
            task: "claim-1".into(),
            status: "completed".into(),
            outcome: Outcome::Result,
            text: "accepted".into(),
            truncated: false,
        };
        state.apply(&ended, &stamp, &[]);
        assert_eq!(
            state
                .tasks
                .iter()
                .map(|t| t.task.as_str())
                .collect::<Vec<_>>(),
            ["claim-2"]
        );
    }
}
