//! Approvals: a server's form that only a lead may answer, waiting in the team's record for
//! one (see `schema_2.sql`). The database decides who may do what: the person whose run asked
//! files it while holding the ticket; a lead other than them answers it, one lead at a time;
//! the asker may withdraw it. Each step is also an event on the ticket, in the same
//! transaction, so the ticket's history and its state say where the approval stands.

use std::time::Duration;

use serde_json::{Map, Value};
use tokio_postgres::{GenericClient, Row};

use super::error::violates;
use super::{PgError, PgRecord, TAKE_TURN};
use crate::record::Event;
use crate::record::store::Appended;

/// How long a lead's desk holds an approval while it sends the call's next round; a desk
/// that dies meanwhile lets go when this runs out.
pub const ANSWERING_SQL: &str = "now() + interval '2 minutes'";

/// What the asking desk files: everything a lead's desk needs to send the next round itself.
#[derive(Debug, Clone, PartialEq)]
pub struct NewApproval {
    pub ticket: String,
    pub turn: u32,
    /// The config's prefix for the server, and where the asking desk reached it.
    pub server: String,
    pub origin: String,
    /// The server's own name for the tool, and the canonical name people read.
    pub tool: String,
    pub canonical: String,
    pub arguments: Map<String, Value>,
    /// The form's key among the round's input requests, the form as the server sent it, and
    /// the server's state for the next round.
    pub request_key: String,
    pub form: Value,
    pub message: String,
    pub request_state: Option<String>,
    /// The server's task the form belongs to, when the call runs as one (schema 8).
    pub task: Option<String>,
    /// How long it waits for any lead, and then the lead it goes to (`None`: declined back to
    /// its asker); no fallback, and it waits until answered or withdrawn.
    pub fallback: Option<(Duration, Option<String>)>,
}

/// An approval as the record holds it.
#[derive(Debug, Clone, PartialEq)]
pub struct Approval {
    pub id: i64,
    pub ticket: String,
    pub turn: u32,
    pub server: String,
    pub origin: String,
    pub tool: String,
    pub arguments: Map<String, Value>,
    pub request_key: String,
    pub form: Value,
    pub request_state: Option<String>,
    /// The server's task the form belongs to, when the call runs as one.
    pub task: Option<String>,
    pub asked_by: String,
    /// Unix milliseconds.
    pub asked_at: i64,
    /// The lead whose desk is answering it now, if any.
    pub answering_by: Option<String>,
    /// `accepted`, `declined`, `cancelled`, `withdrawn` or `lapsed` once closed, with by
    /// whom.
    pub closed: Option<(String, String)>,
    /// How long it waits for any lead, and then the lead it goes to (`None`: declined).
    pub fallback: Option<(Duration, Option<String>)>,
    /// Whether its fallback has happened.
    pub fell_back: bool,
}

const COLUMNS: &str = "id, ticket, turn, server, origin, tool, arguments, request_key, form,
    request_state, asked_by, desk.unix_ms(asked_at),
    CASE WHEN answering_until > now() THEN answering_by END, closed, closed_by,
    extract(epoch FROM fallback_after)::bigint, fallback_to, fell_back_at IS NOT NULL, task_id";

/// An approval whose fallback is due now: open, not passed on yet, waited long enough, and no
/// lead's desk answering it this moment.
const DUE: &str = "closed IS NULL AND fell_back_at IS NULL AND fallback_after IS NOT NULL
    AND asked_at + fallback_after <= now()
    AND (answering_by IS NULL OR answering_until IS NULL OR answering_until <= now())";

impl PgRecord {
    /// Files `asked` for the team's leads and notes it on the ticket (whose run stops there);
    /// refused while another approval of the ticket is open, or when this desk does not hold
    /// the ticket.
    pub async fn ask_approval(&self, asked: &NewApproval) -> Result<(Approval, Appended), PgError> {
        let refused = {
            let mut client = self.client().await?;
            let tx = client.transaction().await?;
            tx.execute(TAKE_TURN, &[]).await?;
            match insert(&tx, asked).await {
                Ok(row) => {
                    let approval = decode(&row)?;
                    let event = Event::ApprovalAsked {
                        ticket: asked.ticket.clone(),
                        turn: asked.turn,
                        approval: approval.id,
                        server: asked.server.clone(),
                        tool: asked.canonical.clone(),
                        message: asked.message.clone(),
                    };
                    let appended = self.append_in(&tx, &event).await?;
                    tx.commit().await?;
                    return Ok((approval, appended));
                }
                Err(error) => error,
            }
        };
        let ticket = asked.ticket.clone();
        if super::error::duplicate(&refused, "one_open_approval_per_ticket") {
            return Err(PgError::ApprovalOpen { ticket });
        }
        if violates(&refused, "asked_by_the_holder") {
            let client = self.client().await?;
            let holder = super::claims::live_claim(&*client, &ticket).await?;
            return Err(PgError::NotHolding { ticket, holder });
        }
        Err(refused.into())
    }

    /// Carries out every fallback that is due (see `schema_6.sql`): each approval passed on
    /// to its lead, or closed as lapsed, with its event on the ticket, in one transaction
    /// each. Another desk doing the same at the same moment does each only once: the one that
    /// finds it still due does it.
    pub async fn fall_back_due(&self) -> Result<Vec<Appended>, PgError> {
        let due: Vec<i64> = {
            let client = self.client().await?;
            client
                .query(
                    &format!("SELECT id FROM desk.approvals WHERE {DUE} ORDER BY id"),
                    &[],
                )
                .await?
                .iter()
                .map(|row| row.get(0))
                .collect()
        };
        let mut done = Vec::new();
        for id in due {
            let mut client = self.client().await?;
            let tx = client.transaction().await?;
            tx.execute(TAKE_TURN, &[]).await?;
            let row = tx
                .query_opt(
                    &format!(
                        "UPDATE desk.approvals SET fell_back_at = clock_timestamp(),
                             closed = CASE WHEN fallback_to IS NULL THEN 'lapsed' END,
                             closed_by = CASE WHEN fallback_to IS NULL THEN current_user END,
                             closed_at = CASE WHEN fallback_to IS NULL THEN clock_timestamp() END
                         WHERE id = $1 AND {DUE}
                         RETURNING ticket, extract(epoch FROM fallback_after)::bigint, fallback_to"
                    ),
                    &[&id],
                )
                .await?;
            // Another desk did it first, or a lead's desk took it meanwhile.
            let Some(row) = row else {
                continue;
            };
            let secs: i64 = row.get(1);
            let event = Event::ApprovalFellBack {
                ticket: row.get(0),
                approval: id,
                after: wait_words(Duration::from_secs(u64::try_from(secs).unwrap_or(0))),
                to: row.get(2),
            };
            let appended = self.append_in(&tx, &event).await?;
            tx.commit().await?;
            done.push(appended);
        }
        Ok(done)
    }

    /// Every open approval, oldest first.
    pub async fn open_approvals(&self) -> Result<Vec<Approval>, PgError> {
        let client = self.client().await?;
        let rows = client
            .query(
                &format!("SELECT {COLUMNS} FROM desk.approvals WHERE closed IS NULL ORDER BY id"),
                &[],
            )
            .await?;
        rows.iter().map(decode).collect()
    }

    /// One approval, open or closed.
    pub async fn approval(&self, id: i64) -> Result<Approval, PgError> {
        let client = self.client().await?;
        let row = client
            .query_opt(
                &format!("SELECT {COLUMNS} FROM desk.approvals WHERE id = $1"),
                &[&id],
            )
            .await?;
        row.as_ref()
            .map(decode)
            .transpose()?
            .ok_or(PgError::NoApproval { id })
    }

    /// Holds approval `id` for this lead's desk while it sends the next round: refused, with
    /// why, when it is closed, when this person asked for it, when they are not a lead, or
    /// while another lead's desk holds it.
    pub async fn take_approval(&self, id: i64) -> Result<Approval, PgError> {
        let row = {
            let client = self.client().await?;
            client
                .query_opt(
                    &format!(
                        "UPDATE desk.approvals SET answering_by = current_user,
                             answering_until = {ANSWERING_SQL}
                         WHERE id = $1 RETURNING {COLUMNS}"
                    ),
                    &[&id],
                )
                .await
        };
        match row {
            Ok(Some(row)) => decode(&row),
            Ok(None) => Err(self.why_not_yours(id).await),
            Err(error) if violates(&error, "a_lead_answers_another") => {
                Err(self.why_not_yours(id).await)
            }
            Err(error) => Err(error.into()),
        }
    }

    /// Ends this person's hold on open approval `id` now (the policy lets a holder shorten
    /// its own hold); nothing else of it changes. Holding none is no error.
    pub async fn let_go_of_approval(&self, id: i64) -> Result<(), PgError> {
        self.client()
            .await?
            .execute(
                "UPDATE desk.approvals SET answering_until = now()
                 WHERE id = $1 AND closed IS NULL AND answering_by = current_user",
                &[&id],
            )
            .await?;
        Ok(())
    }

    /// Why this person cannot withdraw approval `id`, in words for them.
    async fn why_not_withdrawn(&self, id: i64) -> PgError {
        match self.approval(id).await {
            Ok(Approval {
                closed: Some((closed, by)),
                ..
            }) => PgError::ApprovalClosed { id, closed, by },
            Ok(Approval {
                answering_by: Some(lead),
                ..
            }) => PgError::WithdrawWhileAnswered { id, lead },
            Ok(_) => PgError::NoApproval { id },
            Err(error) => error,
        }
    }

    /// Why this person cannot answer approval `id`, in words for them.
    async fn why_not_yours(&self, id: i64) -> PgError {
        let approval = match self.approval(id).await {
            Ok(approval) => approval,
            Err(error) => return error,
        };
        if let Some((closed, by)) = approval.closed {
            return PgError::ApprovalClosed { id, closed, by };
        }
        if approval.asked_by == self.person {
            return PgError::OwnApproval { id };
        }
        if let Some(lead) = approval.answering_by {
            return PgError::ApprovalBusy { id, lead };
        }
        match self.is_lead().await {
            Ok(false) => PgError::ApprovalNotALead {
                id,
                person: self.person.clone(),
            },
            Ok(true) => PgError::ApprovalBusy {
                id,
                lead: "another lead".to_owned(),
            },
            Err(error) => error,
        }
    }

    /// Closes approval `id`, which this lead's desk holds, with the server's answer to the
    /// next round (`answered`, an [`Event::ApprovalAnswered`] by this person) on its ticket.
    pub async fn answer_approval(&self, answered: &Event) -> Result<Appended, PgError> {
        let Event::ApprovalAnswered {
            approval, action, ..
        } = answered
        else {
            panic!("answer_approval takes an approval_answered event");
        };
        let closed = match action.as_str() {
            "accept" => "accepted",
            "decline" => "declined",
            _ => "cancelled",
        };
        self.close(*approval, closed, answered).await
    }

    /// Withdraws approval `id`, which this person asked for, with why.
    pub async fn withdraw_approval(&self, id: i64, reason: &str) -> Result<Appended, PgError> {
        let approval = self.approval(id).await?;
        let event = Event::ApprovalWithdrawn {
            ticket: approval.ticket,
            approval: id,
            by: self.person.clone(),
            reason: reason.to_owned(),
        };
        self.close(id, "withdrawn", &event).await
    }

    async fn close(&self, id: i64, closed_as: &str, event: &Event) -> Result<Appended, PgError> {
        let closed = {
            let mut client = self.client().await?;
            let tx = client.transaction().await?;
            tx.execute(TAKE_TURN, &[]).await?;
            let updated = tx
                .execute(
                    "UPDATE desk.approvals SET closed = $2, closed_by = current_user,
                         closed_at = clock_timestamp()
                     WHERE id = $1 AND closed IS NULL",
                    &[&id, &closed_as],
                )
                .await;
            match updated {
                Ok(1) => {
                    let appended = self.append_in(&tx, event).await?;
                    tx.commit().await?;
                    Some(appended)
                }
                Ok(_) => None,
                Err(error)
                    if violates(&error, "a_lead_answers_another")
                        || violates(&error, "the_asker_withdraws") =>
                {
                    None
                }
                Err(error) => return Err(error.into()),
            }
        };
        match closed {
            Some(appended) => Ok(appended),
            // The connection is free again: say why in the record's own words.
            None if closed_as == "withdrawn" => Err(self.why_not_withdrawn(id).await),
            None => Err(self.why_not_yours(id).await),
        }
    }
}

/// `30m`, `2h`, `1h 30m`, `2d`: a fallback's wait in the words the config uses.
fn wait_words(after: Duration) -> String {
    let minutes = after.as_secs() / 60;
    let (days, hours, minutes) = (minutes / 1440, minutes / 60 % 24, minutes % 60);
    let parts: Vec<String> = [(days, "d"), (hours, "h"), (minutes, "m")]
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, unit)| format!("{n}{unit}"))
        .collect();
    if parts.is_empty() {
        format!("{}s", after.as_secs())
    } else {
        parts.join(" ")
    }
}

async fn insert(
    tx: &impl GenericClient,
    asked: &NewApproval,
) -> Result<Row, tokio_postgres::Error> {
    let turn = i32::try_from(asked.turn).unwrap_or(i32::MAX);
    let fallback_secs: Option<f64> = asked
        .fallback
        .as_ref()
        .map(|(after, _)| after.as_secs_f64());
    let fallback_to: Option<&str> = asked.fallback.as_ref().and_then(|(_, to)| to.as_deref());
    tx.query_one(
        &format!(
            "INSERT INTO desk.approvals (ticket, turn, server, origin, tool, arguments,
                 request_key, form, request_state, fallback_after, fallback_to, task_id)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10 * interval '1 second', $11, $12)
             RETURNING {COLUMNS}"
        ),
        &[
            &asked.ticket,
            &turn,
            &asked.server,
            &asked.origin,
            &asked.tool,
            &Value::Object(asked.arguments.clone()),
            &asked.request_key,
            &asked.form,
            &asked.request_state,
            &fallback_secs,
            &fallback_to,
            &asked.task,
        ],
    )
    .await
}

fn decode(row: &Row) -> Result<Approval, PgError> {
    let arguments = match row.get::<_, Value>(6) {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    let closed: Option<String> = row.get(13);
    let closed_by: Option<String> = row.get(14);
    let fallback_secs: Option<i64> = row.get(15);
    let fallback = fallback_secs.map(|secs| {
        (
            Duration::from_secs(u64::try_from(secs).unwrap_or(0)),
            row.get::<_, Option<String>>(16),
        )
    });
    Ok(Approval {
        id: row.get(0),
        ticket: row.get(1),
        turn: u32::try_from(row.get::<_, i32>(2)).unwrap_or(0),
        server: row.get(3),
        origin: row.get(4),
        tool: row.get(5),
        arguments,
        request_key: row.get(7),
        form: row.get(8),
        request_state: row.get(9),
        asked_by: row.get(10),
        asked_at: row.get(11),
        answering_by: row.get(12),
        closed: closed.zip(closed_by),
        fallback,
        fell_back: row.get(17),
        task: row.get(18),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wait_reads_as_the_config_writes_it() {
        assert_eq!(wait_words(Duration::from_secs(1800)), "30m");
        assert_eq!(wait_words(Duration::from_secs(5400)), "1h 30m");
        assert_eq!(wait_words(Duration::from_secs(2 * 86_400)), "2d");
        assert_eq!(wait_words(Duration::from_secs(5)), "5s");
    }
}
