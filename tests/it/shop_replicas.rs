//! Shop replicas: two `support-desk serve shop --http` processes of the built binary on one
//! record (PostgreSQL, or one SQLite file), each reached through real rmcp Streamable HTTP
//! clients with a staff roster's tokens. Concurrent refunds, the two-person rule and the
//! release forms' state hold across them. The PostgreSQL tests start a throwaway cluster
//! (`pg_cluster`) and are skipped in one line where PostgreSQL is missing.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use futures_util::future::join_all;
use rmcp::model::CallToolResult;
use serde_json::{Value, json};
use support_desk::shop::data::OrderStatus;
use support_desk::shop::store::Refund;
use support_desk::shop::{QuoteIds, REFUND_LIMIT, ShopWorld, SqliteStore, Store};
use tokio::io::{AsyncBufReadExt, BufReader};

mod forms;

use crate::pg_cluster::{self, PgCluster};
use crate::shop_http::connect_to;
use crate::support::*;

/// The roster: (staff ID, role, the variable holding the token, the token).
const STAFF: [(&str, &str, &str, &str); 4] = [
    (
        "staff-0007",
        "staff",
        "SHOP_TEST_TOKEN_S7",
        "staff-0007-token-for-tests-only",
    ),
    (
        "staff-0008",
        "staff",
        "SHOP_TEST_TOKEN_S8",
        "staff-0008-token-for-tests-only",
    ),
    (
        "lead-0002",
        "lead",
        "SHOP_TEST_TOKEN_L2",
        "lead-0002-token-for-tests-only",
    ),
    (
        "lead-0003",
        "lead",
        "SHOP_TEST_TOKEN_L3",
        "lead-0003-token-for-tests-only",
    ),
];
const STATE_KEY: &str = "the replicas' shared request-state key, 32+ bytes";
const SEED: u64 = 4217;

fn token(id: &str) -> &'static str {
    STAFF
        .iter()
        .find(|(staff, ..)| *staff == id)
        .map(|(.., token)| *token)
        .expect("on the roster")
}

/// One replica: the binary serving the shop at `url`, killed when dropped.
struct Replica {
    url: String,
    _child: tokio::process::Child,
}

/// Where the replicas' record is, and the roster they share.
struct Shop {
    db: String,
    /// `PGPASSWORD` for the second replica, whose address carries no password.
    pg_password: Option<(String, String)>,
    roster: PathBuf,
    _dir: tempfile::TempDir,
}

impl Shop {
    fn new(db: impl FnOnce(&Path) -> String) -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let roster = dir.path().join("staff.toml");
        let tables: String = STAFF
            .iter()
            .map(|(id, role, var, _)| {
                format!("[[staff]]\nid = \"{id}\"\nrole = \"{role}\"\ntoken_env = \"{var}\"\n\n")
            })
            .collect();
        std::fs::write(&roster, tables).expect("write the roster");
        Self {
            db: db(dir.path()),
            pg_password: None,
            roster,
            _dir: dir,
        }
    }

    fn sqlite() -> Self {
        Self::new(|dir| dir.join("shop.sqlite3").to_string_lossy().into_owned())
    }

    fn postgres(pg: &PgCluster) -> Self {
        let mut shop = Self::new(|_| pg.admin_uri(true));
        shop.pg_password = Some((pg.admin_uri(false), pg.admin_password().to_owned()));
        shop
    }

    /// Two replicas started together: the record is set up and the world loaded once.
    async fn replicas(&self, seed: Option<u64>) -> [Replica; 2] {
        let second = match &self.pg_password {
            Some((url, password)) => (url.as_str(), Some(password.as_str())),
            None => (self.db.as_str(), None),
        };
        let (a, b) = tokio::join!(
            self.replica(&self.db, None, seed),
            self.replica(second.0, second.1, seed)
        );
        [a, b]
    }

    async fn replica(&self, db: &str, password: Option<&str>, seed: Option<u64>) -> Replica {
        let roster = self.roster.to_string_lossy();
        let mut args = vec!["serve", "shop", "--http", "127.0.0.1:0", "--staff", &roster];
        args.extend(["--db", db]);
        let seed = seed.map(|s| s.to_string());
        if let Some(seed) = &seed {
            args.extend(["--seed", seed]);
        }
        let mut command = tokio::process::Command::new(BIN);
        command
            .args(&args)
            .env("RUST_LOG", "info,rmcp=warn")
            .env("SHOP_REQUEST_STATE_KEY", STATE_KEY)
            .envs(STAFF.iter().map(|(_, _, var, token)| (var, token)))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        if let Some(password) = password {
            command.env("PGPASSWORD", password);
        }
        let mut child = command.spawn().expect("start a shop replica");
        let stderr = child.stderr.take().expect("the replica's log");
        let mut lines = BufReader::new(stderr).lines();
        let mut said = String::new();
        let addr = loop {
            let line = lines.next_line().await.expect("read the replica's log");
            let Some(line) = line else {
                panic!("the replica stopped before it served:\n{said}");
            };
            let serving = line.contains("serving Streamable HTTP");
            if let Some(addr) = line.split(" addr=").nth(1).filter(|_| serving) {
                break addr
                    .split_whitespace()
                    .next()
                    .unwrap_or_default()
                    .to_owned();
            }
            said.push_str(&line);
            said.push('\n');
        };
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        Replica {
            url: format!("http://{addr}/mcp"),
            _child: child,
        }
    }

    /// The refunds on `order_id` as the record holds them.
    async fn refunds(&self, order_id: &str) -> Vec<Refund> {
        let world = ShopWorld::bundled();
        let store = Store::open(Path::new(&self.db), &world, QuoteIds::Random)
            .await
            .expect("open the record");
        store.order(order_id).await.expect("the order").1
    }
}

async fn as_staff(replica: &Replica, id: &str) -> Client {
    // rmcp's default HTTP client uses the process's rustls provider.
    support_desk::tls::install_default_provider();
    connect_to(&replica.url, Some(token(id)), Lead::default())
        .await
        .unwrap_or_else(|e| panic!("{id} connects to {}: {e}", replica.url))
}

/// Delivered orders whose lines are all on one side of the limit, `n` of them.
fn delivered_orders(above_limit: bool, n: usize) -> Vec<(String, String)> {
    ShopWorld::bundled()
        .orders
        .into_iter()
        .filter(|o| o.status == OrderStatus::Delivered)
        .filter(|o| (o.total > REFUND_LIMIT) == above_limit)
        .filter_map(|o| {
            let line = o
                .lines
                .iter()
                .find(|l| (l.amount() > REFUND_LIMIT) == above_limit)?;
            Some((o.order_id.clone(), line.sku.clone()))
        })
        .take(n)
        .collect()
}

async fn quote(client: &Client, order_id: &str, sku: Option<&str>) -> Value {
    let mut args = json!({"order_id": order_id, "reason": "arrived broken"});
    if let Some(sku) = sku {
        args["sku"] = sku.into();
    }
    json(&call(client, "quote_refund", args).await)
}

async fn issue(client: &Client, quote_id: &Value) -> CallToolResult {
    call(client, "issue_refund", json!({"quote_id": quote_id})).await
}

#[tokio::test]
async fn two_postgres_replicas_make_one_refund_of_sixteen_concurrent_calls_on_one_quote() {
    let Some(pg) = pg_cluster::start().await else {
        return;
    };
    let shop = Shop::postgres(&pg);
    let replicas = shop.replicas(None).await;
    // Both started at once on an empty database; the world is there once.
    let admin = pg.admin().await;
    let world = ShopWorld::bundled();
    for (table, expected) in [
        ("shop.orders", world.orders.len()),
        ("shop.customers", world.customers.len()),
    ] {
        let count: i64 = admin
            .query_one(&format!("SELECT count(*) FROM {table}"), &[])
            .await
            .expect("count")
            .get(0);
        assert_eq!(count, expected as i64, "{table}");
    }

    let staff = as_staff(&replicas[0], "staff-0007").await;
    let (order_id, sku) = delivered_orders(false, 1).remove(0);
    let quoted = quote(&staff, &order_id, Some(&sku)).await;
    let mut clients = Vec::new();
    for i in 0..16 {
        let id = ["staff-0007", "staff-0008"][i / 2 % 2];
        clients.push(as_staff(&replicas[i % 2], id).await);
    }
    let calls = clients
        .iter()
        .map(|client| issue(client, &quoted["quote_id"]));
    let refunds: Vec<Value> = join_all(calls).await.iter().map(json).collect();
    assert!(
        refunds
            .iter()
            .all(|r| r["refund_id"] == refunds[0]["refund_id"] && r["status"] == "released"),
        "{refunds:?}"
    );
    let rows: i64 = admin
        .query_one(
            "SELECT count(*) FROM shop.refunds WHERE quote_id = $1",
            &[&quoted["quote_id"].as_str()],
        )
        .await
        .expect("count")
        .get(0);
    assert_eq!(rows, 1, "one refund in the record");
    assert_eq!(shop.refunds(&order_id).await.len(), 1);
}

#[tokio::test]
async fn across_postgres_replicas_a_line_is_refunded_once_and_a_whole_order_excludes_it() {
    let Some(pg) = pg_cluster::start().await else {
        return;
    };
    let shop = Shop::postgres(&pg);
    let replicas = shop.replicas(Some(SEED)).await;
    let (a, b) = (
        as_staff(&replicas[0], "staff-0007").await,
        as_staff(&replicas[1], "staff-0008").await,
    );
    // What the SQLite record says for the same quotes in the same order, from its seed.
    let sqlite = SqliteStore::open(
        Path::new(":memory:"),
        &ShopWorld::bundled(),
        QuoteIds::Seeded(SEED),
    )
    .expect("a SQLite record");
    for (order_id, sku) in delivered_orders(false, 6) {
        // Before any refund: the line twice (once on each replica) and the whole order.
        let line_a = quote(&a, &order_id, Some(&sku)).await;
        let line_b = quote(&b, &order_id, Some(&sku)).await;
        let whole = quote(&b, &order_id, None).await;
        let expected = [Some(sku.as_str()), Some(sku.as_str()), None].map(|sku| {
            let quoted = sqlite.quote(&order_id, sku, "arrived broken");
            quoted.expect("quote").quote_id
        });
        assert_eq!(
            [&line_a, &line_b, &whole].map(|q| q["quote_id"].as_str().unwrap_or_default()),
            expected.each_ref().map(String::as_str),
            "seeded quote IDs as the SQLite record derives them"
        );
        let (one, two, three) = tokio::join!(
            issue(&a, &line_a["quote_id"]),
            issue(&b, &line_b["quote_id"]),
            issue(&a, &whole["quote_id"]),
        );
        let results = [one, two, three];
        let made: Vec<&CallToolResult> = results
            .iter()
            .filter(|r| r.is_error == Some(false))
            .collect();
        assert_eq!(made.len(), 1, "{order_id}: one refund of three quotes");
        for refused in results.iter().filter(|r| r.is_error == Some(true)) {
            let said = tool_error(refused);
            assert!(said.contains("was already refunded by"), "{said}");
        }
        assert_eq!(shop.refunds(&order_id).await.len(), 1, "{order_id}");
        let again = call(
            &b,
            "quote_refund",
            json!({"order_id": order_id, "sku": sku, "reason": "again"}),
        )
        .await;
        assert!(tool_error(&again).contains("Each line is refunded once"));
    }
}

#[tokio::test]
async fn postgres_replicas_keep_the_two_person_rule_and_take_each_release_form_once() {
    let Some(pg) = pg_cluster::start().await else {
        return;
    };
    let shop = Shop::postgres(&pg);
    let replicas = shop.replicas(None).await;
    forms::two_person_rule(&shop, &replicas).await;
    forms::spent_and_forged_states(&shop, &replicas).await;
}

#[tokio::test]
async fn sqlite_replicas_keep_the_two_person_rule_and_take_each_release_form_once() {
    let shop = Shop::sqlite();
    let replicas = shop.replicas(None).await;
    forms::two_person_rule(&shop, &replicas).await;
    forms::spent_and_forged_states(&shop, &replicas).await;
}

#[tokio::test]
async fn a_shop_that_cannot_reach_its_postgres_says_where_and_never_shows_the_password() {
    let output = tokio::process::Command::new(BIN)
        .args(["serve", "shop", "--stdio", "--db"])
        .arg("postgres://shop:not-for-logs@127.0.0.1:9/shop")
        .env("RUST_LOG", "warn")
        .stdin(Stdio::null())
        .output()
        .await
        .expect("run the binary");
    assert!(!output.status.success());
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(
        said.contains("cannot reach or log in to the shop's PostgreSQL at 127.0.0.1:9/shop ("),
        "{said}"
    );
    assert!(
        said.contains("check the address, the password (in the address or PGPASSWORD) and that the server runs"),
        "{said}"
    );
    assert!(!said.contains("not-for-logs"), "{said}");
}
