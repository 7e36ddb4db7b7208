//! Interop with peers we did not write: the official Python SDK (`mcp` 2.3.0) as a client of
//! the shop and as a server behind the host, and `@modelcontextprotocol/server-everything`
//! (Node) behind the host.
//!
//! The peers live under `target/interop`, put there by `scripts/interop-setup.sh`; the tests
//! never install anything. They are ignored by a plain `cargo test` and run with
//! `cargo test --locked --test it interop -- --ignored`; run that way without the peers they
//! fail, naming the script.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support_desk::config::ServerConfig;
use support_desk::host::api::{FieldKind, FieldValue, FormAnswer, FormAsk, FormKind, Outcome};
use support_desk::record::Event;

use crate::host::{Harness, Setup, harness};
use crate::mock_model::{call, scripted, words};
use crate::support::BIN;

const SETUP: &str = "scripts/interop-setup.sh";
/// How long one Python script may take, start to finish (a hung peer must not hang CI).
const SCRIPT_DEADLINE: Duration = Duration::from_secs(120);

fn project() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// A file the setup script installs; its absence fails the test with what to run.
fn installed(relative: &str) -> PathBuf {
    let path = project().join("target/interop").join(relative);
    assert!(
        path.exists(),
        "{} is missing: run {SETUP} first (it installs the Python SDK mcp==2.3.0 and \
         @modelcontextprotocol/server-everything under target/interop)",
        path.display()
    );
    path
}

fn python() -> PathBuf {
    installed("venv/bin/python")
}

fn everything_entry() -> PathBuf {
    installed("node/node_modules/@modelcontextprotocol/server-everything/dist/index.js")
}

fn interop_script(name: &str) -> PathBuf {
    project().join("tests/interop").join(name)
}

fn path_text(path: &Path) -> String {
    path.to_str().expect("a UTF-8 path").to_owned()
}

/// Runs a program to the end within [`SCRIPT_DEADLINE`] and returns its stdout; a failure
/// shows its stderr.
fn run_to_end(program: &Path, args: &[String]) -> String {
    let mut child = Command::new(program)
        .args(args)
        .current_dir(project())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {}: {e}; run {SETUP}", program.display()));
    let mut stdout = child.stdout.take().expect("piped stdout");
    let mut stderr = child.stderr.take().expect("piped stderr");
    let out = std::thread::spawn(move || {
        let mut text = String::new();
        stdout.read_to_string(&mut text).map(|_| text)
    });
    let err = std::thread::spawn(move || {
        let mut text = String::new();
        stderr.read_to_string(&mut text).map(|_| text)
    });
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for the script") {
            break status;
        }
        if started.elapsed() > SCRIPT_DEADLINE {
            child.kill().expect("kill the script");
            child.wait().expect("reap the script");
            panic!(
                "{args:?} did not finish within {} s",
                SCRIPT_DEADLINE.as_secs()
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let out = out.join().expect("stdout reader").expect("stdout");
    let err = err.join().expect("stderr reader").expect("stderr");
    assert!(status.success(), "{args:?} failed ({status}):\n{err}");
    out
}

/// What the Python SDK's `Client` saw of the shop (tests/interop/shop_client.py).
fn python_client_against_the_shop(mode: &str) -> Value {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("shop.sqlite3");
    let args = [
        path_text(&interop_script("shop_client.py")),
        BIN.to_owned(),
        path_text(&db),
        mode.to_owned(),
    ];
    let out = run_to_end(&python(), &args);
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("not one JSON object ({e}):\n{out}"))
}

const NO_ORDER_O_7144: &str = "The shop has no order O-7144. Check the number with the customer, or use find_orders to list their orders.";

fn assert_the_shop_offers_its_tools_policies_and_prompt(seen: &Value) {
    assert_eq!(seen["server_name"], "shop-support");
    assert_eq!(
        seen["tools"],
        json!([
            "find_orders",
            "find_products",
            "get_order_status",
            "issue_refund",
            "quote_refund"
        ])
    );
    assert_eq!(
        seen["resources"],
        json!([
            "shop://policies/data-handling",
            "shop://policies/escalation",
            "shop://policies/refund",
            "shop://policies/returns",
            "shop://policies/shipping",
            "shop://policies/stock"
        ])
    );
    assert_eq!(seen["prompts"], json!(["refund_order", "review_refund"]));
    assert_eq!(seen["found"]["is_error"], false);
    assert_eq!(
        (
            &seen["found"]["result"]["order_id"],
            &seen["found"]["result"]["status"]
        ),
        (&json!("O-1744"), &json!("delivered"))
    );
    assert_eq!(
        seen["missing"],
        json!({"is_error": true, "text": NO_ORDER_O_7144})
    );
}

#[test]
#[ignore = "needs scripts/interop-setup.sh"]
fn the_python_sdk_client_works_the_shop_and_answers_the_release_form() {
    let seen = python_client_against_the_shop("auto");
    assert_eq!(seen["protocol_version"], "2026-07-28");
    assert_the_shop_offers_its_tools_policies_and_prompt(&seen);

    let [released, declined] = seen["refunds"]
        .as_array()
        .cloned()
        .expect("refunds")
        .try_into()
        .expect("two refunds");
    for refund in [&released, &declined] {
        let asked = refund["asked"].as_array().expect("asked");
        assert_eq!(asked.len(), 1, "one release form per refund: {refund}");
        assert_eq!(
            (
                &asked[0]["mode"],
                &asked[0]["fields"],
                &asked[0]["required"]
            ),
            (
                &json!("form"),
                &json!(["release", "note"]),
                &json!(["release"])
            )
        );
        let message = asked[0]["message"].as_str().expect("message");
        assert!(
            message.starts_with("Release refund R-")
                && message.contains("above the EUR 150.00 refund limit"),
            "{message}"
        );
    }

    assert_eq!(released["is_error"], false, "{released}");
    assert_eq!(
        (
            &released["result"]["status"],
            &released["result"]["note"],
            &released["result"]["quote_id"]
        ),
        (
            &json!("released"),
            &json!("released from Python"),
            &released["quote_id"]
        )
    );
    assert_eq!(released["order_refunds"][0]["status"], "released");

    assert_eq!(declined["is_error"], true, "{declined}");
    let refund_id = declined["order_refunds"][0]["refund_id"]
        .as_str()
        .expect("a refund ID");
    assert_eq!(
        declined["result"],
        format!(
            "The lead declined to release refund {refund_id}, so the shop still holds it. Tell the customer the refund awaits a lead's review; do not say it was paid."
        )
    );
    assert_eq!(declined["order_refunds"][0]["status"], "held");
}

#[test]
#[ignore = "needs scripts/interop-setup.sh"]
fn a_python_sdk_client_on_2025_11_25_is_told_the_refund_is_held_and_never_sees_a_form() {
    let seen = python_client_against_the_shop("legacy");
    assert_eq!(seen["protocol_version"], "2025-11-25");
    assert_the_shop_offers_its_tools_policies_and_prompt(&seen);
    for refund in seen["refunds"].as_array().expect("refunds") {
        assert_eq!(refund["asked"], json!([]), "{refund}");
        assert_eq!(refund["is_error"], true, "{refund}");
        assert_eq!(refund["order_refunds"][0]["status"], "held");
        let text = refund["result"].as_str().expect("error text");
        assert!(
            text.contains("the shop holds it until a lead releases it")
                && text.contains("needs protocol revision 2026-07-28"),
            "{text}"
        );
    }
}

/// A server written with the Python SDK (tests/interop/py_server.py) under the prefix `py`,
/// with the shop left out; it logs every round it sees to `py-server.jsonl` in the harness dir.
fn with_python_server(mut setup: Setup) -> Setup {
    let python = path_text(&python());
    let script = path_text(&interop_script("py_server.py"));
    setup.tweak = Box::new(move |config, dir| {
        config.servers.remove("shop");
        config.servers.insert(
            "py".into(),
            ServerConfig {
                command: Some(python),
                args: vec![script, path_text(&dir.join("py-server.jsonl"))],
                enabled: true,
                ..ServerConfig::default()
            },
        );
    });
    setup
}

/// What reached the Python server, one entry per round.
fn python_server_log(h: &Harness) -> Vec<Value> {
    let text = std::fs::read_to_string(h.dir.path().join("py-server.jsonl"))
        .expect("the Python server's log");
    text.lines()
        .map(|line| serde_json::from_str(line).expect("a JSON line"))
        .collect()
}

fn entries<'a>(log: &'a [Value], tool: &str, round: &str) -> Vec<&'a Value> {
    log.iter()
        .filter(|e| e["tool"] == tool && e["round"] == round)
        .collect()
}

fn out(tool: &str, outcome: Outcome) -> (String, Outcome) {
    (tool.to_owned(), outcome)
}

fn python_calls() -> Vec<Value> {
    vec![
        call("py__confirm_address", json!({"order_id": "O-1744"})),
        call("py__verify_identity", json!({"customer_id": "C-0129"})),
        words("Done."),
    ]
}

const VERIFY_URL: &str = "https://id.example.com/verify?case=77";

#[tokio::test]
#[ignore = "needs scripts/interop-setup.sh"]
async fn the_host_answers_a_python_sdk_servers_form_and_url_request_and_the_answers_arrive() {
    let mut setup = with_python_server(Setup::new(scripted(python_calls())));
    setup.form = Box::new(|ask: &FormAsk| match ask.kind {
        FormKind::Fields(_) => FormAnswer::Accept(BTreeMap::from([
            ("street".to_owned(), FieldValue::Text("1 Elm Road".into())),
            ("postcode".to_owned(), FieldValue::Text("AB1 2CD".into())),
            ("leave_with_neighbour".to_owned(), FieldValue::Boolean(true)),
        ])),
        FormKind::Url { .. } => FormAnswer::Accept(BTreeMap::new()),
    });
    let h = harness(setup).await;

    let py = h
        .host
        .servers()
        .iter()
        .find(|s| s.prefix == "py")
        .cloned()
        .expect("the Python server");
    assert_eq!(py.error, None);
    assert_eq!(
        (py.name.as_deref(), py.revision.as_deref(), py.tools.clone()),
        (
            Some("py-interop"),
            Some("2026-07-28"),
            vec!["confirm_address".to_owned(), "verify_identity".to_owned()]
        )
    );

    h.work("T-0009").await;
    assert_eq!(
        h.outcomes().await,
        [
            out("py.confirm_address", Outcome::Result),
            out("py.verify_identity", Outcome::Result)
        ]
    );
    assert_eq!(
        h.outcome_texts().await,
        [
            "Address for O-1744 confirmed: 1 Elm Road, AB1 2CD (may be left with a neighbour).",
            "The person agreed to verify C-0129 at the identity page."
        ]
    );

    let forms = h.people.forms();
    assert_eq!(forms.len(), 2);
    assert_eq!(
        (
            forms[0].server.as_str(),
            forms[0].ticket.as_deref(),
            forms[0].message.as_str()
        ),
        (
            "py",
            Some("T-0009"),
            "Confirm the delivery address for order O-1744."
        )
    );
    let FormKind::Fields(fields) = &forms[0].kind else {
        panic!("a form of fields: {:?}", forms[0].kind)
    };
    assert_eq!(
        fields
            .iter()
            .map(|f| (f.name.as_str(), f.required))
            .collect::<Vec<_>>(),
        [
            ("street", true),
            ("postcode", true),
            ("leave_with_neighbour", false)
        ]
    );
    assert_eq!(
        (forms[1].message.as_str(), &forms[1].kind),
        (
            "Verify customer C-0129 on the identity page.",
            &FormKind::Url {
                url: VERIFY_URL.into()
            }
        )
    );

    let log = python_server_log(&h);
    let rounds: Vec<(bool, bool)> = entries(&log, "confirm_address", "resolver")
        .iter()
        .map(|e| (e["has_responses"] == true, e["has_state"] == true))
        .collect();
    assert_eq!(
        rounds,
        [(false, false), (true, true)],
        "asked in an input request, answered on the retry with the SDK's request state"
    );
    let body = entries(&log, "confirm_address", "body");
    assert_eq!(body.len(), 1);
    assert_eq!(
        (
            &body[0]["protocol_version"],
            &body[0]["action"],
            &body[0]["content"]
        ),
        (
            &json!("2026-07-28"),
            &json!("accept"),
            &json!({"street": "1 Elm Road", "postcode": "AB1 2CD", "leave_with_neighbour": true})
        )
    );
    assert!(
        body[0]["meta"]["dev.support-desk/request-id"].is_string(),
        "the desk's request ID reached the server: {}",
        body[0]["meta"]
    );
    let verify: Vec<&Value> = entries(&log, "verify_identity", "call");
    assert_eq!(
        verify
            .iter()
            .map(|e| &e["responses"]["verify"]["action"])
            .collect::<Vec<_>>(),
        [&Value::Null, &json!("accept")],
        "asked in an input request, accepted on the retry"
    );
    assert_eq!(
        verify[0]["meta"]["dev.support-desk/request-id"],
        verify[1]["meta"]["dev.support-desk/request-id"],
        "a retry carries the call's request ID"
    );

    let answered: Vec<(String, String)> = h
        .host
        .events()
        .await
        .into_iter()
        .filter_map(|e| match e {
            Event::InputRequest { server, action, .. } => Some((server, action)),
            _ => None,
        })
        .collect();
    assert_eq!(
        answered,
        [
            ("py".to_owned(), "accept".to_owned()),
            ("py".to_owned(), "accept".to_owned())
        ]
    );
}

#[tokio::test]
#[ignore = "needs scripts/interop-setup.sh"]
async fn a_declined_form_and_a_cancelled_url_request_reach_the_python_server_as_such() {
    let mut setup = with_python_server(Setup::new(scripted(python_calls())));
    setup.form = Box::new(|ask: &FormAsk| match ask.kind {
        FormKind::Fields(_) => FormAnswer::Decline,
        FormKind::Url { .. } => FormAnswer::Cancel,
    });
    let h = harness(setup).await;
    h.work("T-0009").await;
    assert_eq!(
        h.outcomes().await,
        [
            out("py.confirm_address", Outcome::ToolError),
            out("py.verify_identity", Outcome::ToolError)
        ]
    );
    let texts = h.outcome_texts().await;
    assert!(
        texts[0].contains("The person chose decline; the address for O-1744 is unchanged."),
        "{}",
        texts[0]
    );
    assert!(
        texts[1].contains("The person chose cancel; C-0129 is not verified."),
        "{}",
        texts[1]
    );
    let log = python_server_log(&h);
    let body = entries(&log, "confirm_address", "body");
    assert_eq!(
        (&body[0]["action"], &body[0]["content"]),
        (&json!("decline"), &Value::Null)
    );
    let verify = entries(&log, "verify_identity", "call");
    assert_eq!(verify[1]["responses"]["verify"]["action"], "cancel");
}

/// `@modelcontextprotocol/server-everything` on stdio under the prefix `everything`, the shop
/// left out.
fn with_server_everything(mut setup: Setup) -> Setup {
    let entry = path_text(&everything_entry());
    setup.tweak = Box::new(move |config, _| {
        config.servers.remove("shop");
        config.servers.insert(
            "everything".into(),
            ServerConfig {
                command: Some("node".into()),
                args: vec![entry, "stdio".into()],
                enabled: true,
                ..ServerConfig::default()
            },
        );
    });
    setup
}

#[tokio::test]
#[ignore = "needs scripts/interop-setup.sh"]
async fn the_host_works_server_everything_echo_and_answers_its_elicitation() {
    let mut setup = with_server_everything(Setup::new(scripted(vec![
        call(
            "everything__echo",
            json!({"message": "hello from the desk"}),
        ),
        call("everything__trigger-elicitation-request", json!({})),
        words("Done."),
    ])));
    setup.form = Box::new(|ask: &FormAsk| match ask.kind {
        FormKind::Fields(_) => FormAnswer::Accept(BTreeMap::from([
            ("name".to_owned(), FieldValue::Text("Dana Ruiz".into())),
            ("check".to_owned(), FieldValue::Boolean(true)),
            ("integer".to_owned(), FieldValue::Integer(7)),
        ])),
        FormKind::Url { .. } => FormAnswer::Cancel,
    });
    let h = harness(setup).await;

    let everything = h
        .host
        .servers()
        .iter()
        .find(|s| s.prefix == "everything")
        .cloned()
        .expect("server-everything");
    assert_eq!(everything.error, None);
    assert_eq!(everything.revision.as_deref(), Some("2025-11-25"));
    for tool in ["echo", "get-sum", "trigger-elicitation-request"] {
        assert!(
            everything.tools.iter().any(|t| t == tool),
            "{tool} is listed: {:?}",
            everything.tools
        );
    }

    h.work("T-0009").await;
    assert_eq!(
        h.outcomes().await,
        [
            out("everything.echo", Outcome::Result),
            out("everything.trigger-elicitation-request", Outcome::Result)
        ]
    );
    let texts = h.outcome_texts().await;
    assert_eq!(texts[0], "Echo: hello from the desk");
    assert!(
        texts[1].contains("User provided the requested information!")
            && texts[1].contains("- Name: Dana Ruiz")
            && texts[1].contains("- Agreed to terms: true")
            && texts[1].contains("- Favorite Integer: 7"),
        "{}",
        texts[1]
    );

    let raw = texts[1]
        .split_once("Raw result: ")
        .map(|(_, raw)| raw)
        .expect("the server echoes what it received");
    assert_eq!(
        serde_json::from_str::<Value>(raw).expect("JSON"),
        json!({"action": "accept", "content": {"check": true, "integer": 7, "name": "Dana Ruiz"}}),
        "exactly the person's answer reached the server"
    );

    let forms = h.people.forms();
    assert_eq!(forms.len(), 1);
    assert_eq!(
        (forms[0].server.as_str(), forms[0].message.as_str()),
        (
            "everything",
            "Please provide inputs for the following fields:"
        )
    );
    // The form and its answer are in the ticket's record, as a newer server's input requests
    // are, though this server asked in the middle of its call.
    let heard: Vec<(String, String, String, String, Option<String>)> = h
        .host
        .events()
        .await
        .into_iter()
        .filter_map(|e| match e {
            Event::InputRequest {
                ticket,
                server,
                message,
                action,
                content,
                ..
            } => Some((ticket, server, message, action, content)),
            _ => None,
        })
        .collect();
    assert_eq!(heard.len(), 1, "{heard:?}");
    let (ticket, server, message, action, content) = &heard[0];
    assert_eq!(
        (ticket.as_str(), server.as_str(), action.as_str()),
        ("T-0009", "everything", "accept")
    );
    assert_eq!(message, "Please provide inputs for the following fields:");
    let content: Value =
        serde_json::from_str(content.as_deref().expect("the accepted values")).expect("JSON");
    assert_eq!(
        content,
        json!({"check": true, "integer": 7, "name": "Dana Ruiz"})
    );
    let FormKind::Fields(fields) = &forms[0].kind else {
        panic!("a form of fields: {:?}", forms[0].kind)
    };
    assert_eq!(
        fields
            .iter()
            .map(|f| (f.name.as_str(), f.required))
            .collect::<Vec<_>>(),
        [
            ("name", true),
            ("check", false),
            ("firstLine", false),
            ("email", false),
            ("homepage", false),
            ("birthdate", false),
            ("integer", false),
            ("number", false),
            ("untitledSingleSelectEnum", false),
            ("untitledMultipleSelectEnum", false),
            ("titledSingleSelectEnum", false),
            ("titledMultipleSelectEnum", false),
            ("legacyTitledEnum", false)
        ],
        "every field of every kind is shown, in the server's order"
    );
    let FieldKind::Choice { options, .. } = &fields[12].kind else {
        panic!("the legacy enum is a choice: {:?}", fields[12].kind)
    };
    assert_eq!(
        options.iter().map(|o| o.label.as_str()).collect::<Vec<_>>(),
        ["Cats", "Dogs", "Birds", "Fish", "Reptiles"],
        "enumNames label the legacy enum's options"
    );
}

/// server-everything's long operation reports its progress (every half second here) past
/// the desk's idle timeout (two seconds) and is waited for, each report shown on the call's
/// line; its structured content meets the output schema it declared (zod's, draft-07) and
/// reaches the model as the server sent it; its instructions, which it writes for a model,
/// are kept for people and never given to the model.
#[tokio::test]
#[ignore = "needs scripts/interop-setup.sh"]
async fn server_everythings_progress_keeps_its_call_alive_its_result_meets_its_schema_and_its_instructions_stay_with_people()
 {
    let mut setup = with_server_everything(Setup::new(scripted(vec![
        call(
            "everything__trigger-long-running-operation",
            json!({"duration": 6, "steps": 12}),
        ),
        call(
            "everything__get-structured-content",
            json!({"location": "Chicago"}),
        ),
        words("Done."),
    ])));
    let everything = std::mem::replace(&mut setup.tweak, Box::new(|_, _| {}));
    setup.tweak = Box::new(move |config, dir| {
        everything(config, dir);
        config.limits.request_timeout_secs = 2;
    });
    let h = harness(setup).await;
    h.work("T-0009").await;

    assert_eq!(
        h.outcomes().await,
        [
            out("everything.trigger-long-running-operation", Outcome::Result),
            out("everything.get-structured-content", Outcome::Result)
        ]
    );
    let texts = h.outcome_texts().await;
    assert_eq!(
        texts,
        [
            "Long running operation completed. Duration: 6 seconds, Steps: 12.",
            r#"{"temperature":36,"conditions":"Light rain / drizzle","humidity":82}"#
        ]
    );
    let shown = h.progress.lock().expect("lock").clone();
    assert!(
        shown.len() >= 10
            && shown.iter().all(|s| {
                s.tool == "everything.trigger-long-running-operation" && s.total == Some(12.0)
            }),
        "{shown:?}"
    );

    let instructions = h
        .host
        .servers()
        .into_iter()
        .find(|s| s.prefix == "everything")
        .and_then(|s| s.instructions)
        .expect("server-everything's instructions");
    assert!(
        instructions.contains("Audience: These instructions are written for an LLM"),
        "{instructions}"
    );
    let seen = Value::Array(h.model.requests()).to_string();
    assert!(
        !seen.contains("Audience: These instructions") && !seen.contains("Everything Server"),
        "the model was given server-everything's instructions"
    );
}
