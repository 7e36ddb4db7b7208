//! Recorded runs: append-only JSONL, one event per line, flushed as it happens, so a crash
//! keeps every finished event. The first line is the manifest. A reader yields the events
//! per ticket and stops quietly at a last line cut off mid-write. The events are the record's
//! ([`crate::record::event`]); [`summary`] computes a run's figures from them alone, and
//! [`review`] lays a recording out for reading turn by turn.

pub mod reader;
pub mod review;
pub mod summary;
pub mod writer;

pub use reader::Recording;
pub use writer::Recorder;
