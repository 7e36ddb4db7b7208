//! The lead's report on the desk: computed from the record this desk writes to (on a team,
//! the whole team's), with the config's targets, as of now.

use crate::host::api::Report;
use crate::host::core::Host;

impl Host {
    /// The lead's report as the record stands now.
    pub async fn lead_report(&self) -> Result<Report, String> {
        let sla = match &self.config.sla {
            Some(sla) => Some(
                sla.build()
                    .map_err(|e| format!("[sla] in the config: {e}"))?,
            ),
            None => None,
        };
        let tickets = self
            .tickets
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        let settings = crate::report::Settings::new(
            &self.config,
            sla.as_ref(),
            &tickets,
            crate::clock::unix_ms(),
        );
        crate::report::read(&self.record, &settings)
            .await
            .map_err(|e| {
                format!("reading the record: {e}; try again, or run `support-desk report`")
            })
    }
}
