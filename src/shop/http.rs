//! The shop's server over Streamable HTTP, for staff reaching one shared shop.
//!
//! Every request needs a bearer token: a static staff token, or with `--oauth-issuer` an
//! access token from that authorization server ([`OAuthResource`]). The token's owner becomes
//! the [`StaffId`] the tools record (who issued or released a refund). The server never takes
//! the acting person from a tool argument.

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

use super::oauth::OAuthResource;
use super::server::{SERVER_NAME, ShopServer, StaffId};

/// The environment variable holding `staff-id=token` pairs, comma-separated.
pub const TOKENS_ENV: &str = "SHOP_STAFF_TOKENS";

/// Bearer tokens and the staff member each belongs to.
#[derive(Clone, Default)]
pub struct StaffTokens {
    by_token: BTreeMap<String, StaffId>,
}

impl std::fmt::Debug for StaffTokens {
    // Never print the tokens themselves.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StaffTokens")
            .field(
                "staff",
                &self.by_token.values().map(|s| &s.id).collect::<Vec<_>>(),
            )
            .finish()
    }
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum TokensError {
    #[error(
        "{TOKENS_ENV} is empty: set it to staff-id=token pairs, e.g. staff-0007=<a long random token>"
    )]
    Empty,
    #[error("{TOKENS_ENV} entry {0} is not staff-id=token")]
    Malformed(usize),
    #[error("{TOKENS_ENV} entry {0} has a token shorter than 16 characters; use a long random one")]
    Short(usize),
    #[error(
        "the staff roster is not valid TOML ({0}); write [[staff]] tables with id, role and token_env"
    )]
    Roster(String),
    #[error("the staff roster's {id} has role \"{role}\"; a role is staff or lead")]
    Role { id: String, role: String },
    #[error("the staff roster's {id} takes its token from {var}, which is not set")]
    Unset { id: String, var: String },
    #[error(
        "the staff roster's {id} has a token shorter than 16 characters (in {var}); use a long random one"
    )]
    ShortIn { id: String, var: String },
}

impl StaffTokens {
    /// Reads `staff-0007=token,lead-0002=token:lead`: each staff ID with its token, and
    /// `:lead` after the token for a lead.
    pub fn parse(text: &str) -> Result<Self, TokensError> {
        let mut by_token = BTreeMap::new();
        for (index, entry) in text
            .split(',')
            .map(str::trim)
            .filter(|e| !e.is_empty())
            .enumerate()
        {
            let (staff, token) = entry
                .split_once('=')
                .ok_or(TokensError::Malformed(index + 1))?;
            let (staff, token) = (staff.trim(), token.trim());
            let (token, lead) = match token.strip_suffix(":lead") {
                Some(token) => (token, true),
                None => (token, false),
            };
            if staff.is_empty() {
                return Err(TokensError::Malformed(index + 1));
            }
            if token.len() < 16 {
                return Err(TokensError::Short(index + 1));
            }
            by_token.insert(
                token.to_owned(),
                StaffId {
                    id: staff.to_owned(),
                    lead,
                },
            );
        }
        if by_token.is_empty() {
            return Err(TokensError::Empty);
        }
        Ok(Self { by_token })
    }

    /// The roster in a file (`--staff FILE`): `[[staff]]` tables of `id`, `role` (`staff` or
    /// `lead`) and `token_env`, the variable `env` reads the token from. Tokens never sit in
    /// the file.
    pub fn from_roster(
        text: &str,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Self, TokensError> {
        #[derive(serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Roster {
            staff: Vec<Member>,
        }
        #[derive(serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Member {
            id: String,
            role: String,
            token_env: String,
        }
        let roster: Roster =
            toml::from_str(text).map_err(|e| TokensError::Roster(e.message().to_owned()))?;
        let mut by_token = BTreeMap::new();
        for member in roster.staff {
            let lead = match member.role.as_str() {
                "lead" => true,
                "staff" => false,
                _ => {
                    return Err(TokensError::Role {
                        id: member.id,
                        role: member.role,
                    });
                }
            };
            let var = member.token_env;
            let token = env(&var).ok_or_else(|| TokensError::Unset {
                id: member.id.clone(),
                var: var.clone(),
            })?;
            if token.trim().len() < 16 {
                return Err(TokensError::ShortIn { id: member.id, var });
            }
            by_token.insert(
                token.trim().to_owned(),
                StaffId {
                    id: member.id,
                    lead,
                },
            );
        }
        if by_token.is_empty() {
            return Err(TokensError::Empty);
        }
        Ok(Self { by_token })
    }

    /// No static tokens at all: with an authorization server, every person signs in.
    pub fn none() -> Self {
        Self::default()
    }

    /// The staff member whose token this is. Compares against every token in full, so the
    /// time taken says nothing about how close a guess was.
    fn staff(&self, presented: &str) -> Option<&StaffId> {
        let mut found = None;
        for (token, staff) in &self.by_token {
            if constant_time_eq(token.as_bytes(), presented.as_bytes()) {
                found = Some(staff);
            }
        }
        found
    }
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Who may call the shop: the static staff tokens, and the authorization server whose
/// access tokens it accepts.
#[derive(Debug, Default)]
pub struct Access {
    pub tokens: StaffTokens,
    pub oauth: Option<Arc<OAuthResource>>,
}

impl From<StaffTokens> for Access {
    fn from(tokens: StaffTokens) -> Self {
        Self {
            tokens,
            oauth: None,
        }
    }
}

/// The axum app: the MCP endpoint at `/mcp` behind the token check, and with an
/// authorization server the protected resource metadata, which anyone may read.
pub fn router(
    server: ShopServer,
    access: impl Into<Access>,
    shutdown: CancellationToken,
) -> axum::Router {
    let access = Arc::new(access.into());
    let service: StreamableHttpService<ShopServer, LocalSessionManager> =
        StreamableHttpService::new(
            move || Ok(server.clone()),
            Default::default(),
            StreamableHttpServerConfig::default().with_cancellation_token(shutdown.child_token()),
        );
    let mcp = axum::Router::new().nest_service("/mcp", service).layer(
        axum::middleware::from_fn_with_state(access.clone(), require_staff_token),
    );
    let Some(oauth) = access.oauth.clone() else {
        return mcp;
    };
    let metadata = axum::Json(oauth.metadata());
    let serve_metadata = move || {
        let metadata = metadata.clone();
        async move { metadata }
    };
    axum::Router::new()
        .route(
            &oauth.metadata_path(),
            axum::routing::get(serve_metadata.clone()),
        )
        .route(
            "/.well-known/oauth-protected-resource",
            axum::routing::get(serve_metadata),
        )
        .merge(mcp)
}

/// Serves the shop on `listener` until `shutdown` fires.
pub async fn serve(
    listener: tokio::net::TcpListener,
    server: ShopServer,
    access: impl Into<Access>,
    shutdown: CancellationToken,
) -> std::io::Result<()> {
    let app = router(server, access, shutdown.clone());
    axum::serve(listener, app)
        .with_graceful_shutdown(shutdown.cancelled_owned())
        .await
}

async fn require_staff_token(
    State(access): State<Arc<Access>>,
    mut request: Request,
    next: Next,
) -> Response {
    let presented = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| {
            v.strip_prefix("Bearer ")
                .or_else(|| v.strip_prefix("bearer "))
        })
        .map(str::trim)
        .map(str::to_owned);
    let Some(token) = presented else {
        return unauthorized(&access, None);
    };
    let staff = match (access.tokens.staff(&token), &access.oauth) {
        (Some(staff), _) => Some(staff.clone()),
        (None, Some(oauth)) => match oauth.staff(&token).await {
            Ok(staff) => Some(staff),
            Err(why) => {
                tracing::warn!(%why, "refused an access token");
                None
            }
        },
        (None, None) => None,
    };
    match staff {
        Some(staff) => {
            request.extensions_mut().insert(staff);
            next.run(request).await
        }
        None => {
            tracing::warn!("refused a request with a token that is not valid here");
            unauthorized(&access, Some("invalid_token"))
        }
    }
}

fn unauthorized(access: &Access, error: Option<&str>) -> Response {
    let challenge = match (&access.oauth, error) {
        (Some(oauth), error) => oauth.challenge(error),
        (None, Some(code)) => format!("Bearer realm=\"{SERVER_NAME}\", error=\"{code}\""),
        (None, None) => format!("Bearer realm=\"{SERVER_NAME}\""),
    };
    let body = match error {
        Some(_) => "this token is not valid here; sign in again or ask for a current one",
        None => "a staff token is required: send Authorization: Bearer <token>",
    };
    let mut response = (StatusCode::UNAUTHORIZED, body).into_response();
    if let Ok(value) = HeaderValue::from_str(&challenge) {
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, value);
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_name_their_staff_and_leads() {
        let tokens = StaffTokens::parse(
            "staff-0007=aaaaaaaaaaaaaaaa1, staff-0012=bbbbbbbbbbbbbbbb2, lead-0002=cccccccccccccccc3:lead",
        )
        .expect("valid");
        let staff = |id: &str, lead| StaffId {
            id: id.to_owned(),
            lead,
        };
        assert_eq!(
            tokens.staff("aaaaaaaaaaaaaaaa1"),
            Some(&staff("staff-0007", false))
        );
        assert_eq!(
            tokens.staff("bbbbbbbbbbbbbbbb2"),
            Some(&staff("staff-0012", false))
        );
        assert_eq!(
            tokens.staff("cccccccccccccccc3"),
            Some(&staff("lead-0002", true))
        );
        assert_eq!(
            tokens.staff("cccccccccccccccc3:lead"),
            None,
            "the role is not the token"
        );
        assert_eq!(tokens.staff("aaaaaaaaaaaaaaaa"), None);
    }

    #[test]
    fn a_roster_file_names_each_person_their_role_and_where_their_token_is() {
        let roster = r#"
            [[staff]]
            id = "staff-0007"
            role = "staff"
            token_env = "ANA_TOKEN"

            [[staff]]
            id = "lead-0002"
            role = "lead"
            token_env = "LEE_TOKEN"
        "#;
        let env = |var: &str| match var {
            "ANA_TOKEN" => Some("aaaaaaaaaaaaaaaa1".to_owned()),
            "LEE_TOKEN" => Some("cccccccccccccccc3".to_owned()),
            _ => None,
        };
        let tokens = StaffTokens::from_roster(roster, env).expect("a roster");
        assert_eq!(
            tokens.staff("cccccccccccccccc3"),
            Some(&StaffId {
                id: "lead-0002".into(),
                lead: true
            })
        );
        assert_eq!(
            tokens.staff("aaaaaaaaaaaaaaaa1").map(|s| s.lead),
            Some(false)
        );
        let unset = StaffTokens::from_roster(roster, |_| None).err();
        assert_eq!(
            unset.map(|e| e.to_string()),
            Some(
                "the staff roster's staff-0007 takes its token from ANA_TOKEN, which is not set"
                    .into()
            )
        );
        let bad_role = roster.replacen("\"staff\"", "\"boss\"", 1);
        assert_eq!(
            StaffTokens::from_roster(&bad_role, env)
                .err()
                .map(|e| e.to_string()),
            Some("the staff roster's staff-0007 has role \"boss\"; a role is staff or lead".into())
        );
    }

    #[test]
    fn bad_token_lists_are_explained() {
        assert_eq!(
            StaffTokens::parse(" , ").map(|_| ()),
            Err(TokensError::Empty)
        );
        assert_eq!(
            StaffTokens::parse("staff-0007").map(|_| ()),
            Err(TokensError::Malformed(1))
        );
        assert_eq!(
            StaffTokens::parse("staff-0007=short").map(|_| ()),
            Err(TokensError::Short(1))
        );
    }
}
