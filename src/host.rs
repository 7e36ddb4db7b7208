//! The host: one MCP client per configured server, and the bounded loop in which a model
//! works a ticket through them. It runs on a background task ([`task`]) and meets its driver
//! only through the channels of [`api`] and [`events`]; it never draws anything. Its wings:
//! [`servers`] < [`checks`] < [`gate`] < [`core`] < [`run`], [`people`] (a lower one never
//! names a higher one; `.ci/run` checks it).

pub mod api;
pub mod checks;
pub mod core;
pub mod events;
pub mod gate;
pub mod people;
pub mod run;
pub mod servers;
pub mod task;
