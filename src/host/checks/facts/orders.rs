//! The orders the ticket's tools returned, each as its latest result has it, and the items
//! the reply can be read for: every line of an order and every product a tool listed.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use super::{CallFact, Word, work};
use crate::host::api::Outcome;

/// What a reply can say of an order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum State {
    Shipped,
    Delivered,
    /// The shop has it at all.
    Found,
}

impl State {
    pub(super) fn word(self) -> &'static str {
        match self {
            State::Shipped => "shipped",
            State::Delivered => "delivered",
            State::Found => "found",
        }
    }

    /// Does any result (lower case) hold a word that shows this state?
    pub(super) fn supported_in(self, results: &str) -> bool {
        let words: &[&str] = match self {
            State::Shipped => &[
                "shipped",
                "dispatched",
                "in_transit",
                "in transit",
                "out_for_delivery",
                "delivered",
            ],
            State::Delivered => &["delivered"],
            State::Found => return true,
        };
        work::step(words.len());
        words.iter().any(|w| results.contains(w))
    }
}

/// One line of an order.
pub(super) struct Line {
    sku: String,
    name: String,
    quantity: Option<u32>,
}

/// An order as the latest result that names it says.
pub(super) struct Order {
    /// The tool whose result this is (`shop.get_order_status`).
    pub tool: String,
    pub status: String,
    shipped: bool,
    delivered: bool,
    /// Lower case, as `KG-1034` reads in a reply's words.
    pub skus: Vec<String>,
    lines: Vec<Line>,
}

impl Order {
    pub(super) fn is(&self, state: State) -> bool {
        match state {
            State::Shipped => self.shipped,
            State::Delivered => self.delivered,
            State::Found => true,
        }
    }

    /// How many of `sku` the order holds: `None` when it holds none, `Some(None)` when it
    /// holds it in a number no result gave.
    pub(super) fn quantity(&self, sku: &str) -> Option<Option<u32>> {
        if let Some(line) = self.lines.iter().find(|l| l.sku == sku) {
            return Some(line.quantity);
        }
        self.skus.iter().any(|s| s == sku).then_some(None)
    }

    /// What the order holds, in words: "an order of 2 × Terracotta planter, 1 × …".
    pub(super) fn holds(&self) -> String {
        let items: Vec<String> = if self.lines.is_empty() {
            self.skus.iter().map(|s| s.to_uppercase()).collect()
        } else {
            self.lines
                .iter()
                .map(|l| match l.quantity {
                    Some(q) => format!("{q} × {}", l.name),
                    None => l.name.clone(),
                })
                .collect()
        };
        format!("an order of {}", items.join(", "))
    }
}

/// An item named in a reply's sentence, at words `start..end`, with the count before it.
pub(super) struct Mention {
    pub start: usize,
    pub end: usize,
    pub sku: String,
    pub count: Option<u32>,
}

/// Every order and item the ticket's successful results hold.
#[derive(Default)]
pub(super) struct Known {
    orders: HashMap<String, Order>,
    /// An item's name as words to look for (its last two words), and its SKU.
    items: Vec<(Vec<String>, String)>,
    /// Index into `items` by the first word of the name looked for.
    by_first_word: HashMap<String, Vec<usize>>,
    /// Every SKU of an item or an order, lower case.
    skus: HashSet<String>,
}

impl Known {
    pub(super) fn from_calls(calls: &[CallFact]) -> Self {
        let mut known = Known::default();
        for call in calls.iter().filter(|c| c.outcome == Outcome::Result) {
            let Ok(value) = serde_json::from_str::<Value>(&call.result) else {
                continue;
            };
            known.read(&call.tool, &value);
            for order in value
                .get("orders")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                known.read(&call.tool, order);
            }
            for product in value
                .get("products")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                if let (Some(sku), Some(name)) = (text(product, "sku"), text(product, "name")) {
                    known.item(name, sku);
                }
            }
        }
        let items = known.items.iter().map(|(_, s)| s.clone());
        let ordered = known.orders.values().flat_map(|o| o.skus.clone());
        known.skus = items.chain(ordered).collect();
        known
    }

    /// One order object: `order_id` and `status`, and `lines` or `skus`.
    fn read(&mut self, tool: &str, value: &Value) {
        let (Some(id), Some(status)) = (text(value, "order_id"), text(value, "status")) else {
            return;
        };
        let dated = |key: &str| text(value, key).is_some();
        let lines: Vec<Line> = value
            .get("lines")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|line| {
                let sku = text(line, "sku")?.to_lowercase();
                let name = text(line, "item")
                    .or_else(|| text(line, "name"))?
                    .to_owned();
                let quantity = line.get("quantity").and_then(Value::as_u64);
                Some(Line {
                    sku,
                    name,
                    quantity: quantity.and_then(|q| u32::try_from(q).ok()),
                })
            })
            .collect();
        for line in &lines {
            self.item(&line.name.clone(), &line.sku.clone());
        }
        let listed_skus: Vec<String> = value
            .get("skus")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|s| s.as_str().map(str::to_lowercase))
            .collect();
        let id = id.to_lowercase();
        let previous = self.orders.remove(&id);
        let (skus, lines) = match (lines.is_empty(), listed_skus.is_empty(), previous) {
            (false, _, _) => (lines.iter().map(|l| l.sku.clone()).collect(), lines),
            (true, false, _) => (listed_skus, vec![]),
            (true, true, Some(old)) => (old.skus, old.lines),
            (true, true, None) => (vec![], vec![]),
        };
        let status = status.to_lowercase();
        let order = Order {
            tool: tool.to_owned(),
            shipped: dated("shipped_on")
                || dated("delivered_on")
                || [
                    "shipped",
                    "in_transit",
                    "out_for_delivery",
                    "delivered",
                    "returned",
                ]
                .contains(&status.as_str()),
            delivered: dated("delivered_on")
                || ["delivered", "returned"].contains(&status.as_str()),
            status,
            skus,
            lines,
        };
        self.orders.insert(id, order);
    }

    /// Looks an item up by the last two words of its name before "with", "for" or a bracket
    /// ("Sauté pan with lid" → "sauté pan"), numbers and units left out.
    fn item(&mut self, name: &str, sku: &str) {
        let lower = name.to_lowercase();
        let core = lower.split([',', '(']).next().unwrap_or("");
        let core = core.split(" with ").next().unwrap_or(core);
        let core = core.split(" for ").next().unwrap_or(core);
        let words: Vec<String> = core
            .split_whitespace()
            .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric()).to_owned())
            .filter(|w| w.chars().count() > 1 && w.chars().any(char::is_alphabetic))
            .collect();
        let key = words[words.len().saturating_sub(2)..].to_vec();
        let sku = sku.to_lowercase();
        let Some(first) = key.first().cloned() else {
            return;
        };
        if self.items.iter().any(|(k, s)| *s == sku && *k == key) {
            return;
        }
        self.by_first_word
            .entry(first)
            .or_default()
            .push(self.items.len());
        self.items.push((key, sku));
    }

    pub(super) fn order(&self, id: &str) -> Option<&Order> {
        self.orders.get(id)
    }

    /// The one order the tools returned, when they returned exactly one.
    pub(super) fn only_order(&self) -> Option<String> {
        (self.orders.len() == 1)
            .then(|| self.orders.keys().next().cloned())
            .flatten()
    }

    /// The items a sentence names, by SKU or by name, with the number written before them.
    pub(super) fn mentions(&self, words: &[Word]) -> Vec<Mention> {
        let mut found = Vec::new();
        for k in 0..words.len() {
            work::step(1);
            if words[k].quoted {
                continue;
            }
            let norm = words[k].norm.as_str();
            if self.skus.contains(norm) {
                found.push(Mention {
                    start: k,
                    end: k + 1,
                    sku: norm.to_owned(),
                    count: None,
                });
                continue;
            }
            for &i in self.by_first_word.get(norm).into_iter().flatten() {
                work::step(1);
                let (key, sku) = &self.items[i];
                let fits = key.iter().enumerate().all(|(j, part)| {
                    words.get(k + j).is_some_and(|w| {
                        let last = j + 1 == key.len();
                        w.norm == *part || (last && plural_of(&w.norm, part))
                    })
                });
                if fits {
                    let count = k.checked_sub(1).and_then(|b| count(&words[b].norm));
                    found.push(Mention {
                        start: k,
                        end: k + key.len(),
                        sku: sku.clone(),
                        count,
                    });
                    break;
                }
            }
        }
        found
    }
}

fn plural_of(word: &str, singular: &str) -> bool {
    word.strip_prefix(singular)
        .is_some_and(|rest| rest == "s" || rest == "es")
}

/// A count written as digits or in words, one to twelve.
fn count(word: &str) -> Option<u32> {
    const WORDS: [&str; 12] = [
        "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
        "twelve",
    ];
    if let Some(i) = WORDS.iter().position(|w| *w == word) {
        return u32::try_from(i + 1).ok();
    }
    word.parse().ok().filter(|n| (1..100).contains(n))
}

fn text<'a>(value: &'a Value, key: &str) -> Option<&'a str> {
    value.get(key)?.as_str()
}
