//! The desk's event loop: terminal events, host events and questions in one `select!`,
//! a redraw after each, and nothing in between (no tick: an idle desk uses no CPU).
//! The terminal is restored on quit, on Ctrl-C and on panic.

use std::io::{Stdout, stdout};

use crossterm::event::{
    DisableBracketedPaste, DisableMouseCapture, EnableBracketedPaste, EnableMouseCapture, Event,
    EventStream,
};
use crossterm::execute;
use crossterm::terminal::{
    EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
};
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use tokio::sync::mpsc::error::TrySendError;
use tokio_stream_lite::next;

use super::app::App;
use super::render::{queue_area, render};
use super::review::{ReviewKey, ReviewScreen};
use crate::host::api::{Command, HostEvent, HostHandle};

type Term = Terminal<CrosstermBackend<Stdout>>;

/// Takes over the terminal; a panic hook gives it back first, so a crash never leaves it raw.
fn enter() -> std::io::Result<Term> {
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        leave();
        default_hook(info);
    }));
    enable_raw_mode()?;
    execute!(
        stdout(),
        EnterAlternateScreen,
        EnableMouseCapture,
        EnableBracketedPaste
    )?;
    Terminal::new(CrosstermBackend::new(stdout()))
}

fn leave() {
    let _ = disable_raw_mode();
    let _ = execute!(
        stdout(),
        DisableBracketedPaste,
        DisableMouseCapture,
        LeaveAlternateScreen,
        crossterm::cursor::Show
    );
}

/// Runs the desk until the person quits, then stops the host (and its child servers).
pub async fn run_desk(mut handle: HostHandle, mut app: App) -> anyhow::Result<()> {
    let mut terminal = enter()?;
    let result = desk_loop(&mut terminal, &mut handle, &mut app).await;
    // Stop the host and wait (briefly) for it to close its servers.
    let _ = handle.commands.send(Command::Shutdown).await;
    let _ = tokio::time::timeout(std::time::Duration::from_secs(5), async {
        while let Some(event) = handle.events.recv().await {
            if matches!(event, HostEvent::Stopped) {
                break;
            }
        }
    })
    .await;
    leave();
    result
}

async fn desk_loop(
    terminal: &mut Term,
    handle: &mut HostHandle,
    app: &mut App,
) -> anyhow::Result<()> {
    let mut input = EventStream::new();
    loop {
        terminal.draw(|frame| {
            app.queue_area = Some(queue_area(frame.area()));
            render(app, frame);
        })?;
        if app.exit {
            return Ok(());
        }
        if let Some(ticket) = app.transcript_wanted() {
            ask_for_history(handle, ticket);
        }
        tokio::select! {
            event = next(&mut input) => match event {
                Some(Ok(Event::Key(key))) if key.kind != crossterm::event::KeyEventKind::Release => {
                    if let Some(command) = app.on_key(key) {
                        handle.commands.send(command).await?;
                    }
                }
                Some(Ok(Event::Mouse(mouse))) => app.on_mouse(mouse),
                Some(Ok(Event::Paste(text))) => app.on_paste(&text),
                Some(Ok(_)) => {}
                Some(Err(e)) => return Err(e.into()),
                None => return Ok(()),
            },
            event = handle.events.recv() => match event {
                Some(event) => {
                    app.on_host(event);
                    announce(terminal, app)?;
                }
                None => return Ok(()),
            },
            question = handle.questions.recv() => {
                if let Some(question) = question {
                    app.on_question(question);
                }
            }
        }
    }
}

/// Gives the terminal the desk's notices (a lead's new approval) out of band: the bell or a
/// desktop notice, between frames.
fn announce(terminal: &mut Term, app: &mut App) -> std::io::Result<()> {
    use std::io::Write as _;
    let term_program = std::env::var("TERM_PROGRAM").ok();
    let backend = terminal.backend_mut();
    for text in app.take_notices() {
        backend.write_all(&crate::ui::app::notice_bytes(
            app.notice,
            term_program.as_deref(),
            &text,
        ))?;
    }
    backend.flush()
}

/// Asks the host for a ticket's history without waiting for room in the command channel:
/// the host takes commands only once it has started, and a person scrolling the queue
/// meanwhile must not stall behind it. The asks are independent of each other and of every
/// other command, so their order does not matter.
fn ask_for_history(handle: &HostHandle, ticket: String) {
    if let Err(TrySendError::Full(ask)) = handle.commands.try_send(Command::Transcript(ticket)) {
        let commands = handle.commands.clone();
        tokio::spawn(async move { commands.send(ask).await });
    }
}

/// Review mode on its own: a recording, read-only.
pub async fn run_review(mut screen: ReviewScreen) -> anyhow::Result<()> {
    let mut terminal = enter()?;
    let mut input = EventStream::new();
    let result = async {
        loop {
            terminal.draw(|frame| screen.render(frame, frame.area()))?;
            match next(&mut input).await {
                Some(Ok(Event::Key(key)))
                    if key.kind != crossterm::event::KeyEventKind::Release =>
                {
                    if screen.handle_key(key) == ReviewKey::Quit {
                        return Ok(());
                    }
                }
                Some(Ok(_)) => {}
                Some(Err(e)) => return Err(anyhow::Error::from(e)),
                None => return Ok(()),
            }
        }
    }
    .await;
    leave();
    result
}

/// `StreamExt::next` without a stream-utilities dependency.
mod tokio_stream_lite {
    use std::future::poll_fn;
    use std::pin::Pin;

    use futures_core::Stream;

    pub async fn next<S: Stream + Unpin>(stream: &mut S) -> Option<S::Item> {
        poll_fn(|cx| Pin::new(&mut *stream).poll_next(cx)).await
    }
}
