//! What people do besides answering the host's questions: a reply's edits, sends, hand-overs
//! and notes; a tool called by a person, through the same gate as a model's call; a desk's claims among a team's desks; a lead's approvals of another person's
//! call; signing in to a server that asked for it.
//!
//! Each is an event in the desk's record, appended before anyone is shown it; whether it is
//! allowed is the record's rule (and on a team, the database's). Nothing here talks to the
//! model.

pub mod approvals;
pub(crate) mod calls;
pub(crate) mod edits;
pub(crate) mod mailbox;
pub(crate) mod owners;
mod report;
pub(crate) mod sign_in;
mod suggest;
pub(crate) mod team;
