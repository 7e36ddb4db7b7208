//! Values for a person's call or prompt that the ticket itself holds: the identifiers the
//! config names (`[[desk.identifiers]]`, the same the model is told of) found in what the
//! customer wrote, each filling the arguments its kind names, and the ticket's own id and
//! customer. Each is only a suggestion in the form, with where it came from; a field nothing
//! in the ticket fits is left empty, and nothing here is ever sent unseen.

use crate::host::api::{FieldKind, FormKind, ToolInfo};
use crate::host::gate::identifiers::Identifier;
use crate::tickets::Ticket;

/// `tools` with each empty text field the ticket can fill filled in, and each such value
/// listed in the tool's `suggested` with where in `ticket` it was found.
pub(super) fn from_ticket(ticket: &Ticket, kinds: &[Identifier], tools: &mut [ToolInfo]) {
    for tool in tools {
        let FormKind::Fields(fields) = &mut tool.form else {
            continue;
        };
        for field in fields {
            let FieldKind::Text { default, .. } = &mut field.kind else {
                continue;
            };
            if default.is_some() {
                continue;
            }
            if let Some((value, from)) = suggestion(ticket, kinds, &field.name) {
                *default = Some(value.clone());
                tool.suggested.push((field.name.clone(), value, from));
            }
        }
    }
}

/// The value the ticket suggests for an argument named `argument`, and where it was found:
/// the ticket's own id or customer by name, else the first identifier of a kind that fills it
/// in the subject or body (naming the others the customer wrote, since one of them may be
/// the right one).
pub(super) fn suggestion(
    ticket: &Ticket,
    kinds: &[Identifier],
    argument: &str,
) -> Option<(String, String)> {
    let id = &ticket.ticket_id;
    match argument {
        "ticket_id" => return Some((id.clone(), format!("{id} itself"))),
        "customer_id" => return Some((ticket.customer_id.clone(), format!("{id}'s customer"))),
        _ => {}
    }
    let kind = kinds.iter().find(|kind| kind.fills(argument))?;
    let found = kind.found_in(&format!("{}\n{}", ticket.subject, ticket.body));
    let (first, others) = found.split_first()?;
    let from = match others {
        [] => format!("{id}'s text (the {} it gives)", kind.name()),
        _ => format!(
            "{id}'s text (the first {} it gives; it also gives {})",
            kind.name(),
            others.join(", ")
        ),
    };
    Some((first.clone(), from))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::IdentifierPattern;
    use crate::host::api::Field;

    fn ticket(subject: &str, body: &str) -> Ticket {
        Ticket {
            ticket_id: "T-0042".into(),
            customer_id: "C-0156".into(),
            customer_name: None,
            received_at: "2026-06-22T09:40".into(),
            subject: subject.into(),
            body: body.into(),
            ..Default::default()
        }
    }

    fn kinds() -> Vec<Identifier> {
        Identifier::compile(&[IdentifierPattern {
            name: "order number".into(),
            pattern: r"(?i)(?:\bo-?|\border\s*)(\d{4})\b".into(),
            write: Some("O-$1".into()),
            arguments: vec!["order_id".into()],
        }])
    }

    fn tool(fields: &[&str]) -> ToolInfo {
        ToolInfo {
            name: "shop.quote_refund".into(),
            server: "shop".into(),
            title: None,
            description: String::new(),
            form: FormKind::Fields(
                fields
                    .iter()
                    .map(|name| Field {
                        name: (*name).into(),
                        title: None,
                        description: None,
                        required: true,
                        kind: FieldKind::Text {
                            min_length: None,
                            max_length: None,
                            format: None,
                            default: None,
                        },
                    })
                    .collect(),
            ),
            withheld: None,
            suggested: vec![],
        }
    }

    fn default_of(tool: &ToolInfo, name: &str) -> Option<String> {
        let FormKind::Fields(fields) = &tool.form else {
            return None;
        };
        fields
            .iter()
            .find(|f| f.name == name)
            .and_then(|f| match &f.kind {
                FieldKind::Text { default, .. } => default.clone(),
                _ => None,
            })
    }

    #[test]
    fn an_identifier_the_customer_wrote_fills_its_argument_saying_so() {
        let mut tools = vec![tool(&["order_id", "reason"])];
        from_ticket(
            &ticket("Mixer smells burnt", "My order 1587 arrived broken."),
            &kinds(),
            &mut tools,
        );
        assert_eq!(default_of(&tools[0], "order_id").as_deref(), Some("O-1587"));
        assert_eq!(
            default_of(&tools[0], "reason"),
            None,
            "nothing fits, nothing guessed"
        );
        assert_eq!(
            tools[0].suggested,
            [(
                "order_id".to_owned(),
                "O-1587".to_owned(),
                "T-0042's text (the order number it gives)".to_owned()
            )]
        );
    }

    #[test]
    fn several_identifiers_fill_the_first_and_name_the_others() {
        let mut tools = vec![tool(&["order_id"])];
        from_ticket(
            &ticket("Order O-7144", "Sorry, I meant o-1587, not O-7144."),
            &kinds(),
            &mut tools,
        );
        assert_eq!(default_of(&tools[0], "order_id").as_deref(), Some("O-7144"));
        assert_eq!(
            tools[0].suggested[0].2,
            "T-0042's text (the first order number it gives; it also gives O-1587)"
        );
    }

    #[test]
    fn the_tickets_own_id_and_customer_fill_fields_of_their_names() {
        let mut tools = vec![tool(&["customer_id", "ticket_id"])];
        from_ticket(&ticket("Hello", "Is C-0999 me?"), &kinds(), &mut tools);
        assert_eq!(
            tools[0].suggested,
            [
                (
                    "customer_id".to_owned(),
                    "C-0156".to_owned(),
                    "T-0042's customer".to_owned()
                ),
                (
                    "ticket_id".to_owned(),
                    "T-0042".to_owned(),
                    "T-0042 itself".to_owned()
                )
            ]
        );
    }

    #[test]
    fn nothing_is_suggested_when_the_ticket_holds_no_value_of_the_kind() {
        let mut tools = vec![tool(&["order_id"])];
        from_ticket(
            &ticket("Where is it", "I ordered a pan last week."),
            &kinds(),
            &mut tools,
        );
        assert!(tools[0].suggested.is_empty());
        assert_eq!(default_of(&tools[0], "order_id"), None);
    }
}
