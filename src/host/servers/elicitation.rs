//! The elicitation handler: every server's connection has its own, bound to the prefix the
//! config gave that server, so a person always sees which server asks. It turns a server's
//! input request into the host's form and waits for the person's answer (time a person takes
//! never counts against the call); it never answers on anyone's behalf.

use std::sync::Arc;

use rmcp::model::{
    ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult, ElicitationAction,
    ElicitationCapability, FormElicitationCapability, Implementation, ProtocolVersion,
    UrlElicitationCapability,
};
use rmcp::service::RequestContext;
use rmcp::{ClientHandler, ErrorData, RoleClient};
use tokio::sync::mpsc;

use crate::host::api::{FormAnswer, FormAsk, Pending, Question};
use crate::host::servers::calls::InputExchange;
use crate::host::servers::form_wire;
use crate::host::servers::notices::{ProgressRoutes, ServerNotice};

/// The handler of one connection: it knows which server it belongs to, so a person always
/// sees who asks.
#[derive(Clone)]
pub struct HostClient {
    pub prefix: String,
    pub origin: String,
    questions: mpsc::Sender<Question>,
    /// Time people have spent on this server's questions, and whether one is open now:
    /// a call's timeout leaves that time out, also for older servers that ask in the
    /// middle of a call.
    people: Arc<std::sync::Mutex<PeopleTime>>,
    /// Tickets with a call in flight to this server, to say which ticket an older server's
    /// question belongs to when only one can be.
    in_flight: Arc<std::sync::Mutex<Vec<String>>>,
    /// Forms an older server asked in the middle of a ticket's call, with their answers, until
    /// the call takes them into its run (and so into the ticket's record).
    heard: Arc<std::sync::Mutex<Vec<(String, InputExchange)>>>,
    /// The calls following their progress, by token.
    progress: ProgressRoutes,
    /// Where this server's word that its tools or a resource changed goes: to the host, if
    /// anyone listens.
    notices: Option<mpsc::UnboundedSender<ServerNotice>>,
}

#[derive(Debug, Default)]
struct PeopleTime {
    spent: std::time::Duration,
    open: usize,
}

impl HostClient {
    pub fn new(prefix: &str, origin: &str, questions: mpsc::Sender<Question>) -> Self {
        Self {
            prefix: prefix.to_owned(),
            origin: origin.to_owned(),
            questions,
            people: Default::default(),
            in_flight: Default::default(),
            heard: Default::default(),
            progress: Default::default(),
            notices: None,
        }
    }

    /// Sends `to` each time this server says its tools or a resource changed.
    pub fn with_notices(mut self, to: Option<mpsc::UnboundedSender<ServerNotice>>) -> Self {
        self.notices = to;
        self
    }

    /// The server said its tools changed (unasked, or on the subscription its connection
    /// opened): whoever lists tools is told which server it was.
    pub fn tools_changed(&self) {
        tracing::info!(server = %self.prefix, "the server says its tools changed");
        if let Some(to) = &self.notices {
            let _ = to.send(ServerNotice::ToolsChanged(self.prefix.clone()));
        }
    }

    /// The server said the resource at `uri` changed (unasked to an older server's
    /// `resources/subscribe`, or on a subscription): the host reads it again.
    pub fn resource_updated(&self, uri: &str) {
        tracing::info!(server = %self.prefix, %uri, "the server says a resource changed");
        if let Some(to) = &self.notices {
            let _ = to.send(ServerNotice::ResourceUpdated {
                server: self.prefix.clone(),
                uri: uri.to_owned(),
            });
        }
    }

    /// The calls to this server that follow their progress.
    pub fn progress(&self) -> &ProgressRoutes {
        &self.progress
    }

    /// The forms this server asked during `ticket`'s call, answered, in the order they came;
    /// each is taken once.
    pub fn take_heard(&self, ticket: &str) -> Vec<InputExchange> {
        let mut heard = self.heard.lock().unwrap_or_else(|p| p.into_inner());
        let (mine, others): (Vec<_>, Vec<_>) = heard.drain(..).partition(|(t, _)| t == ticket);
        *heard = others;
        mine.into_iter().map(|(_, exchange)| exchange).collect()
    }

    /// Time people have spent answering this server so far, and whether a question is open.
    pub fn time_with_people(&self) -> (std::time::Duration, bool) {
        let people = self.people.lock().unwrap_or_else(|p| p.into_inner());
        (people.spent, people.open > 0)
    }

    /// Marks a ticket's call in flight until the guard drops.
    pub fn calling(&self, ticket: &str) -> InFlight {
        self.in_flight
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(ticket.to_owned());
        InFlight {
            tickets: Arc::clone(&self.in_flight),
            ticket: ticket.to_owned(),
        }
    }

    /// The ticket a question without one belongs to, when exactly one call is in flight.
    fn only_ticket_in_flight(&self) -> Option<String> {
        let tickets = self.in_flight.lock().unwrap_or_else(|p| p.into_inner());
        match tickets.as_slice() {
            [one] => Some(one.clone()),
            _ => None,
        }
    }

    /// Shows a server's request to a person and waits for the answer, as long as it takes.
    /// A form the host cannot show, or an answer that does not fit it, goes back as cancel.
    pub async fn ask(&self, ticket: Option<&str>, params: &ElicitRequestParams) -> ElicitResult {
        let ask = match form_wire::form_ask(&self.prefix, &self.origin, ticket, params) {
            Ok(ask) => ask,
            Err(e) => {
                tracing::warn!(server = %self.prefix, error = %e, "cannot show a server's form; cancelled it");
                return ElicitResult::new(ElicitationAction::Cancel);
            }
        };
        let started = std::time::Instant::now();
        self.people.lock().unwrap_or_else(|p| p.into_inner()).open += 1;
        let answer = ask_person(&self.questions, ask.clone()).await;
        {
            let mut people = self.people.lock().unwrap_or_else(|p| p.into_inner());
            people.open -= 1;
            people.spent += started.elapsed();
        }
        if let (FormAnswer::Accept(_), crate::host::api::FormKind::Url { .. }) =
            (&answer, &ask.kind)
        {
            // URL mode: an accept carries no content.
            return ElicitResult::new(ElicitationAction::Accept);
        }
        match crate::host::api::check_answer(&ask.kind, &answer) {
            Ok(()) => form_wire::elicit_result(&answer),
            Err(problems) => {
                tracing::warn!(server = %self.prefix, ?problems, "an answer did not fit the form; cancelled it");
                ElicitResult::new(ElicitationAction::Cancel)
            }
        }
    }

    /// Keeps an answered form for the ticket whose call it came in, for its record.
    fn hear(&self, ticket: Option<&str>, message: &str, result: &ElicitResult) {
        let Some(ticket) = ticket else {
            return;
        };
        let exchange = InputExchange {
            key: "elicitation".to_owned(),
            message: message.to_owned(),
            action: format!("{:?}", result.action).to_lowercase(),
            content: result.content.as_ref().map(|c| c.to_string()),
        };
        let mut heard = self.heard.lock().unwrap_or_else(|p| p.into_inner());
        heard.push((ticket.to_owned(), exchange));
    }
}

/// A ticket's call to a server, in flight until dropped.
pub struct InFlight {
    tickets: Arc<std::sync::Mutex<Vec<String>>>,
    ticket: String,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        let mut tickets = self.tickets.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(index) = tickets.iter().position(|t| *t == self.ticket) {
            tickets.remove(index);
        }
    }
}

/// Puts a form in front of a person. If nobody can answer any more, that is a cancel.
pub async fn ask_person(questions: &mpsc::Sender<Question>, ask: FormAsk) -> FormAnswer {
    let (pending, answer) = Pending::new(ask);
    if questions.send(Question::Form(pending)).await.is_err() {
        return FormAnswer::Cancel;
    }
    answer.await.unwrap_or(FormAnswer::Cancel)
}

impl ClientHandler for HostClient {
    fn get_info(&self) -> ClientConfig {
        let mut config = ClientConfig::new(
            ClientCapabilities::builder()
                .enable_elicitation_with(
                    ElicitationCapability::new()
                        .with_form(FormElicitationCapability::new())
                        .with_url(UrlElicitationCapability::new()),
                )
                // A call its server runs as a task is followed (`tasks::follow`).
                .enable_tasks()
                .build(),
            Implementation::new("support-desk", env!("CARGO_PKG_VERSION")),
        );
        // What an `initialize` handshake offers: the newest revision it can name. The
        // discover probe offers 2026-07-28 on its own.
        config.protocol_version = ProtocolVersion::V_2025_11_25;
        config
    }

    /// Input requests from prompts, resource reads and older servers arrive here; the
    /// host's own tool-call loop answers those of tool calls itself, knowing the ticket.
    async fn create_elicitation(
        &self,
        params: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let ticket = self.only_ticket_in_flight();
        let result = self.ask(ticket.as_deref(), &params).await;
        // An older server asks in the middle of a call: the call's run records it with the
        // ticket's, as the host's own loop records a newer server's input requests.
        let message = form_wire::form_ask(&self.prefix, &self.origin, None, &params)
            .map(|ask| ask.message)
            .unwrap_or_default();
        self.hear(ticket.as_deref(), &message, &result);
        Ok(result)
    }

    async fn on_progress(
        &self,
        params: rmcp::model::ProgressNotificationParam,
        _context: rmcp::service::NotificationContext<RoleClient>,
    ) {
        self.progress.heard(params);
    }

    /// An older server says so unasked; a newer one on the subscription its connection
    /// opened (`connect`), which rmcp keeps from this handler.
    async fn on_tool_list_changed(&self, _context: rmcp::service::NotificationContext<RoleClient>) {
        self.tools_changed();
    }

    /// An older server's word on a resource the desk subscribed to (`resources/subscribe`).
    async fn on_resource_updated(
        &self,
        params: rmcp::model::ResourceUpdatedNotificationParam,
        _context: rmcp::service::NotificationContext<RoleClient>,
    ) {
        self.resource_updated(&params.uri);
    }
}
