//! The shop's world as it is written in `assets/shop/`: products, customers, orders, tickets
//! and policies. The files are embedded in the binary, so the desk runs from any directory;
//! [`ShopWorld::from_dir`] reads another world with the same layout.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::money::Cents;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Product {
    pub sku: String,
    pub name: String,
    pub category: Category,
    pub description: String,
    pub price: Cents,
    /// Units on hand; with sizes, the sum of the sizes' stock.
    pub stock: u32,
    /// Empty when the product comes in one size only.
    pub sizes: Vec<SizeStock>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restock_on: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Category {
    Kitchen,
    Garden,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SizeStock {
    pub label: String,
    pub stock: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Customer {
    pub customer_id: String,
    pub name: String,
    pub email: String,
    pub country: String,
    pub since: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OrderStatus {
    Placed,
    Shipped,
    Delivered,
    Returned,
    Cancelled,
}

impl OrderStatus {
    pub const ALL: [OrderStatus; 5] = [
        OrderStatus::Placed,
        OrderStatus::Shipped,
        OrderStatus::Delivered,
        OrderStatus::Returned,
        OrderStatus::Cancelled,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            OrderStatus::Placed => "placed",
            OrderStatus::Shipped => "shipped",
            OrderStatus::Delivered => "delivered",
            OrderStatus::Returned => "returned",
            OrderStatus::Cancelled => "cancelled",
        }
    }

    /// The refund policy: money goes back only for goods the customer received.
    pub fn refundable(self) -> bool {
        matches!(self, OrderStatus::Delivered | OrderStatus::Returned)
    }

    /// Orders that left the warehouse carry a tracking number.
    pub fn dispatched(self) -> bool {
        matches!(
            self,
            OrderStatus::Shipped | OrderStatus::Delivered | OrderStatus::Returned
        )
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OrderLine {
    pub sku: String,
    pub quantity: u32,
    pub unit_price: Cents,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<String>,
}

impl OrderLine {
    pub fn amount(&self) -> Cents {
        self.unit_price.times(self.quantity)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Order {
    pub order_id: String,
    pub customer_id: String,
    pub placed_on: String,
    pub status: OrderStatus,
    pub lines: Vec<OrderLine>,
    pub shipping: Cents,
    pub total: Cents,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shipped_on: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delivered_on: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub returned_on: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cancelled_on: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tracking_number: Option<String>,
}

impl Order {
    pub fn line(&self, sku: &str) -> Option<&OrderLine> {
        self.lines.iter().find(|line| line.sku == sku)
    }
}

/// One of the shop's policies, served as a resource.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Policy {
    /// `refund`, `returns`, …: the last segment of `shop://policies/{name}`.
    pub name: &'static str,
    pub title: String,
    pub text: String,
}

impl Policy {
    pub fn uri(&self) -> String {
        format!("shop://policies/{}", self.name)
    }
}

/// The names of the six policies, in the order they are listed.
pub const POLICY_NAMES: [&str; 6] = [
    "refund",
    "returns",
    "shipping",
    "stock",
    "escalation",
    "data-handling",
];

#[derive(Debug, thiserror::Error)]
pub enum WorldError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("{file} does not match the shop's data format: {source}")]
    Parse {
        file: String,
        source: serde_json::Error,
    },
}

/// Everything in `assets/shop/`, indexed.
#[derive(Debug, Clone)]
pub struct ShopWorld {
    pub products: Vec<Product>,
    pub customers: Vec<Customer>,
    pub orders: Vec<Order>,
    pub policies: Vec<Policy>,
    products_by_sku: BTreeMap<String, usize>,
}

macro_rules! bundled_file {
    ($name:literal) => {
        include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/shop/", $name))
    };
}

const BUNDLED_POLICIES: [&str; 6] = [
    bundled_file!("policies/refund.md"),
    bundled_file!("policies/returns.md"),
    bundled_file!("policies/shipping.md"),
    bundled_file!("policies/stock.md"),
    bundled_file!("policies/escalation.md"),
    bundled_file!("policies/data-handling.md"),
];

impl ShopWorld {
    /// The world compiled into the binary from `assets/shop/`.
    pub fn bundled() -> Self {
        Self::parse(
            bundled_file!("products.json"),
            bundled_file!("customers.json"),
            bundled_file!("orders.json"),
            BUNDLED_POLICIES.map(str::to_owned),
        )
        .expect("the bundled shop data parses: tests/it/shop_data.rs checks it")
    }

    /// A world in a directory laid out like `assets/shop/`.
    pub fn from_dir(dir: &Path) -> Result<Self, WorldError> {
        let read = |name: &str| {
            let path = dir.join(name);
            std::fs::read_to_string(&path).map_err(|source| WorldError::Read {
                path: path.display().to_string(),
                source,
            })
        };
        let policies = POLICY_NAMES.map(|name| read(&format!("policies/{name}.md")));
        let policies = {
            let mut texts = Vec::with_capacity(policies.len());
            for text in policies {
                texts.push(text?);
            }
            <[String; 6]>::try_from(texts).expect("six policy names give six texts")
        };
        Self::parse(
            &read("products.json")?,
            &read("customers.json")?,
            &read("orders.json")?,
            policies,
        )
    }

    fn parse(
        products: &str,
        customers: &str,
        orders: &str,
        policies: [String; 6],
    ) -> Result<Self, WorldError> {
        fn json<T: serde::de::DeserializeOwned>(file: &str, text: &str) -> Result<T, WorldError> {
            serde_json::from_str(text).map_err(|source| WorldError::Parse {
                file: file.to_owned(),
                source,
            })
        }
        let products: Vec<Product> = json("products.json", products)?;
        let products_by_sku = products
            .iter()
            .enumerate()
            .map(|(index, product)| (product.sku.clone(), index))
            .collect();
        let policies = POLICY_NAMES
            .into_iter()
            .zip(policies)
            .map(|(name, text)| Policy {
                name,
                title: policy_title(&text, name),
                text,
            })
            .collect();
        Ok(Self {
            products,
            customers: json("customers.json", customers)?,
            orders: json("orders.json", orders)?,
            policies,
            products_by_sku,
        })
    }

    pub fn product(&self, sku: &str) -> Option<&Product> {
        self.products_by_sku
            .get(sku)
            .map(|&index| &self.products[index])
    }

    pub fn customer(&self, customer_id: &str) -> Option<&Customer> {
        self.customers.iter().find(|c| c.customer_id == customer_id)
    }

    pub fn policy(&self, name: &str) -> Option<&Policy> {
        self.policies.iter().find(|p| p.name == name)
    }
}

/// The policy's first markdown heading, or its name when it has none.
fn policy_title(text: &str, name: &str) -> String {
    text.lines()
        .find_map(|line| line.strip_prefix("# "))
        .map(|title| title.trim().to_owned())
        .unwrap_or_else(|| name.to_owned())
}
