//! Values for a person's call that the ticket itself holds: an identifier in what the customer
//! wrote, or the ticket's own customer, of the shape a field's description names (`"O-"
//! followed by four digits`). Each is only a suggestion in the form, with where it came from;
//! a field no ticket value fits is left empty, and nothing here is ever sent unseen.

use std::sync::LazyLock;

use regex::Regex;

use crate::host::api::{Field, FieldKind, FormKind, ToolInfo};
use crate::tickets::Ticket;

/// A shape as a description writes it: a quoted prefix followed by a count of digits.
static SHAPE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r#"(?i)["“']([A-Z]{1,4}-?)["”'] followed by (one|two|three|four|five|six|seven|eight|nine|ten|twelve|\d{1,2}) digits"#,
    )
    .expect("the shape pattern")
});

/// `tools` with each empty text field the ticket can fill filled in, and each such value
/// listed in the tool's `suggested` with where in `ticket` it was found.
pub(super) fn from_ticket(ticket: &Ticket, tools: &mut [ToolInfo]) {
    for tool in tools {
        let FormKind::Fields(fields) = &mut tool.form else {
            continue;
        };
        for field in fields {
            if let Some((value, from)) = suggestion(ticket, field)
                && let FieldKind::Text { default, .. } = &mut field.kind
            {
                *default = Some(value.clone());
                tool.suggested.push((field.name.clone(), value, from));
            }
        }
    }
}

/// The value the ticket suggests for an empty text field, and where it was found: the ticket's
/// customer when it has the field's shape, else the first identifier of that shape in the
/// subject or body (naming the others the customer wrote, since one of them may be the right
/// one).
fn suggestion(ticket: &Ticket, field: &Field) -> Option<(String, String)> {
    let FieldKind::Text { default: None, .. } = &field.kind else {
        return None;
    };
    let shape = shape(field.description.as_deref()?)?;
    if shape.is_match(&ticket.customer_id) {
        return Some((
            ticket.customer_id.clone(),
            format!("{}'s customer", ticket.ticket_id),
        ));
    }
    let text = format!("{}\n{}", ticket.subject, ticket.body);
    let mut found: Vec<String> = Vec::new();
    for hit in shape.find_iter(&text) {
        let id = hit.as_str().to_ascii_uppercase();
        if !found.contains(&id) {
            found.push(id);
        }
    }
    let (first, others) = found.split_first()?;
    let from = match others {
        [] => format!("{}'s text", ticket.ticket_id),
        _ => format!(
            "{}'s text, which also names {}",
            ticket.ticket_id,
            others.join(", ")
        ),
    };
    Some((first.clone(), from))
}

/// The identifiers a description's shape allows, as a pattern over whole words.
fn shape(description: &str) -> Option<Regex> {
    let caps = SHAPE.captures(description)?;
    let prefix = caps[1].to_ascii_uppercase();
    let digits = match caps[2].to_ascii_lowercase().as_str() {
        "one" => 1,
        "two" => 2,
        "three" => 3,
        "four" => 4,
        "five" => 5,
        "six" => 6,
        "seven" => 7,
        "eight" => 8,
        "nine" => 9,
        "ten" => 10,
        "twelve" => 12,
        n => n.parse().ok()?,
    };
    Regex::new(&format!(
        r"(?i)\b{}\d{{{digits}}}\b",
        regex::escape(&prefix)
    ))
    .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ticket(subject: &str, body: &str) -> Ticket {
        Ticket {
            ticket_id: "T-0042".into(),
            customer_id: "C-0156".into(),
            customer_name: None,
            order_id: None,
            received_at: "2026-06-22T09:40".into(),
            subject: subject.into(),
            body: body.into(),
            expected_tool: String::new(),
            injected: false,
            wrong_ids: vec![],
        }
    }

    fn tool(fields: &[(&str, &str)]) -> ToolInfo {
        ToolInfo {
            name: "shop.quote_refund".into(),
            server: "shop".into(),
            title: None,
            description: String::new(),
            form: FormKind::Fields(
                fields
                    .iter()
                    .map(|(name, description)| Field {
                        name: (*name).into(),
                        title: None,
                        description: Some((*description).into()),
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
    fn an_identifier_of_the_fields_shape_is_suggested_with_where_it_was_found() {
        let mut tools = vec![tool(&[
            ("order_id", "The order: \"O-\" followed by four digits."),
            ("reason", "Why, in a few words."),
        ])];
        from_ticket(
            &ticket("Mixer smells burnt", "My order o-1587 arrived broken."),
            &mut tools,
        );
        assert_eq!(default_of(&tools[0], "order_id").as_deref(), Some("O-1587"));
        assert_eq!(default_of(&tools[0], "reason"), None, "no shape, no guess");
        assert_eq!(
            tools[0].suggested,
            [(
                "order_id".to_owned(),
                "O-1587".to_owned(),
                "T-0042's text".to_owned()
            )]
        );
    }

    #[test]
    fn several_identifiers_fill_the_first_and_name_the_others() {
        let mut tools = vec![tool(&[("order_id", "\"O-\" followed by 4 digits")])];
        from_ticket(
            &ticket(
                "Order O-7144",
                "Sorry, I meant O-1587, not O-7144. Not O-12345.",
            ),
            &mut tools,
        );
        assert_eq!(default_of(&tools[0], "order_id").as_deref(), Some("O-7144"));
        assert_eq!(
            tools[0].suggested[0].2,
            "T-0042's text, which also names O-1587"
        );
    }

    #[test]
    fn the_tickets_customer_fills_a_field_of_its_shape() {
        let mut tools = vec![tool(&[(
            "customer_id",
            "The customer ID from the ticket: \"C-\" followed by four digits.",
        )])];
        from_ticket(&ticket("Hello", "Where is C-0999's parcel?"), &mut tools);
        assert_eq!(
            tools[0].suggested,
            [(
                "customer_id".to_owned(),
                "C-0156".to_owned(),
                "T-0042's customer".to_owned()
            )]
        );
    }

    #[test]
    fn nothing_is_suggested_when_the_ticket_holds_no_value_of_the_shape() {
        let mut tools = vec![tool(&[("order_id", "\"O-\" followed by four digits")])];
        from_ticket(
            &ticket("Where is it", "I ordered a pan last week."),
            &mut tools,
        );
        assert!(tools[0].suggested.is_empty());
        assert_eq!(default_of(&tools[0], "order_id"), None);
    }
}
