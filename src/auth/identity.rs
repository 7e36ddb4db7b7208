//! Who the desk is to an authorization server: [`OAuthConfig`] (`[servers.X.oauth]`) with its
//! secrets read from the environment (never from the config), as a [`ClientIdentity`].

use crate::config::OAuthConfig;

/// A private key for `private_key_jwt`, and the algorithm it signs with.
#[derive(Clone)]
pub struct PrivateKey {
    pub pem: String,
    /// `ES256` or `RS256`.
    pub algorithm: String,
}

/// The desk's identity for one server, secrets resolved.
#[derive(Clone, Default)]
pub struct ClientIdentity {
    pub client_id: Option<String>,
    pub client_secret: Option<String>,
    pub metadata_url: Option<String>,
    pub scopes: Vec<String>,
    /// Sign in as the desk itself (client credentials) rather than as a person.
    pub client_credentials: bool,
    pub private_key: Option<PrivateKey>,
}

impl std::fmt::Debug for ClientIdentity {
    // Never print a secret or a key.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientIdentity")
            .field("client_id", &self.client_id)
            .field("client_secret", &self.client_secret.as_ref().map(|_| "…"))
            .field("metadata_url", &self.metadata_url)
            .field("scopes", &self.scopes)
            .field("client_credentials", &self.client_credentials)
            .field(
                "private_key",
                &self.private_key.as_ref().map(|k| &k.algorithm),
            )
            .finish()
    }
}

impl ClientIdentity {
    /// The identity a server's `oauth` table describes; `env` reads the secret's variable.
    pub fn from_config(
        prefix: &str,
        config: Option<&OAuthConfig>,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Self, String> {
        let Some(config) = config else {
            return Ok(Self::default());
        };
        let client_secret = match &config.client_secret_env {
            Some(var) => Some(env(var).ok_or_else(|| {
                format!(
                    "[servers.{prefix}.oauth] takes the client secret from {var}, which is not set"
                )
            })?),
            None => None,
        };
        if client_secret.is_some() && config.client_id.is_none() {
            return Err(format!(
                "[servers.{prefix}.oauth] has client_secret_env but no client_id; a secret belongs to a registered client"
            ));
        }
        let private_key = match &config.private_key_file {
            Some(path) => Some(read_private_key(prefix, path)?),
            None => None,
        };
        Ok(Self {
            client_id: config.client_id.clone(),
            client_secret,
            metadata_url: config.client_metadata_url.clone(),
            scopes: config.scopes.clone(),
            client_credentials: config.client_credentials,
            private_key,
        })
    }
}

fn read_private_key(prefix: &str, path: &std::path::Path) -> Result<PrivateKey, String> {
    let pem = std::fs::read_to_string(path).map_err(|e| {
        format!(
            "[servers.{prefix}.oauth] private_key_file {}: {e}",
            path.display()
        )
    })?;
    let algorithm = if jsonwebtoken::EncodingKey::from_ec_pem(pem.as_bytes()).is_ok() {
        "ES256"
    } else if jsonwebtoken::EncodingKey::from_rsa_pem(pem.as_bytes()).is_ok() {
        "RS256"
    } else {
        return Err(format!(
            "[servers.{prefix}.oauth] private_key_file {} is not a PKCS#8 PEM EC P-256 or RSA private key",
            path.display()
        ));
    };
    Ok(PrivateKey {
        pem,
        algorithm: algorithm.to_owned(),
    })
}
