//! The team: who may work the desk's record, set up by a database administrator.
//!
//! [`team_init`] creates the group roles (`desk_staff`; `desk_leads`, who are staff too;
//! `desk_owner`, who owns the tables and never logs in), the `desk` schema and its policies,
//! applying each schema version once (running it again changes nothing). [`team_add`] makes a
//! person's login role in the right group. Nothing here runs as anyone but the administrator
//! who calls it, and nothing uses `SECURITY DEFINER`: `current_user` is always the person.

use super::PgError;
use super::connect::Target;

/// The newest schema this desk knows.
pub const SCHEMA_VERSION: i32 = 8;

/// Each version's migration, applied in order, as `desk_owner`.
const MIGRATIONS: [(i32, &str); 8] = [
    (1, include_str!("schema_1.sql")),
    (2, include_str!("schema_2.sql")),
    (3, include_str!("schema_3.sql")),
    (4, include_str!("schema_4.sql")),
    (5, include_str!("schema_5.sql")),
    (6, include_str!("schema_6.sql")),
    (7, include_str!("schema_7.sql")),
    (8, include_str!("schema_8.sql")),
];

/// The bounds every person on the team works under, so nobody stalls the others by accident:
/// a statement, a wait for a lock, a transaction left open mid-way (the desk never idles in
/// one; it holds the lock every append takes). Set on each login role, since a group role's
/// settings do not reach its members; a session may still change its own (PostgreSQL lets it),
/// which SECURITY.md says.
const LIMITS: [(&str, &str); 3] = [
    ("statement_timeout", "30s"),
    ("lock_timeout", "10s"),
    ("idle_in_transaction_session_timeout", "1s"),
];

/// The statements that set [`LIMITS`] on the role in `$1`, as one string.
const LIMITS_SQL: &str =
    "SELECT string_agg(format('ALTER ROLE %I SET %s = %L', $1::text, name, value), '; ')
     FROM unnest($2::text[], $3::text[]) AS l(name, value)";

/// Roles are the cluster's, not the database's: made once, kept by every later init.
const ROLES: &str = "
DO $$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'desk_staff') THEN
        CREATE ROLE desk_staff NOLOGIN;
    END IF;
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'desk_leads') THEN
        CREATE ROLE desk_leads NOLOGIN;
    END IF;
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'desk_owner') THEN
        CREATE ROLE desk_owner NOLOGIN;
    END IF;
    EXECUTE format('REVOKE CONNECT ON DATABASE %I FROM PUBLIC', current_database());
    EXECUTE format('GRANT CONNECT ON DATABASE %I TO desk_staff', current_database());
END $$;
GRANT desk_staff TO desk_leads;
CREATE SCHEMA IF NOT EXISTS desk AUTHORIZATION desk_owner;
SET LOCAL ROLE desk_owner;
CREATE TABLE IF NOT EXISTS desk.schema_version (
    version    integer PRIMARY KEY,
    applied_at timestamptz NOT NULL DEFAULT now()
);
LOCK TABLE desk.schema_version IN EXCLUSIVE MODE;
";

/// Sets up (or brings up to date) the desk's record in the database at `admin_url`, as an
/// administrator of it (a superuser, or a role that may create roles and owns the database).
pub async fn team_init(admin_url: &str) -> Result<(), PgError> {
    let target = Target::parse(admin_url)?;
    let mut client = target.connect().await?;
    let tx = client.transaction().await?;
    // Two inits at once take turns here rather than both creating the schema.
    tx.execute(
        "SELECT pg_advisory_xact_lock(hashtext('support-desk team_init'))",
        &[],
    )
    .await?;
    tx.batch_execute(ROLES).await?;
    let found: Option<i32> = tx
        .query_one("SELECT max(version) FROM desk.schema_version", &[])
        .await?
        .get(0);
    let found = found.unwrap_or(0);
    if found > SCHEMA_VERSION {
        return Err(PgError::NewerSchema {
            at: target.at,
            found,
            supported: SCHEMA_VERSION,
        });
    }
    for (version, sql) in MIGRATIONS.iter().filter(|(version, _)| *version > found) {
        tx.batch_execute(sql).await?;
        tx.execute(
            "INSERT INTO desk.schema_version (version) VALUES ($1)",
            &[version],
        )
        .await?;
    }
    // Back to the administrator, who may set every person's limits (people added before
    // there were limits get them here).
    tx.batch_execute("RESET ROLE").await?;
    let people: Vec<String> = tx
        .query(
            "SELECT rolname::text FROM pg_roles
             WHERE rolcanlogin AND NOT rolsuper AND pg_has_role(oid, 'desk_staff', 'member')",
            &[],
        )
        .await?
        .iter()
        .map(|row| row.get(0))
        .collect();
    for person in &people {
        set_limits(&tx, person).await?;
    }
    tx.commit().await?;
    Ok(())
}

async fn set_limits(tx: &tokio_postgres::Transaction<'_>, person: &str) -> Result<(), PgError> {
    let (names, values): (Vec<&str>, Vec<&str>) = LIMITS.iter().copied().unzip();
    let sql: String = tx
        .query_one(LIMITS_SQL, &[&person, &names, &values])
        .await?
        .get(0);
    tx.batch_execute(&sql).await?;
    Ok(())
}

/// Adds `name` to the team (a lead when `lead`), or changes their group and password if they
/// are on it already; refused for a role that exists and is not a person of the team, and for
/// one with powers above the desk's rules. Returns the password: `password`, or a new random one when `None`. The
/// server gets only its SCRAM verifier, never the password itself.
pub async fn team_add(
    admin_url: &str,
    name: &str,
    lead: bool,
    password: Option<String>,
) -> Result<String, PgError> {
    if !is_person_name(name) {
        return Err(PgError::BadName {
            name: name.to_owned(),
        });
    }
    let password = password.unwrap_or_else(|| hex::encode(rand::random::<[u8; 16]>()));
    let verifier = postgres_protocol::password::scram_sha_256(password.as_bytes());
    let target = Target::parse(admin_url)?;
    let mut client = target.connect().await?;
    let tx = client.transaction().await?;
    // A name already taken must be a person of the team: `team add` never takes over a role
    // it did not make (the cluster's superuser, the shop's login), nor one above the rules.
    let found = tx
        .query_opt(
            "SELECT rolsuper OR rolcreaterole OR rolbypassrls,
                    pg_has_role(oid, 'desk_staff', 'member') AND rolcanlogin
             FROM pg_roles WHERE rolname = $1",
            &[&name],
        )
        .await?;
    let exists = match found.map(|row| (row.get::<_, bool>(0), row.get::<_, bool>(1))) {
        None => false,
        Some((true, _)) => {
            return Err(PgError::PrivilegedRole {
                name: name.to_owned(),
            });
        }
        Some((false, false)) => {
            return Err(PgError::NotATeamRole {
                name: name.to_owned(),
            });
        }
        Some((false, true)) => true,
    };
    let (group, other) = if lead {
        ("desk_leads", "desk_staff")
    } else {
        ("desk_staff", "desk_leads")
    };
    // Role statements take no parameters: format() quotes the name and the verifier.
    let sql: String = tx
        .query_one(
            "SELECT format(CASE WHEN $3 THEN 'ALTER ROLE %I LOGIN PASSWORD %L'
                                ELSE 'CREATE ROLE %I LOGIN PASSWORD %L' END, $1::text, $2::text)
                 || format('; GRANT %I TO %I', $4::text, $1::text)
                 || CASE WHEN NOT $3 THEN ''
                         WHEN pg_has_role($1::text, $5::text, 'member')
                         THEN format('; REVOKE %I FROM %I', $5::text, $1::text) ELSE '' END",
            &[&name, &verifier, &exists, &group, &other],
        )
        .await?
        .get(0);
    tx.batch_execute(&sql).await?;
    set_limits(&tx, name).await?;
    tx.commit().await?;
    Ok(password)
}

/// Lowercase letters, digits and `_`, starting with a letter: the same name in SQL, in
/// messages and in the password file, never needing quotes to mean what it says.
fn is_person_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && name.len() <= 63
        && !name.starts_with("desk_")
        && !name.starts_with("pg_")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_persons_name_is_a_plain_lowercase_identifier() {
        let names = [
            "ana",
            "bo_2",
            "Ana",
            "2bo",
            "desk_owner",
            "pg_read",
            "a-b",
            "",
        ];
        assert_eq!(
            names.map(is_person_name),
            [true, true, false, false, false, false, false, false]
        );
    }
}
