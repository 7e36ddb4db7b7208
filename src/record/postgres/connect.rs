//! From an address to a logged-in connection: the password comes from the address,
//! `PGPASSWORD` or the password file (`PGPASSFILE`, else `~/.pgpass`), in that order, as libpq
//! finds it. tokio-postgres reads neither the variable nor the file by itself.
//!
//! This module never logs or shows a password, and never guesses one.

use std::path::{Path, PathBuf};
use std::str::FromStr;

use tokio_postgres::config::Host;
use tokio_postgres::error::SqlState;
use tokio_postgres::{Client, Config, NoTls};

use super::PgError;

/// A parsed address with its password found, and how to name it in messages.
#[derive(Clone)]
pub(crate) struct Target {
    pub config: Config,
    /// `host:port/database`, for messages (no password in it).
    pub at: String,
    pub user: String,
}

impl Target {
    pub fn parse(url: &str) -> Result<Self, PgError> {
        let mut config = Config::from_str(url).map_err(|source| PgError::Address {
            url: without_password(url),
            source,
        })?;
        let user = config
            .get_user()
            .map(str::to_owned)
            .or_else(|| std::env::var("PGUSER").ok())
            .or_else(|| std::env::var("USER").ok())
            .unwrap_or_default();
        if config.get_user().is_none() && !user.is_empty() {
            config.user(&user);
        }
        let host = match config.get_hosts().first() {
            Some(Host::Tcp(host)) => host.clone(),
            // A Unix socket is "localhost" in the password file, as libpq has it.
            _ => "localhost".to_owned(),
        };
        let port = config.get_ports().first().copied().unwrap_or(5432);
        let dbname = config.get_dbname().unwrap_or(&user).to_owned();
        if config.get_password().is_none() {
            let password = match std::env::var("PGPASSWORD") {
                Ok(password) => Some(password),
                Err(_) => match pass_file() {
                    Some(path) => from_pass_file(&path, &host, port, &dbname, &user)?,
                    None => None,
                },
            };
            if let Some(password) = password {
                config.password(password);
            }
        }
        Ok(Self {
            config,
            at: format!("{host}:{port}/{dbname}"),
            user,
        })
    }

    /// Connects; the connection's I/O runs on a task of its own until the client is dropped.
    pub async fn connect(&self) -> Result<Client, PgError> {
        let (client, connection) = self.connect_raw().await?;
        tokio::spawn(async move {
            if let Err(error) = connection.await {
                tracing::warn!(error = %super::error::detail(&error), "the desk's database connection ended");
            }
        });
        Ok(client)
    }

    pub async fn connect_raw(
        &self,
    ) -> Result<
        (
            Client,
            tokio_postgres::Connection<tokio_postgres::Socket, tokio_postgres::tls::NoTlsStream>,
        ),
        PgError,
    > {
        self.config
            .connect(NoTls)
            .await
            .map_err(|source| self.login_error(source))
    }

    fn login_error(&self, source: tokio_postgres::Error) -> PgError {
        let code = source.code();
        if code == Some(&SqlState::INVALID_PASSWORD)
            || code == Some(&SqlState::INVALID_AUTHORIZATION_SPECIFICATION)
        {
            PgError::Login {
                person: self.user.clone(),
                at: self.at.clone(),
            }
        } else if code == Some(&SqlState::INSUFFICIENT_PRIVILEGE) {
            PgError::NotOnTeam {
                person: self.user.clone(),
                at: self.at.clone(),
            }
        } else if source.to_string().contains("password missing") {
            PgError::Login {
                person: self.user.clone(),
                at: self.at.clone(),
            }
        } else {
            PgError::Unreachable {
                at: self.at.clone(),
                source,
            }
        }
    }
}

/// The address as it may be shown: any password replaced by `***`.
fn without_password(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    match rest.split_once('@') {
        Some((userinfo, host)) if userinfo.contains(':') => {
            let user = userinfo.split(':').next().unwrap_or_default();
            format!("{scheme}://{user}:***@{host}")
        }
        _ => url.to_owned(),
    }
}

fn pass_file() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("PGPASSFILE") {
        return Some(PathBuf::from(path));
    }
    std::env::var_os("HOME").map(|home| Path::new(&home).join(".pgpass"))
}

/// The password for `host:port:database:user` in a libpq password file: the first line that
/// matches, `*` matching anything, `\:` and `\\` standing for `:` and `\`. Like libpq, a file
/// that others may read is ignored (with a warning).
fn from_pass_file(
    path: &Path,
    host: &str,
    port: u16,
    dbname: &str,
    user: &str,
) -> Result<Option<String>, PgError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(PgError::PassFile {
                path: path.to_owned(),
                source,
            });
        }
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(path)
            .map(|m| m.permissions().mode())
            .unwrap_or(0);
        if mode & 0o077 != 0 {
            tracing::warn!(path = %path.display(), "the password file can be read by others, so it is ignored; chmod 0600 it");
            return Ok(None);
        }
    }
    Ok(password_for(&text, host, &port.to_string(), dbname, user))
}

pub(crate) fn password_for(
    text: &str,
    host: &str,
    port: &str,
    dbname: &str,
    user: &str,
) -> Option<String> {
    let wanted = [host, port, dbname, user];
    text.lines()
        .filter(|line| !line.trim_start().starts_with('#') && !line.trim().is_empty())
        .find_map(|line| {
            let fields = split_fields(line);
            let [h, p, d, u, password] = fields.as_slice() else {
                return None;
            };
            let matches = [h, p, d, u]
                .iter()
                .zip(wanted)
                .all(|(field, value)| field.as_str() == "*" || field.as_str() == value);
            matches.then(|| password.clone())
        })
}

fn split_fields(line: &str) -> Vec<String> {
    let mut fields = vec![String::new()];
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                if let (Some(next), Some(field)) = (chars.next(), fields.last_mut()) {
                    field.push(next);
                }
            }
            ':' if fields.len() < 5 => fields.push(String::new()),
            c => {
                if let Some(field) = fields.last_mut() {
                    field.push(c);
                }
            }
        }
    }
    fields
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = "# the team's server\n\
        db.example:5432:desk:ana:ana\\:pw\n\
        *:*:desk:*:anyone\n\
        localhost:5433:other:bo:bo-pw\n";

    #[test]
    fn the_first_matching_line_of_the_password_file_gives_the_password() {
        assert_eq!(
            [
                password_for(FILE, "db.example", "5432", "desk", "ana"),
                password_for(FILE, "127.0.0.1", "6000", "desk", "bo"),
                password_for(FILE, "localhost", "5433", "other", "bo"),
                password_for(FILE, "localhost", "5433", "other", "lee"),
            ],
            [
                Some("ana:pw".to_owned()),
                Some("anyone".to_owned()),
                Some("bo-pw".to_owned()),
                None
            ]
        );
    }

    #[test]
    fn a_password_never_shows_in_an_address_in_a_message() {
        assert_eq!(
            [
                without_password("postgres://ana:secret@db:5432/desk"),
                without_password("postgres://ana@db/desk"),
            ],
            ["postgres://ana:***@db:5432/desk", "postgres://ana@db/desk"]
        );
    }
}
