//! The desk's panes (status, queue, ticket, footer) and its own screens (help, picker, the
//! `T` trust screen, the `i` servers screen, a resource being read, sign-in), one file each. Each
//! draws one rectangle from the `App` it is given and changes nothing.

pub mod footer;
pub mod help;
pub mod picker;
pub mod queue;
pub mod resource;
pub mod servers;
pub mod sign_in;
pub mod status;
pub mod ticket;
pub mod trust;
