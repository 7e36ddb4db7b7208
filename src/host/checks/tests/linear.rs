//! The check's work grows with the draft, not with its square: each shape of text that once
//! made some scan go over the whole text again for each match, checked at one length and at
//! a hundred times it, takes no more than about twice a hundred times the steps
//! (`super::work` counts them; nothing is timed).

use super::*;

/// `unit(i)` repeated `times` times, each with its own number `i`.
fn repeated(times: usize, unit: impl Fn(usize) -> String) -> String {
    (0..times).map(unit).collect()
}

/// A text of a given shape, as a function of how many units long it is.
type Shape = fn(usize) -> String;

/// Texts that each stress one scan, by name.
fn shapes() -> Vec<(&'static str, Shape)> {
    vec![
        ("one run-on sentence of hedged claims", |n| {
            repeated(n, |_| "the refund has been issued and ".to_owned()) + "if needed"
        }),
        ("one run-on sentence of negated claims", |n| {
            repeated(n, |_| "we have not issued refunds, ".to_owned())
        }),
        ("many sentences of claims", |n| {
            repeated(n, |_| {
                "Your refund has been issued. Your order has shipped! ".to_owned()
            })
        }),
        ("many distinct amounts", |n| {
            repeated(n, |i| {
                format!("a refund of €{}.{:02} ", i / 100 + 1, i % 100)
            })
        }),
        ("many distinct tracking numbers and dates", |n| {
            repeated(n, |i| {
                format!(
                    "KP{:09} on May {} and 2026-06-{:02}, ",
                    i,
                    i % 28 + 1,
                    i % 28 + 1
                )
            })
        }),
        ("many open brackets and one close", |n| {
            repeated(n, |_| "[ { < Your ".to_owned()) + "] } >"
        }),
        ("many quote IDs after their labels", |n| {
            repeated(n, |i| format!("quote_id: Q-{:010x}, ", i + 1))
        }),
        ("many object starts", |n| {
            repeated(n, |_| "{\"a\" {\" ".to_owned())
        }),
        ("many dated promises, gifts and arrival days", |n| {
            repeated(n, |_| {
                "We will contact you by Friday with a 10% discount, and it will arrive tomorrow. "
                    .to_owned()
            })
        }),
        ("one run-on sentence in French", |n| {
            repeated(n, |_| {
                "je ne peux pas vous aider avec cette demande ".to_owned()
            })
        }),
        ("a refusal at the end of a long text", |n| {
            repeated(n, |_| "İ am here and well ".to_owned()) + "but I can't assist with that."
        }),
    ]
}

fn steps(text: &str, ticket: &str) -> u64 {
    let calls = [quote("24.90"), refund("held", "24.90")];
    work::steps_of(|| {
        check_reply(text, &calls, ticket, &TOOLS.map(String::from), SIGNATURE);
    })
}

#[test]
fn a_text_a_hundred_times_longer_takes_at_most_about_two_hundred_times_the_steps() {
    let mut too_slow = Vec::new();
    for (shape, text) in shapes() {
        let (short, long) = (text(10), text(1000));
        let (few, many) = (steps(&short, "my order"), steps(&long, "my order"));
        assert!(few > 0, "{shape}: the check counted no steps");
        if many > 200 * few {
            too_slow.push(format!("{shape}: {few} steps, then {many}"));
        }
    }
    assert_eq!(too_slow, Vec::<String>::new());
}

#[test]
fn a_reply_naming_many_orders_and_items_takes_steps_in_proportion() {
    let order = r#"{"order_id":"O-1419","status":"delivered","lines":[{"sku":"KG-1059","item":"Terracotta planter","quantity":2}]}"#;
    let listed = r#"{"orders":[{"order_id":"O-2730","status":"placed","skus":["KG-1095"]}]}"#;
    let calls = [
        call("shop.get_order_status", Outcome::Result, order),
        call("shop.find_orders", Outcome::Result, listed),
    ];
    let text = |n: usize| {
        repeated(n, |i| {
            format!(
                "O-{} and O-1419 have shipped but O-2730 has not arrived, with {} terracotta planters, KG-1095 and ",
                1000 + i,
                i % 9 + 1
            )
        }) + "that is all."
    };
    let steps = |text: &str| {
        work::steps_of(|| {
            check_reply(
                text,
                &calls,
                "my order",
                &TOOLS.map(String::from),
                SIGNATURE,
            );
        })
    };
    let (few, many) = (steps(&text(10)), steps(&text(1000)));
    assert!(many <= 200 * few, "{few} steps, then {many}");
}

#[test]
fn a_reply_that_echoes_a_long_ticket_takes_steps_in_proportion() {
    let text = |n: usize| repeated(n, |i| format!("word{i} after word{i} and "));
    let few = steps(&text(10), &text(10));
    let many = steps(&text(1000), &text(1000));
    assert!(many <= 200 * few, "{few} steps, then {many}");
}
