//! Signing in with OAuth to the servers that ask for it (a 401 with a `WWW-Authenticate`
//! challenge), on rmcp's `auth` feature.
//!
//! rmcp discovers the authorization server, picks the client's identity in the
//! specification's order (a pre-registered client, a Client ID Metadata Document, dynamic
//! registration), runs the authorization code grant with PKCE and refreshes tokens. The desk
//! adds what rmcp leaves to its hosts: the loopback redirect a person's browser comes back
//! to ([`visit`]), one grant per person per server in the data directory, readable by its
//! owner alone and shared safely by several desks ([`store`]), signing in again when a
//! server asks for more scopes ([`client`]), the client-credentials grant for a desk that
//! runs as itself, the desk's own HTTP client for a server whose `ca_file` names a private CA
//! (`http`), and revoking a grant at the authorization server on `logout` ([`revoke`]). The
//! `login` and `logout` commands are [`crate::commands::login`] and [`crate::commands::logout`].

pub mod client;
mod flow;
mod http;
mod identity;
mod revoke;
mod store;
pub mod visit;

pub use client::{SignInPolicy, SigningClient};
pub use flow::{SignInError, Target, challenge_of, sign_in};
pub use identity::{ClientIdentity, PrivateKey};
pub use revoke::{Revocation, revoke};
pub use store::{GrantStore, GrantSummary};
pub use visit::{Headless, Loopback, Visitor};

/// The command a person runs to sign in to the server under `prefix`.
pub fn login_command(prefix: &str) -> String {
    format!("support-desk login {prefix}")
}
