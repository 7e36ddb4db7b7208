//! `support-desk team init|add`: a team's record in PostgreSQL, and its people.

use clap::Subcommand;

use super::write_stdout;

#[derive(Debug, Subcommand)]
pub enum TeamCommand {
    /// Create the schema and the group roles (desk_staff, desk_leads), as an admin role.
    Init {
        /// The admin's address: postgres://ADMIN@HOST:PORT/DB.
        #[arg(long, value_name = "URL")]
        store: String,
    },
    /// Add a person: their own login role, staff or lead.
    Add {
        /// The role's name, which is who the person is at every desk.
        name: String,
        /// A lead, who may also release refunds and take tickets over.
        #[arg(long)]
        lead: bool,
        /// Take the password from this variable; without it one is made and printed once.
        #[arg(long, value_name = "VAR")]
        password_env: Option<String>,
        /// The admin's address: postgres://ADMIN@HOST:PORT/DB.
        #[arg(long, value_name = "URL")]
        store: String,
    },
}

pub async fn execute(command: TeamCommand) -> anyhow::Result<()> {
    match command {
        TeamCommand::Init { store } => {
            crate::record::postgres::team_init(&store).await?;
            write_stdout(
                "the team's record is set up: add people with `support-desk team add NAME --store URL`\n",
            )
        }
        TeamCommand::Add {
            name,
            lead,
            password_env,
            store,
        } => {
            let given = match &password_env {
                Some(var) => Some(std::env::var(var).map_err(|_| {
                    anyhow::anyhow!("--password-env {var}: the variable is not set")
                })?),
                None => None,
            };
            let password =
                crate::record::postgres::team_add(&store, &name, lead, given.clone()).await?;
            let role = if lead { "a lead" } else { "staff" };
            let text = match given {
                Some(_) => format!(
                    "{name} is {role}, with the password from {}\n",
                    password_env.unwrap_or_default()
                ),
                None => format!("{name} is {role}; their password (shown once): {password}\n"),
            };
            write_stdout(&text)
        }
    }
}
