//! The partner's parcels, as written in `assets/shop/parcels.json`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Parcel {
    pub tracking_number: String,
    pub order_id: String,
    pub status: ParcelStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub estimated_delivery: Option<String>,
    pub events: Vec<ParcelEvent>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ParcelStatus {
    LabelCreated,
    InTransit,
    OutForDelivery,
    HeldAtDepot,
    DeliveryFailed,
    Delivered,
    ReturnedToSender,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ParcelEvent {
    pub at: String,
    pub place: String,
    pub what: String,
}

/// Every parcel the partner knows, by tracking number.
#[derive(Debug, Clone, Default)]
pub struct Parcels {
    by_number: BTreeMap<String, Parcel>,
}

const BUNDLED: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/assets/shop/parcels.json"
));

impl Parcels {
    pub fn bundled() -> Self {
        Self::parse(BUNDLED).expect("the bundled parcels parse: tests/it/shop_data.rs checks it")
    }

    pub fn parse(json: &str) -> Result<Self, serde_json::Error> {
        let parcels: Vec<Parcel> = serde_json::from_str(json)?;
        Ok(Self {
            by_number: parcels
                .into_iter()
                .map(|p| (p.tracking_number.clone(), p))
                .collect(),
        })
    }

    pub fn get(&self, tracking_number: &str) -> Option<&Parcel> {
        self.by_number.get(tracking_number)
    }

    pub fn iter(&self) -> impl Iterator<Item = &Parcel> {
        self.by_number.values()
    }

    pub fn len(&self) -> usize {
        self.by_number.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_number.is_empty()
    }
}

/// `KP` and nine digits, tolerating case and spaces; `None` for any other shape.
pub fn tracking_number(text: &str) -> Option<String> {
    let compact: String = text
        .chars()
        .filter(|c| !c.is_whitespace() && *c != '-')
        .collect::<String>()
        .to_ascii_uppercase();
    let digits = compact.strip_prefix("KP")?;
    (digits.len() == 9 && digits.bytes().all(|b| b.is_ascii_digit())).then_some(compact)
}

#[cfg(test)]
mod tests {
    use super::tracking_number;

    #[test]
    fn tracking_numbers_are_read_in_the_forms_people_write_them() {
        for written in [
            "KP123456789",
            "kp123456789",
            "KP 123 456 789",
            "KP-123456789",
        ] {
            assert_eq!(
                tracking_number(written),
                Some("KP123456789".to_owned()),
                "{written}"
            );
        }
        for written in ["KP12345678", "FX123456789", "123456789", ""] {
            assert_eq!(tracking_number(written), None, "{written}");
        }
    }
}
