//! `support-desk logout PREFIX`: removing a sign-in, and revoking it where the authorization
//! server offers that.

use clap::Args;

use super::CommonArgs;
use super::login::{say, setup, target};
use crate::auth::{Revocation, revoke};

#[derive(Debug, Args)]
pub struct LogoutArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// The server's prefix in the config (`shop`).
    pub prefix: String,
}

/// Signs the person out of one server: revokes the grant at the authorization server where
/// it offers revocation, and removes it from this machine either way (a revocation that fails
/// is said, with what to do).
pub async fn execute(args: LogoutArgs) -> anyhow::Result<()> {
    let (config, data_dir) = setup(&args.common)?;
    let (_, target) = target(&config, &args.prefix, &data_dir)?;
    let prefix = &args.prefix;
    let Some(grant) = target.store.read()? else {
        say(&format!("'{prefix}' had no sign-in to remove\n"));
        return Ok(());
    };
    let revoked = revoke(&target, &grant).await;
    target.store.remove()?;
    let path = target.store.path().display();
    say(&match revoked {
        Ok(Revocation::Revoked) => format!(
            "Signed out of '{prefix}': the authorization server revoked the grant, and {path} \
             is removed.\n"
        ),
        Ok(Revocation::NotOffered) => format!(
            "Signed out of '{prefix}' on this machine: {path} is removed. Its authorization \
             server offers no revocation, so its tokens stay valid until they expire; revoke \
             the grant there if this machine was lost.\n"
        ),
        Err(e) => format!(
            "Signed out of '{prefix}' on this machine: {path} is removed. Revoking the grant at \
             the authorization server failed ({}); revoke it there if this machine was lost.\n",
            e.detail()
        ),
    });
    Ok(())
}
