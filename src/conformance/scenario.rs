//! What to do for each scenario of the suite. The scenario's name picks a plan; every plan
//! starts by connecting the way the desk connects, so the suite always sees the desk's own
//! handshake.

/// One scenario's plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scenario {
    /// Connect and list the tools, as the desk does at start.
    Connect,
    /// Connect, then make the calls the suite's context names, or else call every listed
    /// tool once with arguments made from its schema.
    CallTools,
    /// [`CallTools`](Self::CallTools), then read every resource and get every prompt: all
    /// the requests the desk ever sends.
    Everything,
    /// Call `echo` with `focal`'s input schema as the desk stored it, so the suite can see
    /// which keywords survived.
    EchoSchema {
        focal: &'static str,
        echo: &'static str,
    },
    /// Connect and call tools, signing in whenever the server asks: as a person through
    /// the authorization code grant, or with `as_client` as the desk itself (client
    /// credentials).
    SignIn { as_client: bool },
    /// A flow the desk does not offer on purpose. Connect as the desk would, then stop and
    /// say why; the scenario's checks fail and the baseline says so.
    Unsupported { why: &'static str },
}

const ENTERPRISE: &str = "enterprise-managed authorization (SEP-990: an identity provider's \
    ID token exchanged for an ID-JAG, then the JWT-bearer grant) is not offered";
const DPOP: &str = "DPoP (RFC 9449) is not offered: the desk's tokens are bearer tokens";
const WORKLOAD: &str = "the workload-identity JWT-bearer grant (SEP-1933) is not offered";
const SKILLS: &str = "the skills extension (SEP-2640) is not offered: the desk reads no skills";

impl Scenario {
    /// The plan for a scenario name. A name this binary does not know gets
    /// [`Everything`](Self::Everything): the most the desk can show of itself.
    pub fn named(name: &str) -> Self {
        match name {
            "initialize" | "json-schema-ref-no-deref" => Scenario::Connect,
            "tools_call"
            | "elicitation-sep1034-client-defaults"
            | "sse-retry"
            | "request-metadata"
            | "sep-2322-client-request-state"
            | "http-custom-headers"
            | "http-invalid-tool-headers" => Scenario::CallTools,
            "http-standard-headers" => Scenario::Everything,
            "json-schema-2020-12-preservation" => Scenario::EchoSchema {
                focal: "json_schema_2020_12_tool",
                echo: "json_schema_echo",
            },
            "auth/enterprise-managed-authorization" => Scenario::Unsupported { why: ENTERPRISE },
            "auth/dpop" | "auth/dpop-nonce" => Scenario::Unsupported { why: DPOP },
            "auth/wif-jwt-bearer" => Scenario::Unsupported { why: WORKLOAD },
            name if name.starts_with("auth/client-credentials-") => {
                Scenario::SignIn { as_client: true }
            }
            name if name.starts_with("auth/") => Scenario::SignIn { as_client: false },
            name if name.starts_with("sep-2640-") => Scenario::Unsupported { why: SKILLS },
            _ => Scenario::Everything,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_of_scenario_gets_its_plan() {
        assert_eq!(Scenario::named("initialize"), Scenario::Connect);
        assert_eq!(Scenario::named("tools_call"), Scenario::CallTools);
        assert_eq!(
            Scenario::named("http-standard-headers"),
            Scenario::Everything
        );
        assert_eq!(
            Scenario::named("auth/metadata-default"),
            Scenario::SignIn { as_client: false }
        );
        assert_eq!(
            Scenario::named("auth/client-credentials-jwt"),
            Scenario::SignIn { as_client: true }
        );
        assert_eq!(
            Scenario::named("auth/dpop-nonce"),
            Scenario::Unsupported { why: DPOP }
        );
        assert_eq!(
            Scenario::named("sep-2640-client-no-prefetch"),
            Scenario::Unsupported { why: SKILLS }
        );
        assert_eq!(Scenario::named("a-future-scenario"), Scenario::Everything);
    }
}
