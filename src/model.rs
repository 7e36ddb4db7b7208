//! Models the host can ask: an OpenAI-compatible chat-completions server, or recorded calls
//! replayed.

pub mod chat;
pub mod openai;
pub mod replay;
pub mod textcalls;

use chat::{Answer, ChatRequest};
use openai::{OpenAiChat, Partial};
use replay::ReplayModel;

pub enum Model {
    OpenAi(OpenAiChat),
    Replay(ReplayModel),
}

#[derive(Debug, thiserror::Error)]
pub enum AskError {
    #[error(transparent)]
    Server(#[from] openai::ModelError),
    /// A replay found no recorded answer: the run left the recording here.
    #[error("{0}")]
    Diverged(String),
}

impl Model {
    /// The model's reply to `request` on `ticket`'s `turn`, with what the server said of reading
    /// its prompt; a server that streams tells `watch` what the reply holds so far (a
    /// recording has nothing to watch, and says nothing of a prompt).
    pub async fn reply(
        &self,
        ticket: &str,
        turn: u32,
        request: &ChatRequest,
        watch: &mut (dyn FnMut(&Partial) + Send),
    ) -> Result<Answer, AskError> {
        match self {
            Model::OpenAi(model) => Ok(model.answer(request, watch).await?),
            Model::Replay(model) => match model.reply(ticket, turn, request) {
                Ok(reply) => Ok(Answer {
                    reply,
                    prompt: None,
                }),
                Err(diverged) => Err(AskError::Diverged(diverged)),
            },
        }
    }

    /// Whether the model can be asked at all: a server that does not answer is an error
    /// naming its URL; a recording always can.
    pub async fn reachable(&self) -> Result<(), openai::ModelError> {
        match self {
            Model::OpenAi(model) => model.reachable().await,
            Model::Replay(_) => Ok(()),
        }
    }

    pub fn describe(&self) -> String {
        match self {
            Model::OpenAi(model) => model.describe(),
            Model::Replay(model) => model.describe(),
        }
    }
}
