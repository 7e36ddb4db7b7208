//! What a server tells the desk unasked: how far a call has got (`notifications/progress`,
//! routed to the call by its progress token), and that its tools or a resource the desk
//! reads changed ([`ServerNotice`], for the host).
//!
//! Every `tools/call` the desk sends carries a progress token: rmcp's own on calls it sends,
//! the desk's (`desk-N`) on calls written on a stdio server's call lane, which never meet as
//! one is a number and the other a string. A notification whose token no call is following is
//! dropped; nothing a server says here is ever obeyed, only shown.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use rmcp::model::{NumberOrString, ProgressNotificationParam, ProgressToken};
use tokio::sync::mpsc;

/// A server's word, unasked, that something the desk keeps changed: the host lists its
/// tools again, or reads the resource again before the next run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerNotice {
    /// The server (its prefix) says its tools changed.
    ToolsChanged(String),
    /// The server says the resource at `uri` changed.
    ResourceUpdated { server: String, uri: String },
}

/// How many notifications a call's follower holds before more are dropped: progress is a
/// view, and a server that floods it loses its own updates, never the desk's memory.
pub const PROGRESS_HELD: usize = 16;

type Routes = HashMap<ProgressToken, mpsc::Sender<ProgressNotificationParam>>;

/// The calls of one server's connections that follow their progress, by token.
#[derive(Clone, Default)]
pub struct ProgressRoutes {
    routes: Arc<Mutex<Routes>>,
    next: Arc<AtomicU64>,
}

impl ProgressRoutes {
    /// A token of the desk's own, for a call rmcp does not send.
    pub fn token(&self) -> ProgressToken {
        let n = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        ProgressToken(NumberOrString::String(format!("desk-{n}").into()))
    }

    /// Sends the progress reported for `token` to `to` until the guard drops.
    pub fn follow(
        &self,
        token: ProgressToken,
        to: mpsc::Sender<ProgressNotificationParam>,
    ) -> Following {
        self.lock().insert(token.clone(), to);
        Following {
            routes: Arc::clone(&self.routes),
            token,
        }
    }

    /// A server's progress notification, to the call that follows its token, if any.
    pub fn heard(&self, progress: ProgressNotificationParam) {
        let to = self.lock().get(&progress.progress_token).cloned();
        match to {
            Some(to) => {
                if to.try_send(progress).is_err() {
                    tracing::debug!("a call's progress came faster than it is shown; dropped one");
                }
            }
            None => {
                tracing::debug!(token = ?progress.progress_token, "progress for no call in flight; dropped")
            }
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Routes> {
        self.routes.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// A call following its progress; dropped, the token is followed no more.
pub struct Following {
    routes: Arc<Mutex<Routes>>,
    token: ProgressToken,
}

impl Drop for Following {
    fn drop(&mut self) {
        let removed = self
            .routes
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&self.token);
        // The sender is dropped outside the lock.
        drop(removed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(token: &ProgressToken, progress: f64) -> ProgressNotificationParam {
        ProgressNotificationParam::new(token.clone(), progress)
    }

    #[tokio::test]
    async fn progress_reaches_only_the_call_following_its_token_and_stops_when_it_ends() {
        let routes = ProgressRoutes::default();
        let (mine, other) = (routes.token(), routes.token());
        assert_ne!(mine, other);
        let (to, mut heard) = mpsc::channel(PROGRESS_HELD);
        let following = routes.follow(mine.clone(), to);
        routes.heard(at(&other, 1.0));
        routes.heard(at(&mine, 2.0));
        assert_eq!(heard.recv().await.map(|p| p.progress), Some(2.0));
        drop(following);
        routes.heard(at(&mine, 3.0));
        assert!(heard.recv().await.is_none(), "no one follows it any more");
    }

    #[tokio::test]
    async fn a_flood_of_progress_is_cut_at_what_a_call_holds() {
        let routes = ProgressRoutes::default();
        let token = routes.token();
        let (to, mut heard) = mpsc::channel(PROGRESS_HELD);
        let _following = routes.follow(token.clone(), to);
        for n in 0..(PROGRESS_HELD * 4) {
            routes.heard(at(&token, n as f64));
        }
        let mut held = 0;
        while heard.try_recv().is_ok() {
            held += 1;
        }
        assert_eq!(held, PROGRESS_HELD);
    }
}
