//! Product lookup by SKU or by words of a product's name.

use super::data::{Product, ShopWorld};
use super::ids;

/// At most this many products come back for a lookup by words.
pub const MAX_MATCHES: usize = 5;

/// Words that say nothing about which product is meant.
const FILLER: [&str; 16] = [
    "the", "and", "for", "with", "does", "come", "have", "has", "you", "your", "any", "stock",
    "size", "sizes", "still", "there",
];

#[derive(Debug, PartialEq)]
pub enum Lookup<'a> {
    /// A SKU that names a product.
    Sku(&'a Product),
    /// A SKU-shaped query that names no product.
    UnknownSku(String),
    /// Products whose name (first) or description match the most words, best first.
    Words(Vec<&'a Product>),
}

pub fn look_up<'a>(world: &'a ShopWorld, query: &str) -> Lookup<'a> {
    if let Some(sku) = sku_in(query) {
        return match world.product(&sku) {
            Some(product) => Lookup::Sku(product),
            None => Lookup::UnknownSku(sku),
        };
    }
    let wanted = words(query)
        .filter(|w| w.len() >= 3 && !FILLER.contains(&w.as_str()))
        .collect::<Vec<_>>();
    let mut scored: Vec<(usize, &Product)> = world
        .products
        .iter()
        .map(|product| (score(product, &wanted), product))
        .filter(|(score, _)| *score > 0)
        .collect();
    let best = scored.iter().map(|(score, _)| *score).max().unwrap_or(0);
    // Keep the products that match nearly as well as the best one: a query naming a pan
    // should not list every product that merely shares the word "steel".
    scored.retain(|(score, _)| *score * 2 > best);
    scored.sort_by(|(a, pa), (b, pb)| b.cmp(a).then_with(|| pa.sku.cmp(&pb.sku)));
    Lookup::Words(
        scored
            .into_iter()
            .take(MAX_MATCHES)
            .map(|(_, p)| p)
            .collect(),
    )
}

/// The query as a SKU, when the whole query or one of its words is SKU-shaped.
fn sku_in(query: &str) -> Option<String> {
    ids::sku(query).or_else(|| {
        let tokens: Vec<&str> = query.split_whitespace().collect();
        tokens.iter().enumerate().find_map(|(i, token)| {
            let token = token.trim_matches(|c: char| !c.is_ascii_alphanumeric() && c != '-');
            ids::sku(token).or_else(|| {
                // "KG 1031" written with a space.
                let next = tokens.get(i + 1)?;
                token
                    .eq_ignore_ascii_case("kg")
                    .then(|| ids::sku(&format!("KG-{next}")))?
            })
        })
    })
}

fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
}

/// Two points per wanted word found in the name, one per word found only in the
/// description. Words match when one is a prefix of the other ("pan" and "pans").
fn score(product: &Product, wanted: &[String]) -> usize {
    let name: Vec<String> = words(&product.name).collect();
    let description: Vec<String> = words(&product.description).collect();
    let found = |words: &[String], w: &str| {
        words
            .iter()
            .any(|x| x.len() >= 3 && (x.starts_with(w) || w.starts_with(x.as_str())))
    };
    wanted
        .iter()
        .map(|w| {
            if found(&name, w) {
                2
            } else if found(&description, w) {
                1
            } else {
                0
            }
        })
        .sum()
}
