//! The HTTP client a sign-in uses when the server's config names a `ca_file`: discovery, the
//! token and registration requests, and refreshes reach the authorization server through the
//! desk's own TLS set-up, so a private CA trusted for the server is trusted for its sign-in.
//!
//! rmcp's own client (what a server without a `ca_file` signs in through) trusts only the
//! system's roots, and filters the addresses discovered hosts resolve to. This one keeps an
//! address policy of the same shape: a host the sign-in is sent to may resolve to a public or
//! private address, to a loopback one only when the server itself is on loopback, and never
//! to a link-local, unspecified, multicast or broadcast one (where a cloud's metadata service
//! answers).

use std::net::{IpAddr, SocketAddr};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use reqwest::Url;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use rmcp::transport::auth::{
    OAuthHttpClient, OAuthHttpClientError, OAuthHttpClientFuture, OAuthHttpRedirectPolicy,
    OAuthHttpRequest,
};

use crate::tls::TlsSetupError;

/// How long one request to the authorization server may take.
const TIMEOUT: Duration = Duration::from_secs(30);
/// The most an answer from the authorization server may hold.
const MAX_BODY: usize = 1024 * 1024;
/// Redirects followed where the sign-in allows them.
const MAX_REDIRECTS: usize = 10;

/// What an address is, for the policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reach {
    Public,
    Private,
    Loopback,
    /// Link-local, unspecified, multicast, broadcast: never a sign-in's.
    Reserved,
}

impl Reach {
    fn of(ip: IpAddr) -> Self {
        let ip = ip.to_canonical();
        match ip {
            IpAddr::V4(v4) => {
                let [a, b, ..] = v4.octets();
                if v4.is_loopback() {
                    Reach::Loopback
                } else if v4.is_link_local()
                    || v4.is_unspecified()
                    || v4.is_multicast()
                    || v4.is_broadcast()
                    || a == 0
                {
                    Reach::Reserved
                } else if v4.is_private() || (a == 100 && (64..128).contains(&b)) {
                    Reach::Private
                } else {
                    Reach::Public
                }
            }
            IpAddr::V6(v6) => {
                let first = v6.segments()[0];
                if v6.is_loopback() {
                    Reach::Loopback
                } else if v6.is_unspecified() || v6.is_multicast() || first & 0xffc0 == 0xfe80 {
                    Reach::Reserved
                } else if first & 0xfe00 == 0xfc00 {
                    Reach::Private
                } else {
                    Reach::Public
                }
            }
        }
    }
}

/// Which addresses a sign-in for one server may reach.
#[derive(Debug, Clone, Copy)]
struct Policy {
    loopback: bool,
}

impl Policy {
    /// The policy for a server at `server_url`: loopback only for a server on loopback.
    fn for_server(server_url: &Url) -> Self {
        let loopback = match host_ip(server_url) {
            Some(ip) => ip.to_canonical().is_loopback(),
            None => server_url
                .host_str()
                .is_some_and(|name| name.eq_ignore_ascii_case("localhost")),
        };
        Self { loopback }
    }

    fn allows(self, ip: IpAddr) -> bool {
        match Reach::of(ip) {
            Reach::Public | Reach::Private => true,
            Reach::Loopback => self.loopback,
            Reach::Reserved => false,
        }
    }

    /// Whether a URL may be requested: a host named by address must be allowed; a host named
    /// by name is checked as it resolves.
    fn allows_url(self, url: &Url) -> bool {
        match host_ip(url) {
            Some(ip) => self.allows(ip),
            None => url.host_str().is_some(),
        }
    }
}

/// The address a URL names as its host, if it names one (`[::1]` as well as `127.0.0.1`).
fn host_ip(url: &Url) -> Option<IpAddr> {
    let host = url.host_str()?;
    let host = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    host.parse().ok()
}

/// Resolves names through the system and keeps only the addresses the policy allows. The
/// hosts of the proxies the environment names (`HTTPS_PROXY` and the like, which reqwest
/// uses) are the person's own choice and resolve as they are.
struct Filtered {
    policy: Policy,
    proxies: Arc<[String]>,
}

impl Filtered {
    fn new(policy: Policy) -> Self {
        let proxies = ["HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY"]
            .into_iter()
            .flat_map(|var| [var.to_owned(), var.to_ascii_lowercase()])
            .filter_map(|var| std::env::var(var).ok())
            .filter_map(|proxy| proxy_host(&proxy))
            .collect();
        Self { policy, proxies }
    }
}

/// The host of a proxy as the environment names it (`http://proxy.corp:3128`, `proxy:3128`).
fn proxy_host(proxy: &str) -> Option<String> {
    let url = if proxy.contains("://") {
        Url::parse(proxy)
    } else {
        Url::parse(&format!("http://{proxy}"))
    };
    Some(url.ok()?.host_str()?.to_ascii_lowercase())
}

impl Resolve for Filtered {
    fn resolve(&self, name: Name) -> Resolving {
        let (policy, proxies) = (self.policy, Arc::clone(&self.proxies));
        Box::pin(async move {
            let host = name.as_str().to_owned();
            let found: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            let proxy = proxies.iter().any(|p| p.eq_ignore_ascii_case(&host));
            let allowed: Vec<SocketAddr> = found
                .iter()
                .copied()
                .filter(|addr| proxy || policy.allows(addr.ip()))
                .collect();
            if allowed.is_empty() {
                return Err(Refused(format!(
                    "{host} resolves only to addresses a sign-in may not reach ({})",
                    found
                        .iter()
                        .map(|a| a.ip().to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                ))
                .into());
            }
            Ok(Box::new(allowed.into_iter()) as Addrs)
        })
    }
}

#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct Refused(String);

fn refused_address(url: &Url) -> Refused {
    Refused(format!(
        "{url} is not an address a sign-in may reach: link-local and reserved addresses never are, loopback only for a server on loopback"
    ))
}

/// The desk's client for one server's sign-in: one reqwest client that follows redirects (to
/// allowed addresses, at most ten) and one that stops at them, both on the desk's TLS.
pub struct SignInHttp {
    follow: reqwest::Client,
    stop: reqwest::Client,
    policy: Policy,
}

impl SignInHttp {
    /// The client for signing in to the server at `server_url`, trusting the CA in `ca_file`
    /// (if any) as the desk does for the server itself.
    pub fn new(server_url: &Url, ca_file: Option<&Path>) -> Result<Arc<Self>, TlsSetupError> {
        let policy = Policy::for_server(server_url);
        let build = |redirect: reqwest::redirect::Policy| {
            crate::tls::http_client_builder(ca_file)?
                .timeout(TIMEOUT)
                .redirect(redirect)
                .dns_resolver(Arc::new(Filtered::new(policy)))
                .build()
                .map_err(|e| TlsSetupError::Client(e.to_string()))
        };
        let follow = reqwest::redirect::Policy::custom(move |attempt| {
            if !policy.allows_url(attempt.url()) {
                let refused = refused_address(attempt.url());
                attempt.error(refused)
            } else if attempt.previous().len() > MAX_REDIRECTS {
                attempt.error(Refused(format!("more than {MAX_REDIRECTS} redirects")))
            } else {
                attempt.follow()
            }
        });
        Ok(Arc::new(Self {
            follow: build(follow)?,
            stop: build(reqwest::redirect::Policy::none())?,
            policy,
        }))
    }

    async fn execute(
        &self,
        request: OAuthHttpRequest,
    ) -> Result<http::Response<Vec<u8>>, OAuthHttpClientError> {
        let OAuthHttpRequest {
            request,
            redirect_policy,
            ..
        } = request;
        let client = match redirect_policy {
            OAuthHttpRedirectPolicy::Stop => &self.stop,
            _ => &self.follow,
        };
        let request = reqwest::Request::try_from(request)?;
        if !self.policy.allows_url(request.url()) {
            return Err(refused_address(request.url()).into());
        }
        let mut response = client.execute(request).await?;
        let mut answer = http::Response::builder()
            .status(response.status())
            .version(response.version());
        for (name, value) in response.headers() {
            answer = answer.header(name, value);
        }
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await? {
            if body.len() + chunk.len() > MAX_BODY {
                return Err(Refused(format!(
                    "the authorization server's answer is over {MAX_BODY} bytes"
                ))
                .into());
            }
            body.extend_from_slice(&chunk);
        }
        Ok(answer.body(body)?)
    }
}

impl SignInHttp {
    /// Posts `form` to `url` (an endpoint the authorization server's metadata names), with
    /// HTTP Basic client authentication when `basic` holds a client's ID and secret, without
    /// following a redirect. The answer's status.
    pub async fn post_form(
        &self,
        url: &str,
        form: &[(&str, &str)],
        basic: Option<(&str, &str)>,
    ) -> Result<reqwest::StatusCode, OAuthHttpClientError> {
        let url = Url::parse(url)?;
        if !self.policy.allows_url(&url) {
            return Err(refused_address(&url).into());
        }
        let mut body = form_urlencoded::Serializer::new(String::new());
        body.extend_pairs(form);
        let mut request = self
            .stop
            .post(url.clone())
            .header(
                reqwest::header::CONTENT_TYPE,
                "application/x-www-form-urlencoded",
            )
            .body(body.finish());
        if let Some((id, secret)) = basic {
            request = request.basic_auth(id, Some(secret));
        }
        Ok(request.send().await?.status())
    }
}

impl OAuthHttpClient for SignInHttp {
    fn execute(&self, request: OAuthHttpRequest) -> OAuthHttpClientFuture<'_> {
        Box::pin(SignInHttp::execute(self, request))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(text: &str) -> IpAddr {
        text.parse().expect("an address")
    }

    #[test]
    fn addresses_fall_into_the_classes_the_policy_names() {
        for (text, reach) in [
            ("8.8.8.8", Reach::Public),
            ("2606:4700::1111", Reach::Public),
            ("10.0.0.9", Reach::Private),
            ("172.16.4.1", Reach::Private),
            ("192.168.1.20", Reach::Private),
            ("100.64.0.1", Reach::Private),
            ("fd12::1", Reach::Private),
            ("127.0.0.1", Reach::Loopback),
            ("::1", Reach::Loopback),
            ("::ffff:127.0.0.1", Reach::Loopback),
            ("169.254.169.254", Reach::Reserved),
            ("::ffff:169.254.169.254", Reach::Reserved),
            ("fe80::1", Reach::Reserved),
            ("0.0.0.0", Reach::Reserved),
            ("::", Reach::Reserved),
            ("224.0.0.1", Reach::Reserved),
            ("255.255.255.255", Reach::Reserved),
        ] {
            assert_eq!(Reach::of(ip(text)), reach, "{text}");
        }
    }

    #[test]
    fn loopback_is_reachable_only_for_a_server_on_loopback() {
        let internal = Policy::for_server(&Url::parse("https://mcp.corp/mcp").expect("url"));
        let local = Policy::for_server(&Url::parse("https://127.0.0.1:8443/mcp").expect("url"));
        let named = Policy::for_server(&Url::parse("https://localhost/mcp").expect("url"));
        assert!(!internal.allows(ip("127.0.0.1")));
        assert!(local.allows(ip("127.0.0.1")) && named.allows(ip("::1")));
        for policy in [internal, local, named] {
            assert!(policy.allows(ip("10.0.0.9")) && policy.allows(ip("8.8.8.8")));
            assert!(!policy.allows(ip("169.254.169.254")));
        }
    }

    #[test]
    fn a_url_by_address_is_checked_and_one_by_name_waits_for_its_resolution() {
        let internal = Policy::for_server(&Url::parse("https://mcp.corp/mcp").expect("url"));
        let url = |text: &str| Url::parse(text).expect("url");
        assert!(!internal.allows_url(&url("http://169.254.169.254/latest/meta-data")));
        assert!(!internal.allows_url(&url("http://[::1]:8080/token")));
        assert!(internal.allows_url(&url("https://10.1.2.3/token")));
        assert!(internal.allows_url(&url("https://sso.corp/token")));
    }

    fn filtered(server: &str, proxies: &[&str]) -> Filtered {
        Filtered {
            policy: Policy::for_server(&Url::parse(server).expect("url")),
            proxies: proxies.iter().map(|p| (*p).to_owned()).collect(),
        }
    }

    async fn localhost(resolver: &Filtered) -> Result<Vec<SocketAddr>, String> {
        let name: Name = "localhost".parse().expect("a name");
        match resolver.resolve(name).await {
            Ok(found) => Ok(found.collect()),
            Err(e) => Err(e.to_string()),
        }
    }

    #[tokio::test]
    async fn a_name_that_resolves_only_to_loopback_is_refused_for_a_server_elsewhere() {
        let refused = localhost(&filtered("https://mcp.corp/mcp", &[]))
            .await
            .expect_err("refused");
        assert!(
            refused.contains("localhost resolves only to addresses a sign-in may not reach ("),
            "{refused}"
        );
        for resolver in [
            filtered("https://localhost:8443/mcp", &[]),
            filtered("https://mcp.corp/mcp", &["localhost"]),
        ] {
            let found = localhost(&resolver).await.expect("resolved");
            assert!(!found.is_empty() && found.iter().all(|a| a.ip().is_loopback()));
        }
    }

    #[test]
    fn a_proxys_host_is_read_with_or_without_its_scheme() {
        assert_eq!(
            proxy_host("http://Proxy.Corp:3128").as_deref(),
            Some("proxy.corp")
        );
        assert_eq!(proxy_host("localhost:3128").as_deref(), Some("localhost"));
        assert_eq!(
            proxy_host("socks5://10.0.0.1:1080").as_deref(),
            Some("10.0.0.1")
        );
    }
}
