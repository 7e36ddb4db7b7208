//! Live: the record's events as other desks append them, on a connection of its own.
//!
//! On every (re)connect it LISTENs first and then catches up with every event after the last
//! one it passed on; a notification (its payload is a seq) only says "look again". Because seq
//! order is commit order, this never skips an event and never repeats one. When the server goes
//! away it says so ([`Live::Lost`]), tries again with a growing pause, and says when it is back.
//! It never writes to the record.

use std::time::Duration;

use futures_util::StreamExt;
use tokio::sync::mpsc;
use tokio_postgres::{AsyncMessage, Client};

use super::connect::Target;
use super::error::detail;
use super::{PgError, check_team, decode_event, events_page};
use crate::record::store::Stored;

const FIRST_PAUSE: Duration = Duration::from_millis(100);
const LONGEST_PAUSE: Duration = Duration::from_secs(5);

/// What a subscriber hears.
#[allow(
    clippy::large_enum_variant,
    reason = "nearly everything heard is an event; boxing each would cost more than the markers save"
)]
#[derive(Debug, Clone, PartialEq)]
pub enum Live {
    /// The next event, in seq order.
    Event(Stored),
    /// The database went away, in its words; events resume (from where they stopped) after
    /// [`Live::Back`].
    Lost(String),
    Back,
    /// An event this desk cannot read (a newer desk's), passed over.
    Unreadable {
        seq: i64,
        error: String,
    },
}

/// Follows the record at `url` from the first event after `from_seq` (0: all of it) until the
/// receiver is dropped. Fails only when the first connection does.
pub async fn subscribe(url: &str, from_seq: i64) -> Result<mpsc::UnboundedReceiver<Live>, PgError> {
    let mut target = Target::parse(url)?;
    target.config.application_name("support-desk live");
    let first = listen(&target).await?;
    let (tx, rx) = mpsc::unbounded_channel();
    tokio::spawn(follow(target, first, from_seq, tx));
    Ok(rx)
}

/// What the connection's task hears: a notification's seq (if it parses), or the end.
enum Heard {
    Seq(Option<i64>),
    Lost(String),
}

type Listening = (Client, mpsc::UnboundedReceiver<Heard>);

async fn listen(target: &Target) -> Result<Listening, PgError> {
    let (client, mut connection) = target.connect_raw().await?;
    let (tx, rx) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        // The connection does the client's I/O too, so it is polled all along; awaiting it as
        // a future would drop the notifications.
        let mut messages = futures_util::stream::poll_fn(move |cx| connection.poll_message(cx));
        while let Some(message) = messages.next().await {
            let heard = match message {
                Ok(AsyncMessage::Notification(n)) => Heard::Seq(n.payload().parse().ok()),
                Ok(_) => continue,
                Err(error) => Heard::Lost(detail(&error)),
            };
            let lost = matches!(heard, Heard::Lost(_));
            if tx.send(heard).is_err() || lost {
                break;
            }
        }
    });
    // A channel is a name, not a parameter.
    client.batch_execute("LISTEN desk_events").await?;
    check_team(&client, target).await?;
    Ok((client, rx))
}

async fn follow(
    target: Target,
    first: Listening,
    mut last_seen: i64,
    out: mpsc::UnboundedSender<Live>,
) {
    let mut listening = Some(first);
    let mut pause = FIRST_PAUSE;
    loop {
        let (client, mut heard) = match listening.take() {
            Some(listening) => listening,
            None => match listen(&target).await {
                Ok(listening) => {
                    pause = FIRST_PAUSE;
                    if out.send(Live::Back).is_err() {
                        return;
                    }
                    listening
                }
                Err(error) => {
                    tracing::debug!(%error, "the desk's database is still away");
                    tokio::select! {
                        () = tokio::time::sleep(pause) => {}
                        () = out.closed() => return,
                    }
                    pause = (pause * 2).min(LONGEST_PAUSE);
                    continue;
                }
            },
        };
        let why = loop {
            match events_page(&client, last_seen, usize::MAX).await {
                Ok(rows) => {
                    for row in &rows {
                        let seq: i64 = row.get(0);
                        last_seen = seq;
                        let live = match decode_event(row) {
                            Ok(stored) => Live::Event(stored),
                            Err(error) => Live::Unreadable {
                                seq,
                                error: error.to_string(),
                            },
                        };
                        if out.send(live).is_err() {
                            return;
                        }
                    }
                }
                Err(error) => break detail(&error),
            }
            // Wait for news of an event not yet passed on.
            let news = loop {
                tokio::select! {
                    heard = heard.recv() => match heard {
                        Some(Heard::Seq(Some(seq))) if seq <= last_seen => continue,
                        Some(Heard::Seq(_)) => break None,
                        Some(Heard::Lost(why)) => break Some(why),
                        None => break Some("the connection closed".to_owned()),
                    },
                    () = out.closed() => return,
                }
            };
            if let Some(why) = news {
                break why;
            }
        };
        drop(client);
        if out.send(Live::Lost(why)).is_err() {
            return;
        }
    }
}
