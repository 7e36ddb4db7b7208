//! The bundled servers' own start-up (`support-desk serve shop|partner`): the shop's world,
//! its database and keys, stdio or Streamable HTTP; and nothing of the desk.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, bail};
use clap::{Args, Subcommand};
use tokio_util::sync::CancellationToken;

use crate::partner::{Parcels, PartnerServer};
use crate::shop::http::{Access, StaffTokens, TOKENS_ENV};
use crate::shop::oauth::OAuthResource;
use crate::shop::server::ClaimTimes;
use crate::shop::store::is_postgres;
use crate::shop::{QuoteIds, ShopServer, ShopWorld, Store};

/// The environment variable that may hold the key signing the shop's `requestState`
/// (32 bytes or more). HTTP replicas behind one address must share it.
pub const STATE_KEY_ENV: &str = "SHOP_REQUEST_STATE_KEY";

#[derive(Debug, Subcommand)]
pub enum ServeCommand {
    /// The shop's server, `shop-support`: orders, products, refunds, policies.
    Shop(ShopArgs),
    /// The delivery partner's server, `partner-tracking`: parcel tracking.
    Partner(PartnerArgs),
}

#[derive(Debug, Args)]
pub struct ShopArgs {
    /// Serve over stdin/stdout (for a host that starts this as a child process).
    #[arg(long, conflicts_with = "http", required_unless_present = "http")]
    pub stdio: bool,
    /// Serve Streamable HTTP at http://ADDR/mcp; staff tokens come from SHOP_STAFF_TOKENS.
    #[arg(long, value_name = "ADDR")]
    pub http: Option<SocketAddr>,
    /// The staff roster for --http, instead of SHOP_STAFF_TOKENS: a TOML file of [[staff]]
    /// tables with id, role (staff or lead) and token_env (the variable holding the token).
    #[arg(long, value_name = "FILE", requires = "http")]
    pub staff: Option<PathBuf>,
    /// The SQLite file of record (created and seeded when new), ":memory:", or a
    /// postgres://NAME@HOST:PORT/DB address that replicas share (password from the address or
    /// PGPASSWORD). Default: shop.sqlite3 in the user's data directory.
    #[arg(long, value_name = "PATH|URL")]
    pub db: Option<PathBuf>,
    /// Derive quote IDs from this seed instead of at random, so a recorded run replays.
    /// For replays and tests only: seeded quote IDs can be worked out by anyone.
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    /// Read the shop's world from this directory instead of the bundled one.
    #[arg(long, value_name = "DIR")]
    pub assets: Option<PathBuf>,
    /// Offer file_damage_claim, a damage claim with the carrier that runs as an MCP task
    /// (off by default: a new tool changes what a model sees).
    #[arg(long)]
    pub claims: bool,
    /// With --claims: how long the carrier reviews a claim, in milliseconds.
    #[arg(long, value_name = "N", default_value_t = 20_000)]
    pub claim_review_ms: u64,
    /// With --claims: how long the carrier takes to settle a claim, in milliseconds.
    #[arg(long, value_name = "N", default_value_t = 10_000)]
    pub claim_settle_ms: u64,
    #[command(flatten)]
    pub polling: Polling,
    #[command(flatten)]
    pub oauth: Box<crate::shop::oauth::OAuthArgs>,
}

#[derive(Debug, Args)]
pub struct PartnerArgs {
    /// Serve over stdin/stdout.
    #[arg(long, required = true)]
    pub stdio: bool,
    /// Read parcels from this JSON file instead of the bundled ones.
    #[arg(long, value_name = "FILE")]
    pub parcels: Option<PathBuf>,
    #[command(flatten)]
    pub polling: Polling,
}

/// A stdio server's polling window; a desk that starts the server hands over its own.
#[derive(Debug, Args)]
pub struct Polling {
    /// With --stdio: how many microseconds to poll stdin for the client's next request after
    /// each answer, before the server's thread sleeps (0: never).
    #[arg(
        long,
        value_name = "US",
        env = crate::wire::busy_poll::WINDOW_ENV,
        default_value_t = crate::wire::busy_poll::DEFAULT_WINDOW_US
    )]
    pub busy_poll_us: u64,
}

impl Polling {
    pub fn window(&self) -> Duration {
        Duration::from_micros(self.busy_poll_us)
    }
}

pub async fn execute(command: ServeCommand) -> anyhow::Result<()> {
    match command {
        ServeCommand::Shop(args) => serve_shop(args).await,
        ServeCommand::Partner(args) => {
            let parcels = match &args.parcels {
                Some(path) => {
                    let text = std::fs::read_to_string(path)
                        .with_context(|| format!("reading {}", path.display()))?;
                    Parcels::parse(&text).with_context(|| format!("parsing {}", path.display()))?
                }
                None => Parcels::bundled(),
            };
            tracing::info!(parcels = parcels.len(), "partner-tracking serving on stdio");
            let busy_poll = args.polling.window();
            crate::serve::stdio(PartnerServer::new(Arc::new(parcels)), busy_poll).await?;
            Ok(())
        }
    }
}

async fn serve_shop(args: ShopArgs) -> anyhow::Result<()> {
    let world = match &args.assets {
        Some(dir) => ShopWorld::from_dir(dir)?,
        None => ShopWorld::bundled(),
    };
    let db = match args.db {
        Some(path) => path,
        None => default_db_path()?,
    };
    // The staff tokens are checked before anything is created: a mistake in them must not
    // leave a new database behind.
    let tokens = match (&args.http, &args.staff) {
        (Some(_), Some(file)) => {
            let text = std::fs::read_to_string(file)
                .with_context(|| format!("reading the staff roster {}", file.display()))?;
            Some(StaffTokens::from_roster(&text, |var| {
                std::env::var(var).ok()
            })?)
        }
        // With an authorization server, static tokens are optional.
        (Some(_), None) => match std::env::var(TOKENS_ENV).unwrap_or_default() {
            text if text.trim().is_empty() && args.oauth.oauth_issuer.is_some() => {
                Some(StaffTokens::none())
            }
            text => Some(StaffTokens::parse(&text)?),
        },
        (None, _) => None,
    };
    let oauth = match (&args.http, &args.oauth.oauth_issuer) {
        (Some(addr), Some(issuer)) => {
            let resource = OAuthResource::discover(&args.oauth, format!("http://{addr}/mcp"))
                .await
                .with_context(|| format!("trusting the authorization server {issuer}"))?;
            tracing::info!(issuer = %resource.issuer, resource = %resource.resource, "accepting its access tokens");
            Some(Arc::new(resource))
        }
        _ => None,
    };
    let ids = args.seed.map_or(QuoteIds::Random, QuoteIds::Seeded);
    if let QuoteIds::Seeded(seed) = ids {
        tracing::warn!(seed, "quote IDs are seeded: for replays and tests only");
    }
    let store = Store::open(&db, &world, ids).await.with_context(|| {
        if db.to_str().is_some_and(is_postgres) {
            "opening the shop's database in PostgreSQL".to_owned()
        } else {
            format!("opening the shop's database {}", db.display())
        }
    })?;
    let at = store.at(&db);
    let mut server = ShopServer::new(Arc::new(world), store, &state_key()?)?;
    if args.claims {
        server = server.with_claims(ClaimTimes {
            review: Duration::from_millis(args.claim_review_ms),
            settle: Duration::from_millis(args.claim_settle_ms),
        });
        tracing::info!(
            review_ms = args.claim_review_ms,
            settle_ms = args.claim_settle_ms,
            "offering damage claims"
        );
    }
    if let (Some(addr), Some(tokens)) = (args.http, tokens) {
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .with_context(|| format!("cannot listen on {addr}"))?;
        let shutdown = CancellationToken::new();
        let on_signal = shutdown.clone();
        tokio::spawn(async move {
            // Ctrl-C or SIGTERM stops the shop. A signal that cannot be watched (a script's
            // background job may start with SIGINT ignored) must not read as one.
            use tokio::signal::unix::{SignalKind, signal};
            let Ok(mut term) = signal(SignalKind::terminate()) else {
                tracing::warn!("cannot watch for SIGTERM; stop the shop with Ctrl-C");
                if tokio::signal::ctrl_c().await.is_ok() {
                    on_signal.cancel();
                }
                return;
            };
            tokio::select! {
                interrupted = tokio::signal::ctrl_c() => {
                    if interrupted.is_err() {
                        tracing::warn!("cannot watch for Ctrl-C; stop the shop with SIGTERM");
                        term.recv().await;
                    }
                }
                _ = term.recv() => {}
            }
            on_signal.cancel();
        });
        tracing::info!(addr = %listener.local_addr()?, db = %at, "shop-support serving Streamable HTTP at /mcp");
        let access = Access { tokens, oauth };
        crate::shop::http::serve(listener, server, access, shutdown).await?;
    } else {
        tracing::info!(db = %at, "shop-support serving on stdio");
        crate::serve::stdio(server, args.polling.window()).await?;
    }
    Ok(())
}

fn default_db_path() -> anyhow::Result<PathBuf> {
    let Some(dirs) = directories::ProjectDirs::from("", "", "support-desk") else {
        bail!("no home directory to keep the shop's database in; pass --db PATH");
    };
    std::fs::create_dir_all(dirs.data_dir())
        .with_context(|| format!("creating {}", dirs.data_dir().display()))?;
    Ok(dirs.data_dir().join("shop.sqlite3"))
}

/// The key that signs lead-form state: from the environment when replicas share one,
/// otherwise fresh for this process (forms then do not survive a restart, which is safe).
fn state_key() -> anyhow::Result<Vec<u8>> {
    match std::env::var(STATE_KEY_ENV) {
        Ok(key) if key.len() >= 32 => Ok(key.into_bytes()),
        Ok(_) => bail!("{STATE_KEY_ENV} must be at least 32 characters"),
        Err(_) => Ok(rand::random::<[u8; 32]>().to_vec()),
    }
}
