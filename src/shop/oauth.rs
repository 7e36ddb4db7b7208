//! The shop as an OAuth protected resource: its protected resource metadata (RFC 9728),
//! the challenge that points a client at it, and JWT access tokens checked against the
//! issuer's published keys (signature, issuer, audience = the shop's resource, expiry).
//! The staff ID is the token's `sub`; a lead is named by a scope or a claim the shop's
//! start-up names.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::{Jwk, JwkSet};
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde::Deserialize;
use serde_json::Value;
use tokio::sync::RwLock;

use super::server::StaffId;

/// `serve shop --http … --oauth-issuer URL`: how the shop trusts an authorization server.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct OAuthArgs {
    /// Accept JWT access tokens from this authorization server (its issuer URL), checked
    /// against its published keys; static staff tokens keep working beside them.
    #[arg(long, value_name = "URL", requires = "http")]
    pub oauth_issuer: Option<String>,
    /// The shop's resource identifier, which tokens must name as their audience.
    /// Default: http://ADDR/mcp (give the public https URL behind a proxy).
    #[arg(long, value_name = "URL", requires = "oauth_issuer")]
    pub oauth_audience: Option<String>,
    /// The scope that makes a token's holder a lead.
    #[arg(long, value_name = "SCOPE", default_value = "shop:lead")]
    pub oauth_lead_scope: String,
    /// Or a claim that does: NAME=VALUE (a string claim equal to VALUE, or a list of them
    /// holding it), e.g. roles=support-lead.
    #[arg(long, value_name = "NAME=VALUE")]
    pub oauth_lead_claim: Option<String>,
    /// The scopes the shop's metadata lists for clients to ask for.
    #[arg(
        long,
        value_name = "SCOPE",
        value_delimiter = ',',
        default_value = "shop"
    )]
    pub oauth_scopes: Vec<String>,
}

/// Refetching the keys for a token signed with an unknown key at most this often.
const JWKS_REFETCH: Duration = Duration::from_secs(30);
/// Clock skew tolerated on `exp` and `nbf`.
const LEEWAY_SECS: u64 = 30;

/// The shop's trust in one authorization server.
pub struct OAuthResource {
    pub issuer: String,
    /// The shop's resource identifier: the audience its tokens must name.
    pub resource: String,
    scopes: Vec<String>,
    lead_scope: String,
    lead_claim: Option<(String, String)>,
    jwks_uri: String,
    keys: RwLock<(JwkSet, Instant)>,
    http: reqwest::Client,
}

impl std::fmt::Debug for OAuthResource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthResource")
            .field("issuer", &self.issuer)
            .field("resource", &self.resource)
            .finish()
    }
}

#[derive(Debug, Deserialize)]
struct Claims {
    sub: String,
    #[serde(default)]
    scope: Option<String>,
    #[serde(flatten)]
    other: HashMap<String, Value>,
}

impl OAuthResource {
    /// Reads the issuer's metadata and keys: at start, so a wrong issuer stops the shop
    /// with why instead of refusing every person later.
    pub async fn discover(args: &OAuthArgs, default_resource: String) -> anyhow::Result<Self> {
        let Some(issuer) = args.oauth_issuer.clone() else {
            anyhow::bail!("no --oauth-issuer");
        };
        let lead_claim = match &args.oauth_lead_claim {
            Some(pair) => Some(
                pair.split_once('=')
                    .map(|(n, v)| (n.to_owned(), v.to_owned()))
                    .ok_or_else(|| {
                        anyhow::anyhow!("--oauth-lead-claim {pair}: write NAME=VALUE")
                    })?,
            ),
            None => None,
        };
        let http = crate::tls::http_client_builder(None)?
            .timeout(Duration::from_secs(10))
            .build()?;
        let jwks_uri = jwks_uri(&http, &issuer).await?;
        let keys = fetch_keys(&http, &jwks_uri).await?;
        Ok(Self {
            resource: args.oauth_audience.clone().unwrap_or(default_resource),
            issuer,
            scopes: args.oauth_scopes.clone(),
            lead_scope: args.oauth_lead_scope.clone(),
            lead_claim,
            jwks_uri,
            keys: RwLock::new((keys, Instant::now())),
            http,
        })
    }

    /// Where the metadata is served: `/.well-known/oauth-protected-resource` followed by the
    /// resource's path (RFC 9728 §3.1).
    pub fn metadata_path(&self) -> String {
        let path = reqwest::Url::parse(&self.resource)
            .map(|url| url.path().trim_end_matches('/').to_owned())
            .unwrap_or_default();
        format!("/.well-known/oauth-protected-resource{path}")
    }

    /// The metadata's full URL, for the challenge.
    pub fn metadata_url(&self) -> String {
        match reqwest::Url::parse(&self.resource) {
            Ok(url) => format!(
                "{}{}",
                url.origin().ascii_serialization(),
                self.metadata_path()
            ),
            Err(_) => self.metadata_path(),
        }
    }

    /// The protected resource metadata document.
    pub fn metadata(&self) -> Value {
        serde_json::json!({
            "resource": self.resource,
            "authorization_servers": [self.issuer],
            "scopes_supported": self.scopes,
            "bearer_methods_supported": ["header"],
            "resource_name": super::server::SERVER_NAME,
        })
    }

    /// The `WWW-Authenticate` challenge: where the metadata is, the scopes, and the error
    /// when a token was sent and refused.
    pub fn challenge(&self, error: Option<&str>) -> String {
        let mut challenge = format!(
            "Bearer resource_metadata=\"{}\", scope=\"{}\"",
            self.metadata_url(),
            self.scopes.join(" ")
        );
        if let Some(error) = error {
            challenge.push_str(&format!(", error=\"{error}\""));
        }
        challenge
    }

    /// The staff member a valid access token names; why it is refused otherwise.
    pub async fn staff(&self, token: &str) -> Result<StaffId, String> {
        let header = jsonwebtoken::decode_header(token).map_err(|e| format!("not a JWT: {e}"))?;
        if !matches!(
            header.alg,
            Algorithm::RS256
                | Algorithm::RS384
                | Algorithm::RS512
                | Algorithm::PS256
                | Algorithm::PS384
                | Algorithm::PS512
                | Algorithm::ES256
                | Algorithm::ES384
                | Algorithm::EdDSA
        ) {
            return Err(format!("{:?} tokens are not accepted", header.alg));
        }
        let jwk = self.key(header.kid.as_deref()).await?;
        let key = DecodingKey::from_jwk(&jwk).map_err(|e| format!("the issuer's key: {e}"))?;
        let mut validation = Validation::new(header.alg);
        validation.set_issuer(&[&self.issuer]);
        validation.set_audience(&[&self.resource]);
        validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
        validation.leeway = LEEWAY_SECS;
        // jsonwebtoken checks `nbf` only when told: a token not yet valid is refused.
        validation.validate_nbf = true;
        let claims = jsonwebtoken::decode::<Claims>(token, &key, &validation)
            .map_err(|e| format!("refused: {e}"))?
            .claims;
        let lead = self.is_lead(&claims);
        Ok(StaffId {
            id: claims.sub,
            lead,
        })
    }

    fn is_lead(&self, claims: &Claims) -> bool {
        let by_scope = claims
            .scope
            .as_deref()
            .unwrap_or_default()
            .split_whitespace()
            .any(|s| s == self.lead_scope);
        let by_claim =
            self.lead_claim
                .as_ref()
                .is_some_and(|(name, value)| match claims.other.get(name) {
                    Some(Value::String(s)) => s == value,
                    Some(Value::Array(items)) => items.iter().any(|i| i.as_str() == Some(value)),
                    _ => false,
                });
        by_scope || by_claim
    }

    /// The key a token names, fetching the issuer's keys again (rate-limited) when it
    /// names one not seen yet: the issuer may have rotated them.
    async fn key(&self, kid: Option<&str>) -> Result<Jwk, String> {
        let find = |set: &JwkSet| match kid {
            Some(kid) => set.find(kid).cloned(),
            None if set.keys.len() == 1 => set.keys.first().cloned(),
            None => None,
        };
        {
            let keys = self.keys.read().await;
            if let Some(jwk) = find(&keys.0) {
                return Ok(jwk);
            }
            if keys.1.elapsed() < JWKS_REFETCH {
                return Err(format!("no key {kid:?} among the issuer's keys"));
            }
        }
        let mut keys = self.keys.write().await;
        if keys.1.elapsed() >= JWKS_REFETCH {
            match fetch_keys(&self.http, &self.jwks_uri).await {
                Ok(fresh) => *keys = (fresh, Instant::now()),
                Err(e) => tracing::warn!(error = %e, "could not fetch the issuer's keys again"),
            }
        }
        find(&keys.0).ok_or_else(|| format!("no key {kid:?} among the issuer's keys"))
    }
}

/// The issuer's `jwks_uri`, from its RFC 8414 or OpenID Connect metadata, which must name
/// the same issuer.
async fn jwks_uri(http: &reqwest::Client, issuer: &str) -> anyhow::Result<String> {
    let url = reqwest::Url::parse(issuer)
        .map_err(|e| anyhow::anyhow!("--oauth-issuer {issuer} is not a URL: {e}"))?;
    let origin = url.origin().ascii_serialization();
    let path = url.path().trim_end_matches('/');
    let candidates = [
        format!("{origin}/.well-known/oauth-authorization-server{path}"),
        format!(
            "{}/.well-known/openid-configuration",
            issuer.trim_end_matches('/')
        ),
    ];
    for candidate in &candidates {
        let Ok(response) = http.get(candidate).send().await else {
            continue;
        };
        let Ok(metadata) = response.error_for_status().map(|r| r.json::<Value>()) else {
            continue;
        };
        let Ok(metadata) = metadata.await else {
            continue;
        };
        if metadata["issuer"].as_str() != Some(issuer) {
            anyhow::bail!(
                "the metadata at {candidate} is for issuer {}, not {issuer}; give --oauth-issuer exactly as the authorization server names itself",
                metadata["issuer"]
            );
        }
        if let Some(uri) = metadata["jwks_uri"].as_str() {
            return Ok(uri.to_owned());
        }
        anyhow::bail!(
            "the metadata at {candidate} has no jwks_uri: the shop needs the issuer's keys to check its tokens"
        );
    }
    anyhow::bail!(
        "no authorization server metadata for {issuer} (tried {}); check --oauth-issuer",
        candidates.join(", ")
    )
}

async fn fetch_keys(http: &reqwest::Client, uri: &str) -> anyhow::Result<JwkSet> {
    let response = http
        .get(uri)
        .send()
        .await
        .map_err(|e| anyhow::anyhow!("fetching the issuer's keys from {uri}: {e}"))?;
    response
        .error_for_status()
        .map_err(|e| anyhow::anyhow!("fetching the issuer's keys from {uri}: {e}"))?
        .json::<JwkSet>()
        .await
        .map_err(|e| anyhow::anyhow!("the issuer's keys at {uri}: {e}"))
}
