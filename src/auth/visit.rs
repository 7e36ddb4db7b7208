//! Where the authorization server sends the person back: a loopback listener on 127.0.0.1 at
//! a free port ([`Loopback`]), which tells the person the URL to open (and opens a browser
//! only when asked), or, for the conformance suite whose authorization server approves at
//! once, a GET that reads the redirect's `Location` without following it ([`Headless`]).

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{Mutex, mpsc};
use tokio_util::sync::CancellationToken;

use super::SignInError;

/// How long a person has to finish signing in in the browser.
pub const SIGN_IN_WAIT: Duration = Duration::from_secs(300);

/// Takes the person to an authorization URL and brings back the redirect they arrive at.
#[async_trait::async_trait]
pub trait Visitor: Send + Sync {
    /// Where the authorization server must send the person back.
    fn redirect_uri(&self) -> &str;
    /// Shows `url` to the person and waits for the full URL they are redirected to.
    async fn visit(&self, url: &str) -> Result<String, SignInError>;
}

/// Tells the person the URL to open.
pub type Show = Arc<dyn Fn(&str) + Send + Sync>;

/// The loopback redirect: `http://127.0.0.1:PORT/callback`, listening until dropped.
pub struct Loopback {
    redirect: String,
    arrivals: Mutex<mpsc::Receiver<String>>,
    show: Show,
    open_browser: bool,
    wait: Duration,
    stop: CancellationToken,
}

impl Loopback {
    /// Listens on a free port of 127.0.0.1 (bound before any URL is made, so the redirect
    /// URI with its port is known to registration and authorization alike).
    pub async fn bind(show: Show, open_browser: bool) -> std::io::Result<Self> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let port = listener.local_addr()?.port();
        let (tx, arrivals) = mpsc::channel::<String>(4);
        let app = axum::Router::new().route(
            "/callback",
            axum::routing::get(move |request: axum::extract::Request| {
                let tx = tx.clone();
                async move {
                    let query = request.uri().query().unwrap_or_default().to_owned();
                    let refused = query.split('&').any(|pair| pair.starts_with("error="));
                    let _ = tx
                        .send(format!("http://127.0.0.1:{port}/callback?{query}"))
                        .await;
                    if refused {
                        "The sign-in was refused; the desk says why. You can close this tab."
                    } else {
                        "Signed in to Support Desk. You can close this tab."
                    }
                }
            }),
        );
        let stop = CancellationToken::new();
        let stopped = stop.clone();
        tokio::spawn(async move {
            let _ = axum::serve(listener, app)
                .with_graceful_shutdown(stopped.cancelled_owned())
                .await;
        });
        Ok(Self {
            redirect: format!("http://127.0.0.1:{port}/callback"),
            arrivals: Mutex::new(arrivals),
            show,
            open_browser,
            wait: SIGN_IN_WAIT,
            stop,
        })
    }
}

impl Drop for Loopback {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

#[async_trait::async_trait]
impl Visitor for Loopback {
    fn redirect_uri(&self) -> &str {
        &self.redirect
    }

    async fn visit(&self, url: &str) -> Result<String, SignInError> {
        (self.show)(url);
        if self.open_browser {
            open_in_browser(url);
        }
        let mut arrivals = self.arrivals.lock().await;
        match tokio::time::timeout(self.wait, arrivals.recv()).await {
            Ok(Some(back)) => Ok(back),
            Ok(None) => Err(SignInError::Visit(
                "the loopback listener stopped before the browser came back".into(),
            )),
            Err(_) => Err(SignInError::Visit(format!(
                "nobody came back from the sign-in page within {} minutes; run the command again",
                self.wait.as_secs() / 60
            ))),
        }
    }
}

/// Opens `url` in the person's browser, as they asked with `--open`.
fn open_in_browser(url: &str) {
    let opener = if cfg!(target_os = "macos") {
        "open"
    } else {
        "xdg-open"
    };
    let spawned = std::process::Command::new(opener)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    if let Err(e) = spawned {
        tracing::warn!(error = %e, "could not open a browser; open the URL by hand");
    }
}

/// An authorization server that approves at once (the conformance suite's): the URL is
/// fetched without following its redirect, and the `Location` is where the person would
/// have arrived. Nothing listens at the redirect URI.
pub struct Headless {
    http: reqwest::Client,
    redirect: String,
}

impl Headless {
    pub fn new(redirect: &str) -> Result<Self, SignInError> {
        crate::tls::install_default_provider();
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| SignInError::Visit(e.to_string()))?;
        Ok(Self {
            http,
            redirect: redirect.to_owned(),
        })
    }
}

#[async_trait::async_trait]
impl Visitor for Headless {
    fn redirect_uri(&self) -> &str {
        &self.redirect
    }

    async fn visit(&self, url: &str) -> Result<String, SignInError> {
        let response = self
            .http
            .get(url)
            .send()
            .await
            .map_err(|e| SignInError::Visit(e.to_string()))?;
        response
            .headers()
            .get(reqwest::header::LOCATION)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
            .ok_or_else(|| {
                SignInError::Visit(format!(
                    "the authorization server answered {} without sending the person back",
                    response.status()
                ))
            })
    }
}
