//! The host: one MCP client per configured server, and the bounded loop in which a model
//! works a ticket through them. It runs on a background task and meets its driver only
//! through [`api`] and [`events`]; it never draws anything.

pub mod api;
pub mod approvals;
pub mod calls;
pub mod checks;
pub mod consent;
mod continuation;
mod conversation;
pub mod core;
mod elicitation;
pub mod events;
pub mod form;
pub mod form_checks;
pub mod identifiers;
mod lane;
pub mod names;
pub mod oversize;
mod people;
pub mod prompt;
mod prompts;
pub mod provenance;
mod resources;
pub mod schema;
pub mod servers;
mod sign_in;
mod stdio;
pub mod summary;
pub mod suspicious;
pub mod task;
mod team;
mod ticket_loop;
pub mod tools;
mod transport;
pub mod trust;
