//! The desk's record for a team, in PostgreSQL: the same append-only log of events as the
//! SQLite record ([`super::store`]), with the same rules ([`TicketState::refuses`]), shared
//! by every desk of the team. A ticket's state is folded from its events whenever it is read:
//! the database keeps no state a member could write ("sent" with no send behind it).
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
mod mail_lease;
mod replies;
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
pub use replies::TeamReply;
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
            Some(ticket) => state_in(tx, ticket, &self.allow).await?,
            None => None,
        };
        if let Some(refusal) = current.as_ref().and_then(|s| s.refuses(event)) {
            return Err(refusal.into());
        }
        let mut body = serde_json::to_value(event)
            .expect("an event always serializes: its maps have string keys");
        // jsonb holds no U+0000 (a model may write one): it is kept as U+FFFD, and the event
        // handed back is the one stored.
        let event = &match without_nul(&mut body) {
            true => serde_json::from_value(body.clone()).expect("the event just serialized"),
            false => event.clone(),
        };
        let row = tx
            .query_one(
                "INSERT INTO desk.events (ticket, kind, body) VALUES ($1, $2, $3)
                 RETURNING seq, desk.unix_ms(at), actor",
                &[&ticket, &event.kind(), &body],
            )
            .await?;
        let (seq, at, by): (i64, i64, String) = (row.get(0), row.get(1), row.get(2));
        let state = ticket.map(|ticket| {
            let mut state = current.unwrap_or_else(|| TicketState::new(ticket));
            state.apply(event, &Stamp { by: &by, at }, &self.allow);
            state
        });
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
        if violates(db, "who_assigns_whom") {
            let assignee = client
                .query_one("SELECT desk.assignee($1)", &[&ticket])
                .await
                .ok()
                .and_then(|row| row.get::<_, Option<String>>(0))
                .unwrap_or_default();
            return PgError::NotYours { ticket, assignee };
        }
        if violates(db, "assigned_to_the_team")
            && let Event::Assigned { to: Some(to), .. } = event
        {
            return PgError::NotOnTheTeam { name: to.clone() };
        }
        if duplicate(db, "one_reply_per_message")
            && let Ok(Some(first)) = first_send(client, &ticket).await
        {
            return first;
        }
        error
    }

    /// Every ticket's state, ordered by ticket ID (tickets with no event are not listed). A
    /// ticket with an event this desk cannot read is left out with a warning: one bad row
    /// costs that ticket, never the queue.
    pub async fn states(&self) -> Result<Vec<TicketState>, PgError> {
        let client = self.client().await?;
        states_in(&*client, &self.allow).await
    }

    /// One ticket's state, folded from its events; an event that cannot be read is an error.
    pub async fn state(&self, ticket: &str) -> Result<Option<TicketState>, PgError> {
        let client = self.client().await?;
        state_in(&*client, ticket, &self.allow).await
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
        // The whole log is folded once without the record's turn, so appends go on meanwhile;
        // only the tickets with a run under way are looked at again under it.
        let under_way: Vec<String> = states_in(&*client, &self.allow)
            .await?
            .into_iter()
            .filter(|s| s.run.is_some())
            .map(|s| s.ticket)
            .collect();
        if under_way.is_empty() {
            return Ok(Vec::new());
        }
        let tx = client.transaction().await?;
        tx.execute(TAKE_TURN, &[]).await?;
        let held: std::collections::BTreeSet<String> = tx
            .query(
                "SELECT id FROM desk.tickets WHERE owner IS NOT NULL AND lease_until > now()",
                &[],
            )
            .await?
            .iter()
            .map(|row| row.get(0))
            .collect();
        let mut interrupted = Vec::new();
        for ticket in under_way.iter().filter(|t| !held.contains(*t)) {
            if let Some(state) = state_in(&tx, ticket, &self.allow).await?
                && state.run.is_some()
            {
                interrupted.push(state);
            }
        }
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

/// `ticket`'s state, folded from its events in order (`None` when it has none).
async fn state_in(
    client: &impl GenericClient,
    ticket: &str,
    allow: &[String],
) -> Result<Option<TicketState>, PgError> {
    let sql = format!("SELECT {EVENT_COLUMNS} FROM desk.events WHERE ticket = $1 ORDER BY seq");
    let rows = client.query(&sql, &[&ticket]).await?;
    let mut state: Option<TicketState> = None;
    for row in &rows {
        let stored = decode_event(row)?;
        let stamp = Stamp {
            by: &stored.by,
            at: stored.at,
        };
        state
            .get_or_insert_with(|| TicketState::new(ticket))
            .apply(&stored.event, &stamp, allow);
    }
    Ok(state)
}

/// Every ticket's state, ordered by ticket ID, each folded from its events; a ticket with an
/// event that cannot be read is left out, with a warning naming it and the event.
async fn states_in(
    client: &impl GenericClient,
    allow: &[String],
) -> Result<Vec<TicketState>, PgError> {
    let sql = format!(
        "SELECT {EVENT_COLUMNS}, ticket FROM desk.events WHERE ticket IS NOT NULL
         ORDER BY ticket COLLATE \"C\", seq"
    );
    let rows = client.query(&sql, &[]).await?;
    let mut states: Vec<TicketState> = Vec::new();
    let mut unreadable: Option<String> = None;
    for row in &rows {
        let ticket: String = row.get(4);
        if unreadable.as_deref() == Some(ticket.as_str()) {
            continue;
        }
        if states.last().is_none_or(|s| s.ticket != ticket) {
            states.push(TicketState::new(&ticket));
        }
        match decode_event(row) {
            Ok(stored) => {
                let stamp = Stamp {
                    by: &stored.by,
                    at: stored.at,
                };
                if let Some(state) = states.last_mut() {
                    state.apply(&stored.event, &stamp, allow);
                }
            }
            Err(error) => {
                tracing::warn!(%ticket, %error, "a ticket's history cannot be read; it is left out of the queue until it is mended");
                states.pop();
                unreadable = Some(ticket);
            }
        }
    }
    Ok(states)
}

/// Replaces every U+0000 in the strings of `value` (which jsonb refuses) with U+FFFD;
/// whether there was one.
fn without_nul(value: &mut Value) -> bool {
    match value {
        Value::String(text) if text.contains('\0') => {
            *text = text.replace('\0', "\u{fffd}");
            true
        }
        Value::Array(items) => items
            .iter_mut()
            .fold(false, |found, v| without_nul(v) | found),
        Value::Object(map) => map
            .values_mut()
            .fold(false, |found, v| without_nul(v) | found),
        _ => false,
    }
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
