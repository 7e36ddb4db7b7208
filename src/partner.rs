//! `partner-tracking`: the delivery partner's MCP server (Kestrel Parcel).
//!
//! It knows only the parcels in its own data and answers nothing else; the desk runs it
//! in-process by default, and `support-desk serve partner --stdio` serves it to any client.

pub mod data;
pub mod server;

pub use data::{Parcel, Parcels};
pub use server::PartnerServer;
