//! A throwaway PostgreSQL for one test: a cluster of its own in a temporary directory
//! (initdb and pg_ctl as the unprivileged `postgres` user when run as root, listening on a free
//! port on 127.0.0.1 only, password logins over TCP), stopped and removed when dropped, also
//! after a panic. With `DESK_TEST_POSTGRES` (an administrator's address) a test gets a fresh
//! database on that server instead, and its people carry a suffix so tests never share a role.
//!
//! Without PostgreSQL a test says so in one line and passes, unless `DESK_REQUIRE_POSTGRES=1`
//! (as in CI), when it fails.

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::Command;
use std::str::FromStr;
use std::sync::atomic::{AtomicU32, Ordering};

use support_desk::record::postgres::{team_add, team_init};
use tokio_postgres::NoTls;
use tokio_postgres::config::Host;

const NOT_FOUND: &str = "PostgreSQL not found; install Debian's postgresql package (apt-get install postgresql) or set DESK_TEST_POSTGRES";
const ADMIN_PASSWORD: &str = "admin-pw";

/// Roles belong to the whole server: on a shared one, inits take turns.
static INIT: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());
static NEXT: AtomicU32 = AtomicU32::new(0);

pub struct PgCluster {
    /// The temporary directory of a cluster of our own (`None`: a shared server).
    own: Option<OwnCluster>,
    host: String,
    port: u16,
    admin_user: String,
    admin_password: String,
    pub db: String,
    /// Appended to every person's name on a shared server.
    suffix: String,
    people: std::sync::Mutex<Vec<String>>,
}

struct OwnCluster {
    dir: PathBuf,
    bin: PathBuf,
}

/// One person on the team: their role's name and the address they log in with.
#[derive(Debug, Clone)]
pub struct Person {
    pub name: String,
    pub url: String,
}

/// The test team: two staff and a lead.
pub struct Team {
    pub ana: Person,
    pub bo: Person,
    pub lee: Person,
}

/// A fresh database for this test, or `None` (having said why) when PostgreSQL is missing.
pub async fn start() -> Option<PgCluster> {
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    if let Ok(url) = std::env::var("DESK_TEST_POSTGRES") {
        return Some(shared(&url, n).await);
    }
    let Some(bin) = find_bin() else {
        if std::env::var("DESK_REQUIRE_POSTGRES").as_deref() == Ok("1") {
            panic!("{NOT_FOUND} (DESK_REQUIRE_POSTGRES=1: these tests must run)");
        }
        say_skipped();
        return None;
    };
    let cluster = tokio::task::spawn_blocking(move || own(bin))
        .await
        .expect("the cluster starts");
    cluster.create_db("postgres").await;
    Some(cluster)
}

#[allow(
    clippy::print_stdout,
    reason = "the one line that says this test did not run"
)]
fn say_skipped() {
    println!("skipped: {NOT_FOUND}");
}

impl PgCluster {
    /// The administrator's address for the test's database.
    pub fn admin_url(&self) -> String {
        self.url(&self.admin_user, &self.admin_password)
    }

    /// The administrator's address as a `postgres://` URL, with the password in it unless
    /// `with_password` is false (then it comes from `PGPASSWORD`: [`Self::admin_password`]).
    pub fn admin_uri(&self, with_password: bool) -> String {
        let password = match with_password {
            true => format!(":{}", percent(&self.admin_password)),
            false => String::new(),
        };
        format!(
            "postgres://{}{password}@{}:{}/{}",
            percent(&self.admin_user),
            self.host,
            self.port,
            self.db
        )
    }

    pub fn admin_password(&self) -> &str {
        &self.admin_password
    }

    pub fn admin_user(&self) -> &str {
        &self.admin_user
    }

    /// How the desk names the test's database in its messages: `host:port/database`.
    pub fn at(&self) -> String {
        format!("{}:{}/{}", self.host, self.port, self.db)
    }

    pub fn url(&self, user: &str, password: &str) -> String {
        format!(
            "host={} port={} user={user} password='{}' dbname={}",
            self.host,
            self.port,
            password.replace('\\', "\\\\").replace('\'', "\\'"),
            self.db
        )
    }

    /// An administrator's connection to the test's database, for what no desk may do.
    pub async fn admin(&self) -> tokio_postgres::Client {
        connect(&self.admin_url()).await
    }

    /// `team_init`, then ana and bo on the staff and lee as a lead.
    pub async fn team(&self) -> Team {
        {
            let _turn = self.take_turn().await;
            team_init(&self.admin_url()).await.expect("team init");
        }
        Team {
            ana: self.person("ana", false).await,
            bo: self.person("bo", false).await,
            lee: self.person("lee", true).await,
        }
    }

    /// A role's name for this test: `base`, with a suffix on a shared server. The role is
    /// dropped with the test's database.
    pub fn name(&self, base: &str) -> String {
        let name = format!("{base}{}", self.suffix);
        self.people
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(name.clone());
        name
    }

    /// Adds a person to the team with a generated password.
    pub async fn person(&self, base: &str, lead: bool) -> Person {
        let name = self.name(base);
        let password = {
            let _turn = self.take_turn().await;
            team_add(&self.admin_url(), &name, lead, None)
                .await
                .expect("team add")
        };
        Person {
            url: self.url(&name, &password),
            name,
        }
    }

    async fn take_turn(&self) -> Option<tokio::sync::MutexGuard<'static, ()>> {
        match self.own {
            Some(_) => None,
            None => Some(INIT.lock().await),
        }
    }

    async fn create_db(&self, from: &str) {
        let server = format!(
            "host={} port={} user={} password='{}' dbname={from}",
            self.host, self.port, self.admin_user, self.admin_password
        );
        connect(&server)
            .await
            .batch_execute(&format!("CREATE DATABASE {}", self.db))
            .await
            .expect("create the test database");
    }
}

pub async fn connect(url: &str) -> tokio_postgres::Client {
    let (client, connection) = tokio_postgres::connect(url, NoTls).await.expect("connects");
    tokio::spawn(connection);
    client
}

fn own(bin: PathBuf) -> PgCluster {
    let dir = PathBuf::from(run("mktemp", &["-d", "-t", "desk-pg.XXXXXX"]).trim());
    let as_root = run("id", &["-u"]).trim() == "0";
    if as_root {
        run("chown", &["postgres", &dir.to_string_lossy()]);
        run("chmod", &["755", &dir.to_string_lossy()]);
    }
    let pwfile = dir.join("pw");
    std::fs::write(&pwfile, format!("{ADMIN_PASSWORD}\n")).expect("write the password file");
    let data = dir.join("data");
    let mut cluster = PgCluster {
        own: Some(OwnCluster {
            dir: dir.clone(),
            bin,
        }),
        host: "127.0.0.1".into(),
        port: 0,
        admin_user: "admin".into(),
        admin_password: ADMIN_PASSWORD.into(),
        db: "desk".into(),
        suffix: String::new(),
        people: Default::default(),
    };
    cluster.as_postgres(
        "initdb",
        &[
            "-D",
            &data.to_string_lossy(),
            "-U",
            "admin",
            &format!("--pwfile={}", pwfile.display()),
            "--auth-local=trust",
            "--auth-host=scram-sha-256",
            "--no-sync",
        ],
    );
    // A free port may be taken between asking and starting: try a few.
    for _ in 0..5 {
        let port = free_port();
        let started = cluster.as_postgres_status(
            "pg_ctl",
            &[
                "-D",
                &data.to_string_lossy(),
                "-l",
                &dir.join("pg.log").to_string_lossy(),
                "-w",
                "-o",
                &format!("-p {port} -h 127.0.0.1 -k {}", dir.display()),
                "start",
            ],
        );
        if started {
            cluster.port = port;
            return cluster;
        }
    }
    let log = std::fs::read_to_string(dir.join("pg.log")).unwrap_or_default();
    panic!("the test cluster did not start:\n{log}");
}

async fn shared(url: &str, n: u32) -> PgCluster {
    let config = tokio_postgres::Config::from_str(url).expect("DESK_TEST_POSTGRES is an address");
    let host = match config.get_hosts().first() {
        Some(Host::Tcp(host)) => host.clone(),
        _ => "127.0.0.1".to_owned(),
    };
    let tag = format!("{}_{n}", std::process::id());
    let cluster = PgCluster {
        own: None,
        host,
        port: config.get_ports().first().copied().unwrap_or(5432),
        admin_user: config.get_user().unwrap_or("postgres").to_owned(),
        admin_password: config
            .get_password()
            .map(|p| String::from_utf8_lossy(p).into_owned())
            .unwrap_or_default(),
        db: format!("desk_test_{tag}"),
        suffix: format!("_{tag}"),
        people: Default::default(),
    };
    cluster
        .create_db(config.get_dbname().unwrap_or("postgres"))
        .await;
    cluster
}

impl PgCluster {
    fn as_postgres(&self, tool: &str, args: &[&str]) {
        assert!(
            self.as_postgres_status(tool, args),
            "{tool} {args:?} failed"
        );
    }

    fn as_postgres_status(&self, tool: &str, args: &[&str]) -> bool {
        let own = self.own.as_ref().expect("only our own cluster runs tools");
        let path = own.bin.join(tool);
        let as_root = run("id", &["-u"]).trim() == "0";
        let mut command = if as_root {
            let mut command = Command::new("runuser");
            command.args(["-u", "postgres", "--"]).arg(&path);
            command
        } else {
            Command::new(&path)
        };
        let output = command.args(args).output().expect("runs the tool");
        if !output.status.success() {
            eprintln_lossy(tool, &output);
        }
        output.status.success()
    }
}

#[allow(
    clippy::print_stderr,
    reason = "a failing tool's output, for the test's log"
)]
fn eprintln_lossy(tool: &str, output: &std::process::Output) {
    eprintln!(
        "{tool}: {}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

#[allow(
    clippy::print_stderr,
    reason = "what a test could not clean up, for the test's log"
)]
fn eprintln_db(sql: &str, error: &tokio_postgres::Error) {
    eprintln!("{sql}: {:?}", error.as_db_error().map(|db| db.message()));
}

impl Drop for PgCluster {
    fn drop(&mut self) {
        match &self.own {
            Some(own) => {
                let data = own.dir.join("data");
                self.as_postgres_status(
                    "pg_ctl",
                    &["-D", &data.to_string_lossy(), "-m", "immediate", "stop"],
                );
                let _ = std::fs::remove_dir_all(&own.dir);
            }
            None => {
                // Drop runs inside the test's runtime: clean up from a thread with its own.
                let server = format!(
                    "host={} port={} user={} password='{}' dbname=postgres",
                    self.host, self.port, self.admin_user, self.admin_password
                );
                let db = self.db.clone();
                let people =
                    std::mem::take(&mut *self.people.lock().unwrap_or_else(|p| p.into_inner()));
                let _ = std::thread::spawn(move || {
                    let runtime = tokio::runtime::Builder::new_current_thread()
                        .enable_all()
                        .build()
                        .expect("a runtime");
                    runtime.block_on(async {
                        let admin = connect(&server).await;
                        // One statement at a time: DROP DATABASE refuses to run in a block.
                        let drops =
                            std::iter::once(format!("DROP DATABASE IF EXISTS {db} WITH (FORCE)"))
                                .chain(people.iter().map(|p| format!("DROP ROLE IF EXISTS {p}")));
                        for sql in drops {
                            if let Err(error) = admin.batch_execute(&sql).await {
                                eprintln_db(&sql, &error);
                            }
                        }
                    });
                })
                .join();
            }
        }
    }
}

fn find_bin() -> Option<PathBuf> {
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(|entry| {
            let entry = entry.ok()?;
            let version = entry.file_name().to_string_lossy().parse().ok()?;
            let bin = entry.path().join("bin");
            bin.join("initdb").exists().then_some((version, bin))
        })
        .collect();
    versions.sort();
    versions.pop().map(|(_, bin)| bin)
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

fn run(program: &str, args: &[&str]) -> String {
    let output = Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{program}: {e}"));
    assert!(output.status.success(), "{program} {args:?}: {output:?}");
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// `text` as it may stand in a URL's user or password.
fn percent(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                char::from(b).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}
