//! `[servers.X.oauth]`: who the desk says it is when it signs in to a server. Secrets are
//! named here by the environment variable that holds them, never written; the sign-in reads
//! them ([`crate::auth`]).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// `[servers.X.oauth]`: how the desk identifies itself when it signs in to that server.
/// Every key is optional; with none, the desk registers itself dynamically.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OAuthConfig {
    /// A client ID the authorization server's administrators registered for the desk.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_id: Option<String>,
    /// The environment variable holding that client's secret (a confidential client).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret_env: Option<String>,
    /// The https URL of the desk's Client ID Metadata Document, used when the
    /// authorization server says it accepts them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_metadata_url: Option<String>,
    /// Sign in as the desk itself (the client-credentials grant), never as a person: for a
    /// desk that works the queue unattended under a client of its own.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub client_credentials: bool,
    /// With `client_credentials`: a PEM private key (PKCS#8, EC P-256 or RSA) that signs the
    /// desk's client assertions (`private_key_jwt`) instead of a secret.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub private_key_file: Option<PathBuf>,
    /// Scopes to ask for instead of those the server names in its challenge and metadata.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scopes: Vec<String>,
}
