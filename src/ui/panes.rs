//! The desk's panes and its two overlays of its own (help, picker), one file each. Each
//! draws one rectangle from the `App` it is given and changes nothing.

pub mod footer;
pub mod help;
pub mod picker;
pub mod queue;
pub mod sign_in;
pub mod status;
pub mod ticket;
pub mod trust;
