//! What can go wrong with the team's record, each cause with what to do about it.

use super::Claim;
use crate::record::rfc3339;
use crate::record::state::Refusal;

#[derive(Debug, thiserror::Error)]
pub enum PgError {
    #[error(
        "{url} is not a PostgreSQL address the desk can use ({source}); write it as postgres://name@host:port/database"
    )]
    Address {
        url: String,
        source: tokio_postgres::Error,
    },
    #[error(
        "cannot reach the desk's database at {at} ({}); check the address and that the server is running",
        detail(source)
    )]
    Unreachable {
        at: String,
        source: tokio_postgres::Error,
    },
    #[error(
        "the desk's database refused {person}'s login at {at}; check the password (in the address, PGPASSWORD or ~/.pgpass) or ask a lead to run team add {person}"
    )]
    Login { person: String, at: String },
    #[error(
        "{person} is not on the desk's team in {at}; ask a lead to add them (team add {person})"
    )]
    NotOnTeam { person: String, at: String },
    #[error(
        "{person} is an administrator of {at}, above the desk's rules; log in to the desk as yourself (team add gives you a login)"
    )]
    AboveTheRules { person: String, at: String },
    #[error("{at} has no desk record yet; a lead sets it up once with team init")]
    NoSchema { at: String },
    #[error(
        "{at} holds a desk record of schema {found}, newer than this desk's ({supported}); use a newer support-desk"
    )]
    NewerSchema {
        at: String,
        found: i32,
        supported: i32,
    },
    #[error("the desk's database failed ({}); try again, and report it if it keeps failing", detail(.0))]
    Database(#[from] tokio_postgres::Error),
    #[error(
        "event {seq} of the desk's record cannot be read ({source}); it was written by a newer desk or by hand"
    )]
    Unreadable { seq: i64, source: serde_json::Error },
    #[error(transparent)]
    Refused(#[from] Refusal),
    #[error("{ticket} was already sent by {by} at {}; its reply cannot be sent again", rfc3339(*at))]
    AlreadySent { ticket: String, by: String, at: i64 },
    #[error("{ticket} is being worked by {owner} until {}; pick another ticket, or ask a lead to take it over", rfc3339(*until))]
    ClaimRefused {
        ticket: String,
        owner: String,
        until: i64,
    },
    #[error("{}", not_holding(ticket, holder.as_ref()))]
    NotHolding {
        ticket: String,
        holder: Option<Claim>,
    },
    #[error("only a lead can take over {ticket} while {owner} holds it (until {}); ask a lead, or wait for the claim to run out", rfc3339(*until))]
    NotALead {
        ticket: String,
        owner: String,
        until: i64,
    },
    #[error(
        "this event is by {by}, but {person} is logged in; events are by the person logged in (PgRecord::person)"
    )]
    NotYou { by: String, person: String },
    #[error(
        "{ticket} is {assignee}'s: only {assignee} or a lead can give it to someone else; ask them"
    )]
    NotYours { ticket: String, assignee: String },
    #[error(
        "{name} is not a person on the team; a lead adds people with team add, and a ticket goes only to one of them"
    )]
    NotOnTheTeam { name: String },
    #[error(
        "{name:?} cannot be a person's name on the desk; use lowercase letters, digits and _ (starting with a letter), and not desk_ or pg_ at the start"
    )]
    BadName { name: String },
    #[error(
        "there is a role {name} in this database cluster already, and it is not on the desk's team: `team add` never takes over a role it did not make; choose another name"
    )]
    NotATeamRole { name: String },
    #[error(
        "{name} is a role with powers above the desk's rules (superuser, CREATEROLE or BYPASSRLS): `team add` never changes it; choose another name"
    )]
    PrivilegedRole { name: String },
    #[error(
        "{ticket} already waits for a lead's answer; withdraw that approval (x) before asking again"
    )]
    ApprovalOpen { ticket: String },
    #[error("there is no approval {id}; list the open ones with support-desk approvals")]
    NoApproval { id: i64 },
    #[error("approval {id} was {closed} by {by} already; nothing more to answer")]
    ApprovalClosed { id: i64, closed: String, by: String },
    #[error("approval {id} is your own request: another lead must answer it")]
    OwnApproval { id: i64 },
    #[error("{lead} is answering approval {id} right now; it is theirs unless their desk stops")]
    ApprovalBusy { id: i64, lead: String },
    #[error(
        "{lead} is answering approval {id} right now, so it cannot be withdrawn: their answer is what the shop does; if it is still open after, withdraw it then"
    )]
    WithdrawWhileAnswered { id: i64, lead: String },
    #[error("{person} is not a lead: only a lead answers approval {id}; ask a lead to open it")]
    ApprovalNotALead { id: i64, person: String },
    #[error(
        "{at} holds a desk record of schema {found}, older than this desk's ({supported}); a lead brings it up to date with team init"
    )]
    OlderSchema {
        at: String,
        found: i32,
        supported: i32,
    },
    #[error(
        "{person} is not a lead: only a lead changes the team's saved replies; ask a lead, or keep your own in replies.toml in your data directory"
    )]
    RepliesNotALead { person: String },
    #[error("the team has no saved reply {name}; list them with support-desk replies")]
    NoTeamReply { name: String },
    #[error(
        "cannot read the password file {path} ({source}); fix its permissions or set PGPASSFILE"
    )]
    PassFile {
        path: std::path::PathBuf,
        source: std::io::Error,
    },
}

fn not_holding(ticket: &str, holder: Option<&Claim>) -> String {
    match holder {
        Some(claim) => format!(
            "{ticket} is held by {} until {}, not by you; ask them, or a lead, to hand it over",
            claim.owner,
            rfc3339(claim.until)
        ),
        None => format!("you do not hold {ticket}; claim it first (its claim may have run out)"),
    }
}

/// The server's own words for a failure: tokio-postgres shows only "db error" otherwise.
pub(crate) fn detail(error: &tokio_postgres::Error) -> String {
    match error.as_db_error() {
        Some(db) => db.message().to_owned(),
        None => error.to_string(),
    }
}

/// Whether `error` is the database refusing a row under the named policy.
pub(crate) fn violates(error: &tokio_postgres::Error, policy: &str) -> bool {
    error.as_db_error().is_some_and(|db| {
        db.code() == &tokio_postgres::error::SqlState::INSUFFICIENT_PRIVILEGE
            && db.message().contains(&format!("policy \"{policy}\""))
    })
}

/// Whether `error` is a unique index refusing a second row.
pub(crate) fn duplicate(error: &tokio_postgres::Error, index: &str) -> bool {
    error.as_db_error().is_some_and(|db| {
        db.code() == &tokio_postgres::error::SqlState::UNIQUE_VIOLATION
            && db.constraint() == Some(index)
    })
}
