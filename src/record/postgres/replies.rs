//! The team's saved replies and macros (see `schema_7.sql`): every desk of the team reads
//! them, and only leads add, change or remove one, as the database decides. A reply is kept as
//! the config writes it (`[replies.NAME]`'s fields as a JSON object); what it means, and
//! whether it is right, is for `crate::replies` to say, before it is stored and when a desk
//! loads it.

use serde_json::Value;

use super::error::violates;
use super::{PgError, PgRecord};

/// One of the team's saved replies as the record holds it.
#[derive(Debug, Clone, PartialEq)]
pub struct TeamReply {
    pub name: String,
    /// `[replies.NAME]`'s fields (text, tags, assign, note, state) as a JSON object.
    pub reply: Value,
    /// The lead who last wrote it, and when (unix milliseconds), in the database's words.
    pub changed_by: String,
    pub changed_at: i64,
}

/// The policies that keep writing them to leads: a refusal under any of them is a staff
/// member's try.
const LEADS_ONLY: [&str; 3] = ["leads_add", "leads_change", "leads_remove"];

impl PgRecord {
    /// The team's saved replies, in name order.
    pub async fn team_replies(&self) -> Result<Vec<TeamReply>, PgError> {
        let client = self.client().await?;
        let rows = client
            .query(
                "SELECT name, reply, changed_by, desk.unix_ms(changed_at)
                 FROM desk.saved_replies ORDER BY name",
                &[],
            )
            .await?;
        Ok(rows
            .iter()
            .map(|row| TeamReply {
                name: row.get(0),
                reply: row.get(1),
                changed_by: row.get(2),
                changed_at: row.get(3),
            })
            .collect())
    }

    /// Adds the team's saved reply `name`, or changes it, as this lead; refused for staff.
    pub async fn set_team_reply(&self, name: &str, reply: &Value) -> Result<(), PgError> {
        let client = self.client().await?;
        let set = client
            .execute(
                "INSERT INTO desk.saved_replies (name, reply) VALUES ($1, $2)
                 ON CONFLICT (name) DO UPDATE SET reply = EXCLUDED.reply",
                &[&name, reply],
            )
            .await;
        match set {
            Ok(_) => Ok(()),
            Err(error) if LEADS_ONLY.iter().any(|policy| violates(&error, policy)) => {
                Err(self.not_a_lead())
            }
            Err(error) => Err(error.into()),
        }
    }

    /// Removes the team's saved reply `name`, as this lead; refused for staff, and for a name
    /// the team has no reply by.
    pub async fn remove_team_reply(&self, name: &str) -> Result<(), PgError> {
        let client = self.client().await?;
        let removed = client
            .execute("DELETE FROM desk.saved_replies WHERE name = $1", &[&name])
            .await?;
        if removed == 1 {
            return Ok(());
        }
        // A staff member's delete finds no row (the policy filters it out): say which it was.
        let exists = client
            .query_opt("SELECT 1 FROM desk.saved_replies WHERE name = $1", &[&name])
            .await?
            .is_some();
        match exists {
            true => Err(self.not_a_lead()),
            false => Err(PgError::NoTeamReply {
                name: name.to_owned(),
            }),
        }
    }

    fn not_a_lead(&self) -> PgError {
        PgError::RepliesNotALead {
            person: self.person().to_owned(),
        }
    }
}
