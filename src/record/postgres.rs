//! The desk's record for a team, in PostgreSQL: the same append-only log of events and
//! per-ticket states as the SQLite record ([`super::store`]), with the same rules
//! ([`TicketState::refuses`]), shared by every desk of the team.
//!
//! Who is who is the database's word: events are by the role logged in (`current_user`), at
//! the database's time, and row-level security decides who may append what ([`team_init`]
//! sets it up). One person at a time works a ticket, by holding its claim ([`Claim`], a
//! lease); a run's events, edits, sends and hand-overs need it. Seq order is commit order, so
//! a desk that has seen seq n has seen everything before it ([`subscribe`] relies on that).
//!
//! This module never writes an outbox (a team delivers replies from the `sent` events) and
//! never reads or shows a password beyond handing it to the server.

mod approvals;
mod claims;
mod connect;
mod error;
mod live;
mod team;

use serde_json::Value;
use tokio::sync::{Mutex, MutexGuard};
use tokio_postgres::error::SqlState;
use tokio_postgres::{Client, GenericClient, Row, Transaction};

use super::state::{Refusal, Stamp, TicketState};
use super::store::{Appended, Stored};
use crate::record::Event;
pub use approvals::{Approval, NewApproval};
pub use claims::{Claim, LEASE, TakenOver};
use connect::Target;
pub use error::PgError;
use error::{duplicate, violates};
pub use live::{Live, subscribe};
pub use team::{SCHEMA_VERSION, team_add, team_init};

/// Appends take turns on the same lock as the database's own trigger, taken before the
/// ticket's state is read, so that no two desks move one state on from the same row.
const TAKE_TURN: &str = "SELECT pg_advisory_xact_lock('desk.events'::regclass::oid::bigint)";
const EVENT_COLUMNS: &str = "seq, desk.unix_ms(at), actor, body";

/// One desk's connection to the team's record, as the person logged in.
pub struct PgRecord {
    target: Target,
    /// Reconnected on the next use when the server drops it.
    client: Mutex<Client>,
    person: String,
    /// The host's tools that change nothing: what a side effect of a run is.
    allow: Vec<String>,
}

impl PgRecord {
    /// Logs in at `url` (`postgres://name@host:port/database`; the password from the address,
    /// `PGPASSWORD` or the password file) as a member of the desk's team.
    pub async fn connect(url: &str, allow: &[String]) -> Result<Self, PgError> {
        let target = Target::parse(url)?;
        let client = target.connect().await?;
        let person = check_team(&client, &target).await?;
        Ok(Self {
            target,
            client: Mutex::new(client),
            person,
            allow: allow.to_vec(),
        })
    }

    /// Who this desk's events are by: the role logged in, as the database says.
    pub fn person(&self) -> &str {
        &self.person
    }

    /// Whether the person is a lead (a member of `desk_leads`), as the database says.
    pub async fn is_lead(&self) -> Result<bool, PgError> {
        let client = self.client().await?;
        let row = client
            .query_one(
                "SELECT pg_has_role(current_user, 'desk_leads', 'member')",
                &[],
            )
            .await?;
        Ok(row.get(0))
    }

    async fn client(&self) -> Result<MutexGuard<'_, Client>, PgError> {
        let mut client = self.client.lock().await;
        if client.is_closed() {
            *client = self.target.connect().await?;
        }
        Ok(client)
    }

    /// Appends `event` as this desk's person and moves its ticket's state on, in one
    /// transaction; refused (and nothing written) when the ticket's state forbids it or the
    /// database does (see [`team_init`] for who may append what).
    pub async fn append(&self, event: &Event) -> Result<Appended, PgError> {
        let mut client = self.client().await?;
        let result = {
            let tx = client.transaction().await?;
            match self.append_in(&tx, event).await {
                Ok(appended) => tx.commit().await.map(|()| appended).map_err(PgError::from),
                Err(error) => Err(error),
            }
        };
        match result {
            Ok(appended) => Ok(appended),
            Err(error) => Err(self.explain(&client, event, error).await),
        }
    }

    async fn append_in(&self, tx: &Transaction<'_>, event: &Event) -> Result<Appended, PgError> {
        tx.execute(TAKE_TURN, &[]).await?;
        let ticket = event.ticket();
        let current = match ticket {
            Some(ticket) => load_state(tx, ticket).await?,
            None => None,
        };
        if let Some(refusal) = current.as_ref().and_then(|s| s.refuses(event)) {
            return Err(refusal.into());
        }
        let body = serde_json::to_value(event)
            .expect("an event always serializes: its maps have string keys");
        let row = tx
            .query_one(
                "INSERT INTO desk.events (ticket, kind, body) VALUES ($1, $2, $3)
                 RETURNING seq, desk.unix_ms(at), actor",
                &[&ticket, &event.kind(), &body],
            )
            .await?;
        let (seq, at, by): (i64, i64, String) = (row.get(0), row.get(1), row.get(2));
        let state = match ticket {
            Some(ticket) => {
                let mut state = current.unwrap_or_else(|| TicketState::new(ticket));
                state.apply(event, &Stamp { by: &by, at }, &self.allow);
                let text = serde_json::to_value(&state).expect("a ticket state always serializes");
                tx.execute(
                    "INSERT INTO desk.ticket_states (ticket, seq, state) VALUES ($1, $2, $3)
                     ON CONFLICT (ticket) DO UPDATE SET seq = excluded.seq, state = excluded.state",
                    &[&ticket, &seq, &text],
                )
                .await?;
                Some(state)
            }
            None => None,
        };
        Ok(Appended {
            stored: Stored {
                seq,
                at,
                by,
                event: event.clone(),
            },
            state,
        })
    }

    /// Turns the database's refusal of `event` into one that says who holds what.
    async fn explain(&self, client: &Client, event: &Event, error: PgError) -> PgError {
        let ticket = event.ticket().unwrap_or_default().to_owned();
        let already_sent = matches!(
            (&error, event),
            (
                PgError::Refused(Refusal::AlreadySent { .. }),
                Event::Sent { .. }
            )
        );
        let PgError::Database(db) = &error else {
            if already_sent && let Ok(Some(first)) = first_send(client, &ticket).await {
                return first;
            }
            return error;
        };
        if violates(db, "needs_the_lease") || violates(db, "settles_only_unheld") {
            let holder = claims::live_claim(client, &ticket).await.ok().flatten();
            return PgError::NotHolding { ticket, holder };
        }
        if violates(db, "by_is_the_actor") {
            let body = serde_json::to_value(event).unwrap_or_default();
            return PgError::NotYou {
                by: body["by"].as_str().unwrap_or_default().to_owned(),
                person: self.person.clone(),
            };
        }
        if duplicate(db, "one_reply_per_ticket")
            && let Ok(Some(first)) = first_send(client, &ticket).await
        {
            return first;
        }
        error
    }

    /// Every ticket's state, ordered by ticket ID (tickets with no event are not listed).
    pub async fn states(&self) -> Result<Vec<TicketState>, PgError> {
        let client = self.client().await?;
        let rows = client
            .query(
                "SELECT seq, state FROM desk.ticket_states ORDER BY ticket COLLATE \"C\"",
                &[],
            )
            .await?;
        rows.iter().map(decode_state).collect()
    }

    pub async fn state(&self, ticket: &str) -> Result<Option<TicketState>, PgError> {
        let client = self.client().await?;
        let row = client
            .query_opt(
                "SELECT seq, state FROM desk.ticket_states WHERE ticket = $1",
                &[&ticket],
            )
            .await?;
        row.as_ref().map(decode_state).transpose()
    }

    /// Every event after `seq` (0: all), in the order they were committed.
    pub async fn events_after(&self, seq: i64) -> Result<Vec<Stored>, PgError> {
        self.events_page(seq, usize::MAX).await
    }

    /// The first `limit` events after `seq`, in the order they were committed: a long record
    /// read a page at a time, the next page after the last `seq` of this one.
    pub async fn events_page(&self, seq: i64, limit: usize) -> Result<Vec<Stored>, PgError> {
        let client = self.client().await?;
        events_page(&*client, seq, limit)
            .await?
            .iter()
            .map(decode_event)
            .collect()
    }

    /// One ticket's events, in order.
    pub async fn ticket_events(&self, ticket: &str) -> Result<Vec<Stored>, PgError> {
        let client = self.client().await?;
        let sql = format!("SELECT {EVENT_COLUMNS} FROM desk.events WHERE ticket = $1 ORDER BY seq");
        let rows = client.query(&sql, &[&ticket]).await?;
        rows.iter().map(decode_event).collect()
    }

    /// The sequence number of the newest event (0 when the record is empty). Seqs have gaps
    /// (an append rolled back uses one up): compare them, never count them.
    pub async fn last_seq(&self) -> Result<i64, PgError> {
        let client = self.client().await?;
        let row = client
            .query_one("SELECT COALESCE(max(seq), 0)::bigint FROM desk.events", &[])
            .await?;
        Ok(row.get(0))
    }

    /// Settles every run still under way on a ticket whose claim has run out (or that nobody
    /// claimed): its desk stopped without finishing it, so the ticket needs a person, with
    /// what the run may have done. A run whose desk still holds the claim is left alone.
    pub async fn settle_interrupted(&self) -> Result<Vec<Appended>, PgError> {
        let mut client = self.client().await?;
        let tx = client.transaction().await?;
        tx.execute(TAKE_TURN, &[]).await?;
        let rows = tx
            .query(
                "SELECT s.seq, s.state FROM desk.ticket_states s
                 LEFT JOIN desk.tickets t ON t.id = s.ticket
                 WHERE jsonb_typeof(s.state->'run') = 'object'
                   AND (t.owner IS NULL OR t.lease_until IS NULL OR t.lease_until <= now())
                 ORDER BY s.ticket COLLATE \"C\"",
                &[],
            )
            .await?;
        let interrupted: Vec<TicketState> =
            rows.iter().map(decode_state).collect::<Result<_, _>>()?;
        let mut settled = Vec::new();
        for state in interrupted {
            let event = Event::NeedsPerson {
                ticket: state.ticket.clone(),
                reason: state.interrupted_reason(&self.allow),
            };
            settled.push(self.append_in(&tx, &event).await?);
        }
        tx.commit().await?;
        Ok(settled)
    }
}

/// Who is logged in, refused unless they are on the desk's team and the record's schema is
/// one this desk knows. An administrator is refused too: row-level security does not hold
/// for superusers, so their events would be nobody's word but their own.
async fn check_team(client: &Client, target: &Target) -> Result<String, PgError> {
    let no_schema = || PgError::NoSchema {
        at: target.at.clone(),
    };
    let row = client
        .query_one(
            "SELECT current_user::text,
                    CASE WHEN EXISTS (SELECT FROM pg_roles WHERE rolname = 'desk_staff')
                         THEN pg_has_role(current_user, 'desk_staff', 'member') ELSE false END,
                    (SELECT rolsuper OR rolbypassrls FROM pg_roles WHERE rolname = current_user)",
            &[],
        )
        .await?;
    let (person, on_team, above_rules): (String, bool, Option<bool>) =
        (row.get(0), row.get(1), row.get(2));
    if above_rules == Some(true) {
        return Err(PgError::AboveTheRules {
            person,
            at: target.at.clone(),
        });
    }
    let version = client
        .query_one("SELECT max(version) FROM desk.schema_version", &[])
        .await;
    let not_on_team = || PgError::NotOnTeam {
        person: person.clone(),
        at: target.at.clone(),
    };
    let found: Option<i32> = match version {
        Ok(row) => row.get(0),
        Err(error) => {
            let code = error.code();
            return Err(if code == Some(&SqlState::INSUFFICIENT_PRIVILEGE) {
                not_on_team()
            } else if code == Some(&SqlState::INVALID_SCHEMA_NAME)
                || code == Some(&SqlState::UNDEFINED_TABLE)
            {
                no_schema()
            } else {
                error.into()
            });
        }
    };
    match found {
        None => Err(no_schema()),
        Some(found) if found > SCHEMA_VERSION => Err(PgError::NewerSchema {
            at: target.at.clone(),
            found,
            supported: SCHEMA_VERSION,
        }),
        Some(found) if found < SCHEMA_VERSION => Err(PgError::OlderSchema {
            at: target.at.clone(),
            found,
            supported: SCHEMA_VERSION,
        }),
        Some(_) if !on_team => Err(not_on_team()),
        Some(_) => Ok(person),
    }
}

async fn load_state(tx: &Transaction<'_>, ticket: &str) -> Result<Option<TicketState>, PgError> {
    let row = tx
        .query_opt(
            "SELECT seq, state FROM desk.ticket_states WHERE ticket = $1 FOR UPDATE",
            &[&ticket],
        )
        .await?;
    row.as_ref().map(decode_state).transpose()
}

/// The first (and only) send of `ticket`, as the refusal of another.
async fn first_send(client: &Client, ticket: &str) -> Result<Option<PgError>, PgError> {
    let row = client
        .query_opt(
            "SELECT actor, desk.unix_ms(at) FROM desk.events
             WHERE ticket = $1 AND kind = 'sent' ORDER BY seq LIMIT 1",
            &[&ticket],
        )
        .await?;
    Ok(row.map(|row| PgError::AlreadySent {
        ticket: ticket.to_owned(),
        by: row.get(0),
        at: row.get(1),
    }))
}

/// The rows of the first `limit` events after `seq`, in the order they were committed.
pub(crate) async fn events_page(
    client: &impl GenericClient,
    seq: i64,
    limit: usize,
) -> Result<Vec<Row>, tokio_postgres::Error> {
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let sql =
        format!("SELECT {EVENT_COLUMNS} FROM desk.events WHERE seq > $1 ORDER BY seq LIMIT $2");
    client.query(&sql, &[&seq, &limit]).await
}

pub(crate) fn decode_event(row: &Row) -> Result<Stored, PgError> {
    let seq: i64 = row.get(0);
    let event = serde_json::from_value(row.get::<_, Value>(3))
        .map_err(|source| PgError::Unreadable { seq, source })?;
    Ok(Stored {
        seq,
        at: row.get(1),
        by: row.get(2),
        event,
    })
}

fn decode_state(row: &Row) -> Result<TicketState, PgError> {
    let seq: i64 = row.get(0);
    serde_json::from_value(row.get::<_, Value>(1))
        .map_err(|source| PgError::Unreadable { seq, source })
}
