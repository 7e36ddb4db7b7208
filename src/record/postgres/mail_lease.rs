//! The team's mailbox lease: one desk (or `mail serve`) reads a mailbox at a time. The
//! lease runs out [`super::claims::LEASE`] after it was taken or renewed, so a reader that
//! dies lets go by itself and another takes over within the lease; the database decides who
//! holds it (see `schema_4.sql`) and refuses mail from anyone else.

use super::{PgError, PgRecord};

impl PgRecord {
    /// Takes or renews the lease on `mailbox` for this person: whether they hold it now
    /// (`false` while another's lease lasts), and who does.
    pub async fn hold_mailbox(&self, mailbox: &str) -> Result<(bool, String), PgError> {
        let mut client = self.client().await?;
        let tx = client.transaction().await?;
        let row = tx
            .query_opt(
                "SELECT holder, lease_until > now() FROM desk.mail_lease
                 WHERE mailbox = $1 FOR UPDATE",
                &[&mailbox],
            )
            .await?;
        let held = match row {
            None => {
                tx.execute(
                    "INSERT INTO desk.mail_lease (mailbox, holder, lease_until)
                     VALUES ($1, current_user, now() + interval '30 seconds')
                     ON CONFLICT (mailbox) DO NOTHING",
                    &[&mailbox],
                )
                .await?
                    == 1
            }
            Some(row) => {
                let (holder, live): (String, bool) = (row.get(0), row.get(1));
                if live && holder != self.person() {
                    return Ok((false, holder));
                }
                tx.execute(
                    "UPDATE desk.mail_lease SET holder = current_user,
                         lease_until = now() + interval '30 seconds'
                     WHERE mailbox = $1",
                    &[&mailbox],
                )
                .await?
                    == 1
            }
        };
        tx.commit().await?;
        Ok((held, self.person().to_owned()))
    }

    /// Lets `mailbox` go at once (a reader that stops cleanly), if this person holds it.
    pub async fn let_go_of_mailbox(&self, mailbox: &str) -> Result<(), PgError> {
        let client = self.client().await?;
        client
            .execute(
                "UPDATE desk.mail_lease SET lease_until = now()
                 WHERE mailbox = $1 AND holder = current_user",
                &[&mailbox],
            )
            .await?;
        Ok(())
    }
}
