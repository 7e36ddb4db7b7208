//! The code both ends of a pipe share: reading lines, writing JSON text, a stdio server's
//! transport, the desk's end of a child's stdio and its call lane, the size guard on every
//! message, and the busy polling that keeps a wake-up off a call's path.
//!
//! Nothing here knows a ticket, a tool's meaning or a person: only bytes, messages and
//! their limits.

pub mod busy_poll;
pub mod child_stdio;
pub mod json_text;
pub mod lane;
pub mod lines;
pub mod oversize;
pub mod server_stdio;
