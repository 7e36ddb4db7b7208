//! TLS for the desk's two HTTP clients: the MCP servers it reaches over Streamable HTTP and
//! the OpenAI-compatible model.
//!
//! One stack for both: rustls with the ring provider. A client trusts the system's root
//! certificates (read by `rustls-native-certs`, which honours `SSL_CERT_FILE` and
//! `SSL_CERT_DIR` the way OpenSSL does: when set, they replace the system's store) plus the
//! PEM certificates of a `ca_file` the config names, for shops that run their own CA.
//!
//! A refused certificate becomes a [`CertProblem`], which says in plain words what was wrong
//! and what to do. [`inspect`] connects once to read the certificate a server presents
//! (subject, names, issuer, expiry) for `support-desk servers`.
//!
//! This module never turns verification off, never accepts a certificate the verifier
//! refused, and never falls back to plain http: an `https://` URL that cannot be verified is
//! an error.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, DigitallySignedStruct, RootCertStore, SignatureScheme};

/// How long a TCP connection may take, and (in [`inspect`]) the TLS handshake after it.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// A CA file or the system's store could not be used.
#[derive(Debug, thiserror::Error)]
pub enum TlsSetupError {
    #[error("cannot read the CA file {path} named by ca_file: {detail}; check the path")]
    ReadCaFile { path: PathBuf, detail: String },
    #[error(
        "the CA file {path} named by ca_file holds no certificate; it must hold the CA's \
         certificate in PEM (-----BEGIN CERTIFICATE-----)"
    )]
    EmptyCaFile { path: PathBuf },
    #[error(
        "the CA file {path} named by ca_file holds a certificate that cannot be used as a CA: {detail}"
    )]
    BadCaCertificate { path: PathBuf, detail: String },
    #[error("the HTTP client could not be built: {0}")]
    Client(String),
}

/// The crypto provider of every TLS connection the desk makes.
fn provider() -> Arc<CryptoProvider> {
    static PROVIDER: OnceLock<Arc<CryptoProvider>> = OnceLock::new();
    Arc::clone(PROVIDER.get_or_init(|| Arc::new(rustls::crypto::ring::default_provider())))
}

/// Makes ring the process-wide rustls provider, so that any other rustls client in the
/// process (a `reqwest::Client::new()` somewhere) works too. Harmless when already set.
pub fn install_default_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// The system's root certificates (or `SSL_CERT_FILE`'s), read once per process.
fn system_roots() -> &'static [CertificateDer<'static>] {
    static ROOTS: OnceLock<Vec<CertificateDer<'static>>> = OnceLock::new();
    ROOTS.get_or_init(|| {
        let found = rustls_native_certs::load_native_certs();
        for error in &found.errors {
            tracing::warn!(%error, "a system root certificate could not be read");
        }
        if found.certs.is_empty() {
            tracing::warn!(
                "no system root certificates found: https needs ca_file or SSL_CERT_FILE"
            );
        }
        found.certs
    })
}

/// Whether any root certificate came from the system's store (or `SSL_CERT_FILE`).
pub fn has_system_roots() -> bool {
    !system_roots().is_empty()
}

/// The certificates of a PEM CA file.
fn ca_certificates(path: &Path) -> Result<Vec<CertificateDer<'static>>, TlsSetupError> {
    let read_failed = |detail: String| TlsSetupError::ReadCaFile {
        path: path.to_owned(),
        detail,
    };
    let certs = CertificateDer::pem_file_iter(path)
        .map_err(|e| read_failed(pem_error(e)))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| read_failed(pem_error(e)))?;
    if certs.is_empty() {
        return Err(TlsSetupError::EmptyCaFile {
            path: path.to_owned(),
        });
    }
    Ok(certs)
}

fn pem_error(error: rustls::pki_types::pem::Error) -> String {
    match error {
        rustls::pki_types::pem::Error::Io(e) => e.to_string(),
        other => format!("it is not valid PEM ({other:?})"),
    }
}

/// The roots a client trusts: the system's plus the CA file's.
fn root_store(ca_file: Option<&Path>) -> Result<RootCertStore, TlsSetupError> {
    let mut roots = RootCertStore::empty();
    roots.add_parsable_certificates(system_roots().iter().cloned());
    if let Some(path) = ca_file {
        for cert in ca_certificates(path)? {
            roots
                .add(cert)
                .map_err(|e| TlsSetupError::BadCaCertificate {
                    path: path.to_owned(),
                    detail: e.to_string(),
                })?;
        }
    }
    Ok(roots)
}

/// The verifier of a client: webpki against the roots, or, with no root at all, one that
/// refuses every certificate as unknown (so plain http still works on such a machine).
fn verifier(ca_file: Option<&Path>) -> Result<Arc<dyn ServerCertVerifier>, TlsSetupError> {
    let roots = root_store(ca_file)?;
    if roots.is_empty() {
        return Ok(Arc::new(NoRoots(provider())));
    }
    let verifier = WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider())
        .build()
        .map_err(|e| TlsSetupError::Client(e.to_string()))?;
    Ok(verifier)
}

fn config_with(
    verifier: Arc<dyn ServerCertVerifier>,
) -> Result<rustls::ClientConfig, TlsSetupError> {
    Ok(rustls::ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(|e| TlsSetupError::Client(e.to_string()))?
        .dangerous() // only to plug in our verifier; it always verifies
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth())
}

/// A rustls client config trusting the system's roots and the CA file's.
pub fn client_config(ca_file: Option<&Path>) -> Result<rustls::ClientConfig, TlsSetupError> {
    config_with(verifier(ca_file)?)
}

/// A reqwest client builder whose TLS trusts the system's roots and the CA file's. The
/// caller adds its own settings (redirects, timeouts) and builds it.
pub fn http_client_builder(
    ca_file: Option<&Path>,
) -> Result<reqwest::ClientBuilder, TlsSetupError> {
    Ok(reqwest::Client::builder()
        .tls_backend_preconfigured(client_config(ca_file)?)
        .connect_timeout(CONNECT_TIMEOUT))
}

/// [`http_client_builder`], built.
pub fn http_client(ca_file: Option<&Path>) -> Result<reqwest::Client, TlsSetupError> {
    http_client_builder(ca_file)?
        .build()
        .map_err(|e| TlsSetupError::Client(e.to_string()))
}

/// Refuses every certificate as signed by an unknown CA: there is no root to check against.
#[derive(Debug)]
struct NoRoots(Arc<CryptoProvider>);

impl ServerCertVerifier for NoRoots {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Err(rustls::Error::InvalidCertificate(
            CertificateError::UnknownIssuer,
        ))
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// Keeps the certificate a server presented, then lets the real verifier decide.
#[derive(Debug)]
struct Keeping {
    inner: Arc<dyn ServerCertVerifier>,
    presented: Mutex<Option<CertificateDer<'static>>>,
}

impl ServerCertVerifier for Keeping {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        *self.presented.lock().unwrap_or_else(|p| p.into_inner()) =
            Some(end_entity.clone().into_owned());
        self.inner
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.inner.supported_verify_schemes()
    }
}

/// Steps from an error to the one inside it that its `source()` does not give.
pub type Peel = for<'a> fn(
    &'a (dyn std::error::Error + 'static),
) -> Option<&'a (dyn std::error::Error + 'static)>;

/// What was wrong with a TLS connection, read from rustls's own error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CertProblem {
    /// The certificate does not name the host in the URL.
    WrongName {
        expected: String,
        presented: Vec<String>,
    },
    /// Signed by a CA that is not among the trusted roots.
    Untrusted,
    /// Past its expiry (the date when rustls said it).
    Expired {
        not_after: Option<String>,
    },
    /// Not valid yet (the date when rustls said it).
    NotYetValid {
        not_before: Option<String>,
    },
    Revoked,
    /// The peer did not answer in TLS at all (often a plain http server).
    NotTls,
    /// Anything else rustls refused, in its words.
    Other(String),
}

impl CertProblem {
    /// The problem in rustls's error, if that is what it is.
    pub fn from_rustls(error: &rustls::Error) -> Self {
        use CertificateError as C;
        match error {
            rustls::Error::InvalidCertificate(cert) => match cert {
                C::NotValidForNameContext {
                    expected,
                    presented,
                } => CertProblem::WrongName {
                    expected: server_name_text(expected),
                    presented: presented.iter().map(|name| bare_name(name)).collect(),
                },
                C::NotValidForName => CertProblem::WrongName {
                    expected: String::new(),
                    presented: vec![],
                },
                // A bad signature under a trusted CA's name: signed by another CA of that name.
                C::UnknownIssuer | C::BadSignature => CertProblem::Untrusted,
                C::ExpiredContext { not_after, .. } => CertProblem::Expired {
                    not_after: Some(date(not_after.as_secs())),
                },
                C::Expired => CertProblem::Expired { not_after: None },
                C::NotValidYetContext { not_before, .. } => CertProblem::NotYetValid {
                    not_before: Some(date(not_before.as_secs())),
                },
                C::NotValidYet => CertProblem::NotYetValid { not_before: None },
                C::Revoked => CertProblem::Revoked,
                other => CertProblem::Other(format!("its certificate was refused ({other:?})")),
            },
            rustls::Error::InvalidMessage(_) => CertProblem::NotTls,
            other => CertProblem::Other(format!("the TLS handshake failed ({other})")),
        }
    }

    /// The first rustls error in an error's chain, as a problem. Looks inside
    /// `std::io::Error`s too, which hide their inner error from `source()`.
    pub fn find(error: &(dyn std::error::Error + 'static)) -> Option<Self> {
        Self::find_with(error, |_| None)
    }

    /// Like [`find`](Self::find), with `peel` to step into errors that keep their inner
    /// error out of `source()` (it returns `None` for any other).
    pub fn find_with(error: &(dyn std::error::Error + 'static), peel: Peel) -> Option<Self> {
        let mut next = Some(error);
        while let Some(error) = next {
            if let Some(rustls) = error.downcast_ref::<rustls::Error>() {
                return Some(Self::from_rustls(rustls));
            }
            if let Some(io) = error.downcast_ref::<std::io::Error>()
                && let Some(inner) = io.get_ref()
            {
                next = Some(inner);
                continue;
            }
            next = peel(error).or_else(|| error.source());
        }
        None
    }

    /// The problem and what to do, for a connection configured under `table` (`[servers.shop]`
    /// or `[model]`) with the CA file it had, if any. Starts with "its certificate …".
    pub fn advice(&self, table: &str, ca_file: Option<&Path>) -> String {
        match self {
            CertProblem::WrongName {
                expected,
                presented,
            } => {
                let names = if presented.is_empty() {
                    " (it names no host: its subject alternative names are empty)".to_owned()
                } else {
                    format!(" (it is for {})", presented.join(", "))
                };
                let expected = if expected.is_empty() {
                    "the host in the URL".to_owned()
                } else {
                    format!("the name {expected}")
                };
                format!(
                    "its certificate is not valid for {expected}{names}; check the URL: it \
                     must use a name the certificate is for"
                )
            }
            CertProblem::Untrusted => match ca_file {
                Some(path) => format!(
                    "its certificate is signed by a certificate authority this desk does not \
                     trust, even with ca_file = \"{}\"; that file must hold the certificate of \
                     the CA that signed the server's certificate",
                    path.display()
                ),
                None if !has_system_roots() => format!(
                    "its certificate cannot be checked: this machine has no trusted root \
                     certificates; install the system's CA certificates, or add the CA's PEM \
                     with `ca_file = \"…\"` under {table} (or point SSL_CERT_FILE at it)"
                ),
                None => format!(
                    "its certificate is signed by a certificate authority this desk does not \
                     trust; add the CA's PEM with `ca_file = \"…\"` under {table} (or point \
                     SSL_CERT_FILE at it)"
                ),
            },
            CertProblem::Expired { not_after } => format!(
                "its certificate expired{}; the server's operator must renew it (check this \
                 machine's clock too)",
                not_after
                    .as_ref()
                    .map(|d| format!(" on {d}"))
                    .unwrap_or_default()
            ),
            CertProblem::NotYetValid { not_before } => format!(
                "its certificate is not valid yet{}; check this machine's clock",
                not_before
                    .as_ref()
                    .map(|d| format!(" (valid from {d})"))
                    .unwrap_or_default()
            ),
            CertProblem::Revoked => {
                "its certificate has been revoked; the server's operator must replace it".to_owned()
            }
            CertProblem::NotTls => "it did not answer in TLS; if it serves plain http, the URL \
                                    must start with http:// (and only on a network you trust)"
                .to_owned(),
            CertProblem::Other(words) => words.clone(),
        }
    }
}

/// `shop.example.com` from webpki's `DnsName("shop.example.com")` (and the like for IP
/// addresses); anything else as it is.
fn bare_name(presented: &str) -> String {
    let inner = presented
        .split_once('(')
        .and_then(|(_, rest)| rest.strip_suffix(')'));
    match inner {
        Some(inner) => inner.trim_matches('"').to_owned(),
        None => presented.to_owned(),
    }
}

fn server_name_text(name: &ServerName<'_>) -> String {
    match name {
        ServerName::DnsName(dns) => dns.as_ref().to_owned(),
        ServerName::IpAddress(ip) => std::net::IpAddr::from(*ip).to_string(),
        other => format!("{other:?}"),
    }
}

/// A UTC time as `2027-08-01 12:00 UTC`.
pub fn date(unix_secs: u64) -> String {
    let secs = i64::try_from(unix_secs).unwrap_or(i64::MAX);
    date_i64(secs)
}

fn date_i64(secs: i64) -> String {
    let t = crate::clock::Civil::from_unix(secs);
    format!(
        "{:04}-{:02}-{:02} {:02}:{:02} UTC",
        t.year, t.month, t.day, t.hour, t.minute
    )
}

/// What a server's certificate says, read from the certificate itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CertSummary {
    /// The subject's distinguished name, like `CN=shop.example.com`.
    pub subject: String,
    /// The DNS names and IP addresses it is for (subject alternative names).
    pub names: Vec<String>,
    pub issuer: String,
    /// `2027-08-01 12:00 UTC`.
    pub not_after: String,
    /// Whole days until it expires; negative once it has.
    pub days_left: i64,
}

impl CertSummary {
    /// Reads a DER certificate.
    pub fn parse(der: &[u8]) -> Result<Self, String> {
        use x509_parser::prelude::*;
        let (_, cert) = X509Certificate::from_der(der)
            .map_err(|e| format!("the certificate could not be read ({e})"))?;
        let mut names = Vec::new();
        if let Ok(Some(san)) = cert.subject_alternative_name() {
            for name in &san.value.general_names {
                match name {
                    GeneralName::DNSName(dns) => names.push((*dns).to_owned()),
                    GeneralName::IPAddress(bytes) => names.push(ip_text(bytes)),
                    _ => {}
                }
            }
        }
        let not_after = cert.validity().not_after.timestamp();
        let now = crate::clock::unix_secs();
        Ok(Self {
            subject: cert.subject().to_string(),
            names,
            issuer: cert.issuer().to_string(),
            not_after: date_i64(not_after),
            days_left: (not_after - now).div_euclid(86_400),
        })
    }

    /// One line: `CN=shop for shop, 127.0.0.1; issued by CN=Shop CA; expires 2027-08-01 12:00 UTC (in 364 days)`.
    pub fn line(&self) -> String {
        let names = if self.names.is_empty() {
            String::new()
        } else {
            format!(" for {}", self.names.join(", "))
        };
        let left = match self.days_left {
            d if d < 0 => "EXPIRED".to_owned(),
            1 => "in 1 day".to_owned(),
            d => format!("in {d} days"),
        };
        format!(
            "{}{names}; issued by {}; expires {} ({left})",
            self.subject, self.issuer, self.not_after
        )
    }
}

fn ip_text(bytes: &[u8]) -> String {
    if let Ok(v4) = <[u8; 4]>::try_from(bytes) {
        return std::net::Ipv4Addr::from(v4).to_string();
    }
    if let Ok(v6) = <[u8; 16]>::try_from(bytes) {
        return std::net::Ipv6Addr::from(v6).to_string();
    }
    hex::encode(bytes)
}

/// What one TLS handshake with a server showed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inspection {
    /// The certificate it presented, whether or not it was accepted.
    pub certificate: Option<Result<CertSummary, String>>,
    /// `Ok` when the certificate was verified against the desk's roots.
    pub verdict: Result<(), CertProblem>,
}

/// Why [`inspect`] could not get as far as a handshake.
#[derive(Debug, thiserror::Error)]
pub enum InspectError {
    #[error("{0} is not an https:// URL")]
    NotHttps(String),
    #[error(transparent)]
    Setup(#[from] TlsSetupError),
    #[error("could not connect to {address}: {detail}")]
    Connect { address: String, detail: String },
    #[error("{address} did not complete a TLS handshake within {} s", CONNECT_TIMEOUT.as_secs())]
    Timeout { address: String },
}

/// Connects once to an `https://` URL, runs the TLS handshake with the same trust a client
/// of [`http_client`] has, and reports the certificate presented and the verdict. Sends no
/// request.
pub async fn inspect(url: &str, ca_file: Option<&Path>) -> Result<Inspection, InspectError> {
    let not_https = || InspectError::NotHttps(url.to_owned());
    let parsed = reqwest::Url::parse(url).map_err(|_| not_https())?;
    if parsed.scheme() != "https" {
        return Err(not_https());
    }
    let host = parsed
        .host_str()
        .ok_or_else(not_https)?
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_owned();
    let name = match host.parse::<std::net::IpAddr>() {
        Ok(ip) => ServerName::IpAddress(ip.into()),
        Err(_) => ServerName::try_from(host.clone()).map_err(|_| not_https())?,
    };
    let port = parsed.port_or_known_default().unwrap_or(443);
    let address = format!("{host}:{port}");
    let keeping = Arc::new(Keeping {
        inner: verifier(ca_file)?,
        presented: Mutex::new(None),
    });
    let connector = tokio_rustls::TlsConnector::from(Arc::new(config_with(
        Arc::clone(&keeping) as Arc<dyn ServerCertVerifier>
    )?));
    let timeout = || InspectError::Timeout {
        address: address.clone(),
    };
    let tcp = tokio::time::timeout(
        CONNECT_TIMEOUT,
        tokio::net::TcpStream::connect((host.as_str(), port)),
    )
    .await
    .map_err(|_| timeout())?
    .map_err(|e| InspectError::Connect {
        address: address.clone(),
        detail: e.to_string(),
    })?;
    let handshake = tokio::time::timeout(CONNECT_TIMEOUT, connector.connect(name, tcp))
        .await
        .map_err(|_| timeout())?;
    let verdict = match handshake {
        Ok(_stream) => Ok(()),
        Err(error) => Err(CertProblem::find(&error)
            .unwrap_or_else(|| CertProblem::Other(format!("the TLS handshake failed ({error})")))),
    };
    let presented = keeping
        .presented
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .take();
    Ok(Inspection {
        certificate: presented.map(|der| CertSummary::parse(&der)),
        verdict,
    })
}

#[cfg(test)]
mod tests;
