//! The scripted person of a headless run: every consent question and every server form
//! answered the same way, and named so in the recording's manifest.

use std::collections::BTreeMap;

use tokio::sync::mpsc;

use crate::host::api::{ConsentAnswer, FieldKind, FieldValue, FormAnswer, FormKind, Question};
use crate::host::task::Answerers;

/// Who a scripted run's events are by, in the desk's record.
pub const RUN_PERSON: &str = "script";

/// How the scripted person answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Script {
    pub approve_consent: bool,
    pub accept_forms: bool,
}

impl Script {
    /// The flag that answered consent, as the record keeps it beside the person.
    pub fn consent_rule(&self) -> String {
        let answer = if self.approve_consent {
            "approve"
        } else {
            "decline"
        };
        format!("run --consent {answer}")
    }
}

/// Answers every question by the script, until the host stops asking. `person` is who the
/// run works as (the person logged in to a team's record): the script's decisions are theirs.
pub async fn answer_by_script(
    mut questions: mpsc::Receiver<Question>,
    script: Script,
    person: String,
) {
    while let Some(question) = questions.recv().await {
        match question {
            Question::Consent(pending) => {
                pending.answer(ConsentAnswer {
                    approved: script.approve_consent,
                    by: person.clone(),
                    trust: None,
                    rule: Some(script.consent_rule()),
                });
            }
            Question::Form(pending) => {
                let answer = if script.accept_forms {
                    scripted_accept(&pending.ask.kind)
                } else {
                    FormAnswer::Decline
                };
                pending.answer(answer);
            }
        }
    }
}

/// A scripted yes: every default, every yes/no as yes, the first choice where required.
fn scripted_accept(kind: &FormKind) -> FormAnswer {
    let FormKind::Fields(fields) = kind else {
        return FormAnswer::Accept(BTreeMap::new());
    };
    let mut values = crate::host::api::form_answers::defaults(fields);
    for field in fields {
        if values.contains_key(&field.name) {
            continue;
        }
        let value = match &field.kind {
            FieldKind::Boolean { .. } => Some(FieldValue::Boolean(true)),
            FieldKind::Choice { options, .. } if field.required => {
                options.first().map(|o| FieldValue::Choice(o.value.clone()))
            }
            FieldKind::Integer { minimum, .. } if field.required => {
                Some(FieldValue::Integer(minimum.unwrap_or(0)))
            }
            FieldKind::Number { minimum, .. } if field.required => {
                Some(FieldValue::Number(minimum.unwrap_or(0.0)))
            }
            FieldKind::Text { .. } if field.required => {
                Some(FieldValue::Text("answered by script".to_owned()))
            }
            _ => None,
        };
        if let Some(value) = value {
            values.insert(field.name.clone(), value);
        }
    }
    FormAnswer::Accept(values)
}

/// Who answers the host's questions under a script, as the recording's manifest names them.
pub(super) fn answerers(script: Script) -> Answerers {
    let consent = if script.approve_consent {
        "script: approve"
    } else {
        "script: decline"
    };
    let lead = if script.accept_forms {
        "script: accept"
    } else {
        "script: decline"
    };
    Answerers {
        consent: consent.to_owned(),
        lead: lead.to_owned(),
    }
}
