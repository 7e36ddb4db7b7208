//! `support-desk review [PATH] [--against OTHER]`: a recorded run, read-only, turn by turn.

use std::path::{Path, PathBuf};

use clap::Args;

#[derive(Debug, Args)]
pub struct ReviewArgs {
    /// The recording (a directory of .jsonl batches, or one .jsonl file).
    #[arg(default_value = crate::recording::reader::BUNDLED)]
    pub path: PathBuf,
    /// Another recording to hold it against: the two runs of each ticket side by side
    /// (`c`), and both runs' figures as a chart (`g`).
    #[arg(long)]
    pub against: Option<PathBuf>,
}

pub async fn execute(args: ReviewArgs) -> anyhow::Result<()> {
    crate::ui::theme::set(crate::ui::theme::chosen(
        false,
        std::env::var_os("NO_COLOR"),
    ));
    let open = |path: &Path| crate::recording::review::Review::open(path);
    let screen = match &args.against {
        Some(other) => crate::ui::review::ReviewScreen::against(open(&args.path)?, open(other)?),
        None => crate::ui::review::ReviewScreen::new(open(&args.path)?),
    };
    crate::ui::terminal::run_review(screen).await
}
