//! Signing in with OAuth, end to end, against a real authorization server from the npm
//! registry (oauth2-mock-server, started by tests/interop/oauth_server.mjs on 127.0.0.1) and
//! the shop started as `serve shop --http … --oauth-issuer URL`: the desk's `login` through
//! the loopback redirect, calls carrying the person's token, a refresh on expiry, a refused
//! refresh, a token for another audience, `logout` and its revocation, the authorization server
//! over HTTPS behind the shop's `ca_file`, and the two-person rule with OAuth identities.
//!
//! Without the server installed (`scripts/interop-setup.sh` puts it under
//! target/interop/oauth) each test says so in one line and passes, unless
//! `DESK_REQUIRE_OAUTH_SERVER=1` (as in CI), when it fails.

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use rmcp::model::CallToolRequestParams;
use serde_json::{Value, json};
use support_desk::config::OAuthConfig;
use support_desk::config::ServerConfig;
use support_desk::host::servers::connect::{CONNECT_TIMEOUT, Reach, ServerConn};
use tokio::io::{AsyncBufReadExt, BufReader};

use crate::shop_http::{held_for_a_lead, release_as};
use crate::shop_store::delivered_line;
use crate::support::*;

const CLIENT_ID: &str = "support-desk";
const NOT_FOUND: &str = "the OAuth sign-in tests need oauth2-mock-server and node 22 under \
    target/interop/oauth; run scripts/interop-setup.sh";

fn prefix_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("target/interop/oauth")
}

/// The authorization server, stopped when dropped.
struct AuthServer {
    child: tokio::process::Child,
    issuer: String,
    http: reqwest::Client,
    /// The CA its certificate is signed by, when it serves HTTPS.
    ca_file: Option<PathBuf>,
}

/// An authorization server on HTTPS: the CA's PEM file, and the server's key and certificate.
struct Https {
    ca_file: PathBuf,
    key: PathBuf,
    cert: PathBuf,
}

impl AuthServer {
    async fn start() -> Option<Self> {
        Self::start_with(None).await
    }

    async fn start_with(https: Option<Https>) -> Option<Self> {
        let node = prefix_dir().join("node_modules/.bin/node");
        let package = prefix_dir().join("node_modules/oauth2-mock-server/package.json");
        if !node.exists() || !package.exists() {
            if std::env::var("DESK_REQUIRE_OAUTH_SERVER").as_deref() == Ok("1") {
                panic!("{NOT_FOUND} (DESK_REQUIRE_OAUTH_SERVER=1: these tests must run)");
            }
            say_skipped();
            return None;
        }
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interop/oauth_server.mjs");
        let mut child = tokio::process::Command::new(node)
            .arg(script)
            .arg(prefix_dir())
            .args(https.iter().flat_map(|h| [&h.key, &h.cert]))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("the authorization server starts");
        let stdout = child.stdout.take().expect("its stdout");
        let mut lines = BufReader::new(stdout).lines();
        let first = lines
            .next_line()
            .await
            .expect("a line")
            .expect("its issuer");
        let started: Value = serde_json::from_str(&first).expect("JSON");
        support_desk::tls::install_default_provider();
        let ca_file = https.map(|h| h.ca_file);
        Some(Self {
            child,
            issuer: started["issuer"].as_str().expect("issuer").to_owned(),
            http: support_desk::tls::http_client(ca_file.as_deref()).expect("a client"),
            ca_file,
        })
    }

    /// Stops the server, and waits until it is gone.
    async fn stop(mut self) {
        self.child
            .kill()
            .await
            .expect("the authorization server stops");
    }

    /// Who signs in next, with which scopes and claims.
    async fn next_person(&self, sub: &str, scope: &str, claims: Value) {
        let body = json!({"sub": sub, "scope": scope, "claims": claims});
        let sent = self
            .http
            .post(format!("{}/test/person", self.issuer))
            .json(&body)
            .send()
            .await
            .expect("the person is set");
        assert!(sent.status().is_success());
    }

    async fn stats(&self) -> Value {
        let url = format!("{}/test/stats", self.issuer);
        let got = self.http.get(url).send().await.expect("stats");
        got.json().await.expect("JSON")
    }

    async fn revoke_refresh_tokens(&self) {
        let url = format!("{}/test/revoke", self.issuer);
        self.http.post(url).send().await.expect("revoked");
    }

    /// A token signed by this server for anyone and any audience.
    async fn token_for(&self, sub: &str, aud: &str) -> String {
        self.token_with(json!({"sub": sub, "aud": aud, "scope": "shop"}))
            .await
    }

    /// A token signed by this server with these claims (besides its own `iss`, `exp`, …).
    async fn token_with(&self, body: Value) -> String {
        let url = format!("{}/test/token", self.issuer);
        let got: Value = self
            .http
            .post(url)
            .json(&body)
            .send()
            .await
            .expect("a token")
            .json()
            .await
            .expect("JSON");
        got["token"].as_str().expect("token").to_owned()
    }
}

#[allow(
    clippy::print_stdout,
    reason = "the one line that says this test did not run"
)]
fn say_skipped() {
    println!("skipped: {NOT_FOUND}");
}

/// The shop binary over HTTP, trusting the authorization server; stopped when dropped.
struct Shop {
    _child: tokio::process::Child,
    url: String,
    /// The authorization server's CA, which the desk's config names for the shop.
    ca_file: Option<PathBuf>,
}

impl Shop {
    async fn start(auth: &AuthServer, dir: &Path) -> Self {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let child = tokio::process::Command::new(BIN)
            .args(["serve", "shop", "--http", &format!("127.0.0.1:{port}")])
            .arg("--db")
            .arg(dir.join("shop.sqlite3"))
            .args(["--oauth-issuer", &auth.issuer])
            .args(["--oauth-lead-claim", "roles=support-lead"])
            .env_remove("SHOP_STAFF_TOKENS")
            // The shop reads its issuer's keys: over HTTPS, it trusts the issuer's CA.
            .envs(auth.ca_file.iter().map(|ca| ("SSL_CERT_FILE", ca)))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("the shop starts");
        let shop = Self {
            _child: child,
            url: format!("http://127.0.0.1:{port}/mcp"),
            ca_file: auth.ca_file.clone(),
        };
        // Ready once its metadata is served.
        let metadata = format!("http://127.0.0.1:{port}/.well-known/oauth-protected-resource/mcp");
        for _ in 0..400 {
            if let Ok(response) = auth.http.get(&metadata).send().await
                && response.status().is_success()
            {
                return shop;
            }
            tokio::time::sleep(std::time::Duration::from_millis(25)).await;
        }
        panic!("the shop never served its metadata at {metadata}");
    }

    fn config(&self) -> ServerConfig {
        ServerConfig {
            url: Some(self.url.clone()),
            oauth: Some(OAuthConfig {
                client_id: Some(CLIENT_ID.to_owned()),
                ..OAuthConfig::default()
            }),
            ca_file: self.ca_file.clone(),
            ..ServerConfig::default()
        }
    }

    /// A desk config that reaches this shop (the bundled partner stays in process).
    fn desk_config(&self, dir: &Path) -> PathBuf {
        let path = dir.join("desk.toml");
        let ca_file = match &self.ca_file {
            Some(ca) => format!("ca_file = {}\n", Value::from(ca.to_str().expect("utf-8"))),
            None => String::new(),
        };
        let text = format!(
            "[servers.shop]\nurl = \"{}\"\n{ca_file}\n[servers.shop.oauth]\nclient_id = \"{CLIENT_ID}\"\n",
            self.url
        );
        std::fs::write(&path, text).expect("the config is written");
        path
    }
}

/// `support-desk login shop`, with this test as the person's browser: it opens the printed
/// address, the authorization server approves at once and sends the browser back to the
/// desk's loopback listener. What `login` printed.
async fn login(
    auth: &AuthServer,
    config: &Path,
    data_dir: &Path,
    who: (&str, &str, Value),
) -> String {
    auth.next_person(who.0, who.1, who.2).await;
    let mut child = tokio::process::Command::new(BIN)
        .args(["login", "shop", "--config"])
        .arg(config)
        .arg("--data-dir")
        .arg(data_dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("login starts");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let mut printed = String::new();
    while let Some(line) = lines.next_line().await.expect("a line") {
        printed.push_str(&line);
        printed.push('\n');
        if let Some(at) = line.find("http://").or_else(|| line.find("https://")) {
            let url = line[at..].trim();
            assert!(url.contains("/authorize?"), "{url}");
            let page = auth.http.get(url).send().await.expect("the browser");
            let said = page.text().await.expect("the desk's page");
            assert_eq!(said, "Signed in to Support Desk. You can close this tab.");
        }
    }
    let status = child.wait().await.expect("login ends");
    assert!(status.success(), "login failed:\n{printed}");
    printed
}

/// staff-0007 signed in to the shop through `login`, with their grant in `ana`.
struct SignedIn {
    auth: AuthServer,
    dir: tempfile::TempDir,
    shop: Shop,
    config: PathBuf,
    ana: PathBuf,
}

impl SignedIn {
    async fn staff_0007() -> Option<Self> {
        let auth = AuthServer::start().await?;
        let dir = tempfile::tempdir().expect("a temp dir");
        let shop = Shop::start(&auth, dir.path()).await;
        let config = shop.desk_config(dir.path());
        let ana = dir.path().join("ana");
        login(&auth, &config, &ana, ("staff-0007", "shop", json!({}))).await;
        Some(Self {
            auth,
            dir,
            shop,
            config,
            ana,
        })
    }
}

/// `support-desk logout shop`, which succeeds: what it printed.
async fn logout(config: &Path, data_dir: &Path) -> String {
    let output = tokio::process::Command::new(BIN)
        .args(["logout", "shop", "--config"])
        .arg(config)
        .arg("--data-dir")
        .arg(data_dir)
        .stdin(Stdio::null())
        .output()
        .await
        .expect("logout runs");
    let said = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(output.status.success(), "{said}");
    said
}

/// The desk's own client for the shop, with the person's grant in `data_dir`.
async fn desk_client(shop: &Shop, data_dir: &Path) -> Result<ServerConn, String> {
    let (questions, _asked) = tokio::sync::mpsc::channel(4);
    let reach = Reach {
        data_dir: Some(data_dir.to_owned()),
        connect_timeout: CONNECT_TIMEOUT,
        ..Reach::default()
    };
    ServerConn::connect_with("shop", &shop.config(), questions, reach)
        .await
        .map_err(|e| e.to_string())
}

fn grant_file(data_dir: &Path) -> PathBuf {
    let dir = data_dir.join("grants");
    let mut grants: Vec<_> = std::fs::read_dir(&dir)
        .expect("the grants directory")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    assert_eq!(
        grants.len(),
        1,
        "one grant per person per server: {grants:?}"
    );
    grants.remove(0)
}

fn read_grant(data_dir: &Path) -> Value {
    let text = std::fs::read_to_string(grant_file(data_dir)).expect("the grant");
    serde_json::from_str(&text).expect("JSON")
}

/// Makes the grant in `data_dir` look long expired: the next call refreshes it first.
fn age_grant(data_dir: &Path) {
    let mut grant = read_grant(data_dir);
    grant["token_received_at"] = json!(1);
    std::fs::write(grant_file(data_dir), grant.to_string()).expect("the grant aged");
}

/// A call with the person's grant, and one after it expired, which refreshes it first: the
/// authorization server counts one refresh more.
async fn calls_and_refreshes(auth: &AuthServer, conn: &ServerConn, data_dir: &Path) {
    assert!(order_status(conn).await.expect("a call").contains("O-"));
    let before = auth.stats().await["refreshes"].as_u64();
    age_grant(data_dir);
    let after_expiry = order_status(conn).await.expect("a call after expiry");
    assert!(after_expiry.contains("O-"), "{after_expiry}");
    assert_eq!(
        auth.stats().await["refreshes"].as_u64(),
        before.map(|n| n + 1),
        "one refresh"
    );
}

async fn order_status(conn: &ServerConn) -> Result<String, String> {
    let live = conn.live().await.map_err(|e| e.to_string())?;
    let (order, _) = delivered_line(false);
    let Value::Object(arguments) = json!({"order_id": order.order_id}) else {
        unreachable!("an object")
    };
    let params = CallToolRequestParams::new("get_order_status").with_arguments(arguments);
    let result = live
        .service
        .call_tool(params)
        .await
        .map_err(|e| e.to_string())?;
    Ok(text(&result).to_owned())
}

#[tokio::test]
async fn staff_sign_in_through_the_loopback_redirect_and_the_shop_knows_them_by_sub() {
    let Some(auth) = AuthServer::start().await else {
        return;
    };
    let dir = tempfile::tempdir().expect("a temp dir");
    let shop = Shop::start(&auth, dir.path()).await;
    let config = shop.desk_config(dir.path());
    let ana = dir.path().join("ana");

    // Not signed in: a headless run fails at once, naming the command.
    let refused = desk_client(&shop, &ana).await.err().unwrap_or_default();
    assert!(
        refused.contains("run `support-desk login shop`"),
        "{refused}"
    );

    let printed = login(&auth, &config, &ana, ("staff-0007", "shop", json!({}))).await;
    assert!(
        printed.contains("Signed in to 'shop': signed in as staff-0007 · scopes shop"),
        "{printed}"
    );
    assert!(printed.contains("'shop' accepts it: 5 tools"), "{printed}");
    let mode = std::fs::metadata(grant_file(&ana))
        .expect("the grant")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600, "only its owner reads a grant");
    let config_text = std::fs::read_to_string(&config).expect("config");
    let token = read_grant(&ana)["token_response"]["access_token"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(!token.is_empty() && !config_text.contains(&token));

    // The desk's client calls the shop with the person's token.
    let conn = desk_client(&shop, &ana)
        .await
        .expect("connected with the grant");
    // On expiry the next call refreshes first, and the grant keeps its owner-only mode.
    let grant = read_grant(&ana);
    calls_and_refreshes(&auth, &conn, &ana).await;
    let refreshed = read_grant(&ana);
    let refresh_token = |grant: &Value| {
        grant["token_response"]["refresh_token"]
            .as_str()
            .map(str::to_owned)
    };
    assert_ne!(
        refresh_token(&refreshed),
        refresh_token(&grant),
        "the rotated refresh token is kept"
    );
    assert!(refreshed["token_received_at"].as_u64() > Some(1));

    // `servers` tells the person as whom they are signed in.
    let servers = std::process::Command::new(BIN)
        .arg("servers")
        .arg("--config")
        .arg(&config)
        .arg("--data-dir")
        .arg(&ana)
        .output()
        .expect("servers");
    let listed = String::from_utf8_lossy(&servers.stdout);
    assert!(
        listed.contains("sign-in: signed in as staff-0007 · scopes shop"),
        "{listed}"
    );

    // A token the same issuer signed for another audience is refused; one for the shop is not.
    let post = |token: String| {
        auth.http
            .post(&shop.url)
            .bearer_auth(token)
            .header("accept", "application/json, text/event-stream")
            .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {}}))
            .send()
    };
    let elsewhere = post(auth.token_for("staff-0007", "http://127.0.0.1:9/mcp").await)
        .await
        .expect("sent");
    assert_eq!(elsewhere.status(), 401);
    let challenge = elsewhere.headers()["www-authenticate"]
        .to_str()
        .unwrap_or_default()
        .to_owned();
    assert!(challenge.contains("error=\"invalid_token\""), "{challenge}");
    assert!(
        challenge.contains("resource_metadata=\"http://127.0.0.1:"),
        "{challenge}"
    );
    let here = post(auth.token_for("staff-0007", &shop.url).await)
        .await
        .expect("sent");
    assert_ne!(here.status(), 401);
    // One that is not valid for another hour is refused until then.
    let in_an_hour = support_desk::clock::unix_secs() + 3600;
    let early = auth
        .token_with(
            json!({"sub": "staff-0007", "aud": shop.url, "scope": "shop", "nbf": in_an_hour}),
        )
        .await;
    assert_eq!(post(early).await.expect("sent").status(), 401);

    // A refresh the authorization server refuses: the call says to sign in again.
    auth.revoke_refresh_tokens().await;
    age_grant(&ana);
    let run = support_desk::host::servers::calls::call(&conn, plan("get_order_status")).await;
    assert!(
        run.text
            .contains("asks you to sign in again: run `support-desk login shop`"),
        "{}",
        run.text
    );
    drop(conn);

    // Logout removes the grant, and a run without it fails at once with the command.
    assert!(logout(&config, &ana).await.contains("Signed out of 'shop'"));
    assert_eq!(
        std::fs::read_dir(ana.join("grants"))
            .map(|d| d
                .filter(|e| e
                    .as_ref()
                    .is_ok_and(|e| e.path().extension().is_some_and(|x| x == "json")))
                .count())
            .ok(),
        Some(0)
    );
    let run = std::process::Command::new(BIN)
        .args([
            "run",
            "--consent",
            "approve",
            "--tickets",
            "T-0001",
            "--config",
        ])
        .arg(&config)
        .arg("--data-dir")
        .arg(&ana)
        .output()
        .expect("run");
    assert!(!run.status.success());
    let said = String::from_utf8_lossy(&run.stderr);
    assert!(
        said.contains("asks you to sign in: run `support-desk login shop`"),
        "{said}"
    );
}

fn plan(tool: &str) -> support_desk::host::servers::calls::CallPlan {
    let (order, _) = delivered_line(false);
    let Value::Object(arguments) = json!({"order_id": order.order_id}) else {
        unreachable!("an object")
    };
    support_desk::host::servers::calls::CallPlan {
        ticket: "T-0001".into(),
        tool: tool.into(),
        arguments,
        request_id: "call_1".into(),
        retry_if_lost: false,
        timeout: std::time::Duration::from_secs(10),
        max_time: std::time::Duration::from_secs(60),
        max_rounds: 3,
        max_result_bytes: 64 * 1024,
        lead_forms: false,
        progress: None,
        task_pace: Default::default(),
    }
}

#[tokio::test]
async fn with_oauth_identities_a_held_refund_is_released_only_by_a_lead_who_did_not_issue_it() {
    let Some(auth) = AuthServer::start().await else {
        return;
    };
    let dir = tempfile::tempdir().expect("a temp dir");
    let shop = Shop::start(&auth, dir.path()).await;
    let config = shop.desk_config(dir.path());
    let people = [
        ("staff-0007", "shop", json!({})),
        // A lead by the lead scope, and one by the claim the shop was started with.
        ("lead-0002", "shop shop:lead", json!({})),
        ("lead-0003", "shop", json!({"roles": ["support-lead"]})),
    ];
    let mut desks = Vec::new();
    for who in people {
        let data_dir = dir.path().join(who.0);
        login(&auth, &config, &data_dir, who).await;
        desks.push(desk_client(&shop, &data_dir).await.expect("signed in"));
    }
    let live: Vec<_> = futures_util::future::join_all(desks.iter().map(|d| d.live()))
        .await
        .into_iter()
        .map(|l| l.expect("live"))
        .collect();
    let (staff, lead, other_lead) = (&live[0].service, &live[1].service, &live[2].service);

    let (order, sku) = delivered_line(true);
    let Value::Object(arguments) =
        json!({"order_id": order.order_id, "sku": sku, "reason": "dented"})
    else {
        unreachable!("an object")
    };
    let quoted = staff
        .call_tool(CallToolRequestParams::new("quote_refund").with_arguments(arguments))
        .await
        .expect("a quote");
    let quoted = json(&quoted);
    let form = held_for_a_lead(staff, &quoted["quote_id"]).await;
    let refused = release_as(staff, &quoted["quote_id"], &form).await;
    assert!(tool_error(&refused).contains("staff-0007 is not one: a lead other than staff-0007 must release this refund; it stays held"), "{}", tool_error(&refused));
    let released = json(&release_as(lead, &quoted["quote_id"], &form).await);
    assert_eq!(released["status"], "released");
    assert_eq!(
        released["released_by"], "lead-0002",
        "the lead, from the token's sub and scope"
    );

    // A lead's own refund waits for another lead: the one named by the claim.
    let second = second_line_above_limit();
    let Value::Object(arguments) =
        json!({"order_id": second.0, "sku": second.1, "reason": "dented"})
    else {
        unreachable!("an object")
    };
    let quoted = json(
        &lead
            .call_tool(CallToolRequestParams::new("quote_refund").with_arguments(arguments))
            .await
            .expect("a quote"),
    );
    let form = held_for_a_lead(lead, &quoted["quote_id"]).await;
    let refused = release_as(lead, &quoted["quote_id"], &form).await;
    assert_eq!(refused.is_error, Some(true));
    assert!(
        tool_error(&refused).contains("A lead other than lead-0002 must release refund"),
        "{}",
        tool_error(&refused)
    );
    let released = json(&release_as(other_lead, &quoted["quote_id"], &form).await);
    assert_eq!(
        released["released_by"], "lead-0003",
        "the lead, from the token's claim"
    );
}

/// Another delivered line above the limit than `delivered_line(true)`'s.
fn second_line_above_limit() -> (String, String) {
    let world = support_desk::shop::ShopWorld::bundled();
    let (first, _) = delivered_line(true);
    world
        .orders
        .iter()
        .filter(|o| {
            o.status == support_desk::shop::data::OrderStatus::Delivered
                && o.order_id != first.order_id
        })
        .find_map(|o| {
            let line = o
                .lines
                .iter()
                .find(|l| l.amount() > support_desk::shop::REFUND_LIMIT)?;
            Some((o.order_id.clone(), line.sku.clone()))
        })
        .expect("two delivered orders with a line above the limit")
}

/// An authorization server whose certificate a private CA signed, as a team's internal one
/// is: the shop's `ca_file` is trusted for signing in to it too (discovery, the code's
/// exchange, a refresh), where rmcp's own client would trust only the system's roots. Without
/// the `ca_file`, `login` fails and says so.
#[tokio::test]
async fn the_servers_ca_file_is_trusted_for_its_authorization_server_too() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let ca = crate::tls::TestCa::new();
    let (key, cert) = ca.leaf(&["127.0.0.1"], (2040, 1, 1)).write(dir.path());
    let https = Https {
        ca_file: ca.write(dir.path()),
        key,
        cert,
    };
    let Some(auth) = AuthServer::start_with(Some(https)).await else {
        return;
    };
    assert!(auth.issuer.starts_with("https://"), "{}", auth.issuer);
    let mut shop = Shop::start(&auth, dir.path()).await;
    let ana = dir.path().join("ana");

    let printed = login(
        &auth,
        &shop.desk_config(dir.path()),
        &ana,
        ("staff-0007", "shop", json!({})),
    )
    .await;
    assert!(printed.contains("'shop' accepts it: 5 tools"), "{printed}");
    let conn = desk_client(&shop, &ana)
        .await
        .expect("connected with the grant");
    calls_and_refreshes(&auth, &conn, &ana).await;

    // The same shop without its ca_file: the sign-in cannot trust the authorization server.
    shop.ca_file = None;
    let bo = dir.path().join("bo");
    let output = tokio::process::Command::new(BIN)
        .args(["login", "shop", "--config"])
        .arg(shop.desk_config(dir.path()))
        .arg("--data-dir")
        .arg(&bo)
        .stdin(Stdio::null())
        .kill_on_drop(true)
        .output()
        .await
        .expect("login runs");
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "{said}");
    assert!(
        said.contains(
            "signing in to 'shop' failed: OAuth metadata discovery failed for https://127.0.0.1:"
        ) && said.contains(
            "its certificate is signed by a certificate authority this desk does not trust; add the CA's PEM with `ca_file = \"…\"` under [servers.shop]"
        ),
        "{said}"
    );
}

/// `logout` revokes the grant at the authorization server, not only the file that held it: a
/// copy of the grant taken off the machine before cannot be refreshed afterwards. (Its access
/// token is a JWT the shop checks by signature, good until it expires, as with any server
/// that issues them; the copy is aged, so the desk refreshes before it calls.)
#[tokio::test]
async fn logout_revokes_the_grant_so_a_copy_taken_before_stops_working() {
    let Some(signed) = SignedIn::staff_0007().await else {
        return;
    };
    let (auth, config, ana) = (&signed.auth, &signed.config, &signed.ana);
    let file = grant_file(ana);
    let mut copy = read_grant(ana);

    let said = logout(config, ana).await;
    assert!(
        said.contains("Signed out of 'shop': the authorization server revoked the grant, and "),
        "{said}"
    );
    assert!(!file.exists(), "the grant is removed");
    let stats = auth.stats().await;
    assert_eq!(
        stats["revocations"], 2,
        "the refresh token and the access token: {stats}"
    );
    assert_eq!(stats["revokedRefreshTokens"], 1, "{stats}");
    assert_eq!(stats["revokedBy"], json!([CLIENT_ID, CLIENT_ID]), "{stats}");

    // The copy, on another machine: its refresh is refused, and the desk says to sign in.
    let elsewhere = signed.dir.path().join("elsewhere");
    let grants = elsewhere.join("grants");
    std::fs::create_dir_all(&grants).expect("a grants directory");
    std::fs::set_permissions(&grants, std::fs::Permissions::from_mode(0o700)).expect("0700");
    copy["token_received_at"] = json!(1);
    let copied = grants.join(file.file_name().expect("a file name"));
    std::fs::write(&copied, copy.to_string()).expect("the copy");
    std::fs::set_permissions(&copied, std::fs::Permissions::from_mode(0o600)).expect("0600");
    let refused_before = stats["refusedRefreshes"].as_u64().expect("a count");
    let said = match desk_client(&signed.shop, &elsewhere).await {
        Err(refused) => refused,
        Ok(conn) => support_desk::host::servers::calls::call(&conn, plan("get_order_status"))
            .await
            .text
            .to_string(),
    };
    assert!(said.contains("run `support-desk login shop`"), "{said}");
    assert_eq!(
        auth.stats().await["refusedRefreshes"].as_u64(),
        Some(refused_before + 1)
    );
}

/// An authorization server that cannot be reached at `logout`: the grant is removed from this
/// machine all the same, and `logout` says the revocation failed and what to do.
#[tokio::test]
async fn logout_without_the_authorization_server_still_removes_the_grant_and_says_so() {
    let Some(signed) = SignedIn::staff_0007().await else {
        return;
    };
    let (config, ana) = (&signed.config, &signed.ana);
    let file = grant_file(ana);
    signed.auth.stop().await;

    let said = logout(config, ana).await;
    assert!(
        said.contains("Signed out of 'shop' on this machine: ")
            && said
                .contains(" is removed. Revoking the grant at the authorization server failed (")
            && said.ends_with("); revoke it there if this machine was lost.\n"),
        "{said}"
    );
    assert!(!file.exists(), "the grant is removed");
}
