//! A lead's yes-or-no form with an optional note, as the shop asks it (a held refund's
//! release, a large damage claim's go-ahead), and how its answer reads: a malformed answer is
//! a protocol error, and a dismissed form is never a yes.

use rmcp::ErrorData;
use rmcp::model::{
    BooleanSchema, ElicitResult, ElicitationAction, ElicitationSchema, PrimitiveSchemaDefinition,
    StringSchema,
};

/// Longest note a lead may leave.
const NOTE_MAX_CHARS: u32 = 500;

/// How the lead answered, read before anything is believed.
pub(super) enum Answered {
    Yes(Option<String>),
    No,
    Declined,
    Dismissed,
}

/// A form's one yes-or-no question.
pub(super) struct YesNo {
    /// The field's name (`release`, `approve`).
    pub field: &'static str,
    pub title: &'static str,
    /// What yes and no do, for the lead.
    pub description: &'static str,
    /// Why the lead is asked at all.
    pub why: &'static str,
    /// The note's description: why the lead answered as they did.
    pub note: &'static str,
    /// The form's name in errors ("the release form").
    pub form: &'static str,
}

impl YesNo {
    pub(super) fn schema(&self) -> Result<ElicitationSchema, ErrorData> {
        let note = StringSchema::new()
            .title("Note for the record")
            .description(self.note)
            .with_length(0, NOTE_MAX_CHARS)
            .map_err(|e| ErrorData::internal_error(e, None))?;
        let yes = BooleanSchema::new()
            .title(self.title)
            .description(self.description);
        let mut schema = ElicitationSchema::new(
            [
                (
                    self.field.to_owned(),
                    PrimitiveSchemaDefinition::Boolean(yes),
                ),
                ("note".to_owned(), PrimitiveSchemaDefinition::String(note)),
            ]
            .into(),
        )
        .with_required(vec![self.field.to_owned()])
        .with_description(self.why);
        schema.property_order = Some(vec![self.field.to_owned(), "note".to_owned()]);
        Ok(schema)
    }

    /// The lead's answer to this form.
    pub(super) fn read(&self, answer: ElicitResult) -> Result<Answered, ErrorData> {
        match answer.action {
            ElicitationAction::Accept => {
                let content = answer.content.unwrap_or_default();
                let note = content
                    .get("note")
                    .and_then(|v| v.as_str())
                    .map(str::trim)
                    .filter(|n| !n.is_empty());
                match (content.get(self.field).and_then(|v| v.as_bool()), note) {
                    (None, _) => Err(ErrorData::invalid_params(
                        format!("{} needs a yes or no in '{}'", self.form, self.field),
                        None,
                    )),
                    (Some(_), Some(note)) if note.chars().count() > NOTE_MAX_CHARS as usize => {
                        Err(ErrorData::invalid_params(
                            format!("the note is longer than {NOTE_MAX_CHARS} characters"),
                            None,
                        ))
                    }
                    (Some(true), note) => Ok(Answered::Yes(note.map(str::to_owned))),
                    (Some(false), _) => Ok(Answered::No),
                }
            }
            ElicitationAction::Decline => Ok(Answered::Declined),
            // Cancel, and anything a later revision adds: a dismissed form is never a yes.
            _ => Ok(Answered::Dismissed),
        }
    }
}
