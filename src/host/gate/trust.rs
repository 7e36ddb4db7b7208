//! Trust a person sets on a consent card: a read-only tool of one server allowed without
//! asking, for this session or always, stored with who allowed it and the definition they saw.
//!
//! A grant covers only a tool on the host's own read-only list (`[consent] read_only`, never a
//! server's annotation), and only while its definition is the one it was granted for: a tool
//! that changes, or whose server now runs elsewhere, is asked about again. "Always" grants live in `trust.json` in the data
//! directory; a person lists and revokes them in the desk.

use std::path::PathBuf;

use crate::host::api::{TrustGrant, TrustScope};

/// The grants of this desk: the file's, and this session's.
#[derive(Debug, Default)]
pub struct Trust {
    path: Option<PathBuf>,
    grants: Vec<TrustGrant>,
}

impl Trust {
    /// The "always" grants kept at `path` (none when it is missing or unreadable).
    pub fn load(path: Option<PathBuf>) -> Self {
        let grants = path
            .as_ref()
            .and_then(|p| std::fs::read_to_string(p).ok())
            .and_then(|text| serde_json::from_str::<Vec<TrustGrant>>(&text).ok())
            .unwrap_or_default()
            .into_iter()
            .filter(|g| g.scope == TrustScope::Always)
            .collect();
        Self { path, grants }
    }

    /// Adds `grant`, replacing an earlier one for the same tool.
    pub fn grant(&mut self, grant: TrustGrant) {
        self.grants.retain(|g| g.tool != grant.tool);
        self.grants.push(grant);
        self.save();
    }

    /// Removes the grant for `tool`; whether there was one.
    pub fn revoke(&mut self, tool: &str) -> bool {
        let before = self.grants.len();
        self.grants.retain(|g| g.tool != tool);
        let revoked = self.grants.len() != before;
        if revoked {
            self.save();
        }
        revoked
    }

    /// The grant that lets `tool` run unasked with this definition, from a server at
    /// `origin`, if one does.
    pub fn covering(&self, tool: &str, definition: &str, origin: &str) -> Option<&TrustGrant> {
        self.grants
            .iter()
            .find(|g| g.tool == tool && g.definition == definition && g.origin == origin)
    }

    /// Every grant, in the order they were made.
    pub fn list(&self) -> Vec<TrustGrant> {
        self.grants.clone()
    }

    fn save(&self) {
        let Some(path) = &self.path else { return };
        let always: Vec<&TrustGrant> = self
            .grants
            .iter()
            .filter(|g| g.scope == TrustScope::Always)
            .collect();
        let write = || -> std::io::Result<()> {
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir)?;
            }
            std::fs::write(path, serde_json::to_vec_pretty(&always)?)
        };
        if let Err(e) = write() {
            tracing::warn!(error = %e, path = %path.display(), "could not save the desk's trust");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grant(tool: &str, scope: TrustScope, definition: &str) -> TrustGrant {
        TrustGrant {
            tool: tool.into(),
            scope,
            by: "ana".into(),
            at: 1_780_000_000,
            definition: definition.into(),
            origin: "in-process partner".into(),
        }
    }

    #[test]
    fn a_grant_covers_its_tool_only_as_it_was_defined() {
        let mut trust = Trust::default();
        trust.grant(grant("partner.track_parcel", TrustScope::Session, "abc"));
        let here = "in-process partner";
        assert!(
            trust
                .covering("partner.track_parcel", "abc", here)
                .is_some()
        );
        assert!(
            trust
                .covering("partner.track_parcel", "changed", here)
                .is_none()
        );
        assert!(trust.covering("shop.issue_refund", "abc", here).is_none());
        assert!(trust.revoke("partner.track_parcel"));
        assert!(!trust.revoke("partner.track_parcel"));
        assert!(
            trust
                .covering("partner.track_parcel", "abc", here)
                .is_none()
        );
    }

    #[test]
    fn a_grant_covers_its_tool_only_where_its_server_ran() {
        let mut trust = Trust::default();
        trust.grant(grant("partner.track_parcel", TrustScope::Always, "abc"));
        let elsewhere = "https://parcels.example.test/mcp";
        assert!(
            trust
                .covering("partner.track_parcel", "abc", elsewhere)
                .is_none()
        );
    }

    #[test]
    fn only_always_grants_outlive_the_session() {
        let dir = tempfile::tempdir().expect("a temp dir");
        let path = dir.path().join("trust.json");
        let mut trust = Trust::load(Some(path.clone()));
        trust.grant(grant("partner.track_parcel", TrustScope::Always, "abc"));
        trust.grant(grant("shop.find_orders", TrustScope::Session, "def"));
        assert_eq!(trust.list().len(), 2);
        let again = Trust::load(Some(path));
        assert_eq!(
            again.list(),
            [grant("partner.track_parcel", TrustScope::Always, "abc")]
        );
    }
}
