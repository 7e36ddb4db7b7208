//! The desk's frame time and key handling with a big queue: 10,000 tickets and a
//! 1,000-entry transcript on the selected one, drawn on ratatui's TestBackend.
//!
//!     cargo bench --bench ui

use criterion::{Criterion, criterion_group, criterion_main};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use support_desk::host::api::Outcome;
use support_desk::host::events::HostEvent;
use support_desk::record::TicketState;
use support_desk::record::transcript::{Entry, EntryKind};
use support_desk::tickets::Ticket;
use support_desk::ui::app::App;
use support_desk::ui::render::render;

support_desk::global_allocator!();

pub const QUEUE: usize = 10_000;
pub const TRANSCRIPT: usize = 1_000;

/// The bundled tickets, repeated under new IDs until the queue holds `count`.
pub fn synthetic_queue(count: usize) -> Vec<Ticket> {
    let bundled = support_desk::tickets::bundled();
    (0..count)
        .map(|i| {
            let mut ticket = bundled[i % bundled.len()].clone();
            ticket.ticket_id = format!("T-{:05}", i + 1);
            ticket
        })
        .collect()
}

fn big_desk() -> App {
    let mut app = App::new(
        synthetic_queue(QUEUE),
        "replay:recordings/ticket-runs".into(),
        "bench".into(),
    );
    let ticket = "T-00001".to_owned();
    let events = (0..TRANSCRIPT)
        .map(|i| {
            let turn = (i / 4) as u32 + 1;
            let kind = match i % 4 {
                0 => EntryKind::ModelCall { turn, seconds: 1.5, tool_list_chars: 3052, context_chars: 1900 },
                1 => EntryKind::Call { turn, tool: "shop.get_order_status".into(), arguments: vec![("order_id".into(), "\"O-1744\"".into())] },
                2 => EntryKind::Outcome {
                    turn,
                    tool: "shop.get_order_status".into(),
                    outcome: Outcome::Result,
                    text: "{\n  \"order_id\": \"O-1744\",\n  \"status\": \"delivered\",\n  \"total\": \"42.70\"\n}".into(),
                    truncated: false,
                },
                _ => EntryKind::Said { turn, words: "Your order O-1744 was delivered on 4 June; I hope the mugs arrived safely.".into() },
            };
            (i as i64 + 1, vec![Entry { by: Some("bench".into()), at: Some(1_796_117_400_000), kind }])
        })
        .collect();
    app.on_host(HostEvent::Record(vec![TicketState::new(&ticket)]));
    // The ticket on screen is asked for, and the host answers with its history.
    assert_eq!(app.transcript_wanted().as_deref(), Some(ticket.as_str()));
    app.on_host(HostEvent::Transcript { ticket, events });
    app
}

fn frames(c: &mut Criterion) {
    let mut app = big_desk();
    let mut terminal = Terminal::new(TestBackend::new(120, 40)).expect("terminal");
    c.bench_function(
        "frame: 10,000 tickets, 1,000-entry transcript, 120x40",
        |b| {
            b.iter(|| {
                terminal.draw(|frame| render(&app, frame)).expect("draw");
            })
        },
    );
    let down = KeyEvent::new(KeyCode::Down, KeyModifiers::NONE);
    let up = KeyEvent::new(KeyCode::Up, KeyModifiers::NONE);
    c.bench_function("key press: select the next ticket of 10,000", |b| {
        b.iter(|| {
            app.on_key(down);
            app.on_key(up);
        })
    });
    c.bench_function("key press then frame, 10,000 tickets", |b| {
        b.iter(|| {
            app.on_key(down);
            terminal.draw(|frame| render(&app, frame)).expect("draw");
        })
    });
}

criterion_group!(benches, frames);
criterion_main!(benches);
