//! Overlays that ask a person something: consent, a server's form, the draft editor, an
//! internal note.

pub mod consent;
pub mod draft;
pub mod form;
pub mod note;
