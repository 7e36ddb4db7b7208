//! The host: one MCP client per configured server, and the bounded loop in which a model
//! works a ticket through them. It runs on a background task and meets its driver only
//! through [`api`] and [`events`]; it never draws anything.

pub mod api;
pub mod checks;
pub mod core;
pub mod events;
pub mod gate;
pub mod people;
pub mod run;
pub mod servers;
pub mod task;
