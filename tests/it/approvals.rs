//! Leads approve across desks, through the real binary, a real PostgreSQL (a throwaway
//! cluster; skipped in one line without one) and the shop over Streamable HTTP with a roster:
//! a staff run's refund above the limit waits in the team's record for a lead; a lead answers
//! it from their own desk, whose next round reaches the shop as that lead; the staff's ticket
//! goes on from the answer. Nobody answers their own request, staff answer none, and a lead's
//! desk killed with the form open leaves the approval to another lead.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support_desk::record::Event;
use support_desk::record::Lifecycle;
use support_desk::record::postgres::PgRecord;
use support_desk::shop::QuoteIds;
use support_desk::shop::http::StaffTokens;
use support_desk::shop::store::SqliteStore;
use support_desk::shop::store::{Refund, RefundStatus};
use tokio_util::sync::CancellationToken;

use crate::desk_pty::Desk;
use crate::mock_model::{Brain, MockModel, call, quote_id_in, tool_messages, words};
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
    store: Arc<SqliteStore>,
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

/// One person's place: their own data directory, and their own config naming the shop over
/// HTTP with their own token.
struct Seat {
    person: Person,
    dir: tempfile::TempDir,
    config: PathBuf,
}

impl Seat {
    fn new(person: &Person, shop: &Shop) -> Self {
        Self::with(person, shop, "")
    }

    /// A seat whose config says `more` besides the shop.
    fn with(person: &Person, shop: &Shop, more: &str) -> Self {
        let dir = tempfile::tempdir().expect("dir");
        let config = dir.path().join("desk.toml");
        std::fs::write(
            &config,
            format!(
                "[servers.shop]\nurl = \"http://{}/mcp\"\nheaders = {{ Authorization = \"Bearer {}\" }}\n{more}",
                shop.addr,
                token(person)
            ),
        )
        .expect("write the config");
        Self {
            person: person.clone(),
            dir,
            config,
        }
    }

    /// The person's desk under a pseudo-terminal.
    fn desk(&self, model: &str) -> Desk {
        let config = self.config.to_str().expect("a UTF-8 path");
        Desk::start_in(
            self.dir.path(),
            &[
                "--store",
                &self.person.url,
                "--config",
                config,
                "--model",
                model,
            ],
        )
    }

    /// `support-desk ARGS… --store URL --config FILE --data-dir DIR` as this person, to its
    /// end: whether it succeeded, and what it said.
    async fn command(&self, args: &[&str]) -> (bool, String) {
        crate::support::seat_command(args, &self.person.url, &self.config, self.dir.path()).await
    }

    async fn approve(&self, id: i64) -> (bool, String) {
        let id = id.to_string();
        self.command(&["approve", &id, "--accept", "--field", "release=true"])
            .await
    }

    /// A scripted run of T-0003 with `extra` flags.
    async fn run_t0003(&self, model: &str, extra: &[&str]) -> (bool, String) {
        let mut args = vec![
            "run",
            "--tickets",
            "T-0003",
            "--model",
            model,
            "--consent",
            "approve",
        ];
        args.extend_from_slice(extra);
        self.command(&args).await
    }
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
            1 => call(
                "shop__issue_refund",
                json!({"quote_id": quote_id_in(&tools[0])}),
            ),
            _ if tools[tools.len() - 1].contains("\"released\"") => words(RELEASED),
            _ => words(AWAITS),
        }
    })
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

/// A scripted run works T-0003 at `seat` and stops at the lead's form: the approval waits in
/// the team's record, and nothing was released.
async fn run_parks(seat: &Seat, model: &str, shop: &Shop) -> i64 {
    let (ok, said) = seat.run_t0003(model, &["--json"]).await;
    assert!(ok, "{said}");
    let record = PgRecord::connect(&seat.person.url, &allow())
        .await
        .expect("connect");
    let state = record.state("T-0003").await.expect("state");
    assert_eq!(
        state.map(|s| s.state),
        Some(Lifecycle::WaitingForLead),
        "{said}"
    );
    let open = record.open_approvals().await.expect("approvals");
    assert_eq!(open.len(), 1, "{open:?}");
    let asked = &open[0];
    assert_eq!(
        (
            asked.ticket.as_str(),
            asked.tool.as_str(),
            asked.asked_by.as_str()
        ),
        ("T-0003", "issue_refund", seat.person.name.as_str())
    );
    // The form never reached the asking desk (its script would have answered it).
    let events = t0003_events(&record).await;
    crate::invariants::assert_the_record_keeps_its_promises(&events, &allow());
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, Event::InputRequest { .. })),
        "{events:?}"
    );
    let refunds = shop.refunds();
    assert_eq!(refunds.len(), 1, "{refunds:?}");
    assert_eq!(refunds[0].status, RefundStatus::Held);
    asked.id
}

/// A team (ana and bo on the staff, lee a lead, and `more_leads`), the shop that knows them,
/// and a model that works T-0003.
struct World {
    pg: pg_cluster::PgCluster,
    team: pg_cluster::Team,
    leads: Vec<Person>,
    shop: Shop,
    model: MockModel,
    source: String,
}

async fn world(more_leads: &[&str]) -> Option<World> {
    let pg = pg_cluster::start().await?;
    let team = pg.team().await;
    let mut leads = Vec::new();
    for name in more_leads {
        leads.push(pg.person(name, true).await);
    }
    let all_leads: Vec<&Person> = std::iter::once(&team.lee).chain(&leads).collect();
    let shop = shop(&[&team.ana, &team.bo], &all_leads).await;
    let model = MockModel::start(mixer_brain()).await;
    let source = format!("openai:{}", model.url);
    Some(World {
        pg,
        team,
        leads,
        shop,
        model,
        source,
    })
}

impl World {
    fn seat(&self, person: &Person) -> Seat {
        Seat::new(person, &self.shop)
    }

    async fn record(&self) -> PgRecord {
        PgRecord::connect(&self.team.lee.url, &allow())
            .await
            .expect("lee")
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lead_releases_from_their_own_desk_and_the_staff_ticket_goes_on_from_it() {
    let Some(w) = world(&[]).await else {
        return;
    };
    let (ana, lee) = (w.seat(&w.team.ana), w.seat(&w.team.lee));
    run_parks(&ana, &w.source, &w.shop).await;

    // The lead's desk shows the approval and its form, "shop asks", and sends it as lee.
    let mut desk = lee.desk(&w.source);
    desk.screen.wait_for("1 approval open (A)").await;
    desk.press(b"A");
    let listed = desk.screen.wait_for("shop.issue_refund").await;
    assert!(listed.contains("T-0003"), "{listed}");
    desk.press(b"\r");
    // The list shows the form's message too: wait for the form itself.
    let form = desk.screen.wait_for("shop asks:").await;
    assert!(form.contains("Release refund"), "{form}");
    assert!(
        form.contains(&format!("asked by {}", w.team.ana.name)),
        "who asked: {form}"
    );
    // Closing the form is no answer: the approval stays open.
    desk.press(b"\x1b");
    desk.screen.wait_for("stays open").await;
    let record = w.record().await;
    assert_eq!(record.open_approvals().await.expect("approvals").len(), 1);
    desk.press(b"A");
    desk.screen.wait_for("shop.issue_refund").await;
    desk.press(b"\r");
    desk.screen.wait_for("shop asks:").await;
    desk.press(b" "); // release: yes
    desk.press(b"\x12"); // Ctrl-R: review
    desk.screen.wait_for("will receive:").await;
    desk.press(b"\r");
    until("the approval is answered", || async {
        record.open_approvals().await.expect("approvals").is_empty()
    })
    .await;
    desk.quit().await;
    let refunds = w.shop.refunds();
    assert_eq!(refunds[0].status, RefundStatus::Released, "{refunds:?}");
    assert_eq!(
        refunds[0].released_by.as_deref(),
        Some(w.team.lee.name.as_str())
    );

    // ana's desk was gone: working the ticket again goes on from the lead's answer.
    let (ok, said) = ana.run_t0003(&w.source, &["--json"]).await;
    assert!(ok, "{said}");
    let events = t0003_events(&record).await;
    crate::invariants::assert_the_record_keeps_its_promises(&events, &allow());
    assert_eq!(issue_calls(&events), 1, "issue_refund ran once: {events:?}");
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::RunContinued { .. }))
    );
    let state = record.state("T-0003").await.expect("state");
    let state = state.expect("T-0003");
    assert_eq!(state.state, Lifecycle::Drafted, "{state:?}");
    assert_eq!(state.draft.as_deref(), Some(RELEASED));
    let last = w.model.requests().pop().expect("a request");
    let told = tool_messages(&last);
    assert!(
        told.last().is_some_and(|t| t.contains("\"released\"")),
        "{told:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lead_declines_from_another_desk_and_the_waiting_desk_goes_on_live() {
    let Some(w) = world(&[]).await else {
        return;
    };
    let (ana, lee) = (w.seat(&w.team.ana), w.seat(&w.team.lee));
    let mut desk = ana.desk(&w.source);
    desk.screen.wait_for("Queue (all) 48/48").await;
    desk.screen.wait_for("shop 2026-07-28").await;
    desk.press(b"jj");
    desk.screen.wait_for("T-0003 · C-0156").await;
    desk.press(b"w");
    desk.screen.wait_for("y approve").await;
    desk.press(b"y");
    let waiting = desk.screen.wait_for("waiting for a lead").await;
    assert!(
        !waiting.contains("asks:"),
        "no form at ana's desk: {waiting}"
    );

    let record = w.record().await;
    let id = record.open_approvals().await.expect("approvals")[0].id;
    let (ok, said) = lee
        .command(&["approve", &id.to_string(), "--decline"])
        .await;
    assert!(ok, "{said}");
    assert!(
        said.contains("tool error") && said.contains("declined"),
        "{said}"
    );
    let drafted = desk.screen.wait_for("Draft reply").await;
    assert!(drafted.contains("awaits a lead's review"), "{drafted}");
    desk.quit().await;
    let refunds = w.shop.refunds();
    assert_eq!(refunds[0].status, RefundStatus::Held, "{refunds:?}");
    let events = t0003_events(&record).await;
    crate::invariants::assert_the_record_keeps_its_promises(&events, &allow());
    assert_eq!(issue_calls(&events), 1, "{events:?}");
    assert!(events.iter().any(|e| matches!(
        e,
        Event::ApprovalAnswered { by, action, .. } if *by == w.team.lee.name && action == "decline"
    )));
}

/// `approve` without `--config` reaches the bundled shop, not the team's shop that asked: the
/// desk refuses before anything is sent, names both, exits non-zero, and the approval stays
/// open with the refund held. From a desk that reaches the asking shop, the answer is taken.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_goes_only_to_the_server_that_asked() {
    let Some(w) = world(&[]).await else {
        return;
    };
    let (ana, lee) = (w.seat(&w.team.ana), w.seat(&w.team.lee));
    let id = run_parks(&ana, &w.source, &w.shop).await;
    let data = tempfile::tempdir().expect("dir");
    let output = tokio::process::Command::new(BIN)
        .args([
            "approve",
            &id.to_string(),
            "--accept",
            "--field",
            "release=true",
        ])
        .args(["--store", &w.team.lee.url, "--data-dir"])
        .arg(data.path())
        .env("RUST_LOG", "warn")
        .output()
        .await
        .expect("approve runs");
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "{said}");
    assert!(
        said.contains(&format!("approval {id} was asked of shop at"))
            && said.contains(&w.shop.addr.to_string()),
        "{said}"
    );
    let record = w.record().await;
    let open = record.open_approvals().await.expect("approvals");
    assert_eq!(open.len(), 1, "still open: {open:?}");
    assert_eq!(w.shop.refunds()[0].status, RefundStatus::Held);

    let (ok, said) = lee.approve(id).await;
    assert!(ok, "{said}");
    assert!(record.open_approvals().await.expect("approvals").is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn staff_and_the_asker_cannot_answer_and_a_lead_desk_killed_mid_form_leaves_it_open() {
    let Some(w) = world(&["lou"]).await else {
        return;
    };
    let lou = &w.leads[0];
    let (lee, bo, lou_seat) = (w.seat(&w.team.lee), w.seat(&w.team.bo), w.seat(lou));
    // A lead's own request goes to the other leads: lee's run files it, as a staff run does.
    let id = run_parks(&lee, &w.source, &w.shop).await;
    let (ok, said) = lee.approve(id).await;
    assert!(!ok && said.contains("your own request"), "{said}");
    let (ok, said) = bo.approve(id).await;
    assert!(!ok && said.contains("not a lead"), "{said}");
    // The database refuses it too, whatever a desk says.
    let bo_record = PgRecord::connect(&w.team.bo.url, &allow())
        .await
        .expect("bo");
    assert!(bo_record.take_approval(id).await.is_err());
    assert_eq!(w.shop.refunds()[0].status, RefundStatus::Held);

    // lou opens the form, and the desk dies with it open.
    let mut desk = lou_seat.desk(&w.source);
    desk.screen.wait_for("1 approval open (A)").await;
    desk.press(b"A");
    desk.screen.wait_for("shop.issue_refund").await;
    desk.press(b"\r");
    desk.screen.wait_for("shop asks:").await;
    desk.kill().await;
    let record = w.record().await;
    assert_eq!(record.open_approvals().await.expect("approvals").len(), 1);

    // The state for the form is forged meanwhile (by hand, as an administrator): the shop
    // refuses it, and lou's desk says so and answers nothing (it never calls the tool
    // afresh, which could make a new side effect); the approval stays open.
    let admin = w.pg.admin().await;
    let kept: Option<String> = admin
        .query_one(
            "SELECT request_state FROM desk.approvals WHERE id = $1",
            &[&id],
        )
        .await
        .expect("read the state")
        .get(0);
    admin
        .execute(
            "UPDATE desk.approvals SET request_state = 'forged' WHERE id = $1",
            &[&id],
        )
        .await
        .expect("forge the state");
    let (ok, said) = lou_seat.approve(id).await;
    assert!(!ok, "{said}");
    assert!(
        said.contains(&format!("refused the state of approval {id}"))
            && said.contains("stays open"),
        "{said}"
    );
    assert_eq!(w.shop.refunds()[0].status, RefundStatus::Held);
    assert_eq!(record.open_approvals().await.expect("approvals").len(), 1);
    // With the shop's own state back, lou's desk fetches the shop's form for it and answers.
    admin
        .execute(
            "UPDATE desk.approvals SET request_state = $2 WHERE id = $1",
            &[&id, &kept],
        )
        .await
        .expect("the state as the shop gave it");
    let (ok, said) = lou_seat.approve(id).await;
    assert!(ok, "{said}");
    let refunds = w.shop.refunds();
    assert_eq!(refunds.len(), 1, "one refund: {refunds:?}");
    assert_eq!(refunds[0].status, RefundStatus::Released);
    assert_eq!(refunds[0].released_by.as_deref(), Some(lou.name.as_str()));
    // Answered once: a second answer is refused, and nothing is released twice.
    let (ok, said) = lee.approve(id).await;
    assert!(!ok && said.contains("already"), "{said}");
    assert_eq!(w.shop.refunds().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lead_answering_their_own_refund_by_script_is_refused_by_the_shop() {
    let Some(w) = world(&[]).await else {
        return;
    };
    let (ana, lee) = (w.seat(&w.team.ana), w.seat(&w.team.lee));
    // Staff may not answer a lead's forms by script.
    let (ok, said) = ana.run_t0003(&w.source, &["--lead", "accept"]).await;
    assert!(!ok && said.contains("is not a lead"), "{said}");
    // A lead may, and the shop keeps the two-person rule: lee issued it, so lee cannot release it.
    let (ok, said) = lee.run_t0003(&w.source, &["--lead", "accept"]).await;
    assert!(ok, "{said}");
    let record = w.record().await;
    let events = t0003_events(&record).await;
    crate::invariants::assert_the_record_keeps_its_promises(&events, &allow());
    let refused = events.iter().find_map(|e| match e {
        Event::Outcome { tool, text, .. } if tool == "shop.issue_refund" => Some(text.clone()),
        _ => None,
    });
    assert!(
        refused.as_deref().is_some_and(|t| t.contains("stays held")),
        "{refused:?}"
    );
    assert_eq!(w.shop.refunds()[0].status, RefundStatus::Held);
    assert!(record.open_approvals().await.expect("approvals").is_empty());
}

/// A lead's yes that the shop does not take leaves the approval open, and the refund held:
/// lin leads on the team's record, but her desk reaches the shop with a staff member's token,
/// so the shop refuses the release (only its leads release). The command says the approval
/// stays open and exits non-zero, nothing is recorded as answered, and another lead answers
/// it at once (lin's desk let go of it).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_yes_the_shop_did_not_take_leaves_the_approval_open() {
    let Some(w) = world(&[]).await else {
        return;
    };
    let lin = w.pg.person("lin", true).await;
    let (ana, lee) = (w.seat(&w.team.ana), w.seat(&w.team.lee));
    let id = run_parks(&ana, &w.source, &w.shop).await;

    let lin_seat = Seat::new(&lin, &w.shop);
    std::fs::write(
        &lin_seat.config,
        format!(
            "[servers.shop]\nurl = \"http://{}/mcp\"\nheaders = {{ Authorization = \"Bearer {}\" }}\n",
            w.shop.addr,
            token(&w.team.bo)
        ),
    )
    .expect("lin's config");
    let (ok, said) = lin_seat.approve(id).await;
    assert!(!ok, "exit non-zero: {said}");
    assert!(
        said.contains(&format!(
            "shop did not take the answer to approval {id} (tool error:"
        )) && said.contains("the approval stays open"),
        "{said}"
    );
    let record = w.record().await;
    let open = record.open_approvals().await.expect("approvals");
    assert_eq!(open.len(), 1, "still open: {open:?}");
    assert_eq!(open[0].answering_by, None, "lin's desk let go of it");
    assert_eq!(w.shop.refunds()[0].status, RefundStatus::Held);
    let events = t0003_events(&record).await;
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, Event::ApprovalAnswered { .. })),
        "nothing recorded as answered: {events:?}"
    );

    let (ok, said) = lee.approve(id).await;
    assert!(ok, "{said}");
    assert!(record.open_approvals().await.expect("approvals").is_empty());
    assert_eq!(w.shop.refunds()[0].status, RefundStatus::Released);
    let events = t0003_events(&record).await;
    crate::invariants::assert_the_record_keeps_its_promises(&events, &allow());
}

/// ana files approvals of her own straight into the record (as `psql` would, under her own
/// login): one copying the shop's real state beside a form text of her own ("EUR 12.00 on
/// O-1739"), one with no state, one for a tool leads never answer. lee's desk shows the
/// shop's own form for the state (EUR 279.00 on O-1587), and `approve` refuses the other two
/// without calling the shop: no refund is made in lee's name.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_is_what_the_shop_says_it_is() {
    let Some(w) = world(&[]).await else {
        return;
    };
    let (ana, lee) = (w.seat(&w.team.ana), w.seat(&w.team.lee));
    let real = run_parks(&ana, &w.source, &w.shop).await;
    let sly = crate::pg_cluster::connect(&w.team.ana.url).await;
    let mut forged = Vec::new();
    for (ticket, state, tool) in [
        ("T-0020", "request_state", "tool"),
        ("T-0021", "NULL", "tool"),
        ("T-0022", "request_state", "'quote_refund'"),
    ] {
        sly.batch_execute(&format!(
            "INSERT INTO desk.tickets (id) VALUES ('{ticket}');
             UPDATE desk.tickets SET owner = current_user, lease_until = now() + interval '25 seconds'
                 WHERE id = '{ticket}'"
        ))
        .await
        .expect("ana claims it by hand");
        let row = sly
            .query_one(
                &format!(
                    "INSERT INTO desk.approvals (ticket, turn, server, origin, tool, arguments,
                         request_key, form, request_state)
                     SELECT '{ticket}', 1, server, origin, {tool}, arguments, request_key,
                            json_build_object('message', 'Release refund R-0001 of EUR 12.00 on order O-1739?',
                                              'requestedSchema', form->'requestedSchema'),
                            {state}
                     FROM desk.approvals WHERE id = $1 RETURNING id"
                ),
                &[&real],
            )
            .await
            .expect("ana files it by hand");
        forged.push(row.get::<_, i64>(0));
    }

    let (ok, said) = lee.approve(forged[1]).await;
    assert!(!ok && said.contains("holds no state from shop"), "{said}");
    let (ok, said) = lee.approve(forged[2]).await;
    assert!(
        !ok && said.contains("does not give to leads (lead_forms)"),
        "{said}"
    );
    let refunds = w.shop.refunds();
    assert_eq!(
        refunds.len(),
        1,
        "no refund made in lee's name: {refunds:?}"
    );
    assert_eq!(refunds[0].status, RefundStatus::Held);

    // On lee's desk the copied state opens the shop's own form, not ana's words.
    let mut desk = lee.desk(&w.source);
    desk.screen.wait_for("4 approvals open (A)").await;
    desk.press(b"A");
    desk.screen.wait_for("T-0020").await;
    desk.press(b"j\r");
    let form = desk.screen.wait_for("shop asks:").await;
    assert!(
        form.contains("EUR 279.00") && form.contains("O-1587") && !form.contains("EUR 12.00"),
        "{form}"
    );
    desk.kill().await;
    assert_eq!(w.shop.refunds()[0].status, RefundStatus::Held);
}

/// A loopback proxy to `to` that holds each piece of the server's answers for `delay`: a
/// slow shop, as far as any desk can tell.
async fn slow_proxy(to: SocketAddr, delay: Duration) -> SocketAddr {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind loopback");
    let addr = listener.local_addr().expect("address");
    tokio::spawn(async move {
        while let Ok((inbound, _)) = listener.accept().await {
            tokio::spawn(async move {
                let Ok(outbound) = tokio::net::TcpStream::connect(to).await else {
                    return;
                };
                let (mut from_desk, mut to_desk) = inbound.into_split();
                let (mut from_shop, mut to_shop) = outbound.into_split();
                let up = tokio::io::copy(&mut from_desk, &mut to_shop);
                let down = async {
                    let mut buffer = [0u8; 16384];
                    loop {
                        let n = from_shop.read(&mut buffer).await?;
                        if n == 0 {
                            return Ok::<_, std::io::Error>(());
                        }
                        tokio::time::sleep(delay).await;
                        to_desk.write_all(&buffer[..n]).await?;
                    }
                };
                let _ = tokio::join!(up, down);
            });
        }
    });
    addr
}

/// While a lead's desk sends the release to a slow shop, the asker's withdraw is refused:
/// the refund is released and the record says so, never "withdrawn" beside a released refund.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_withdraw_never_crosses_a_release_on_its_way_to_a_slow_shop() {
    let Some(w) = world(&[]).await else {
        return;
    };
    let slow = slow_proxy(w.shop.addr, Duration::from_millis(300)).await;
    let via_slow = |person: &Person| {
        let seat = w.seat(person);
        std::fs::write(
            &seat.config,
            format!(
                "[servers.shop]\nurl = \"http://{slow}/mcp\"\nheaders = {{ Authorization = \"Bearer {}\" }}\n",
                token(person)
            ),
        )
        .expect("config");
        seat
    };
    let (ana, lee) = (via_slow(&w.team.ana), via_slow(&w.team.lee));
    let id = run_parks(&ana, &w.source, &w.shop).await;
    let asker = PgRecord::connect(&w.team.ana.url, &allow())
        .await
        .expect("ana");
    let withdrawing = async {
        let started = Instant::now();
        loop {
            let approval = asker.approval(id).await.expect("read");
            if approval.answering_by.is_some() {
                break;
            }
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "lee's desk never held it"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        asker
            .withdraw_approval(id, "the customer changed their mind")
            .await
    };
    let ((ok, said), withdrawn) = tokio::join!(lee.approve(id), withdrawing);
    assert!(ok, "{said}");
    let refused = withdrawn.expect_err("refused while lee's answer is on its way");
    assert!(
        refused.to_string().contains("is answering approval"),
        "{refused}"
    );
    assert_eq!(w.shop.refunds()[0].status, RefundStatus::Released);
    let approval = asker.approval(id).await.expect("read");
    assert_eq!(
        approval.closed.map(|(closed, _)| closed).as_deref(),
        Some("accepted")
    );
}

/// On a team, a staff member's own call of an over-limit refund waits for a lead like a
/// model's would: `call` says which approval it went to, a lead releases it from their own
/// desk, and the record holds the staff member's call and the lead's answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_staff_members_own_refund_call_goes_to_a_lead_on_a_team() {
    let Some(w) = world(&[]).await else {
        return;
    };
    let (ana, lee) = (w.seat(&w.team.ana), w.seat(&w.team.lee));
    let (ok, said) = ana
        .command(&[
            "call",
            "T-0003",
            "shop.quote_refund",
            "--arg",
            "order_id=O-1587",
            "--arg",
            "reason=the motor smells burnt",
        ])
        .await;
    assert!(ok, "{said}");
    let quote_id = said
        .split('"')
        .find(|w| w.starts_with("Q-"))
        .unwrap_or_else(|| panic!("a quote id: {said}"))
        .to_owned();
    let quote = format!("quote_id={quote_id}");
    let (ok, said) = ana
        .command(&[
            "call",
            "T-0003",
            "shop.issue_refund",
            "--arg",
            &quote,
            "--lead",
            "accept",
        ])
        .await;
    assert!(!ok && said.contains("goes to the team's leads"), "{said}");
    let (ok, said) = ana
        .command(&["call", "T-0003", "shop.issue_refund", "--arg", &quote])
        .await;
    assert!(ok, "{said}");
    assert!(
        said.contains("went to the team's leads as approval"),
        "{said}"
    );

    let record = w.record().await;
    let open = record.open_approvals().await.expect("approvals");
    assert_eq!(open.len(), 1, "{open:?}");
    assert_eq!(
        (open[0].tool.as_str(), open[0].asked_by.as_str()),
        ("issue_refund", w.team.ana.name.as_str())
    );
    assert_eq!(w.shop.refunds()[0].status, RefundStatus::Held);

    let (ok, said) = lee.approve(open[0].id).await;
    assert!(ok, "{said}");
    let refunds = w.shop.refunds();
    assert_eq!(refunds[0].status, RefundStatus::Released, "{refunds:?}");
    assert_eq!(
        refunds[0].released_by.as_deref(),
        Some(w.team.lee.name.as_str())
    );
    let events = t0003_events(&record).await;
    crate::invariants::assert_the_record_keeps_its_promises(&events, &allow());
    assert_eq!(issue_calls(&events), 1, "{events:?}");
    assert!(events.iter().any(|e| matches!(
        e,
        Event::ToolCall { tool, turn: support_desk::record::event::PERSON_TURN, .. }
            if tool == "shop.issue_refund"
    )));
    assert!(events.iter().any(|e| matches!(
        e,
        Event::ApprovalAnswered { by, action, .. } if *by == w.team.lee.name && action == "accept"
    )), "{events:?}");
}

/// The asker's rule for an approval no lead answers within 30 minutes.
fn fallback(to: &str) -> String {
    format!("[approvals]\nfallback_after = \"30m\"\nfallback = \"{to}\"\n")
}

/// Makes approval `id` as old as `minutes`, as the database's clock sees it: the test's
/// control of time (nobody on the team can change when an approval was asked).
async fn age(w: &World, id: i64, minutes: i64) {
    let aged = w
        .pg
        .admin()
        .await
        .execute(
            &format!(
                "UPDATE desk.approvals SET asked_at = now() - interval '{minutes} minutes' WHERE id = $1"
            ),
            &[&id],
        )
        .await
        .expect("aged");
    assert_eq!(aged, 1);
}

fn fell_back(events: &[Event]) -> Vec<(String, Option<String>)> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::ApprovalFellBack { after, to, .. } => Some((after.clone(), to.clone())),
            _ => None,
        })
        .collect()
}

/// No lead answers within the asker's 30 minutes: whichever of the open desks sees it due
/// first (a lead's and a staff member's here) declines it back to the asker, once, on the
/// record; nothing is released, and the ticket is in front of a person again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_no_lead_answers_in_time_goes_back_to_its_asker_declined() {
    let Some(w) = world(&[]).await else {
        return;
    };
    let ana = Seat::with(&w.team.ana, &w.shop, &fallback("declined"));
    let id = run_parks(&ana, &w.source, &w.shop).await;
    let (lee, bo) = (w.seat(&w.team.lee), w.seat(&w.team.bo));
    let lead_desk = lee.desk(&w.source);
    let staff_desk = bo.desk(&w.source);
    lead_desk
        .screen
        .wait_for("1 approval open (A), waiting")
        .await;
    staff_desk.screen.wait_for("Queue (all) 48/48").await;
    let record = w.record().await;
    // Open desks leave an approval that is not due alone.
    age(&w, id, 29).await;
    tokio::time::sleep(Duration::from_secs(6)).await;
    assert_eq!(record.open_approvals().await.expect("approvals").len(), 1);

    age(&w, id, 31).await;
    until("the approval falls back", || async {
        record.open_approvals().await.expect("approvals").is_empty()
    })
    .await;
    // Every desk has looked again since: still one fallback.
    tokio::time::sleep(Duration::from_secs(6)).await;
    lead_desk.quit().await;
    staff_desk.quit().await;
    let approval = record.approval(id).await.expect("approval");
    assert_eq!(
        approval.closed.as_ref().map(|(how, _)| how.as_str()),
        Some("lapsed")
    );
    let events = t0003_events(&record).await;
    assert_eq!(fell_back(&events), [("30m".to_owned(), None)], "{events:?}");
    crate::invariants::assert_the_record_keeps_its_promises(&events, &allow());
    let state = record
        .state("T-0003")
        .await
        .expect("state")
        .expect("T-0003");
    assert_eq!(state.state, Lifecycle::NeedsPerson, "{state:?}");
    let reason = state.reason.unwrap_or_default();
    assert!(
        reason.contains(&format!("approval {id} was declined by the desk's rule"))
            && reason.contains("within 30m"),
        "{reason}"
    );
    let refunds = w.shop.refunds();
    assert_eq!(refunds[0].status, RefundStatus::Held, "{refunds:?}");
}

/// The asker's rule names a second lead: both leads' desks announce the approval when it is
/// asked (a desktop notice here), and when no lead has answered in time it goes to the one
/// named, whose desk says it is theirs and announces it again; they release it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_no_lead_answers_in_time_goes_to_the_lead_named_whose_desk_hears_of_it() {
    let Some(w) = world(&["lou"]).await else {
        return;
    };
    let lou = &w.leads[0];
    let ana = Seat::with(&w.team.ana, &w.shop, &fallback(&lou.name));
    let notice = "[approvals]\nnotice = \"desktop\"\n";
    let (lee, lou_seat) = (
        Seat::with(&w.team.lee, &w.shop, notice),
        Seat::with(lou, &w.shop, notice),
    );
    let lee_desk = lee.desk(&w.source);
    let lou_desk = lou_seat.desk(&w.source);
    lee_desk.screen.wait_for("Queue (all) 48/48").await;
    lou_desk.screen.wait_for("Queue (all) 48/48").await;
    let id = run_parks(&ana, &w.source, &w.shop).await;
    let asked = format!(
        "\x1b]9;approval {id} waits for a lead: T-0003, shop.issue_refund, asked by {}\x07",
        w.team.ana.name
    );
    for desk in [&lee_desk, &lou_desk] {
        desk.screen.wait_for("1 approval open (A), waiting").await;
        desk.screen.wait_for_bytes(asked.as_bytes()).await;
    }

    age(&w, id, 31).await;
    lou_desk.screen.wait_for(&format!("yours: {id}")).await;
    lou_desk
        .screen
        .wait_for_bytes(
            format!("\x1b]9;approval {id} is yours: no lead answered it in time").as_bytes(),
        )
        .await;
    let lee_screen = lee_desk.screen.wait_for("waiting 31m").await;
    assert!(!lee_screen.contains("yours:"), "{lee_screen}");
    lee_desk.quit().await;
    lou_desk.quit().await;

    let record = w.record().await;
    let open = record.open_approvals().await.expect("approvals");
    assert_eq!(open.len(), 1, "passed on, still open: {open:?}");
    assert!(open[0].fell_back);
    let events = t0003_events(&record).await;
    assert_eq!(
        fell_back(&events),
        [("30m".to_owned(), Some(lou.name.clone()))],
        "{events:?}"
    );
    let (ok, said) = lou_seat.command(&["approvals"]).await;
    assert!(
        ok && said.contains(&format!("passed to {}: no lead answered in time", lou.name)),
        "{said}"
    );
    let (ok, said) = lou_seat.approve(id).await;
    assert!(ok, "{said}");
    let refunds = w.shop.refunds();
    assert_eq!(refunds[0].status, RefundStatus::Released, "{refunds:?}");
    assert_eq!(refunds[0].released_by.as_deref(), Some(lou.name.as_str()));
    let events = t0003_events(&record).await;
    crate::invariants::assert_the_record_keeps_its_promises(&events, &allow());
}
