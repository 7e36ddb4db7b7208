//! The servers wing: reaching a server and calling it. A connection per configured server
//! (stdio child, in-process pipe or HTTP), its calls with their timeouts and size limits, and
//! a server's forms as they travel on the wire (its schema turned into the desk's form, a
//! person's answer checked and sent back), and what a server says unasked (a call's
//! progress, a changed tool list), and a call its server runs as a task, followed to its end.
//!
//! Nothing here names the [`Host`](crate::host::core::Host) or a ticket: a caller hands in
//! what a call needs and gets its outcome back. Whether a call may be made at all is the
//! gate's question ([`crate::host::gate`]), never this wing's.

pub mod calls;
pub mod connect;
pub mod elicitation;
pub mod form_wire;
pub mod notices;
pub mod tasks;
pub(crate) mod transport;
