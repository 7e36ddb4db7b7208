//! Leads approve across desks, through the real binary, a real PostgreSQL (a throwaway
//! cluster; skipped in one line without one) and the shop over Streamable HTTP with a roster:
//! a staff run's refund above the limit waits in the team's record for a lead; a lead answers
//! it from their own desk, whose next round reaches the shop as that lead; the staff's ticket
//! goes on from the answer. Nobody answers their own request, staff answer none, and a lead's
//! desk killed with the form open leaves the approval to another lead.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support_desk::record::Lifecycle;
use support_desk::record::postgres::PgRecord;
use support_desk::recording::Event;
use support_desk::shop::http::StaffTokens;
use support_desk::shop::store::{Refund, RefundStatus};
use support_desk::shop::{QuoteIds, Store};
use tokio_util::sync::CancellationToken;

use crate::desk_pty::Desk;
use crate::mock_model::{Brain, MockModel, call, tool_messages, words};
use crate::pg_cluster::{self, Person};
use crate::support::{BIN, memory_store, shop_server};

const RELEASED: &str =
    "Your refund of EUR 279.00 has been released; it reaches your card within 5 working days.";
const AWAITS: &str =
    "Your refund of EUR 279.00 awaits a lead's review; we will write again once it is decided.";

/// The shop on 127.0.0.1, its staff the team's people (lee and lou are leads), and its
/// record at hand to see who released what.
struct Shop {
    addr: SocketAddr,
    store: Arc<Store>,
    shutdown: CancellationToken,
}

impl Drop for Shop {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

fn token(person: &Person) -> String {
    format!("{}-token-for-tests-only", person.name)
}

async fn shop(staff: &[&Person], leads: &[&Person]) -> Shop {
    support_desk::tls::install_default_provider();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind loopback");
    let addr = listener.local_addr().expect("address");
    let roster: Vec<String> = staff
        .iter()
        .map(|p| format!("{}={}", p.name, token(p)))
        .chain(
            leads
                .iter()
                .map(|p| format!("{}={}:lead", p.name, token(p))),
        )
        .collect();
    let tokens = StaffTokens::parse(&roster.join(",")).expect("tokens");
    let store = memory_store(QuoteIds::Random);
    let shutdown = CancellationToken::new();
    tokio::spawn(support_desk::shop::http::serve(
        listener,
        shop_server(Arc::clone(&store)),
        tokens,
        shutdown.clone(),
    ));
    Shop {
        addr,
        store,
        shutdown,
    }
}

impl Shop {
    /// The refunds of T-0003's order (O-1587, one EUR 279.00 mixer).
    fn refunds(&self) -> Vec<Refund> {
        self.store.order("O-1587").expect("O-1587").1
    }
}

/// A person's own config: the shop over HTTP with their own token.
fn config_for(dir: &Path, shop: &Shop, person: &Person) -> PathBuf {
    let path = dir.join("desk.toml");
    std::fs::write(
        &path,
        format!(
            "[servers.shop]\nurl = \"http://{}/mcp\"\nheaders = {{ Authorization = \"Bearer {}\" }}\n",
            shop.addr,
            token(person)
        ),
    )
    .expect("write the config");
    path
}

/// Quotes T-0003's mixer, issues the refund with the quote the shop gave, then answers by
/// what the last tool said: released, or waiting for a lead.
fn mixer_brain() -> Brain {
    Arc::new(|request: &Value| {
        let tools = tool_messages(request);
        match tools.len() {
            0 => call(
                "shop__quote_refund",
                json!({"order_id": "O-1587", "sku": "KG-1010", "reason": "the motor smells burnt"}),
            ),
            1 => {
                let quote = tools[0]
                    .lines()
                    .nth(1)
                    .and_then(|l| serde_json::from_str::<Value>(l).ok())
                    .unwrap_or_default();
                call("shop__issue_refund", json!({"quote_id": quote["quote_id"]}))
            }
            _ if tools[tools.len() - 1].contains("\"released\"") => words(RELEASED),
            _ => words(AWAITS),
        }
    })
}

/// `support-desk ARGS… --store URL --config FILE --data-dir DIR`, to its end.
async fn desk_command(args: &[&str], person: &Person, config: &Path, dir: &Path) -> (bool, String) {
    let output = tokio::process::Command::new(BIN)
        .args(args)
        .args(["--store", &person.url])
        .arg("--config")
        .arg(config)
        .arg("--data-dir")
        .arg(dir)
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .output()
        .await
        .expect("the command runs");
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (output.status.success(), said)
}

fn allow() -> Vec<String> {
    support_desk::config::DeskConfig::bundled().consent.allow
}

async fn t0003_events(record: &PgRecord) -> Vec<Event> {
    record
        .ticket_events("T-0003")
        .await
        .expect("T-0003's events")
        .into_iter()
        .map(|s| s.event)
        .collect()
}

fn issue_calls(events: &[Event]) -> usize {
    events
        .iter()
        .filter(|e| matches!(e, Event::ToolCall { tool, .. } if tool == "shop.issue_refund"))
        .count()
}

/// Waits until `check` holds of the record, for at most 20 s.
async fn until<F, Fut>(what: &str, check: F)
where
    F: Fn() -> Fut,
    Fut: Future<Output = bool>,
{
    let started = Instant::now();
    while !check().await {
        assert!(started.elapsed() < Duration::from_secs(20), "{what}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// ana's scripted run works T-0003 and stops at the lead's form: the approval waits in the
/// team's record, and nothing was released.
async fn staff_run_parks(ana: &Person, config: &Path, dir: &Path, model: &str, shop: &Shop) -> i64 {
    let (ok, said) = desk_command(
        &["run", "--json", "--tickets", "T-0003", "--model", model],
        ana,
        config,
        dir,
    )
    .await;
    assert!(ok, "{said}");
    let record = PgRecord::connect(&ana.url, &allow()).await.expect("ana");
    let state = record
        .state("T-0003")
        .await
        .expect("state")
        .expect("T-0003");
    assert_eq!(state.state, Lifecycle::WaitingForLead, "{state:?}");
    let open = record.open_approvals().await.expect("approvals");
    assert_eq!(open.len(), 1, "{open:?}");
    assert_eq!(
        (
            open[0].ticket.as_str(),
            open[0].tool.as_str(),
            open[0].asked_by.as_str()
        ),
        ("T-0003", "issue_refund", ana.name.as_str())
    );
    // The form never reached the staff's desk (its script would have answered it).
    let events = t0003_events(&record).await;
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, Event::InputRequest { .. })),
        "{events:?}"
    );
    let refunds = shop.refunds();
    assert_eq!(refunds.len(), 1, "{refunds:?}");
    assert_eq!(refunds[0].status, RefundStatus::Held);
    open[0].id
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lead_releases_from_their_own_desk_and_the_staff_ticket_goes_on_from_it() {
    let Some(pg) = pg_cluster::start().await else {
        return;
    };
    let team = pg.team().await;
    let shop = shop(&[&team.ana, &team.bo], &[&team.lee]).await;
    let model = MockModel::start(mixer_brain()).await;
    let source = format!("openai:{}", model.url);
    let (ana_dir, lee_dir) = (
        tempfile::tempdir().expect("dir"),
        tempfile::tempdir().expect("dir"),
    );
    let ana_config = config_for(ana_dir.path(), &shop, &team.ana);
    let lee_config = config_for(lee_dir.path(), &shop, &team.lee);
    staff_run_parks(&team.ana, &ana_config, ana_dir.path(), &source, &shop).await;

    // The lead's desk shows the approval and its form, "shop asks", and sends it as lee.
    let mut lee = Desk::start_in(
        lee_dir.path(),
        &[
            "--store",
            &team.lee.url,
            "--config",
            lee_config.to_str().expect("utf-8 path"),
            "--model",
            &source,
        ],
    );
    lee.screen.wait_for("1 approval open (A)").await;
    lee.press(b"A");
    let listed = lee.screen.wait_for("shop.issue_refund").await;
    assert!(listed.contains("T-0003"), "{listed}");
    lee.press(b"\r");
    // The list shows the form's message too: wait for the form itself.
    let form = lee.screen.wait_for("shop asks:").await;
    assert!(form.contains("Release refund"), "{form}");
    lee.press(b" "); // release: yes
    lee.press(b"\x12"); // Ctrl-R: review
    lee.screen.wait_for("Review").await;
    lee.press(b"\r");
    let record = PgRecord::connect(&team.lee.url, &allow())
        .await
        .expect("lee");
    until("the approval is answered", || async {
        record.open_approvals().await.expect("approvals").is_empty()
    })
    .await;
    lee.quit().await;
    let refunds = shop.refunds();
    assert_eq!(refunds[0].status, RefundStatus::Released, "{refunds:?}");
    assert_eq!(
        refunds[0].released_by.as_deref(),
        Some(team.lee.name.as_str())
    );

    // ana's desk was gone: working the ticket again goes on from the lead's answer.
    let (ok, said) = desk_command(
        &["run", "--json", "--tickets", "T-0003", "--model", &source],
        &team.ana,
        &ana_config,
        ana_dir.path(),
    )
    .await;
    assert!(ok, "{said}");
    let events = t0003_events(&record).await;
    assert_eq!(issue_calls(&events), 1, "issue_refund ran once: {events:?}");
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::RunContinued { .. }))
    );
    let state = record
        .state("T-0003")
        .await
        .expect("state")
        .expect("T-0003");
    assert_eq!(state.state, Lifecycle::Drafted, "{state:?}");
    assert_eq!(state.draft.as_deref(), Some(RELEASED));
    let last = model.requests().pop().expect("a request");
    let told = tool_messages(&last);
    assert!(
        told.last().is_some_and(|t| t.contains("\"released\"")),
        "{told:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lead_declines_from_another_desk_and_the_waiting_desk_goes_on_live() {
    let Some(pg) = pg_cluster::start().await else {
        return;
    };
    let team = pg.team().await;
    let shop = shop(&[&team.ana, &team.bo], &[&team.lee]).await;
    let model = MockModel::start(mixer_brain()).await;
    let source = format!("openai:{}", model.url);
    let (ana_dir, lee_dir) = (
        tempfile::tempdir().expect("dir"),
        tempfile::tempdir().expect("dir"),
    );
    let ana_config = config_for(ana_dir.path(), &shop, &team.ana);
    let lee_config = config_for(lee_dir.path(), &shop, &team.lee);
    let mut ana = Desk::start_in(
        ana_dir.path(),
        &[
            "--store",
            &team.ana.url,
            "--config",
            ana_config.to_str().expect("utf-8 path"),
            "--model",
            &source,
        ],
    );
    ana.screen.wait_for("Queue (all) 48/48").await;
    ana.screen.wait_for("shop 2026-07-28").await;
    ana.press(b"jj");
    ana.screen.wait_for("T-0003 · C-0156").await;
    ana.press(b"w");
    ana.screen.wait_for("y approve").await;
    ana.press(b"y");
    let waiting = ana.screen.wait_for("waiting for a lead").await;
    assert!(
        !waiting.contains("asks:"),
        "no form at ana's desk: {waiting}"
    );

    let record = PgRecord::connect(&team.lee.url, &allow())
        .await
        .expect("lee");
    let id = record.open_approvals().await.expect("approvals")[0].id;
    let (ok, said) = desk_command(
        &["approve", &id.to_string(), "--decline"],
        &team.lee,
        &lee_config,
        lee_dir.path(),
    )
    .await;
    assert!(ok, "{said}");
    assert!(
        said.contains("tool error") && said.contains("declined"),
        "{said}"
    );
    let drafted = ana.screen.wait_for("Draft reply").await;
    assert!(drafted.contains("awaits a lead's review"), "{drafted}");
    ana.quit().await;
    let refunds = shop.refunds();
    assert_eq!(refunds[0].status, RefundStatus::Held, "{refunds:?}");
    let events = t0003_events(&record).await;
    assert_eq!(issue_calls(&events), 1, "{events:?}");
    assert!(events.iter().any(|e| matches!(
        e,
        Event::ApprovalAnswered { by, action, .. } if *by == team.lee.name && action == "decline"
    )));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn staff_and_the_asker_cannot_answer_and_a_lead_desk_killed_mid_form_leaves_it_open() {
    let Some(pg) = pg_cluster::start().await else {
        return;
    };
    let team = pg.team().await;
    let lou = pg.person("lou", true).await;
    let shop = shop(&[&team.ana, &team.bo], &[&team.lee, &lou]).await;
    let model = MockModel::start(mixer_brain()).await;
    let source = format!("openai:{}", model.url);
    let dirs: Vec<tempfile::TempDir> = (0..3).map(|_| tempfile::tempdir().expect("dir")).collect();
    // A lead's own request goes to the other leads: lee's run files it, as a staff run does.
    let lee_config = config_for(dirs[0].path(), &shop, &team.lee);
    let id = staff_run_parks(&team.lee, &lee_config, dirs[0].path(), &source, &shop).await;
    let (ok, said) = desk_command(
        &[
            "approve",
            &id.to_string(),
            "--accept",
            "--field",
            "release=true",
        ],
        &team.lee,
        &lee_config,
        dirs[0].path(),
    )
    .await;
    assert!(!ok && said.contains("your own request"), "{said}");
    let bo_config = config_for(dirs[1].path(), &shop, &team.bo);
    let (ok, said) = desk_command(
        &[
            "approve",
            &id.to_string(),
            "--accept",
            "--field",
            "release=true",
        ],
        &team.bo,
        &bo_config,
        dirs[1].path(),
    )
    .await;
    assert!(!ok && said.contains("not a lead"), "{said}");
    // The database refuses it too, whatever a desk says.
    let bo_record = PgRecord::connect(&team.bo.url, &allow()).await.expect("bo");
    assert!(bo_record.take_approval(id).await.is_err());
    assert_eq!(shop.refunds()[0].status, RefundStatus::Held);

    // lou opens the form, and the desk dies with it open.
    let lou_config = config_for(dirs[2].path(), &shop, &lou);
    let mut desk = Desk::start_in(
        dirs[2].path(),
        &[
            "--store",
            &lou.url,
            "--config",
            lou_config.to_str().expect("utf-8 path"),
            "--model",
            &source,
        ],
    );
    desk.screen.wait_for("1 approval open (A)").await;
    desk.press(b"A");
    desk.screen.wait_for("shop.issue_refund").await;
    desk.press(b"\r");
    desk.screen.wait_for("shop asks:").await;
    desk.kill().await;
    let record = PgRecord::connect(&lou.url, &allow()).await.expect("lou");
    assert_eq!(record.open_approvals().await.expect("approvals").len(), 1);

    // The state for the form is forged meanwhile (by hand, as an administrator): the shop
    // refuses it, and lou's desk asks the shop again for a fresh form, saying so.
    pg.admin()
        .await
        .execute(
            "UPDATE desk.approvals SET request_state = 'forged' WHERE id = $1",
            &[&id],
        )
        .await
        .expect("forge the state");
    let (ok, said) = desk_command(
        &[
            "approve",
            &id.to_string(),
            "--accept",
            "--field",
            "release=true",
        ],
        &lou,
        &lou_config,
        dirs[2].path(),
    )
    .await;
    assert!(ok, "{said}");
    assert!(said.contains("asked it again"), "{said}");
    let refunds = shop.refunds();
    assert_eq!(refunds.len(), 1, "one refund: {refunds:?}");
    assert_eq!(refunds[0].status, RefundStatus::Released);
    assert_eq!(refunds[0].released_by.as_deref(), Some(lou.name.as_str()));
    // Answered once: a second answer is refused, and nothing is released twice.
    let (ok, said) = desk_command(
        &[
            "approve",
            &id.to_string(),
            "--accept",
            "--field",
            "release=true",
        ],
        &team.lee,
        &lee_config,
        dirs[0].path(),
    )
    .await;
    assert!(!ok && said.contains("already"), "{said}");
    assert_eq!(shop.refunds().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lead_answering_their_own_refund_by_script_is_refused_by_the_shop() {
    let Some(pg) = pg_cluster::start().await else {
        return;
    };
    let team = pg.team().await;
    let shop = shop(&[&team.ana], &[&team.lee]).await;
    let model = MockModel::start(mixer_brain()).await;
    let source = format!("openai:{}", model.url);
    let dir = tempfile::tempdir().expect("dir");
    let ana_config = config_for(dir.path(), &shop, &team.ana);
    // Staff may not answer a lead's forms by script.
    let (ok, said) = desk_command(
        &[
            "run",
            "--tickets",
            "T-0003",
            "--lead",
            "accept",
            "--model",
            &source,
        ],
        &team.ana,
        &ana_config,
        dir.path(),
    )
    .await;
    assert!(!ok && said.contains("is not a lead"), "{said}");
    // A lead may, and the shop keeps the two-person rule: lee issued it, so lee cannot release it.
    let lee_config = config_for(dir.path(), &shop, &team.lee);
    let (ok, said) = desk_command(
        &[
            "run",
            "--tickets",
            "T-0003",
            "--lead",
            "accept",
            "--model",
            &source,
        ],
        &team.lee,
        &lee_config,
        dir.path(),
    )
    .await;
    assert!(ok, "{said}");
    let record = PgRecord::connect(&team.lee.url, &allow())
        .await
        .expect("lee");
    let events = t0003_events(&record).await;
    let refused = events.iter().find_map(|e| match e {
        Event::Outcome { tool, text, .. } if tool == "shop.issue_refund" => Some(text.clone()),
        _ => None,
    });
    assert!(
        refused.as_deref().is_some_and(|t| t.contains("stays held")),
        "{refused:?}"
    );
    assert_eq!(shop.refunds()[0].status, RefundStatus::Held);
    assert!(record.open_approvals().await.expect("approvals").is_empty());
}
