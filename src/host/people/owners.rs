//! Whose ticket it is and how it is tagged, from the desk: the record's rules
//! ([`crate::record::owners`]) make the event, the record (on a team, the database) takes it.

use crate::host::core::Host;
use crate::record::TicketState;
use crate::record::owners::{assignment, tagging};

impl Host {
    /// Gives `ticket` to `to` (`me` is this desk's person; `None` or `nobody`: to nobody).
    pub async fn assign(&self, ticket: &str, to: Option<&str>) -> Result<(), String> {
        let state = self.state_of(ticket).await?;
        let event = assignment(&state, self.record.person(), to)?;
        self.report(event).await.map_err(|e| e.to_string())
    }

    /// Adds `tag` to `ticket`, or takes it off (`removed`).
    pub async fn tag(&self, ticket: &str, tag: &str, removed: bool) -> Result<(), String> {
        let state = self.state_of(ticket).await?;
        let event = tagging(&state, self.record.person(), tag, removed)?;
        self.report(event).await.map_err(|e| e.to_string())
    }

    /// A ticket of the queue as the record holds it (a new one when it has no event yet).
    async fn state_of(&self, ticket: &str) -> Result<TicketState, String> {
        if self.ticket(ticket).is_none() {
            return Err(format!("there is no ticket {ticket}"));
        }
        Ok(self
            .record
            .state(ticket)
            .await
            .map_err(|e| e.to_string())?
            .unwrap_or_else(|| TicketState::new(ticket)))
    }
}
