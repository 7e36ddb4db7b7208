//! The HTTP client of a server that may ask the desk to sign in: rmcp's [`AuthClient`]
//! (tokens from the person's grant, refreshed before they expire, one silent refresh when a
//! token is refused), wrapped so that a 401, or a 403 `insufficient_scope`, either starts a
//! sign-in and sends the request again ([`SignInPolicy::Ask`]) or comes back at once for the
//! caller to say which command signs in ([`SignInPolicy::Refuse`]: the desk at start-up and
//! headless runs, which must never wait for a browser nobody opens).

use std::collections::HashMap;
use std::sync::Arc;

use axum::http::{HeaderName, HeaderValue};
use futures_core::stream::BoxStream;
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::AuthClient;
use rmcp::transport::auth::AuthError;
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};
use tokio::sync::Mutex;

use super::{Target, Visitor, sign_in};

/// What a server's request for a sign-in leads to.
#[derive(Clone, Default)]
pub enum SignInPolicy {
    /// Say so at once; a person signs in with `support-desk login PREFIX`.
    #[default]
    Refuse,
    /// Sign in through this visitor, then send the request again.
    Ask(Arc<dyn Visitor>),
}

/// Sign-ins one request may cause: the first, and one step-up (at most three
/// authorizations in all, counting one a 401 earlier in the session caused).
const SIGN_INS_PER_REQUEST: u32 = 2;

type Error = StreamableHttpError<reqwest::Error>;

/// [`AuthClient`] that signs in when the server asks, as its [`SignInPolicy`] says.
#[derive(Clone)]
pub struct SigningClient {
    inner: AuthClient<reqwest::Client>,
    target: Arc<Target>,
    policy: SignInPolicy,
    /// Counts completed sign-ins; held while one runs, so concurrent requests that were
    /// refused together cause one sign-in, not one each.
    signed_in: Arc<Mutex<u64>>,
}

impl SigningClient {
    /// A client for `target`'s server over `http`, with the person's stored grant when
    /// there is one (its authorization server's metadata looked up again, for refreshes).
    pub async fn new(
        http: reqwest::Client,
        target: Target,
        policy: SignInPolicy,
    ) -> Result<Self, super::SignInError> {
        let mut manager = target.manager().await?;
        if target.store.read().ok().flatten().is_some() {
            match manager.initialize_from_store().await {
                Ok(_) => {}
                Err(e) => {
                    tracing::warn!(server = %target.prefix, error = %e, "the stored sign-in could not be restored; the server will ask again");
                    manager = target.manager().await?;
                }
            }
            if let (Some(id), Some(secret)) =
                (&target.identity.client_id, &target.identity.client_secret)
            {
                let config = rmcp::transport::auth::OAuthClientConfig::new(
                    id.clone(),
                    "http://127.0.0.1/callback",
                )
                .with_client_secret(secret.clone());
                let _ = manager.configure_client(config);
            }
        }
        Ok(Self {
            inner: AuthClient::new(http, manager),
            target: Arc::new(target),
            policy,
            signed_in: Arc::new(Mutex::new(0)),
        })
    }

    /// Sends with `call` (token from the grant), signing in when the server asks and the
    /// policy allows, then sending again.
    async fn signing<T, F, Fut>(&self, call: F) -> Result<T, Error>
    where
        F: Fn() -> Fut,
        Fut: Future<Output = Result<T, Error>>,
    {
        let mut sign_ins = 0;
        loop {
            let seen = *self.signed_in.lock().await;
            let result = call().await;
            let challenge = match &result {
                Err(StreamableHttpError::AuthRequired(e)) => e.www_authenticate_header.clone(),
                Err(StreamableHttpError::InsufficientScope(e)) => e.www_authenticate_header.clone(),
                _ => return result,
            };
            let SignInPolicy::Ask(visitor) = &self.policy else {
                return result;
            };
            if sign_ins >= SIGN_INS_PER_REQUEST {
                tracing::warn!(server = %self.target.prefix, "the server still refuses after {sign_ins} sign-ins; giving up on this request");
                return result;
            }
            sign_ins += 1;
            self.sign_in_once(seen, &challenge, visitor.as_ref())
                .await?;
        }
    }

    /// Signs in unless another request did since `seen`.
    async fn sign_in_once(
        &self,
        seen: u64,
        challenge: &str,
        visitor: &dyn Visitor,
    ) -> Result<(), Error> {
        let mut count = self.signed_in.lock().await;
        if *count != seen {
            return Ok(());
        }
        let manager = sign_in(&self.target, Some(challenge), visitor)
            .await
            .map_err(|e| {
                StreamableHttpError::Auth(AuthError::AuthorizationFailed(e.to_string()))
            })?;
        *self.inner.auth_manager.lock().await = manager;
        *count += 1;
        Ok(())
    }
}

impl StreamableHttpClient for SigningClient {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, Error> {
        self.signing(|| {
            self.inner.post_message(
                uri.clone(),
                message.clone(),
                session_id.clone(),
                auth_header.clone(),
                custom_headers.clone(),
            )
        })
        .await
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<StreamableHttpPostResponse, Error> {
        self.signing(|| {
            self.inner.post_message_with_max_sse_event_size(
                uri.clone(),
                message.clone(),
                session_id.clone(),
                auth_header.clone(),
                custom_headers.clone(),
                max_sse_event_size,
            )
        })
        .await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, Error> {
        self.signing(|| {
            self.inner.post_message_with_response_limits(
                uri.clone(),
                message.clone(),
                session_id.clone(),
                auth_header.clone(),
                custom_headers.clone(),
                limits,
            )
        })
        .await
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), Error> {
        // Ending a session never starts a sign-in.
        self.inner
            .delete_session(uri, session_id, auth_header, custom_headers)
            .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<BoxStream<'static, Result<sse_stream::Sse, SseError>>, Error> {
        self.signing(|| {
            self.inner.get_stream(
                uri.clone(),
                session_id.clone(),
                last_event_id.clone(),
                auth_header.clone(),
                custom_headers.clone(),
            )
        })
        .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<BoxStream<'static, Result<sse_stream::Sse, SseError>>, Error> {
        self.signing(|| {
            self.inner.get_stream_with_max_sse_event_size(
                uri.clone(),
                session_id.clone(),
                last_event_id.clone(),
                auth_header.clone(),
                custom_headers.clone(),
                max_sse_event_size,
            )
        })
        .await
    }
}
