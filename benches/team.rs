//! The desk's record on both engines, side by side: events appended per second (one desk
//! appending as fast as it can), and the time from an append on one desk to its arrival on
//! another's live feed (PostgreSQL `LISTEN`/`NOTIFY`; one person's SQLite record has no other
//! desk, so its column is the append's own time). A throwaway PostgreSQL cluster on 127.0.0.1,
//! as the tests start one; without PostgreSQL only the SQLite column is printed.
//!
//!     cargo bench --bench team

use std::time::{Duration, Instant};

use support_desk::record::Event;
use support_desk::record::postgres::{Live, PgRecord, subscribe};
use support_desk::record::{DeskRecord, RECORD_FILE};

#[path = "../tests/it/pg_cluster.rs"]
#[allow(
    dead_code,
    reason = "the tests use more of the fixture than this bench"
)]
mod pg_cluster;

support_desk::global_allocator!();

const APPENDS: usize = 2_000;
const SENDS: usize = 250;

fn note(i: usize, by: &str) -> Event {
    Event::Noted {
        ticket: format!("T-{:04}", i % 48 + 1),
        by: by.to_owned(),
        text: format!("note {i}"),
    }
}

fn allow() -> Vec<String> {
    support_desk::config::DeskConfig::bundled().consent.allow
}

struct Figures {
    per_second: f64,
    median: Duration,
    p99: Duration,
}

fn quantiles(mut times: Vec<Duration>) -> (Duration, Duration) {
    times.sort();
    let at = |q: f64| times[((times.len() - 1) as f64 * q).round() as usize];
    (at(0.5), at(0.99))
}

fn sqlite() -> Figures {
    let dir = tempfile::tempdir().expect("temp dir");
    let record = DeskRecord::open_for_work(&dir.path().join(RECORD_FILE), None, "bench", &allow())
        .expect("the record opens");
    let started = Instant::now();
    let mut times = Vec::with_capacity(APPENDS);
    for i in 0..APPENDS {
        let one = Instant::now();
        record.append(&note(i, "bench")).expect("appended");
        times.push(one.elapsed());
    }
    let per_second = APPENDS as f64 / started.elapsed().as_secs_f64();
    let (median, p99) = quantiles(times);
    Figures {
        per_second,
        median,
        p99,
    }
}

async fn postgres() -> Option<Figures> {
    let pg = pg_cluster::start().await?;
    let team = pg.team().await;
    let ana = PgRecord::connect(&team.ana.url, &allow())
        .await
        .expect("ana");
    let started = Instant::now();
    for i in 0..APPENDS {
        ana.append(&note(i, &team.ana.name))
            .await
            .expect("appended");
    }
    let per_second = APPENDS as f64 / started.elapsed().as_secs_f64();

    let from = ana.last_seq().await.expect("seq");
    let mut bo = subscribe(&team.bo.url, from).await.expect("bo follows");
    let mut times = Vec::with_capacity(SENDS);
    for i in 0..SENDS {
        let sent = Instant::now();
        let appended = ana
            .append(&note(i, &team.ana.name))
            .await
            .expect("appended");
        loop {
            match tokio::time::timeout(Duration::from_secs(10), bo.recv()).await {
                Ok(Some(Live::Event(stored))) if stored.seq == appended.stored.seq => break,
                Ok(Some(_)) => continue,
                Ok(None) | Err(_) => panic!("bo never heard event {}", appended.stored.seq),
            }
        }
        times.push(sent.elapsed());
    }
    let (median, p99) = quantiles(times);
    Some(Figures {
        per_second,
        median,
        p99,
    })
}

#[allow(clippy::print_stdout, reason = "a bench reports on stdout")]
fn main() {
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!("load average: {}", load.trim());
    let sqlite = sqlite();
    let postgres = runtime.block_on(postgres());
    println!(
        "{:<44} {:>14} {:>14}",
        "the desk's record", "SQLite (file)", "PostgreSQL"
    );
    let pg = |f: fn(&Figures) -> String| postgres.as_ref().map_or("(not run)".to_owned(), f);
    println!(
        "{:<44} {:>14} {:>14}",
        format!("events appended per second ({APPENDS})"),
        format!("{:.0}", sqlite.per_second),
        pg(|f| format!("{:.0}", f.per_second)),
    );
    println!(
        "{:<44} {:>14} {:>14}",
        format!("append → another desk, median ({SENDS})"),
        format!("{:.3} ms*", sqlite.median.as_secs_f64() * 1e3),
        pg(|f| format!("{:.3} ms", f.median.as_secs_f64() * 1e3)),
    );
    println!(
        "{:<44} {:>14} {:>14}",
        format!("append → another desk, p99 ({SENDS})"),
        format!("{:.3} ms*", sqlite.p99.as_secs_f64() * 1e3),
        pg(|f| format!("{:.3} ms", f.p99.as_secs_f64() * 1e3)),
    );
    println!("* one person's record has no other desk: the append itself, durable on return");
}
