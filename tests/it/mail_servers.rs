//! Real mail servers for one test: a throwaway Dovecot (IMAP; plain, or TLS with a certificate
//! from a test CA) and an aiosmtpd that keeps what it receives in a Maildir. Each listens on a
//! free port on 127.0.0.1, lives in a temporary directory, and is stopped and removed when
//! dropped, also after a panic.
//!
//! Without them a test says so in one line and passes, unless `DESK_REQUIRE_MAIL=1` (as in
//! CI), when it fails. Dovecot runs as in /work/shared/notes/mail.md: started as root, mail
//! kept as Debian's `dovecot` user, logins handled as `dovenull`.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use support_desk::mail::MailTls;
use support_desk::mail::imap::{Imap, ImapAccount};
use support_desk::mail::smtp::SmtpAccount;
use tempfile::TempDir;

use crate::tls::TestCa;

const DOVECOT_MISSING: &str = "Dovecot (dovecot-imapd) is not installed; install it, or set \
                               DESK_REQUIRE_MAIL=1 to make this fail";
const NOT_ROOT: &str = "the Dovecot fixture must start as root (it runs mail as the dovecot \
                        user); run the tests as root, or set DESK_REQUIRE_MAIL=1 to make this fail";
const AIOSMTPD_MISSING: &str = "aiosmtpd (python3-aiosmtpd) is not installed; install it, or set \
                                DESK_REQUIRE_MAIL=1 to make this fail";
const USER: &str = "support";
const PASSWORD: &str = "mail-secret-for-tests";
/// How long a server may take to start listening.
const START_TIMEOUT: Duration = Duration::from_secs(15);

/// `None` (having said why) when the tests may skip; a panic when `DESK_REQUIRE_MAIL=1`.
fn missing<T>(why: &str) -> Option<T> {
    if std::env::var("DESK_REQUIRE_MAIL").as_deref() == Ok("1") {
        panic!("{why} (DESK_REQUIRE_MAIL=1: these tests must run)");
    }
    say_skipped(why);
    None
}

#[allow(
    clippy::print_stdout,
    reason = "the one line that says this test did not run"
)]
fn say_skipped(why: &str) {
    println!("skipped: {why}");
}

/// A Dovecot of this test's own, with one user ([`Dovecot::user`]).
pub struct Dovecot {
    dir: TempDir,
    port: u16,
    /// With TLS: the imaps port and the test CA's certificate file.
    tls: Option<(u16, PathBuf)>,
}

impl Dovecot {
    /// Plain IMAP on loopback, with INBOX only.
    pub async fn start() -> Option<Dovecot> {
        Self::launch(&[], false, "").await
    }

    /// Plain IMAP, with `folders` made besides INBOX (like `Sent`).
    pub async fn start_with(folders: &[&str]) -> Option<Dovecot> {
        Self::launch(folders, false, "").await
    }

    /// Plain IMAP whose capabilities leave out IDLE, as some servers' do.
    pub async fn start_without_idle() -> Option<Dovecot> {
        Self::launch(&[], false, "imap_capability = IMAP4rev1 UIDPLUS\n").await
    }

    /// `ssl = required`: implicit TLS on [`Dovecot::tls_port`] and STARTTLS on
    /// [`Dovecot::port`], with a certificate for 127.0.0.1 and localhost from a test CA.
    pub async fn start_tls() -> Option<Dovecot> {
        Self::launch(&[], true, "").await
    }

    async fn launch(folders: &[&str], tls: bool, settings: &str) -> Option<Dovecot> {
        let Some(dovecot) = find_program("dovecot") else {
            return missing(DOVECOT_MISSING);
        };
        if run("id", &["-u"]).trim() != "0" {
            return missing(NOT_ROOT);
        }
        let dir = tempfile::Builder::new()
            .prefix("desk-dovecot.")
            .tempdir()
            .expect("a temporary directory");
        let root = dir.path();
        chmod(root, 0o755);
        for sub in ["run", "log"] {
            std::fs::create_dir(root.join(sub)).expect("make a directory");
        }
        let maildir = root.join("mail").join(USER).join("Maildir");
        let folder_dirs = std::iter::once(maildir.clone()).chain(
            folders
                .iter()
                .map(|folder| maildir.join(format!(".{folder}"))),
        );
        for folder in folder_dirs {
            for sub in ["cur", "new", "tmp"] {
                std::fs::create_dir_all(folder.join(sub)).expect("make a Maildir");
            }
        }
        run(
            "chown",
            &[
                "-R",
                "dovecot:dovecot",
                &root.join("mail").to_string_lossy(),
            ],
        );
        let users = root.join("users");
        std::fs::write(&users, format!("{USER}:{{PLAIN}}{PASSWORD}\n")).expect("write users");
        chmod(&users, 0o644);
        let certificate = tls.then(|| {
            let ca = TestCa::new();
            let (key, cert) = ca
                .leaf(&["127.0.0.1", "localhost"], (2099, 1, 1))
                .write(root);
            (ca.write(root), key, cert)
        });
        // A free port may be taken between asking and starting: try a few.
        for _ in 0..5 {
            let (port, tls_port) = (free_port(), free_port());
            let ssl = match &certificate {
                Some((_, key, cert)) => format!(
                    "ssl = required\nssl_cert = <{}\nssl_key = <{}\n",
                    cert.display(),
                    key.display()
                ),
                None => "ssl = no\n".to_owned(),
            } + settings;
            let imaps_port = if certificate.is_some() { tls_port } else { 0 };
            let config = root.join("dovecot.conf");
            std::fs::write(&config, dovecot_conf(root, port, imaps_port, &ssl))
                .expect("write dovecot.conf");
            let started = Command::new(&dovecot)
                .arg("-c")
                .arg(&config)
                .status()
                .expect("dovecot runs");
            if started.success() && listening(port).await {
                let tls = certificate
                    .as_ref()
                    .map(|(ca_file, _, _)| (tls_port, ca_file.clone()));
                return Some(Dovecot { dir, port, tls });
            }
            stop_dovecot(root);
        }
        let log = std::fs::read_to_string(root.join("log/dovecot.log")).unwrap_or_default();
        panic!("the test Dovecot did not start:\n{log}");
    }

    /// The plain IMAP port (STARTTLS on a TLS Dovecot).
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The implicit-TLS port of [`Dovecot::start_tls`].
    pub fn tls_port(&self) -> u16 {
        self.tls.as_ref().expect("a TLS Dovecot").0
    }

    /// The test CA's certificate (PEM) of [`Dovecot::start_tls`].
    pub fn ca_file(&self) -> PathBuf {
        self.tls.as_ref().expect("a TLS Dovecot").1.clone()
    }

    pub fn user(&self) -> &'static str {
        USER
    }

    pub fn password(&self) -> &'static str {
        PASSWORD
    }

    /// The account of `folder`: plain on loopback, or implicit TLS trusting the test CA.
    pub fn account(&self, folder: &str) -> ImapAccount {
        let (port, tls, ca_file) = match &self.tls {
            Some((port, ca_file)) => (*port, MailTls::Implicit, Some(ca_file.clone())),
            None => (self.port, MailTls::None, None),
        };
        ImapAccount {
            host: "127.0.0.1".into(),
            port,
            tls,
            user: USER.into(),
            password: PASSWORD.into(),
            folder: folder.into(),
            ca_file,
        }
    }

    /// Appends `raw` to INBOX through the desk's own [`Imap::append`].
    pub async fn deliver(&self, raw: &[u8]) {
        self.deliver_to("INBOX", raw).await;
    }

    pub async fn deliver_to(&self, folder: &str, raw: &[u8]) {
        let mut imap = Imap::connect(&self.account("INBOX"))
            .await
            .expect("connect to deliver");
        imap.append(folder, raw).await.expect("append");
        imap.logout().await;
    }

    /// Deletes `folder` and makes it again, as another mail client could: its UIDVALIDITY
    /// changes. (Plain Dovecot only.)
    pub async fn recreate_folder(&self, folder: &str) {
        let mut admin = self.admin().await;
        admin.delete(folder).await.expect("DELETE");
        admin.create(folder).await.expect("CREATE");
        admin.logout().await.expect("LOGOUT");
    }

    /// How many messages of `folder` are marked seen. (Plain Dovecot only.)
    pub async fn seen(&self, folder: &str) -> usize {
        let mut admin = self.admin().await;
        admin.examine(folder).await.expect("EXAMINE");
        let seen = admin.uid_search("SEEN").await.expect("SEARCH").len();
        admin.logout().await.expect("LOGOUT");
        seen
    }

    /// A session of async-imap's own, for what the desk never does.
    async fn admin(&self) -> async_imap::Session<tokio::net::TcpStream> {
        assert!(self.tls.is_none(), "admin sessions are for a plain Dovecot");
        let tcp = tokio::net::TcpStream::connect(("127.0.0.1", self.port))
            .await
            .expect("connect");
        let mut client = async_imap::Client::new(tcp);
        client.read_response().await.expect("greeting");
        client
            .login(USER, PASSWORD)
            .await
            .map_err(|(e, _)| e)
            .expect("LOGIN")
    }
}

impl Drop for Dovecot {
    fn drop(&mut self) {
        stop_dovecot(self.dir.path());
    }
}

/// Stops the Dovecot whose base directory is under `root`, by the pid it wrote, and waits
/// for it to go.
fn stop_dovecot(root: &Path) {
    let Ok(pid) = std::fs::read_to_string(root.join("run/master.pid")) else {
        return;
    };
    let pid = pid.trim();
    let _ = Command::new("kill").arg(pid).status();
    for _ in 0..100 {
        if !Path::new("/proc").join(pid).exists() {
            let _ = std::fs::remove_file(root.join("run/master.pid"));
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = Command::new("kill").args(["-KILL", pid]).status();
    let _ = std::fs::remove_file(root.join("run/master.pid"));
}

fn dovecot_conf(root: &Path, port: u16, imaps_port: u16, ssl: &str) -> String {
    let d = root.display();
    format!(
        "protocols = imap
listen = 127.0.0.1
base_dir = {d}/run
state_dir = {d}/run
log_path = {d}/log/dovecot.log
{ssl}disable_plaintext_auth = no
auth_mechanisms = plain login
default_internal_user = dovecot
default_internal_group = dovecot
default_login_user = dovenull
first_valid_uid = 1
passdb {{
  driver = passwd-file
  args = scheme=PLAIN username_format=%u {d}/users
}}
userdb {{
  driver = static
  args = uid=dovecot gid=dovecot home={d}/mail/%u mail=maildir:{d}/mail/%u/Maildir
}}
service imap-login {{
  inet_listener imap {{
    address = 127.0.0.1
    port = {port}
  }}
  inet_listener imaps {{
    address = 127.0.0.1
    port = {imaps_port}
  }}
}}
"
    )
}

/// An aiosmtpd of this test's own that writes every message it accepts into a Maildir.
pub struct Smtpd {
    dir: TempDir,
    port: u16,
    child: Child,
    ca_file: Option<PathBuf>,
}

impl Smtpd {
    /// Plain SMTP on loopback, no login.
    pub async fn start() -> Option<Smtpd> {
        Self::launch(&[], false).await
    }

    /// Accepting messages of at most `bytes` (SIZE): a larger one is refused for good (552).
    pub async fn start_limited(bytes: usize) -> Option<Smtpd> {
        Self::launch(&["-s", &bytes.to_string()], false).await
    }

    /// Implicit TLS (SMTPS) with a certificate for 127.0.0.1 from a test CA.
    pub async fn start_tls() -> Option<Smtpd> {
        Self::launch(&[], true).await
    }

    async fn launch(extra: &[&str], tls: bool) -> Option<Smtpd> {
        let Some(python) = ["/usr/bin/python3", "python3"].into_iter().find(|python| {
            Command::new(python)
                .args(["-c", "import aiosmtpd"])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|status| status.success())
        }) else {
            return missing(AIOSMTPD_MISSING);
        };
        let dir = tempfile::Builder::new()
            .prefix("desk-smtpd.")
            .tempdir()
            .expect("a temporary directory");
        let maildir = dir.path().join("Maildir");
        // aiosmtpd answers every message with a 500 when these are missing.
        for sub in ["new", "cur", "tmp"] {
            std::fs::create_dir_all(maildir.join(sub)).expect("make the Maildir");
        }
        let mut args: Vec<String> = extra.iter().map(|arg| (*arg).to_owned()).collect();
        let ca_file = tls.then(|| {
            let ca = TestCa::new();
            let (key, cert) = ca.leaf(&["127.0.0.1"], (2099, 1, 1)).write(dir.path());
            args.extend([
                "--smtpscert".to_owned(),
                cert.display().to_string(),
                "--smtpskey".to_owned(),
                key.display().to_string(),
            ]);
            ca.write(dir.path())
        });
        for _ in 0..5 {
            let port = free_port();
            let log = std::fs::File::create(dir.path().join("smtpd.log")).expect("a log file");
            let mut child = Command::new(python)
                .args(["-m", "aiosmtpd", "-n", "-l", &format!("127.0.0.1:{port}")])
                .args(["-c", "aiosmtpd.handlers.Mailbox"])
                .args(&args)
                .arg(&maildir)
                .stdout(Stdio::null())
                .stderr(log)
                .spawn()
                .expect("aiosmtpd starts");
            if listening(port).await && child.try_wait().expect("aiosmtpd's status").is_none() {
                return Some(Smtpd {
                    dir,
                    port,
                    child,
                    ca_file,
                });
            }
            let _ = child.kill();
            let _ = child.wait();
        }
        let log = std::fs::read_to_string(dir.path().join("smtpd.log")).unwrap_or_default();
        panic!("the test aiosmtpd did not start:\n{log}");
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// Where the desk submits: plain on loopback without a login, or implicit TLS trusting the
    /// test CA.
    pub fn account(&self) -> SmtpAccount {
        SmtpAccount {
            host: "127.0.0.1".into(),
            port: self.port,
            tls: match self.ca_file {
                Some(_) => MailTls::Implicit,
                None => MailTls::None,
            },
            user: None,
            password: None,
            ca_file: self.ca_file.clone(),
        }
    }

    /// The messages received so far, oldest first, as aiosmtpd kept them (with its
    /// `X-MailFrom` and `X-RcptTo` for the envelope, and `\n` line ends).
    pub fn received(&self) -> Vec<Vec<u8>> {
        let new = self.dir.path().join("Maildir/new");
        let mut files: Vec<(std::time::SystemTime, PathBuf)> = std::fs::read_dir(new)
            .expect("the Maildir")
            .map(|entry| {
                let path = entry.expect("an entry").path();
                let modified = path.metadata().and_then(|m| m.modified()).expect("a time");
                (modified, path)
            })
            .collect();
        files.sort();
        files
            .into_iter()
            .map(|(_, path)| std::fs::read(path).expect("a message"))
            .collect()
    }

    /// The messages, once there are at least `n`; panics after `timeout`.
    pub async fn wait_for(&self, n: usize, timeout: Duration) -> Vec<Vec<u8>> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let received = self.received();
            if received.len() >= n {
                return received;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "{n} messages expected within {timeout:?}, {} arrived",
                received.len()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

impl Drop for Smtpd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Whether something accepts connections on 127.0.0.1:`port` within [`START_TIMEOUT`].
async fn listening(port: u16) -> bool {
    let deadline = tokio::time::Instant::now() + START_TIMEOUT;
    while tokio::time::Instant::now() < deadline {
        if tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_ok()
        {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}

/// A program on the PATH or in the system's sbin directories.
fn find_program(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin", "/sbin", "/usr/local/sbin"].map(PathBuf::from))
        .map(|dir| dir.join(name))
        .find(|candidate| candidate.is_file())
}

fn run(program: &str, args: &[&str]) -> String {
    let output = Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{program} runs: {e}"));
    assert!(output.status.success(), "{program} {args:?} failed");
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn chmod(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).expect("chmod");
}

/// A port free a moment ago: a server may still lose it to another test.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}
