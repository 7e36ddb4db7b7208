//! Signing out at the authorization server as well as on this machine: `logout` revokes the
//! person's tokens (RFC 7009) where the authorization server offers revocation, so that a
//! grant copied off a lost machine stops working too, not only the file that held it.

use rmcp::transport::StoredCredentials;
use rmcp::transport::auth::OAuthHttpClientError;
use serde_json::Value;

use super::{SignInError, Target};

/// What revoking a grant came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Revocation {
    /// The authorization server took back the refresh token (the grant) and the access token.
    Revoked,
    /// Its metadata names no revocation endpoint: the tokens live until they expire.
    NotOffered,
}

/// Revokes `grant`, the person's grant for `target`: the refresh token first (which ends the
/// grant, RFC 7009 §2.1), then the access token, as the client the grant was issued to.
pub async fn revoke(target: &Target, grant: &StoredCredentials) -> Result<Revocation, SignInError> {
    let manager = target.manager().await?;
    let metadata = manager
        .resolve_metadata()
        .await
        .map_err(|e| target.failed(e))?
        .metadata;
    let Some(endpoint) = metadata
        .additional_fields
        .get("revocation_endpoint")
        .and_then(Value::as_str)
    else {
        return Ok(Revocation::NotOffered);
    };
    let (_, http) = target.http()?;
    let tokens = serde_json::to_value(&grant.token_response).unwrap_or_default();
    let client_id = grant.client_id.as_str();
    let basic = target
        .identity
        .client_secret
        .as_deref()
        .map(|secret| (client_id, secret));
    let failed = |e: OAuthHttpClientError| {
        let table = format!("[servers.{}]", target.prefix);
        target.other(match crate::tls::CertProblem::find(&*e) {
            Some(problem) => format!(
                "revoking at {endpoint}: {}",
                problem.advice(&table, target.ca_file.as_deref())
            ),
            None => format!("revoking at {endpoint}: {e}"),
        })
    };
    for hint in ["refresh_token", "access_token"] {
        let Some(token) = tokens[hint].as_str() else {
            continue;
        };
        let mut form = vec![("token", token), ("token_type_hint", hint)];
        if basic.is_none() {
            form.push(("client_id", client_id));
        }
        let status = http
            .post_form(endpoint, &form, basic)
            .await
            .map_err(failed)?;
        if !status.is_success() {
            return Err(target.other(format!(
                "the authorization server did not revoke the {} at {endpoint} ({status})",
                hint.replace('_', " ")
            )));
        }
    }
    Ok(Revocation::Revoked)
}
