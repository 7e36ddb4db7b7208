//! One ticket's run: the bounded loop in which the model works a ticket, the conversation it
//! reads, the system prompt, what enters its context (resources, identifiers found), the
//! tools offered for it, asking a person (consent, held tools), a server prompt a person runs,
//! and a run that goes on after a lead answered.
//!
//! The run decides nothing the gate decides and never draws anything: it asks through the
//! host's questions and tells through its events.

pub(crate) mod ask;
pub(crate) mod continuation;
pub(crate) mod conversation;
pub(crate) mod offer;
pub(crate) mod resource_updates;
pub(crate) mod resources;
pub(crate) mod server_prompts;
pub(crate) mod stop;
pub mod system_prompt;
pub(crate) mod task_calls;
pub(crate) mod ticket_loop;
pub(crate) mod tool_calls;
