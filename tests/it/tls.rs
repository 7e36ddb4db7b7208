//! TLS on 127.0.0.1: a test CA made here with rcgen, TLS terminated in the test in front of
//! the shop's Streamable HTTP service and of the mock model, and the desk reaching both over
//! `https://`. A certificate for another name, an untrusted CA, an expired certificate and a
//! plain http server at an https URL are refused in words; `ca_file` (and `SSL_CERT_FILE`)
//! make the private CA trusted.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use rcgen::{
    BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, KeyUsagePurpose,
    date_time_ymd,
};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use support_desk::config::{DeskConfig, ServerConfig};
use support_desk::host::servers::connect::{ConnectError, ServerConn};
use support_desk::model::chat::{ChatRequest, Message, Reply};
use support_desk::model::openai::{ModelError, OpenAiChat, Recipe, Sampling};
use support_desk::shop::QuoteIds;
use support_desk::shop::http::StaffTokens;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::mock_model::{MockModel, scripted, words};
use crate::support::{BIN, memory_store, shop_server};

const TOKEN: &str = "staff-0007-token-for-tls-tests";
const CA_NAME: &str = "Support Desk Test CA";

/// A certificate authority made for one test.
pub(crate) struct TestCa {
    issuer: Issuer<'static, KeyPair>,
    pem: String,
}

impl TestCa {
    pub(crate) fn new() -> Self {
        let mut params = CertificateParams::new(Vec::<String>::new()).expect("CA params");
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.distinguished_name.push(DnType::CommonName, CA_NAME);
        params.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        let key = KeyPair::generate().expect("CA key");
        let pem = params.self_signed(&key).expect("CA certificate").pem();
        Self {
            issuer: Issuer::new(params, key),
            pem,
        }
    }

    /// A server certificate for `names` (DNS names or IP addresses), valid from 2020 until
    /// `until` (year, month, day).
    pub(crate) fn leaf(&self, names: &[&str], until: (i32, u8, u8)) -> Leaf {
        let names: Vec<String> = names.iter().map(|n| (*n).to_owned()).collect();
        let mut params = CertificateParams::new(names.clone()).expect("leaf params");
        params
            .distinguished_name
            .push(DnType::CommonName, names[0].as_str());
        params.not_before = date_time_ymd(2020, 1, 1);
        params.not_after = date_time_ymd(until.0, until.1, until.2);
        let key = KeyPair::generate().expect("leaf key");
        let cert = params
            .signed_by(&key, &self.issuer)
            .expect("leaf certificate");
        Leaf {
            chain: vec![cert.der().clone()],
            key: PrivatePkcs8KeyDer::from(key.serialize_der()).into(),
            pem: (cert.pem(), key.serialize_pem()),
        }
    }

    /// The CA's certificate in a PEM file.
    pub(crate) fn write(&self, dir: &Path) -> PathBuf {
        let path = dir.join("test-ca.pem");
        std::fs::write(&path, &self.pem).expect("write the CA file");
        path
    }
}

pub(crate) struct Leaf {
    chain: Vec<CertificateDer<'static>>,
    key: PrivateKeyDer<'static>,
    /// The certificate and its key in PEM, for a server that reads them from files.
    pem: (String, String),
}

impl Leaf {
    /// The key and the certificate in PEM files in `dir`: `(key, certificate)`.
    pub(crate) fn write(&self, dir: &Path) -> (PathBuf, PathBuf) {
        let (cert, key) = (dir.join("leaf.pem"), dir.join("leaf-key.pem"));
        std::fs::write(&cert, &self.pem.0).expect("write the certificate");
        std::fs::write(&key, &self.pem.1).expect("write the key");
        (key, cert)
    }
}

/// A TLS terminator on 127.0.0.1 in front of a plain TCP service.
struct Terminator {
    addr: SocketAddr,
    task: JoinHandle<()>,
}

impl Drop for Terminator {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn terminate(backend: SocketAddr, leaf: Leaf) -> Terminator {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("TLS versions")
        .with_no_client_auth()
        .with_single_cert(leaf.chain, leaf.key)
        .expect("server certificate");
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind loopback");
    let addr = listener.local_addr().expect("address");
    let task = tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                // A refused handshake just ends the connection, as a real server's would.
                let Ok(mut tls) = acceptor.accept(tcp).await else {
                    return;
                };
                let Ok(mut plain) = tokio::net::TcpStream::connect(backend).await else {
                    return;
                };
                let _ = tokio::io::copy_bidirectional(&mut tls, &mut plain).await;
            });
        }
    });
    Terminator { addr, task }
}

/// The shop over plain Streamable HTTP on 127.0.0.1, the backend of a terminator.
struct Shop {
    addr: SocketAddr,
    shutdown: CancellationToken,
}

impl Drop for Shop {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

async fn shop() -> Shop {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind loopback");
    let addr = listener.local_addr().expect("address");
    let tokens = StaffTokens::parse(&format!("staff-0007={TOKEN}")).expect("tokens");
    let shutdown = CancellationToken::new();
    tokio::spawn(support_desk::shop::http::serve(
        listener,
        shop_server(memory_store(QuoteIds::Random)),
        tokens,
        shutdown.clone(),
    ));
    Shop { addr, shutdown }
}

/// The shop behind TLS with `leaf`: (the plain shop, its terminator).
async fn shop_over_tls(leaf: Leaf) -> (Shop, Terminator) {
    let shop = shop().await;
    let tls = terminate(shop.addr, leaf).await;
    (shop, tls)
}

fn server_config(url: String, ca_file: Option<PathBuf>) -> ServerConfig {
    ServerConfig {
        url: Some(url),
        headers: [("Authorization".to_owned(), format!("Bearer {TOKEN}"))].into(),
        ca_file,
        enabled: true,
        ..ServerConfig::default()
    }
}

async fn connect(config: &ServerConfig) -> Result<ServerConn, ConnectError> {
    let (questions, _) = tokio::sync::mpsc::channel(1);
    ServerConn::connect_within("shop", config, questions, None, Duration::from_secs(15)).await
}

async fn refused(config: &ServerConfig) -> String {
    match connect(config).await {
        Ok(_) => panic!("the desk connected to a server it must refuse"),
        Err(e) => e.to_string(),
    }
}

fn url(tls: &Terminator) -> String {
    format!("https://{}/mcp", tls.addr)
}

#[tokio::test]
async fn the_desk_reaches_the_shop_over_https_with_its_private_ca_in_ca_file() {
    let (ca, dir) = (TestCa::new(), tempfile::tempdir().expect("tempdir"));
    let (_shop, tls) = shop_over_tls(ca.leaf(&["127.0.0.1", "localhost"], (2040, 1, 1))).await;
    let config = server_config(url(&tls), Some(ca.write(dir.path())));
    let conn = connect(&config).await.expect("connect over https");
    let live = conn.live().await.expect("live");
    assert_eq!(live.tools.len(), 5);
    assert_eq!(live.revision, "2026-07-28");
}

#[tokio::test]
async fn an_untrusted_ca_is_refused_with_what_to_add_where() {
    let ca = TestCa::new();
    let (_shop, tls) = shop_over_tls(ca.leaf(&["127.0.0.1"], (2040, 1, 1))).await;
    let message = refused(&server_config(url(&tls), None)).await;
    assert_eq!(
        message,
        format!(
            "server 'shop' ({}): its certificate is signed by a certificate authority this \
             desk does not trust; add the CA's PEM with `ca_file = \"…\"` under \
             [servers.shop] (or point SSL_CERT_FILE at it)",
            url(&tls)
        )
    );
}

#[tokio::test]
async fn a_ca_file_with_another_ca_is_still_refused_and_says_so() {
    let (ca, other, dir) = (
        TestCa::new(),
        TestCa::new(),
        tempfile::tempdir().expect("tmp"),
    );
    let (_shop, tls) = shop_over_tls(ca.leaf(&["127.0.0.1"], (2040, 1, 1))).await;
    let ca_file = other.write(dir.path());
    let message = refused(&server_config(url(&tls), Some(ca_file.clone()))).await;
    assert!(
        message.contains(&format!(
            "does not trust, even with ca_file = \"{}\"",
            ca_file.display()
        )),
        "{message}"
    );
}

#[tokio::test]
async fn a_certificate_for_another_name_is_refused_naming_both() {
    let (ca, dir) = (TestCa::new(), tempfile::tempdir().expect("tempdir"));
    let (_shop, tls) = shop_over_tls(ca.leaf(&["shop.internal"], (2040, 1, 1))).await;
    let message = refused(&server_config(url(&tls), Some(ca.write(dir.path())))).await;
    assert_eq!(
        message,
        format!(
            "server 'shop' ({}): its certificate is not valid for the name 127.0.0.1 (it is \
             for shop.internal); check the URL: it must use a name the certificate is for",
            url(&tls)
        )
    );
}

#[tokio::test]
async fn an_expired_certificate_is_refused_with_its_date() {
    let (ca, dir) = (TestCa::new(), tempfile::tempdir().expect("tempdir"));
    let (_shop, tls) = shop_over_tls(ca.leaf(&["127.0.0.1"], (2021, 3, 1))).await;
    let message = refused(&server_config(url(&tls), Some(ca.write(dir.path())))).await;
    assert!(
        message.contains(
            "its certificate expired on 2021-03-01 00:00 UTC; the server's operator must renew it"
        ),
        "{message}"
    );
}

#[tokio::test]
async fn a_plain_http_server_at_an_https_url_is_refused_never_used_in_plain_text() {
    let shop = shop().await;
    let url = format!("https://{}/mcp", shop.addr);
    let message = refused(&server_config(url.clone(), None)).await;
    assert_eq!(
        message,
        format!(
            "server 'shop' ({url}): it did not answer in TLS; if it serves plain http, the \
             URL must start with http:// (and only on a network you trust)"
        )
    );
}

#[tokio::test]
async fn a_server_that_never_answers_the_handshake_is_given_up_on_in_time() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind loopback");
    let addr = listener.local_addr().expect("address");
    // Accepts connections and never says a word.
    let silent = tokio::spawn(async move {
        let mut open = Vec::new();
        while let Ok((tcp, _)) = listener.accept().await {
            open.push(tcp);
        }
    });
    let config = server_config(format!("https://{addr}/mcp"), None);
    let (questions, _) = tokio::sync::mpsc::channel(1);
    let started = std::time::Instant::now();
    let outcome =
        ServerConn::connect_within("shop", &config, questions, None, Duration::from_secs(2)).await;
    silent.abort();
    let message = outcome.err().map(|e| e.to_string()).unwrap_or_default();
    assert!(
        message.ends_with("no usable answer within 2 s; is it an MCP server at that URL?"),
        "{message}"
    );
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[tokio::test]
async fn an_unreadable_ca_file_names_the_file() {
    let config = server_config(
        "https://127.0.0.1:9/mcp".to_owned(),
        Some("/nonexistent/test-ca.pem".into()),
    );
    let message = refused(&config).await;
    assert!(
        message.contains("cannot read the CA file /nonexistent/test-ca.pem named by ca_file"),
        "{message}"
    );
}

/// A servers-only config: the bundled one with `shop` as the only server.
fn desk_config(shop: ServerConfig) -> DeskConfig {
    let mut config = DeskConfig::bundled();
    config.servers = [("shop".to_owned(), shop)].into();
    config
}

#[tokio::test]
async fn servers_shows_the_transport_and_the_certificates_subject_and_expiry() {
    let (ca, dir) = (TestCa::new(), tempfile::tempdir().expect("tempdir"));
    let (_shop, tls) = shop_over_tls(ca.leaf(&["127.0.0.1", "localhost"], (2040, 1, 1))).await;
    let config = desk_config(server_config(url(&tls), Some(ca.write(dir.path()))));
    let out = support_desk::commands::servers::servers(config, None)
        .await
        .expect("servers")
        .text;
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], format!("shop  ({})", url(&tls)), "{out}");
    assert_eq!(
        lines[1], "  transport: Streamable HTTP over TLS (https)",
        "{out}"
    );
    assert!(
        lines[2].starts_with(&format!(
            "  certificate: CN=127.0.0.1 for 127.0.0.1, localhost; issued by CN={CA_NAME}; \
             expires 2040-01-01 00:00 UTC (in "
        )),
        "{out}"
    );
    assert!(lines[3].starts_with("  server: shop-support"), "{out}");
}

#[tokio::test]
async fn servers_shows_an_untrusted_certificate_as_refused_and_says_why() {
    let ca = TestCa::new();
    let (_shop, tls) = shop_over_tls(ca.leaf(&["127.0.0.1"], (2040, 1, 1))).await;
    let config = desk_config(server_config(url(&tls), None));
    let out = support_desk::commands::servers::servers(config, None)
        .await
        .expect("servers")
        .text;
    assert!(
        out.contains(&format!(
            "  certificate: REFUSED: CN=127.0.0.1 for 127.0.0.1; issued by CN={CA_NAME}; expires 2040-01-01 00:00 UTC"
        )),
        "{out}"
    );
    assert!(
        out.contains("  not connected: server 'shop' (")
            && out.contains(
                "does not trust; add the CA's PEM with `ca_file = \"…\"` under [servers.shop]"
            ),
        "{out}"
    );
}

#[tokio::test]
async fn servers_says_a_plain_http_server_is_not_encrypted() {
    let shop = shop().await;
    let config = desk_config(server_config(format!("http://{}/mcp", shop.addr), None));
    let out = support_desk::commands::servers::servers(config, None)
        .await
        .expect("servers")
        .text;
    assert!(
        out.contains(
            "  transport: Streamable HTTP, plain http (not encrypted)\n  server: shop-support"
        ),
        "{out}"
    );
}

#[tokio::test]
async fn ssl_cert_file_makes_the_private_ca_trusted_for_the_binary() {
    let (ca, dir) = (TestCa::new(), tempfile::tempdir().expect("tempdir"));
    let (_shop, tls) = shop_over_tls(ca.leaf(&["127.0.0.1"], (2040, 1, 1))).await;
    let config = dir.path().join("desk.toml");
    std::fs::write(
        &config,
        format!(
            "[servers.shop]\nenabled = false\n[servers.partner]\nenabled = false\n\
             [servers.remote]\nurl = \"{}\"\nheaders = {{ Authorization = \"Bearer {TOKEN}\" }}\n",
            url(&tls)
        ),
    )
    .expect("write config");
    let servers = |ssl_cert_file: Option<PathBuf>| {
        let mut command = tokio::process::Command::new(BIN);
        command
            .args(["servers", "--config"])
            .arg(&config)
            .arg("--data-dir")
            .arg(dir.path().join("data"))
            .env_remove("SSL_CERT_FILE")
            .env_remove("SSL_CERT_DIR");
        if let Some(file) = ssl_cert_file {
            command.env("SSL_CERT_FILE", file);
        }
        async move {
            let output = command.output().await.expect("run support-desk servers");
            String::from_utf8_lossy(&output.stdout).into_owned()
        }
    };
    let without = servers(None).await;
    assert!(
        without.contains("  not connected: server 'remote'"),
        "{without}"
    );
    let with = servers(Some(ca.write(dir.path()))).await;
    assert!(
        with.contains("  server: shop-support") && with.contains("  certificate: CN=127.0.0.1"),
        "{with}"
    );
}

fn question() -> ChatRequest {
    ChatRequest {
        messages: vec![Message::User {
            content: "Where is my parcel?".into(),
        }],
        tools: vec![],
        calls_closed: false,
    }
}

fn model(url: &str, ca_file: Option<&Path>) -> OpenAiChat {
    let (recipe, sampling) = (Recipe::NativeTools, Sampling::default());
    let timeout = Duration::from_secs(10);
    OpenAiChat::new(url, "m", None, recipe, sampling, timeout, ca_file).expect("model client")
}

/// The mock model behind TLS: (the mock, its terminator, the https base URL).
async fn model_over_tls(leaf: Leaf) -> (MockModel, Terminator, String) {
    let mock = MockModel::start(scripted(vec![words("It is on its way.")])).await;
    let backend: SocketAddr = mock
        .url
        .trim_start_matches("http://")
        .trim_end_matches("/v1")
        .parse()
        .expect("mock address");
    let tls = terminate(backend, leaf).await;
    let url = format!("https://{}/v1", tls.addr);
    (mock, tls, url)
}

#[tokio::test]
async fn the_model_answers_over_https_with_ca_file() {
    let (ca, dir) = (TestCa::new(), tempfile::tempdir().expect("tempdir"));
    let (mock, _tls, url) = model_over_tls(ca.leaf(&["127.0.0.1"], (2040, 1, 1))).await;
    let ca_file = ca.write(dir.path());
    let reply = model(&url, Some(&ca_file))
        .reply(&question(), &mut |_| {})
        .await
        .expect("a reply over https");
    assert!(
        matches!(&reply, Reply::Words { content } if content == "It is on its way."),
        "{reply:?}"
    );
    assert_eq!(mock.requests().len(), 1);
}

#[tokio::test]
async fn the_model_behind_an_untrusted_ca_or_another_name_is_refused_in_words() {
    let (ca, dir) = (TestCa::new(), tempfile::tempdir().expect("tempdir"));
    let (mock, _tls, url) = model_over_tls(ca.leaf(&["127.0.0.1"], (2040, 1, 1))).await;
    let error = model(&url, None)
        .reply(&question(), &mut |_| {})
        .await
        .expect_err("untrusted");
    assert!(matches!(error, ModelError::Certificate { .. }), "{error:?}");
    assert_eq!(
        error.to_string(),
        format!(
            "the model server at {url}: its certificate is signed by a certificate authority \
             this desk does not trust; add the CA's PEM with `ca_file = \"…\"` under [model] \
             (or point SSL_CERT_FILE at it)"
        )
    );

    let (_other, _tls, url) = model_over_tls(ca.leaf(&["models.internal"], (2040, 1, 1))).await;
    let error = model(&url, Some(&ca.write(dir.path())))
        .reply(&question(), &mut |_| {})
        .await
        .expect_err("wrong name");
    assert_eq!(
        error.to_string(),
        format!(
            "the model server at {url}: its certificate is not valid for the name 127.0.0.1 \
             (it is for models.internal); check the URL: it must use a name the certificate \
             is for"
        )
    );
    assert!(mock.requests().is_empty(), "nothing was sent without TLS");
}
