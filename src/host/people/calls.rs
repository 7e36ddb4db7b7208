//! A person calls a tool themselves, through the same gate as a model's call: the tool must
//! be offered and not withheld (a changed or suspicious definition waits for a person's
//! approval first), the arguments must fit its input schema, a lead's form goes to the
//! team's leads on a team, and everything is recorded on the ticket by the person. Choosing
//! the call is the person's yes; the record says so (`rule`: the person's own call).

use std::sync::Arc;

use rmcp::model::{ElicitRequestParams, ElicitationSchema};
use serde_json::{Map, Value};

use crate::host::api::{FormAnswer, FormKind, ToolInfo};
use crate::host::core::Host;
use crate::host::gate::schema;
use crate::host::run::ask::Consent;
use crate::host::servers::form_wire;
use crate::model::chat::ToolCall;
use crate::record::event::{OWN_CALL, PERSON_TURN};
use crate::record::{Event, Outcome};

/// What a person's call came to: its outcome and the text its server answered.
#[derive(Debug, Clone, PartialEq)]
pub struct PersonCalled {
    pub tool: String,
    pub outcome: Outcome,
    pub text: String,
    /// The approval its lead's form went to, on a team.
    pub approval: Option<i64>,
}

impl Host {
    /// The tools a person may call on a ticket now, by server, each with its form: what its
    /// server says of it is data, shown as written.
    pub async fn tools_for_people(&self) -> Vec<ToolInfo> {
        let tools = self.tools.read().await;
        tools
            .1
            .iter()
            .map(|(name, offered)| ToolInfo {
                name: name.to_string(),
                server: name.prefix.clone(),
                title: offered.tool.title.clone(),
                description: offered
                    .tool
                    .description
                    .as_deref()
                    .unwrap_or_default()
                    .to_owned(),
                form: arguments_form(&offered.tool.input_schema),
                withheld: offered.held.as_ref().map(|held| held.reason(name)),
                suggested: Vec::new(),
            })
            .collect()
    }

    /// The tools a person may call on `ticket`, each form with what the ticket suggests for
    /// it filled in and listed with where it was found.
    pub async fn tools_for(&self, ticket: &str) -> Vec<ToolInfo> {
        let mut tools = self.tools_for_people().await;
        if let Some(ticket) = self.ticket(ticket) {
            super::suggest::from_ticket(&ticket, &self.identifiers, &mut tools);
        }
        tools
    }

    /// `tool` called by this desk's person on `ticket` with the answer to its arguments'
    /// form; `Err` in words when the host refuses it before anything is sent.
    pub async fn person_call(
        &self,
        ticket: &str,
        tool: &str,
        answer: &FormAnswer,
    ) -> Result<PersonCalled, String> {
        let arguments = match form_wire::elicit_result(answer).content {
            Some(Value::Object(content)) if matches!(answer, FormAnswer::Accept(_)) => {
                arguments_of(content)
            }
            _ => return Err(format!("{tool} was not called: its form was closed")),
        };
        let state = self.record.state(ticket).await.map_err(|e| e.to_string())?;
        if state.as_ref().is_some_and(|s| s.run.is_some()) {
            return Err(format!(
                "{ticket} is being worked: stop its run (s) or wait for it before calling a tool yourself"
            ));
        }
        if self.ticket(ticket).is_none() {
            return Err(format!("there is no ticket {ticket}"));
        }
        self.holding(ticket, self.call_as_person(ticket, tool, arguments))
            .await
    }

    async fn call_as_person(
        &self,
        ticket: &str,
        tool: &str,
        arguments: Map<String, Value>,
    ) -> Result<PersonCalled, String> {
        let (name, conn, definition, held) = {
            let tools = self.tools.read().await;
            let found = tools.1.iter().find(|(name, _)| name.to_string() == tool);
            let Some((name, offered)) = found else {
                return Err(format!(
                    "there is no tool {tool} on this desk's servers now"
                ));
            };
            (
                name.clone(),
                Arc::clone(&offered.conn),
                offered.tool.clone(),
                offered.held.clone(),
            )
        };
        // A withheld tool is called only once the person has seen what changed and said yes
        // to it as it is now, as the model's run would ask before offering it.
        if let Some(held) = &held
            && !self
                .put_held(ticket, PERSON_TURN, &name, &conn, &definition, held)
                .await
        {
            return Err(format!(
                "{tool} was not called: {}, and its definition was not approved",
                held.reason(&name)
            ));
        }
        let problems = schema::problems(&definition.input_schema, &arguments);
        if !problems.is_empty() {
            return Err(format!(
                "{tool} was not called: the values do not fit its input schema: {}",
                problems.join("; ")
            ));
        }
        let person = self.record.person().to_owned();
        self.report(Event::ToolCall {
            ticket: ticket.to_owned(),
            turn: PERSON_TURN,
            tool: tool.to_owned(),
            arguments: arguments.clone(),
        })
        .await
        .map_err(|e| e.to_string())?;
        if !self.config.consent.allow.iter().any(|a| a == tool) {
            self.report(Event::Consent {
                ticket: ticket.to_owned(),
                turn: PERSON_TURN,
                tool: tool.to_owned(),
                reason: format!("{person} called {tool} themselves"),
                unseen: vec![],
                approved: true,
                by: person.clone(),
                shown: None,
                rule: Some(OWN_CALL.to_owned()),
            })
            .await
            .map_err(|e| e.to_string())?;
        }
        let call = ToolCall {
            id: format!("person_{ticket}"),
            name: tool.to_owned(),
            arguments,
        };
        let asked = Consent {
            ticket,
            turn: PERSON_TURN,
            canonical: tool,
            name: &name,
            conn: &conn,
            tool: &definition,
            call: &call,
            provenance: vec![],
            backing: vec![],
        };
        let mut run = self.call_server(&asked).await;
        let mut approval = None;
        if let Some(parked) = &run.parked {
            match self.park(&asked, parked).await {
                Ok(id) => approval = Some(id),
                Err(problem) => {
                    run.text = format!(
                        "{} asks a lead to answer, but the desk could not file it for the leads: {problem}",
                        conn.prefix
                    );
                }
            }
        }
        if approval.is_none() {
            self.report(Event::Outcome {
                ticket: ticket.to_owned(),
                turn: PERSON_TURN,
                tool: tool.to_owned(),
                outcome: run.outcome,
                text: run.text.clone(),
                truncated: run.truncated,
            })
            .await
            .map_err(|e| e.to_string())?;
        }
        Ok(PersonCalled {
            tool: tool.to_owned(),
            outcome: run.outcome,
            text: run.text,
            approval,
        })
    }
}

/// A tool's arguments as a form with the elicitation form's widgets, when its input schema is
/// one (flat, of text, numbers, choices, booleans and lists of those); otherwise one field of
/// JSON for the whole object.
fn arguments_form(input_schema: &Map<String, Value>) -> FormKind {
    let as_form = serde_json::from_value::<ElicitationSchema>(flat(input_schema))
        .ok()
        .and_then(|requested_schema| {
            let params = ElicitRequestParams::FormElicitationParams {
                meta: None,
                message: String::new(),
                requested_schema,
            };
            form_wire::form_ask("", "", None, &params).ok()
        });
    match as_form {
        Some(ask) => ask.kind,
        None => FormKind::Fields(vec![crate::host::api::Field {
            name: JSON_FIELD.to_owned(),
            title: Some("The arguments, as one JSON object".to_owned()),
            description: Some(Value::Object(input_schema.clone()).to_string()),
            required: true,
            kind: crate::host::api::FieldKind::Text {
                min_length: Some(2),
                max_length: None,
                format: None,
                default: Some("{}".to_owned()),
            },
        }]),
    }
}

/// The schema as a form's: an optional value's `["string", "null"]` is its one type, and a
/// `null` default is none (both are how Rust's schemas say "may be left out").
fn flat(input_schema: &Map<String, Value>) -> Value {
    let mut schema = input_schema.clone();
    if let Some(Value::Object(properties)) = schema.get_mut("properties") {
        for property in properties.values_mut() {
            let Value::Object(property) = property else {
                continue;
            };
            if let Some(Value::Array(types)) = property.get("type") {
                let named: Vec<&Value> = types.iter().filter(|t| *t != "null").collect();
                if let [one] = named.as_slice() {
                    let one = (*one).clone();
                    property.insert("type".to_owned(), one);
                }
            }
            if property.get("default") == Some(&Value::Null) {
                property.remove("default");
            }
        }
    }
    Value::Object(schema)
}

/// The one field of a form whose tool's schema the widgets cannot show.
const JSON_FIELD: &str = "arguments (JSON)";

/// The arguments a form's answer makes: its values, or the JSON object written in the one
/// JSON field.
fn arguments_of(content: Map<String, Value>) -> Map<String, Value> {
    match content.get(JSON_FIELD).and_then(Value::as_str) {
        Some(text) => match serde_json::from_str(text) {
            Ok(Value::Object(map)) => map,
            _ => content,
        },
        None => content,
    }
}

impl Host {
    /// A fresh run hears of the calls people made on the ticket before it, with their results
    /// as the model reads any result, and its draft is checked against them too.
    pub(in crate::host) async fn tell_of_person_calls(
        &self,
        ticket: &str,
        conversation: &mut crate::host::run::conversation::Conversation,
    ) {
        let events = match self.record.ticket_events(ticket).await {
            Ok(events) => events,
            Err(e) => {
                tracing::warn!(ticket, error = %e, "could not read the ticket's earlier calls");
                return;
            }
        };
        let facts = crate::host::run::continuation::person_calls(&events);
        if facts.is_empty() {
            return;
        }
        let blocks: Vec<String> = facts
            .iter()
            .map(|fact| {
                let arguments = Value::Object(fact.arguments.clone());
                crate::model::chat::tool_response_block(
                    &fact.tool,
                    fact.outcome.label(),
                    &format!("called with {arguments}\n{}", fact.result),
                )
            })
            .collect();
        conversation.messages.push(crate::model::chat::Message::User {
            content: format!(
                "A person at the desk already made these calls on this ticket; their results are real, so do not make them again:\n{}",
                blocks.join("\n")
            ),
        });
        conversation.facts.extend(facts);
    }
}

impl Host {
    /// The calls `ticket`'s results offer next, the latest result's first: each offered tool,
    /// not withheld, whose required arguments all appear by name among the values its earlier
    /// results brought (the latest one of each name; not those a call was given and its result
    /// echoes), and that was not already sent with those values. Generic over schemas and
    /// names: a `quote_id` in a result offers any tool that requires a `quote_id`.
    pub async fn next_steps(
        &self,
        ticket: &str,
        tools: &[crate::host::api::ToolInfo],
    ) -> Vec<crate::host::api::NextStep> {
        let facts = match self.call_log(ticket).await {
            Ok(facts) => facts,
            Err(e) => {
                tracing::warn!(ticket, error = %e, "could not read the ticket's call log");
                return Vec::new();
            }
        };
        next_steps(&facts, tools)
    }
}

/// See [`Host::next_steps`].
fn next_steps(
    facts: &[crate::host::checks::CallFact],
    tools: &[crate::host::api::ToolInfo],
) -> Vec<crate::host::api::NextStep> {
    use std::collections::BTreeMap;
    // Each value a result brought, by its name, with the tool it came from and when: a value
    // the call was given and its result only echoes brings nothing new.
    let mut known: BTreeMap<String, (String, String, usize)> = BTreeMap::new();
    for (at, fact) in facts.iter().enumerate() {
        if fact.outcome != Outcome::Result {
            continue;
        }
        if let Ok(value) = serde_json::from_str::<Value>(&fact.result) {
            scalars(&value, &mut |name, text| {
                if scalar_text(fact.arguments.get(name)).as_ref() != Some(&text) {
                    known.insert(name.to_owned(), (text, fact.tool.clone(), at));
                }
            });
        }
    }
    let mut steps = Vec::new();
    for tool in tools.iter().filter(|t| t.withheld.is_none()) {
        let FormKind::Fields(fields) = &tool.form else {
            continue;
        };
        let mut values = Vec::new();
        let mut latest = 0;
        let mut form = fields.clone();
        for field in &mut form {
            if let Some((value, from, at)) = known.get(&field.name)
                && prefill(&mut field.kind, value)
            {
                values.push((field.name.clone(), value.clone(), from.clone()));
                latest = latest.max(*at);
            }
        }
        let filled = |name: &str| values.iter().any(|(filled, _, _)| filled == name);
        let mut required = form.iter().filter(|f| f.required).peekable();
        if required.peek().is_none() || !required.all(|f| filled(&f.name)) {
            continue;
        }
        // Sent already with these values, whatever came of it (a call that did not finish
        // may have run): not offered again. A declined call never reached the server.
        let already = facts.iter().any(|fact| {
            fact.tool == tool.name
                && !matches!(fact.outcome, Outcome::Declined | Outcome::UnknownTool)
                && values.iter().all(|(name, value, _)| {
                    scalar_text(fact.arguments.get(name)).as_ref() == Some(value)
                })
        });
        if !already {
            let step = crate::host::api::NextStep {
                tool: tool.name.clone(),
                values,
                form: FormKind::Fields(form),
            };
            steps.push((latest, step));
        }
    }
    // What the latest result offers comes first.
    steps.sort_by_key(|(latest, _)| std::cmp::Reverse(*latest));
    steps.into_iter().map(|(_, step)| step).collect()
}

/// Every string or number in `value`, with the name it is held under, depth first.
fn scalars(value: &Value, found: &mut impl FnMut(&str, String)) {
    match value {
        Value::Object(map) => {
            for (name, inner) in map {
                match scalar_text(Some(inner)) {
                    Some(text) => found(name, text),
                    None => scalars(inner, found),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|item| scalars(item, found)),
        _ => {}
    }
}

/// A string or a number as text; anything else is no single value.
fn scalar_text(value: Option<&Value>) -> Option<String> {
    match value? {
        Value::String(text) if !text.is_empty() => Some(text.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// Sets `kind`'s default to `value` where the field can hold it, and says whether it could;
/// a value it cannot hold (a word in a number's field, a choice it does not offer) leaves the
/// field as it was.
fn prefill(kind: &mut crate::host::api::FieldKind, value: &str) -> bool {
    use crate::host::api::FieldKind;
    match kind {
        FieldKind::Text { default, .. } => *default = Some(value.to_owned()),
        FieldKind::Number { default, .. } => match value.parse() {
            Ok(number) => *default = Some(number),
            Err(_) => return false,
        },
        FieldKind::Integer { default, .. } => match value.parse() {
            Ok(number) => *default = Some(number),
            Err(_) => return false,
        },
        FieldKind::Choice { options, default } if options.iter().any(|o| o.value == value) => {
            *default = Some(value.to_owned())
        }
        FieldKind::Choice { .. } | FieldKind::Boolean { .. } | FieldKind::Choices { .. } => {
            return false;
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::host::api::FieldKind;

    fn names(kind: &FormKind) -> Vec<(String, bool)> {
        match kind {
            FormKind::Fields(fields) => fields
                .iter()
                .map(|f| (f.name.clone(), f.required))
                .collect(),
            FormKind::Url { .. } => vec![],
        }
    }

    #[test]
    fn a_flat_schema_is_a_form_with_its_optional_values_left_optional() {
        let quote = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": "QuoteArgs",
            "type": "object",
            "properties": {
                "order_id": {"description": "The order to refund.", "type": "string"},
                "sku": {"description": "One line's SKU.", "type": ["string", "null"], "default": null},
                "reason": {"description": "Why.", "type": "string"}
            },
            "required": ["order_id", "reason"]
        });
        let Value::Object(schema) = quote else {
            unreachable!()
        };
        assert_eq!(
            names(&arguments_form(&schema)),
            [
                ("order_id".to_owned(), true),
                ("sku".to_owned(), false),
                ("reason".to_owned(), true)
            ]
        );
    }

    #[test]
    fn a_schema_the_widgets_cannot_show_is_one_json_field() {
        let nested = json!({
            "type": "object",
            "properties": {"items": {"type": "array", "items": {"type": "object"}}}
        });
        let Value::Object(schema) = nested else {
            unreachable!()
        };
        let FormKind::Fields(fields) = arguments_form(&schema) else {
            panic!("a form")
        };
        assert_eq!(fields.len(), 1);
        assert_eq!(fields[0].name, JSON_FIELD);
        assert!(matches!(fields[0].kind, FieldKind::Text { .. }));
        let written = Map::from_iter([(
            JSON_FIELD.to_owned(),
            Value::from(r#"{"items": [{"sku": "X"}]}"#),
        )]);
        assert_eq!(
            Value::Object(arguments_of(written)),
            json!({"items": [{"sku": "X"}]})
        );
    }

    fn tool(name: &str, schema: Value) -> crate::host::api::ToolInfo {
        let Value::Object(schema) = schema else {
            unreachable!()
        };
        crate::host::api::ToolInfo {
            name: name.to_owned(),
            server: name.split('.').next().unwrap_or_default().to_owned(),
            title: None,
            description: String::new(),
            form: arguments_form(&schema),
            withheld: None,
            suggested: Vec::new(),
        }
    }

    fn fact(tool: &str, arguments: Value, result: Value) -> crate::host::checks::CallFact {
        let Value::Object(arguments) = arguments else {
            unreachable!()
        };
        crate::host::checks::CallFact {
            tool: tool.to_owned(),
            turn: 1,
            outcome: Outcome::Result,
            arguments,
            result: result.to_string(),
        }
    }

    fn shop_tools() -> Vec<crate::host::api::ToolInfo> {
        let one = |name: &str| json!({"type": "object", "properties": {name: {"type": "string"}}, "required": [name]});
        vec![
            tool("shop.lookup_order", one("order_id")),
            tool(
                "shop.quote_refund",
                json!({"type": "object", "properties": {
                    "order_id": {"type": "string"}, "reason": {"type": "string"}
                }, "required": ["order_id", "reason"]}),
            ),
            tool("shop.issue_refund", one("quote_id")),
            tool("partner.track_parcel", one("tracking_number")),
        ]
    }

    fn defaults(kind: &FormKind) -> Vec<(String, Option<String>)> {
        let FormKind::Fields(fields) = kind else {
            return vec![];
        };
        fields
            .iter()
            .map(|f| match &f.kind {
                FieldKind::Text { default, .. } => (f.name.clone(), default.clone()),
                _ => (f.name.clone(), None),
            })
            .collect()
    }

    #[test]
    fn a_quote_offers_its_refund_with_the_quote_filled_in_and_where_it_came_from() {
        let facts = [
            fact(
                "shop.lookup_order",
                json!({"order_id": "O-1001"}),
                json!({"order_id": "O-1001", "lines": [{"sku": "KG-0001", "qty": 1}]}),
            ),
            fact(
                "shop.quote_refund",
                json!({"order_id": "O-1001", "reason": "broken"}),
                json!({"quote_id": "Q-7F3A", "order_id": "O-1001", "amount": "EUR 12.00"}),
            ),
        ];
        let steps = next_steps(&facts, &shop_tools());
        let names: Vec<&str> = steps.iter().map(|s| s.tool.as_str()).collect();
        // The order only echoes what each call was given; the quote needs a reason no result
        // holds.
        assert_eq!(names, ["shop.issue_refund"]);
        assert_eq!(
            steps[0].values,
            [(
                "quote_id".to_owned(),
                "Q-7F3A".to_owned(),
                "shop.quote_refund".to_owned()
            )]
        );
        assert_eq!(
            defaults(&steps[0].form),
            [("quote_id".to_owned(), Some("Q-7F3A".to_owned()))]
        );
    }

    #[test]
    fn a_call_made_already_with_those_values_is_not_offered_again_whatever_came_of_it() {
        let mut issued = fact(
            "shop.issue_refund",
            json!({"quote_id": "Q-7F3A"}),
            json!("waiting for a lead"),
        );
        issued.outcome = Outcome::ToolError;
        let facts = [
            fact(
                "shop.quote_refund",
                json!({"order_id": "O-1001", "reason": "broken"}),
                json!({"quote_id": "Q-7F3A"}),
            ),
            issued,
        ];
        assert_eq!(next_steps(&facts, &shop_tools()), []);
        // A new quote is a new step.
        let again = [
            facts[0].clone(),
            facts[1].clone(),
            fact(
                "shop.quote_refund",
                json!({"order_id": "O-1001", "reason": "broken"}),
                json!({"quote_id": "Q-9B21"}),
            ),
        ];
        let steps = next_steps(&again, &shop_tools());
        assert_eq!(steps.len(), 1);
        assert_eq!(steps[0].values[0].1, "Q-9B21");
        // A call a person declined never reached the shop: a person may still make it.
        let mut declined = facts.clone();
        declined[1].outcome = Outcome::Declined;
        assert_eq!(next_steps(&declined, &shop_tools()).len(), 1);
    }

    #[test]
    fn values_come_only_from_results_never_from_refusals_or_withheld_tools() {
        let mut refused = fact(
            "shop.lookup_order",
            json!({"order_id": "O-1001"}),
            json!({"tracking_number": "KP12345"}),
        );
        refused.outcome = Outcome::ToolError;
        assert_eq!(next_steps(&[refused.clone()], &shop_tools()), []);

        let found = fact(
            "shop.lookup_order",
            json!({"order_id": "O-1001"}),
            json!({"order": {"shipment": {"tracking_number": "KP12345"}}}),
        );
        let steps = next_steps(std::slice::from_ref(&found), &shop_tools());
        assert_eq!(
            steps.iter().map(|s| s.tool.as_str()).collect::<Vec<_>>(),
            ["partner.track_parcel"]
        );
        let mut tools = shop_tools();
        tools[3].withheld = Some("its definition changed".into());
        assert_eq!(next_steps(&[found], &tools), []);
    }
}
