//! One sign-in: discovery from the server's challenge, the client's identity, the grant
//! (authorization code with PKCE through a [`Visitor`], or client credentials), and the
//! grant saved to the person's [`GrantStore`].

use rmcp::transport::auth::{
    AuthError, AuthorizationCallback, AuthorizationRequest, ClientCredentialsConfig, OAuthState,
    OAuthTokenResponse,
};
use rmcp::transport::{
    AuthorizationManager, CredentialStore as _, StoredCredentials, WWWAuthenticateParams,
};

use std::path::PathBuf;
use std::sync::Arc;

use super::http::SignInHttp;
use super::{ClientIdentity, GrantStore, PrivateKey, Visitor};

/// The name the desk registers itself under.
pub const CLIENT_NAME: &str = "Support Desk";

/// A server to sign in to, and who signs in.
#[derive(Debug, Clone)]
pub struct Target {
    pub prefix: String,
    pub url: String,
    pub identity: ClientIdentity,
    pub store: GrantStore,
    /// The CA the config trusts for this server (its `ca_file`), trusted for its sign-in too.
    pub ca_file: Option<PathBuf>,
}

#[derive(Debug, thiserror::Error)]
pub enum SignInError {
    #[error("signing in to '{prefix}' failed: {}", self.detail())]
    Auth {
        prefix: String,
        #[source]
        source: Box<AuthError>,
        /// What to do, when a certificate was refused on the way.
        advice: Option<String>,
    },
    #[error("signing in: {0}")]
    Visit(String),
    #[error("signing in to '{prefix}': {message}")]
    Other { prefix: String, message: String },
}

impl SignInError {
    /// What went wrong, without the words that say it was a sign-in (for `logout`, which
    /// says what it was doing itself).
    pub fn detail(&self) -> String {
        match self {
            SignInError::Auth { source, advice, .. } => match advice {
                Some(advice) => format!("{source}: {advice}"),
                None => source.to_string(),
            },
            SignInError::Visit(message) | SignInError::Other { message, .. } => message.clone(),
        }
    }
}

impl Target {
    /// The server `prefix` as the config describes it, with the person's grant in
    /// `data_dir`; `None` for a server not reached over HTTP.
    pub fn for_server(
        prefix: &str,
        server: &crate::config::ServerConfig,
        data_dir: &std::path::Path,
    ) -> Result<Option<Self>, String> {
        let Some(url) = &server.url else {
            return Ok(None);
        };
        let identity = ClientIdentity::from_config(prefix, server.oauth.as_ref(), |var| {
            std::env::var(var).ok()
        })?;
        Ok(Some(Self {
            prefix: prefix.to_owned(),
            url: url.clone(),
            identity,
            store: GrantStore::new(data_dir, prefix, url),
            ca_file: server.ca_file.clone(),
        }))
    }

    pub(super) fn failed(&self, source: AuthError) -> SignInError {
        let advice = crate::tls::CertProblem::find(&source).map(|problem| {
            problem.advice(
                &format!("[servers.{}]", self.prefix),
                self.ca_file.as_deref(),
            )
        });
        SignInError::Auth {
            prefix: self.prefix.clone(),
            source: Box::new(source),
            advice,
        }
    }

    pub(super) fn other(&self, message: impl Into<String>) -> SignInError {
        SignInError::Other {
            prefix: self.prefix.clone(),
            message: message.into(),
        }
    }

    /// The server's URL, and the desk's own client for its sign-in (trusting its `ca_file`).
    pub(super) fn http(&self) -> Result<(reqwest::Url, Arc<SignInHttp>), SignInError> {
        let url = reqwest::Url::parse(&self.url)
            .map_err(|e| self.other(format!("its URL {} is not one: {e}", self.url)))?;
        let http = SignInHttp::new(&url, self.ca_file.as_deref())
            .map_err(|e| self.other(e.to_string()))?;
        Ok((url, http))
    }

    /// A manager for this server that keeps its grant in the person's store. A server with a
    /// `ca_file` is signed in to through the desk's own client, which trusts that CA.
    pub async fn manager(&self) -> Result<AuthorizationManager, SignInError> {
        // rmcp builds its own HTTP clients for the authorization server: on the desk's ring.
        crate::tls::install_default_provider();
        let manager = match &self.ca_file {
            None => AuthorizationManager::new(self.url.as_str()).await,
            Some(_) => {
                let (url, http) = self.http()?;
                AuthorizationManager::new_with_oauth_http_client(url, http).await
            }
        };
        let mut manager = manager.map_err(|e| self.failed(e))?;
        manager.set_credential_store(self.store.clone());
        Ok(manager)
    }
}

/// Signs in to `target`, whose server answered with `challenge` (its `WWW-Authenticate`,
/// when it sent one). A challenge with `error="insufficient_scope"` asks for the scopes
/// already granted and those it names. The grant is saved before this returns.
pub async fn sign_in(
    target: &Target,
    challenge: Option<&str>,
    visitor: &dyn Visitor,
) -> Result<AuthorizationManager, SignInError> {
    if target.identity.client_credentials {
        return client_credentials(target, challenge).await;
    }
    let mut oauth = OAuthState::Unauthorized(target.manager().await?);
    let identity = &target.identity;
    let mut request =
        AuthorizationRequest::new(visitor.redirect_uri()).with_client_name(CLIENT_NAME);
    if let Some(url) = &identity.metadata_url {
        request = request.with_client_metadata_url(url);
    }
    if let Some(id) = &identity.client_id {
        request = request.with_preregistered_client(id);
        if let Some(secret) = &identity.client_secret {
            request = request.with_client_secret(secret);
        }
    }
    let scopes = scopes_for(target, challenge);
    if !scopes.is_empty() {
        request = request.with_scopes(scopes.iter().map(String::as_str));
    }
    if let Some(challenge) = challenge {
        request = request.with_challenge(challenge);
    }
    oauth
        .start_authorization(request)
        .await
        .map_err(|e| target.failed(e))?;
    let url = oauth
        .get_authorization_url()
        .await
        .map_err(|e| target.failed(e))?;
    let back = visitor.visit(&url).await?;
    let callback =
        AuthorizationCallback::from_redirect_url(&back).map_err(|e| match refusal(&back) {
            Some(why) => target.other(format!("the authorization server refused: {why}")),
            None => target.failed(e),
        })?;
    oauth
        .handle_callback_with_issuer(
            &callback.code,
            &callback.csrf_token,
            callback.issuer.as_deref(),
        )
        .await
        .map_err(|e| target.failed(e))?;
    let manager = oauth
        .into_authorization_manager()
        .ok_or_else(|| target.other("the authorization did not complete"))?;
    tracing::info!(server = %target.prefix, "signed in");
    Ok(manager)
}

/// The scopes to ask for: the config's, or on a step-up (`insufficient_scope`) those
/// already granted and those the challenge names; otherwise none, and rmcp picks them from
/// the challenge and the metadata.
fn scopes_for(target: &Target, challenge: Option<&str>) -> Vec<String> {
    if !target.identity.scopes.is_empty() {
        return target.identity.scopes.clone();
    }
    let Some(challenge) = challenge else {
        return vec![];
    };
    let Ok(url) = reqwest::Url::parse(&target.url) else {
        return vec![];
    };
    let params = WWWAuthenticateParams::parse(challenge, &url);
    if !params.is_insufficient_scope() {
        return vec![];
    }
    let mut scopes: Vec<String> = target
        .store
        .read()
        .ok()
        .flatten()
        .map(|grant| grant.granted_scopes)
        .unwrap_or_default();
    for scope in params
        .scope
        .as_deref()
        .unwrap_or_default()
        .split_whitespace()
    {
        if !scopes.iter().any(|s| s == scope) {
            scopes.push(scope.to_owned());
        }
    }
    scopes
}

/// `error` and `error_description` of a redirect that carries no code.
fn refusal(back: &str) -> Option<String> {
    let url = reqwest::Url::parse(back).ok()?;
    let pairs: std::collections::BTreeMap<_, _> = url.query_pairs().collect();
    let error = pairs.get("error")?;
    Some(match pairs.get("error_description") {
        Some(description) => format!("{error} ({description})"),
        None => error.to_string(),
    })
}

/// The client-credentials grant: the desk signs in as itself, with its secret or a signed
/// client assertion (`private_key_jwt`).
async fn client_credentials(
    target: &Target,
    challenge: Option<&str>,
) -> Result<AuthorizationManager, SignInError> {
    let identity = &target.identity;
    let Some(client_id) = identity.client_id.clone() else {
        return Err(target.other(
            "client_credentials needs the client_id the authorization server registered for the desk",
        ));
    };
    if let Some(key) = &identity.private_key {
        return private_key_jwt(target, challenge, &client_id, key).await;
    }
    let Some(client_secret) = identity.client_secret.clone() else {
        return Err(target.other(
            "client_credentials needs client_secret_env or private_key_file under [servers.*.oauth]",
        ));
    };
    let mut oauth = OAuthState::Unauthorized(target.manager().await?);
    let config = ClientCredentialsConfig::ClientSecret {
        client_id,
        client_secret,
        scopes: identity.scopes.clone(),
        resource: Some(target.url.clone()),
    };
    oauth
        .authenticate_client_credentials(config)
        .await
        .map_err(|e| target.failed(e))?;
    oauth
        .into_authorization_manager()
        .ok_or_else(|| target.other("the client-credentials grant did not complete"))
}

/// Client credentials with a JWT assertion signed by the desk's key (RFC 7523): `iss` and
/// `sub` are the client, `aud` the authorization server's issuer.
async fn private_key_jwt(
    target: &Target,
    challenge: Option<&str>,
    client_id: &str,
    key: &PrivateKey,
) -> Result<AuthorizationManager, SignInError> {
    let mut manager = target.manager().await?;
    let metadata = manager
        .resolve_metadata_from_challenge(challenge)
        .await
        .map_err(|e| target.failed(e))?
        .metadata;
    let audience = metadata
        .issuer
        .clone()
        .unwrap_or_else(|| metadata.authorization_endpoint.clone());
    let assertion = client_assertion(client_id, &audience, key).map_err(|e| target.other(e))?;
    let mut form = vec![
        ("grant_type", "client_credentials".to_owned()),
        (
            "client_assertion_type",
            "urn:ietf:params:oauth:client-assertion-type:jwt-bearer".to_owned(),
        ),
        ("client_assertion", assertion),
        ("resource", target.url.clone()),
    ];
    if !target.identity.scopes.is_empty() {
        form.push(("scope", target.identity.scopes.join(" ")));
    }
    let body = form_urlencoded::Serializer::new(String::new())
        .extend_pairs(&form)
        .finish();
    let response = reqwest::Client::new()
        .post(&metadata.token_endpoint)
        .header(
            reqwest::header::CONTENT_TYPE,
            "application/x-www-form-urlencoded",
        )
        .body(body)
        .send()
        .await
        .map_err(|e| target.other(format!("the token endpoint: {e}")))?;
    let status = response.status();
    let body = response
        .text()
        .await
        .map_err(|e| target.other(format!("the token endpoint: {e}")))?;
    if !status.is_success() {
        return Err(target.other(format!(
            "the token endpoint refused the desk's client assertion ({status}): {}",
            body.chars().take(300).collect::<String>()
        )));
    }
    let token: OAuthTokenResponse = serde_json::from_str(&body)
        .map_err(|e| target.other(format!("the token endpoint's answer: {e}")))?;
    let granted = serde_json::to_value(&token).unwrap_or_default()["scope"]
        .as_str()
        .unwrap_or_default()
        .split_whitespace()
        .map(str::to_owned)
        .collect();
    let stored = StoredCredentials::new(client_id.to_owned(), Some(token), granted, Some(now()))
        .with_issuer(metadata.issuer.clone());
    target
        .store
        .save(stored)
        .await
        .map_err(|e| target.failed(e))?;
    manager.set_metadata(metadata);
    Ok(manager)
}

fn client_assertion(client_id: &str, audience: &str, key: &PrivateKey) -> Result<String, String> {
    let (algorithm, encoding) = match key.algorithm.as_str() {
        "ES256" => (
            jsonwebtoken::Algorithm::ES256,
            jsonwebtoken::EncodingKey::from_ec_pem(key.pem.as_bytes()),
        ),
        _ => (
            jsonwebtoken::Algorithm::RS256,
            jsonwebtoken::EncodingKey::from_rsa_pem(key.pem.as_bytes()),
        ),
    };
    let encoding = encoding.map_err(|e| format!("the desk's private key: {e}"))?;
    let issued = now();
    let claims = serde_json::json!({
        "iss": client_id, "sub": client_id, "aud": audience,
        "iat": issued, "exp": issued + 300,
        "jti": hex::encode(rand::random::<[u8; 16]>()),
    });
    jsonwebtoken::encode(&jsonwebtoken::Header::new(algorithm), &claims, &encoding)
        .map_err(|e| format!("signing the client assertion: {e}"))
}

fn now() -> u64 {
    u64::try_from(crate::clock::unix_secs()).unwrap_or_default()
}

/// The challenge the server at `url` answers an unauthenticated request with, if it asks
/// for a sign-in at all (`login` starts from it, as the desk does on a 401).
pub async fn challenge_of(url: &str, http: &reqwest::Client) -> Result<Option<String>, String> {
    let body = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover",
        "params": {"supportedVersions": ["2026-07-28"]}});
    let response = http
        .post(url)
        .header(
            reqwest::header::ACCEPT,
            "application/json, text/event-stream",
        )
        .header("MCP-Protocol-Version", "2026-07-28")
        .json(&body)
        .send()
        .await
        .map_err(|e| format!("cannot reach {url}: {e}"))?;
    Ok(response
        .headers()
        .get(reqwest::header::WWW_AUTHENTICATE)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned))
}
