//! The shop the desk ships with: its data, its system of record and its MCP server.
//!
//! Everything here is the shop's side of the line. The desk reaches it only through MCP,
//! exactly as it would reach a shop it did not bundle.

pub mod catalog;
pub mod data;
pub mod http;
pub mod ids;
pub mod oauth;
pub mod server;
pub mod store;

pub use data::ShopWorld;
pub use server::ShopServer;
pub use store::{PgStore, QuoteIds, SqliteStore, Store};

use crate::money::Cents;

/// Refunds above this wait for a support lead (the refund policy's limit).
pub const REFUND_LIMIT: Cents = Cents::new(150_00);

/// The shop's currency; every amount in its data and on its wire is in euros.
pub const CURRENCY: &str = "EUR";
