//! Claims: one person works a ticket at a time, by holding its lease. A lease runs out
//! [`LEASE`] after it was taken or last renewed, so a desk that dies lets go by itself; a
//! desk at work renews it (every 10 s or so) in short transactions.
//!
//! The database decides every claim (see `schema_1.sql`): a ticket someone else holds cannot
//! be claimed, and only a lead can take it over, which is recorded as a note on the ticket.

use std::time::Duration;

use tokio_postgres::GenericClient;

use super::{PgError, PgRecord, TAKE_TURN};
use crate::record::Event;
use crate::record::store::Appended;

/// How long a claim holds without being renewed; the database refuses longer ones.
pub const LEASE: Duration = Duration::from_secs(30);
const LEASE_SQL: &str = "now() + interval '30 seconds'";

/// Who holds a ticket, and until when (unix milliseconds).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claim {
    pub ticket: String,
    pub owner: String,
    pub until: i64,
}

/// A ticket taken over: the claim now held, from whom, and the note that says so (`None`
/// when nobody else held it, and taking it over was an ordinary claim).
#[derive(Debug, Clone, PartialEq)]
pub struct TakenOver {
    pub claim: Claim,
    pub from: Option<String>,
    pub noted: Option<Appended>,
}

impl PgRecord {
    /// Claims `ticket` for [`LEASE`] (renewing it when this person holds it already);
    /// refused, naming who holds it, while someone else does.
    pub async fn claim(&self, ticket: &str) -> Result<Claim, PgError> {
        let mut client = self.client().await?;
        let tx = client.transaction().await?;
        match claim_in(&tx, ticket).await? {
            Some(until) => {
                tx.commit().await?;
                Ok(self.claim_until(ticket, until))
            }
            None => Err(match live_claim(&tx, ticket).await? {
                Some(Claim {
                    ticket,
                    owner,
                    until,
                }) => PgError::ClaimRefused {
                    ticket,
                    owner,
                    until,
                },
                None => PgError::NotHolding {
                    ticket: ticket.to_owned(),
                    holder: None,
                },
            }),
        }
    }

    /// Renews this person's claim on `ticket` for another [`LEASE`]; refused when it ran out
    /// or someone else holds the ticket (then claim it again, if you may).
    pub async fn renew(&self, ticket: &str) -> Result<Claim, PgError> {
        let client = self.client().await?;
        let row = client
            .query_opt(
                &format!(
                    "UPDATE desk.tickets SET lease_until = {LEASE_SQL}
                     WHERE id = $1 AND owner = current_user AND lease_until > now()
                     RETURNING desk.unix_ms(lease_until)"
                ),
                &[&ticket],
            )
            .await?;
        match row {
            Some(row) => Ok(self.claim_until(ticket, row.get(0))),
            None => Err(PgError::NotHolding {
                ticket: ticket.to_owned(),
                holder: live_claim(&*client, ticket).await?,
            }),
        }
    }

    /// Lets go of `ticket` so that anyone may claim it; refused when someone else holds it.
    pub async fn release(&self, ticket: &str) -> Result<(), PgError> {
        let client = self.client().await?;
        let released = client
            .execute(
                "UPDATE desk.tickets SET lease_until = now()
                 WHERE id = $1 AND owner = current_user AND lease_until > now()",
                &[&ticket],
            )
            .await?;
        if released == 1 {
            return Ok(());
        }
        match live_claim(&*client, ticket).await? {
            Some(holder) if holder.owner != self.person => Err(PgError::NotHolding {
                ticket: ticket.to_owned(),
                holder: Some(holder),
            }),
            _ => Ok(()),
        }
    }

    /// Takes `ticket` from whoever holds it (a lead's call: anyone else is refused while the
    /// holder's claim lasts), noting on the ticket who it was taken from and why.
    pub async fn take_over(&self, ticket: &str, reason: &str) -> Result<TakenOver, PgError> {
        let mut client = self.client().await?;
        let tx = client.transaction().await?;
        // Notes queue with appends; taking the turn first keeps the locks in one order.
        tx.execute(TAKE_TURN, &[]).await?;
        tx.execute(
            "INSERT INTO desk.tickets (id) VALUES ($1) ON CONFLICT (id) DO NOTHING",
            &[&ticket],
        )
        .await?;
        // Rows this person may not change do not show FOR UPDATE: only a lead sees a held one.
        let locked = tx
            .query_opt(
                "SELECT owner, owner IS NOT NULL AND owner <> current_user AND lease_until > now()
                 FROM desk.tickets WHERE id = $1 FOR UPDATE",
                &[&ticket],
            )
            .await?;
        let from = match locked {
            None => {
                return Err(match live_claim(&tx, ticket).await? {
                    Some(Claim {
                        ticket,
                        owner,
                        until,
                    }) => PgError::NotALead {
                        ticket,
                        owner,
                        until,
                    },
                    None => PgError::NotHolding {
                        ticket: ticket.to_owned(),
                        holder: None,
                    },
                });
            }
            Some(row) if row.get::<_, bool>(1) => row.get::<_, Option<String>>(0),
            Some(_) => None,
        };
        let row = tx
            .query_one(
                &format!(
                    "UPDATE desk.tickets SET owner = current_user, lease_until = {LEASE_SQL}
                     WHERE id = $1 RETURNING desk.unix_ms(lease_until)"
                ),
                &[&ticket],
            )
            .await?;
        let claim = self.claim_until(ticket, row.get(0));
        let noted = match &from {
            Some(previous) => {
                let note = Event::Noted {
                    ticket: ticket.to_owned(),
                    by: self.person.clone(),
                    text: format!("took the ticket over from {previous}: {reason}"),
                };
                Some(self.append_in(&tx, &note).await?)
            }
            None => None,
        };
        tx.commit().await?;
        Ok(TakenOver { claim, from, noted })
    }

    /// Every claim held right now, by ticket ID.
    pub async fn owners(&self) -> Result<Vec<Claim>, PgError> {
        let client = self.client().await?;
        let rows = client
            .query(
                "SELECT id, owner, desk.unix_ms(lease_until) FROM desk.tickets
                 WHERE owner IS NOT NULL AND lease_until > now() ORDER BY id COLLATE \"C\"",
                &[],
            )
            .await?;
        Ok(rows
            .iter()
            .map(|row| Claim {
                ticket: row.get(0),
                owner: row.get(1),
                until: row.get(2),
            })
            .collect())
    }

    fn claim_until(&self, ticket: &str, until: i64) -> Claim {
        Claim {
            ticket: ticket.to_owned(),
            owner: self.person.clone(),
            until,
        }
    }
}

/// Claims `ticket` in `tx` if it is free or already this person's: when the lease ends now.
async fn claim_in(tx: &impl GenericClient, ticket: &str) -> Result<Option<i64>, PgError> {
    tx.execute(
        "INSERT INTO desk.tickets (id) VALUES ($1) ON CONFLICT (id) DO NOTHING",
        &[&ticket],
    )
    .await?;
    // Two claimers: the second waits on the row, then finds it held (READ COMMITTED re-checks
    // the WHERE on the row the first one committed).
    let row = tx
        .query_opt(
            &format!(
                "UPDATE desk.tickets SET owner = current_user, lease_until = {LEASE_SQL}
                 WHERE id = $1 AND (owner IS NULL OR owner = current_user
                                    OR lease_until IS NULL OR lease_until <= now())
                 RETURNING desk.unix_ms(lease_until)"
            ),
            &[&ticket],
        )
        .await?;
    Ok(row.map(|row| row.get(0)))
}

/// Who holds `ticket` right now, if anyone.
pub(crate) async fn live_claim(
    client: &impl GenericClient,
    ticket: &str,
) -> Result<Option<Claim>, PgError> {
    let row = client
        .query_opt(
            "SELECT id, owner, desk.unix_ms(lease_until) FROM desk.tickets
             WHERE id = $1 AND owner IS NOT NULL AND lease_until > now()",
            &[&ticket],
        )
        .await?;
    Ok(row.map(|row| Claim {
        ticket: row.get(0),
        owner: row.get(1),
        until: row.get(2),
    }))
}
