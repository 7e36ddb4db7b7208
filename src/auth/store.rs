//! One grant per person per server: a JSON file in the data directory's `grants/`, readable
//! and writable by its owner alone (0600, in a 0700 directory), written whole (a temporary
//! file renamed over the old one) and never anywhere else: not in the config, the log or a
//! recording.
//!
//! Several desks of one person share the file. A refresh holds a lock across load, request
//! and save (rmcp's refresh guard), taken both inside this process and on `<grant>.lock`
//! with the OS, so a rotating refresh token is spent by one desk and the others read the
//! fresh grant instead of spending the old token and getting the whole grant revoked.

use std::collections::HashMap;
use std::io::Write as _;
use std::os::unix::fs::{OpenOptionsExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock};

use rmcp::transport::auth::AuthError;
use rmcp::transport::{CredentialRefreshGuard, CredentialStore, StoredCredentials};
use sha2::{Digest, Sha256};

/// The grant of the person whose data directory this is, for one server.
#[derive(Clone, Debug)]
pub struct GrantStore {
    path: PathBuf,
    refresh: Arc<tokio::sync::Mutex<()>>,
}

/// What `servers` and `login` say about a grant: never a token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GrantSummary {
    /// Who the access token says the person is (its `sub`), when it is a JWT.
    pub subject: Option<String>,
    pub scopes: Vec<String>,
    /// When the access token expires, in unix seconds.
    pub expires_at: Option<u64>,
    pub refreshable: bool,
    pub issuer: Option<String>,
}

/// One in-process lock per grant file, shared by every store of that file.
static REFRESH_LOCKS: LazyLock<std::sync::Mutex<HashMap<PathBuf, Arc<tokio::sync::Mutex<()>>>>> =
    LazyLock::new(Default::default);

impl GrantStore {
    /// The grant for the server `url` under `prefix`, in `data_dir`.
    pub fn new(data_dir: &Path, prefix: &str, url: &str) -> Self {
        let digest = Sha256::digest(url.as_bytes());
        let path = data_dir
            .join("grants")
            .join(format!("{prefix}-{}.json", hex::encode(&digest[..6])));
        let refresh = REFRESH_LOCKS
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .entry(path.clone())
            .or_default()
            .clone();
        Self { path, refresh }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The stored grant, if there is one.
    pub fn read(&self) -> std::io::Result<Option<StoredCredentials>> {
        match std::fs::read_to_string(&self.path) {
            Ok(text) => serde_json::from_str(&text)
                .map(Some)
                .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Writes the grant whole: a 0600 temporary file beside it, renamed over it.
    pub fn write(&self, grant: &StoredCredentials) -> std::io::Result<()> {
        let dir = self.path.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir)?;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
        let text = serde_json::to_vec_pretty(grant)?;
        let temp = self
            .path
            .with_extension(format!("tmp-{}", std::process::id()));
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&temp)?;
        file.write_all(&text)?;
        file.sync_all()?;
        std::fs::rename(&temp, &self.path)
    }

    /// Removes the grant (`logout`). Whether there was one.
    pub fn remove(&self) -> std::io::Result<bool> {
        match std::fs::remove_file(&self.path) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// What the stored grant says, without its tokens.
    pub fn summary(&self) -> std::io::Result<Option<GrantSummary>> {
        let Some(grant) = self.read()? else {
            return Ok(None);
        };
        let token = serde_json::to_value(&grant.token_response).unwrap_or_default();
        let expires_at = token["expires_in"]
            .as_u64()
            .zip(grant.token_received_at)
            .map(|(lifetime, received)| received + lifetime);
        let subject = token["access_token"].as_str().and_then(jwt_subject);
        Ok(Some(GrantSummary {
            subject,
            scopes: grant.granted_scopes.clone(),
            expires_at,
            refreshable: token["refresh_token"].is_string(),
            issuer: grant.issuer.clone(),
        }))
    }

    /// The OS lock beside the grant, held until the returned file is dropped.
    fn lock_file(&self) -> std::io::Result<std::fs::File> {
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .open(self.path.with_extension("lock"))?;
        file.lock()?;
        Ok(file)
    }
}

/// The `sub` of a JWT, read without checking it: for showing who a grant is for, never for
/// deciding anything.
fn jwt_subject(token: &str) -> Option<String> {
    use base64::Engine as _;
    let payload = token.split('.').nth(1)?;
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(payload.trim_end_matches('='))
        .ok()?;
    let claims: serde_json::Value = serde_json::from_slice(&bytes).ok()?;
    claims["sub"].as_str().map(str::to_owned)
}

fn store_error(what: &str, path: &Path, e: impl std::fmt::Display) -> AuthError {
    AuthError::CredentialStoreError(format!(
        "cannot {what} the sign-in grant {} ({e}); check the data directory's permissions",
        path.display()
    ))
}

#[async_trait::async_trait]
impl CredentialStore for GrantStore {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        self.read().map_err(|e| store_error("read", &self.path, e))
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        self.write(&credentials)
            .map_err(|e| store_error("write", &self.path, e))
    }

    async fn clear(&self) -> Result<(), AuthError> {
        self.remove()
            .map(|_| ())
            .map_err(|e| store_error("remove", &self.path, e))
    }

    async fn acquire_refresh_guard(&self) -> Result<Option<CredentialRefreshGuard>, AuthError> {
        let local = self.refresh.clone().lock_owned().await;
        let store = self.clone();
        let file = tokio::task::spawn_blocking(move || store.lock_file())
            .await
            .map_err(|e| store_error("lock", &self.path, e))?
            .map_err(|e| store_error("lock", &self.path, e))?;
        Ok(Some(CredentialRefreshGuard::new((local, file))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grant(scopes: &[&str]) -> StoredCredentials {
        StoredCredentials::new(
            "desk-client".into(),
            None,
            scopes.iter().map(|s| s.to_string()).collect(),
            Some(1_000),
        )
    }

    #[test]
    fn a_grant_is_written_for_its_owner_alone_and_logout_removes_it() {
        let dir = tempfile::tempdir().expect("a temp dir");
        let store = GrantStore::new(dir.path(), "shop", "http://127.0.0.1:8931/mcp");
        assert_eq!(store.read().ok().flatten().map(|g| g.client_id), None);
        store.write(&grant(&["mcp"])).expect("written");
        let mode = std::fs::metadata(store.path()).map(|m| m.permissions().mode() & 0o777);
        assert_eq!(mode.ok(), Some(0o600));
        let dir_mode =
            std::fs::metadata(dir.path().join("grants")).map(|m| m.permissions().mode() & 0o777);
        assert_eq!(dir_mode.ok(), Some(0o700));
        let summary = store.summary().ok().flatten();
        assert_eq!(summary.map(|s| s.scopes), Some(vec!["mcp".to_owned()]));
        assert_eq!(store.remove().ok(), Some(true));
        assert_eq!(store.remove().ok(), Some(false));
        assert!(store.read().ok().flatten().is_none());
    }

    #[test]
    fn each_server_url_has_its_own_grant() {
        let dir = tempfile::tempdir().expect("a temp dir");
        let a = GrantStore::new(dir.path(), "shop", "http://127.0.0.1:1/mcp");
        let b = GrantStore::new(dir.path(), "shop", "http://127.0.0.1:2/mcp");
        assert_ne!(a.path(), b.path());
    }

    #[tokio::test]
    async fn a_refresh_guard_keeps_a_second_refresh_waiting_until_the_first_is_done() {
        let dir = tempfile::tempdir().expect("a temp dir");
        let url = "http://127.0.0.1:8931/mcp";
        let first = GrantStore::new(dir.path(), "shop", url);
        let second = GrantStore::new(dir.path(), "shop", url);
        let held = first.acquire_refresh_guard().await.expect("a guard");
        let waiting = tokio::spawn(async move { second.acquire_refresh_guard().await.is_ok() });
        tokio::task::yield_now().await;
        assert!(!waiting.is_finished(), "the second refresh must wait");
        drop(held);
        assert!(waiting.await.unwrap_or(false));
    }

    #[test]
    fn the_os_lock_keeps_another_holder_of_the_file_out() {
        let dir = tempfile::tempdir().expect("a temp dir");
        let store = GrantStore::new(dir.path(), "shop", "http://127.0.0.1:8931/mcp");
        let held = store.lock_file().expect("locked");
        let other = std::fs::OpenOptions::new()
            .write(true)
            .open(store.path().with_extension("lock"))
            .expect("opened");
        assert!(matches!(
            other.try_lock(),
            Err(std::fs::TryLockError::WouldBlock)
        ));
        drop(held);
        assert!(other.try_lock().is_ok());
    }
}
