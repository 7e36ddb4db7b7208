//! A pipe watched for a moment before a runtime's thread goes to sleep.
//!
//! A tool call on a stdio server is a ping-pong on two pipes: the desk writes a request and
//! waits; the server reads it, answers, and waits for the next. A thread waiting in
//! `epoll_wait` is woken by the kernel when its peer writes, and when the two processes sit
//! on different CPUs that wake-up is an inter-processor interrupt. On the virtual machines
//! the desk is measured on, the hypervisor takes each of those, and a call across two CPUs
//! took three to five times as long as one whose server shared the client's CPU (70 to 130 µs
//! against about 25; BENCHMARKS.md, 'Tool call against the Python SDK and the floor'). A thread that is still
//! running when its peer writes needs no waking: it sees the bytes the next time it looks.
//!
//! So where an answer is expected soon, the thread that would sleep looks first. A [`Watch`]
//! is one pipe and a window: armed by [`Watch::expect`] (the desk has sent a tool call; a
//! server has answered and its client may be about to write again), ended by
//! [`Watch::arrived`]. A runtime built with [`before_park`] as its `on_thread_park` hook then
//! asks the pipe how many bytes it holds (`FIONREAD`), and gives up its CPU in between
//! (`sched_yield`, so a peer sharing that CPU gets to run), until bytes are there or every
//! window has closed; then it sleeps as before, and the runtime finds those bytes at once.
//!
//! What it costs is bounded: at most one window of one CPU per message, and none at all for
//! a peer that never answers within the window: a watch stops polling once a polled answer
//! came later than its window, and starts again once an answer waited for without polling
//! came within twice the window (such a wait pays the wake-up that polling saves, tens of
//! microseconds here, so an answer a little late then would most likely have been in time).
//! An idle desk or server polls nothing. A window of zero turns the watch off.

use std::os::fd::{AsFd, OwnedFd};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError, Weak};
use std::time::{Duration, Instant};

/// The environment variable through which a desk hands its window for a server to the stdio
/// servers it starts (`serve shop|partner` read it when `--busy-poll-us` is not given), so one
/// setting, `busy_poll_us` under `[servers.NAME]`, sets both ends of that server's pipe.
pub const WINDOW_ENV: &str = "SUPPORT_DESK_BUSY_POLL_US";

/// The window a stdio pipe is watched for, in microseconds, unless a server's config or
/// command line says otherwise: a tool call's round trip on one CPU, with room for a slow one.
pub const DEFAULT_WINDOW_US: u64 = 100;

/// [`DEFAULT_WINDOW_US`] as a duration.
pub const DEFAULT_WINDOW: Duration = Duration::from_micros(DEFAULT_WINDOW_US);

/// The watches of this process, which [`before_park`] polls.
static PROCESS: Watches = Watches::new();

/// The `on_thread_park` hook of a runtime whose threads should poll this process's armed
/// watches before they sleep (the desk's, and a stdio server's).
pub fn before_park() {
    PROCESS.poll();
}

/// One pipe, and how long to look at it for an answer before sleeping.
#[derive(Clone)]
pub struct Watch {
    watched: Arc<Watched>,
}

struct Watched {
    /// A descriptor of the pipe's read end of our own: the pipe stays open for as long as the
    /// watch does, and no longer (the last [`Watch`] dropped closes it).
    pipe: OwnedFd,
    window: Duration,
    /// Until when the pipe is polled, in nanoseconds since [`epoch`]; 0 when the answer
    /// expected is not polled for (only [`Watch::expect`] sets it, only [`Watch::arrived`]
    /// clears it).
    until: AtomicU64,
    /// When the answer was last expected (nanoseconds since [`epoch`]); 0 when none is.
    since: AtomicU64,
    /// The peer answers too late to poll for: the next answer is waited for asleep.
    slow: AtomicBool,
}

impl Watch {
    /// A watch of the pipe whose read end is `pipe`, polled for `window` after each
    /// [`Watch::expect`], among this process's watches; `None` when `window` is zero.
    pub fn pipe(pipe: impl AsFd, window: Duration) -> std::io::Result<Option<Self>> {
        Self::pipe_among(&PROCESS, pipe, window)
    }

    fn pipe_among(
        watches: &Watches,
        pipe: impl AsFd,
        window: Duration,
    ) -> std::io::Result<Option<Self>> {
        if window.is_zero() {
            return Ok(None);
        }
        let watch = Watch {
            watched: Arc::new(Watched {
                pipe: pipe.as_fd().try_clone_to_owned()?,
                window,
                until: AtomicU64::new(0),
                since: AtomicU64::new(0),
                slow: AtomicBool::new(false),
            }),
        };
        watches.add(&watch.watched);
        Ok(Some(watch))
    }

    /// Bytes are expected on the pipe soon: poll it for the window, unless the peer has
    /// been too slow for that.
    pub fn expect(&self) {
        let now = now();
        let watched = &self.watched;
        let polled = !watched.slow.load(Ordering::Relaxed);
        watched.since.store(now, Ordering::Relaxed);
        let until = if polled {
            now.saturating_add(nanos(watched.window))
        } else {
            0
        };
        watched.until.store(until, Ordering::Relaxed);
    }

    /// What was expected has come (or will not): stop polling, and judge from how long it
    /// took whether the next answer is worth polling for.
    pub fn arrived(&self) {
        let watched = &self.watched;
        let polled = watched.until.swap(0, Ordering::Relaxed) != 0;
        let since = watched.since.swap(0, Ordering::Relaxed);
        if since == 0 {
            return;
        }
        let waited = now().saturating_sub(since);
        let window = nanos(watched.window);
        let in_time = if polled {
            window
        } else {
            window.saturating_mul(2)
        };
        watched.slow.store(waited > in_time, Ordering::Relaxed);
    }

    /// Whether a runtime about to sleep would poll this pipe now.
    #[cfg(test)]
    pub(crate) fn is_polled(&self) -> bool {
        self.watched.until.load(Ordering::Relaxed) > now()
    }
}

impl Watched {
    /// Whether the pipe holds bytes (or cannot say, which the reader will find out).
    fn readable(&self) -> bool {
        !matches!(rustix::io::ioctl_fionread(&self.pipe), Ok(0))
    }
}

/// A set of watches, each held weakly: a watch whose owners dropped it leaves the set on the
/// next poll.
struct Watches {
    list: Mutex<Vec<Weak<Watched>>>,
}

/// How a poll before sleeping ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Polled {
    /// No watch was armed: nothing was polled.
    Idle,
    /// A watched pipe holds bytes; after `looks` looks at the armed pipes.
    Readable { looks: u32 },
    /// Every window closed with nothing there.
    Expired { looks: u32 },
}

impl Watches {
    const fn new() -> Self {
        Self {
            list: Mutex::new(Vec::new()),
        }
    }

    fn add(&self, watched: &Arc<Watched>) {
        self.lock().push(Arc::downgrade(watched));
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Weak<Watched>>> {
        self.list.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The watches that are armed now, forgetting those nobody holds any more.
    fn armed(&self) -> Vec<Arc<Watched>> {
        let now = now();
        let mut list = self.lock();
        list.retain(|weak| weak.strong_count() > 0);
        list.iter()
            .filter_map(Weak::upgrade)
            .filter(|watched| watched.until.load(Ordering::Relaxed) > now)
            .collect()
    }

    /// Looks at every armed pipe, yielding the CPU between looks, until one holds bytes or
    /// every window has closed.
    fn poll(&self) -> Polled {
        let armed = self.armed();
        if armed.is_empty() {
            return Polled::Idle;
        }
        let mut looks = 0u32;
        loop {
            let now = now();
            let mut open = false;
            for watched in &armed {
                if watched.until.load(Ordering::Relaxed) <= now {
                    continue;
                }
                open = true;
                if watched.readable() {
                    return Polled::Readable { looks: looks + 1 };
                }
            }
            if !open {
                return Polled::Expired { looks };
            }
            looks += 1;
            std::thread::yield_now();
        }
    }
}

/// A pipe end whose reads end its [`Watch`] and whose writes arm it: a stdio server's stdin
/// and stdout, so that it polls for the client's next request right after answering.
pub struct Watching<T> {
    io: T,
    watch: Watch,
}

impl<T> Watching<T> {
    pub fn new(io: T, watch: Watch) -> Self {
        Self { io, watch }
    }
}

impl<T: tokio::io::AsyncRead + Unpin> tokio::io::AsyncRead for Watching<T> {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let read = std::pin::Pin::new(&mut self.io).poll_read(cx, buf);
        if read.is_ready() && buf.filled().len() > before {
            self.watch.arrived();
        }
        read
    }
}

impl<T: tokio::io::AsyncWrite + Unpin> tokio::io::AsyncWrite for Watching<T> {
    fn poll_write(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        let written = std::pin::Pin::new(&mut self.io).poll_write(cx, buf);
        if matches!(written, std::task::Poll::Ready(Ok(n)) if n > 0) {
            self.watch.expect();
        }
        written
    }

    fn poll_flush(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.io).poll_shutdown(cx)
    }
}

/// The instant every watch's times count from.
fn epoch() -> Instant {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

/// Nanoseconds since [`epoch`]; never 0, which stands for "not set".
fn now() -> u64 {
    nanos(epoch().elapsed()).max(1)
}

fn nanos(duration: Duration) -> u64 {
    u64::try_from(duration.as_nanos()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests;
