//! The gate: what the model is offered and whether a person must say yes. The host's names
//! for tools, each definition against its pin, the input schema a call must meet, text that
//! looks like instructions, the allow list and the trust a person set, where each argument
//! came from, and the identifiers the config names in a customer's text.
//!
//! Everything here is decided from what it is handed: it never asks a person and never appends
//! to the record; the one thing it asks a server is its tool list (`tools::listing`, when the
//! run refreshes what is offered). Asking a person is the run's ([`crate::host::run::ask`]).

pub mod consent;
pub mod identifiers;
pub mod names;
pub mod provenance;
pub mod schema;
pub mod suspicious;
pub mod tools;
pub mod trust;
