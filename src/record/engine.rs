//! The desk's record on either engine: the SQLite file of one person's desk (nothing to set
//! up), or the team's PostgreSQL, where who is who is the database's word and a ticket is
//! worked by the one desk that holds its claim. The host talks to this and never to an engine.

use super::postgres::{Approval, NewApproval, PgError, PgRecord, TeamReply};
use super::state::TicketState;
use super::store::{Appended, DeskRecord, RecordError, Stored};
use crate::record::Event;

pub enum Record {
    /// One person's desk: its SQLite file (or memory, for a one-off run).
    Sqlite(DeskRecord),
    /// A team's record in PostgreSQL, and the address it was opened at.
    Postgres { record: Box<PgRecord>, url: String },
}

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error(transparent)]
    Sqlite(#[from] RecordError),
    #[error(transparent)]
    Postgres(#[from] PgError),
    #[error(
        "approvals live in a team's record; on one person's desk its person answers every form (start the desk with --store postgres://…)"
    )]
    NoTeam,
    #[error(
        "saved replies are shared in a team's record; on one person's desk edit replies.toml in the data directory (or the config's [replies.NAME]) instead"
    )]
    NoTeamReplies,
}

impl Record {
    /// How many events a walk over the record ([`Self::walk_after`]) holds at once; the
    /// bundled queue of 48 tickets makes about 430.
    pub const PAGE: usize = 256;

    /// The team's record at `url`, logged in as the person the address names.
    pub async fn team(url: &str, allow: &[String]) -> Result<Self, EngineError> {
        let record = PgRecord::connect(url, allow).await?;
        Ok(Record::Postgres {
            record: Box::new(record),
            url: url.to_owned(),
        })
    }

    /// Who this desk's events are by.
    pub fn person(&self) -> &str {
        match self {
            Record::Sqlite(record) => record.person(),
            Record::Postgres { record, .. } => record.person(),
        }
    }

    /// The person's role on the team: `None` on one person's desk (who is every role at
    /// once), else whether they are a lead.
    pub async fn is_lead(&self) -> Result<Option<bool>, EngineError> {
        match self {
            Record::Sqlite(_) => Ok(None),
            Record::Postgres { record, .. } => Ok(Some(record.is_lead().await?)),
        }
    }

    /// The team's address, when the record is a team's (for following it live).
    pub fn team_url(&self) -> Option<&str> {
        match self {
            Record::Sqlite(_) => None,
            Record::Postgres { url, .. } => Some(url),
        }
    }

    pub async fn append(&self, event: &Event) -> Result<Appended, EngineError> {
        Ok(match self {
            Record::Sqlite(record) => record.append(event)?,
            Record::Postgres { record, .. } => record.append(event).await?,
        })
    }

    pub async fn states(&self) -> Result<Vec<TicketState>, EngineError> {
        Ok(match self {
            Record::Sqlite(record) => record.states()?,
            Record::Postgres { record, .. } => record.states().await?,
        })
    }

    pub async fn state(&self, ticket: &str) -> Result<Option<TicketState>, EngineError> {
        Ok(match self {
            Record::Sqlite(record) => record.state(ticket)?,
            Record::Postgres { record, .. } => record.state(ticket).await?,
        })
    }

    pub async fn events_after(&self, seq: i64) -> Result<Vec<Stored>, EngineError> {
        Ok(match self {
            Record::Sqlite(record) => record.events_after(seq)?,
            Record::Postgres { record, .. } => record.events_after(seq).await?,
        })
    }

    /// The first `limit` events after `seq`: see [`DeskRecord::events_page`].
    pub async fn events_page(&self, seq: i64, limit: usize) -> Result<Vec<Stored>, EngineError> {
        Ok(match self {
            Record::Sqlite(record) => record.events_page(seq, limit)?,
            Record::Postgres { record, .. } => record.events_page(seq, limit).await?,
        })
    }

    /// Hands every event after `seq` to `visit`, in order, reading [`Self::PAGE`] events at a
    /// time: a day's record is walked without all of it in memory at once.
    pub async fn walk_after(
        &self,
        seq: i64,
        mut visit: impl FnMut(Stored),
    ) -> Result<(), EngineError> {
        let mut after = seq;
        loop {
            let page = self.events_page(after, Self::PAGE).await?;
            let Some(last) = page.last() else {
                return Ok(());
            };
            after = last.seq;
            page.into_iter().for_each(&mut visit);
        }
    }

    pub async fn ticket_events(&self, ticket: &str) -> Result<Vec<Stored>, EngineError> {
        Ok(match self {
            Record::Sqlite(record) => record.ticket_events(ticket)?,
            Record::Postgres { record, .. } => record.ticket_events(ticket).await?,
        })
    }

    pub async fn last_seq(&self) -> Result<i64, EngineError> {
        Ok(match self {
            Record::Sqlite(record) => record.last_seq()?,
            Record::Postgres { record, .. } => record.last_seq().await?,
        })
    }

    /// Runs cut off when a desk stopped, settled as needing a person: on a team's record only
    /// those whose claim has run out (another desk may still be working the rest).
    pub async fn settle_interrupted(&self) -> Result<Vec<Appended>, EngineError> {
        Ok(match self {
            Record::Sqlite(record) => record.settle_interrupted()?,
            Record::Postgres { record, .. } => record.settle_interrupted().await?,
        })
    }

    /// Claims `ticket` for this desk before it works it. One person's desk holds every ticket
    /// of its own (its data directory is locked); a team's desk is refused, with who holds it,
    /// while another desk's claim lasts.
    pub async fn claim(&self, ticket: &str) -> Result<(), EngineError> {
        match self {
            Record::Sqlite(_) => Ok(()),
            Record::Postgres { record, .. } => {
                record.claim(ticket).await?;
                Ok(())
            }
        }
    }

    /// Renews this desk's claim on `ticket` while it works it.
    pub async fn renew(&self, ticket: &str) -> Result<(), EngineError> {
        match self {
            Record::Sqlite(_) => Ok(()),
            Record::Postgres { record, .. } => {
                record.renew(ticket).await?;
                Ok(())
            }
        }
    }

    /// Takes or renews the lease on reading `mailbox` (a team's desks read it one at a time):
    /// whether this desk holds it now, and who does. One person's desk always does.
    pub async fn hold_mailbox(&self, mailbox: &str) -> Result<(bool, String), EngineError> {
        match self {
            Record::Sqlite(record) => Ok((true, record.person().to_owned())),
            Record::Postgres { record, .. } => Ok(record.hold_mailbox(mailbox).await?),
        }
    }

    /// Lets the lease on `mailbox` go, for another desk to take at once.
    pub async fn let_go_of_mailbox(&self, mailbox: &str) -> Result<(), EngineError> {
        match self {
            Record::Sqlite(_) => Ok(()),
            Record::Postgres { record, .. } => Ok(record.let_go_of_mailbox(mailbox).await?),
        }
    }

    /// Lets `ticket` go once this desk is done with it.
    pub async fn release(&self, ticket: &str) -> Result<(), EngineError> {
        match self {
            Record::Sqlite(_) => Ok(()),
            Record::Postgres { record, .. } => Ok(record.release(ticket).await?),
        }
    }

    /// Takes `ticket` from whoever holds it, with why; the note saying so is appended to the
    /// ticket (and returned). A team's lead may; one person's desk holds every ticket already.
    pub async fn take_over(
        &self,
        ticket: &str,
        reason: &str,
    ) -> Result<Option<Appended>, EngineError> {
        match self {
            Record::Sqlite(_) => Ok(None),
            Record::Postgres { record, .. } => Ok(record.take_over(ticket, reason).await?.noted),
        }
    }

    /// Who holds which ticket now: (ticket, person, until in unix ms). None on one person's
    /// desk.
    pub async fn owners(&self) -> Result<Vec<(String, String, i64)>, EngineError> {
        match self {
            Record::Sqlite(_) => Ok(vec![]),
            Record::Postgres { record, .. } => Ok(record
                .owners()
                .await?
                .into_iter()
                .map(|c| (c.ticket, c.owner, c.until))
                .collect()),
        }
    }

    /// Files a lead's form for the team's leads (see [`PgRecord::ask_approval`]).
    pub async fn ask_approval(
        &self,
        asked: &NewApproval,
    ) -> Result<(Approval, Appended), EngineError> {
        Ok(self.team_record()?.ask_approval(asked).await?)
    }

    /// Every open approval, oldest first; none on one person's desk.
    pub async fn open_approvals(&self) -> Result<Vec<Approval>, EngineError> {
        match self {
            Record::Sqlite(_) => Ok(vec![]),
            Record::Postgres { record, .. } => Ok(record.open_approvals().await?),
        }
    }

    /// Carries out the team's approval fallbacks that are due (see
    /// [`PgRecord::fall_back_due`]); nothing on one person's desk, where nothing is filed.
    pub async fn fall_back_due(&self) -> Result<Vec<Appended>, EngineError> {
        match self {
            Record::Sqlite(_) => Ok(vec![]),
            Record::Postgres { record, .. } => Ok(record.fall_back_due().await?),
        }
    }

    pub async fn approval(&self, id: i64) -> Result<Approval, EngineError> {
        Ok(self.team_record()?.approval(id).await?)
    }

    /// Holds an approval for this lead's desk while it answers it.
    pub async fn take_approval(&self, id: i64) -> Result<Approval, EngineError> {
        Ok(self.team_record()?.take_approval(id).await?)
    }

    /// Lets go of this lead's hold on an open approval, for another answer at once.
    pub async fn let_go_of_approval(&self, id: i64) -> Result<(), EngineError> {
        Ok(self.team_record()?.let_go_of_approval(id).await?)
    }

    /// Closes an approval with the server's answer (an `approval_answered` event).
    pub async fn answer_approval(&self, answered: &Event) -> Result<Appended, EngineError> {
        Ok(self.team_record()?.answer_approval(answered).await?)
    }

    pub async fn withdraw_approval(&self, id: i64, reason: &str) -> Result<Appended, EngineError> {
        Ok(self.team_record()?.withdraw_approval(id, reason).await?)
    }

    /// The team's saved replies, in name order; none on one person's desk (its own are in the
    /// data directory's file).
    pub async fn team_replies(&self) -> Result<Vec<TeamReply>, EngineError> {
        match self {
            Record::Sqlite(_) => Ok(vec![]),
            Record::Postgres { record, .. } => Ok(record.team_replies().await?),
        }
    }

    /// Adds or changes the team's saved reply `name` (leads only; see
    /// [`PgRecord::set_team_reply`]).
    pub async fn set_team_reply(
        &self,
        name: &str,
        reply: &serde_json::Value,
    ) -> Result<(), EngineError> {
        match self {
            Record::Sqlite(_) => Err(EngineError::NoTeamReplies),
            Record::Postgres { record, .. } => Ok(record.set_team_reply(name, reply).await?),
        }
    }

    /// Removes the team's saved reply `name` (leads only).
    pub async fn remove_team_reply(&self, name: &str) -> Result<(), EngineError> {
        match self {
            Record::Sqlite(_) => Err(EngineError::NoTeamReplies),
            Record::Postgres { record, .. } => Ok(record.remove_team_reply(name).await?),
        }
    }

    fn team_record(&self) -> Result<&PgRecord, EngineError> {
        match self {
            Record::Sqlite(_) => Err(EngineError::NoTeam),
            Record::Postgres { record, .. } => Ok(record),
        }
    }
}
