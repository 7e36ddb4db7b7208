//! Asking a person before a call: the gate says whether to ask and what to point out
//! ([`crate::host::gate::consent`]); this asks through the host's questions, waits as long as
//! the person takes, and records the answer with who gave it. It never answers for anyone.

use std::sync::Arc;

use rmcp::model::Tool;

use crate::host::api::{
    ArgSource, Backing, ConsentAnswer, ConsentAsk, Pending, Provenance, Question, TrustGrant,
    TrustScope, UnseenValue,
};
use crate::host::core::Host;
use crate::host::events::HostEvent;
use crate::host::gate::consent::{Verdict, definition, definition_hash, hints};
use crate::host::gate::names::ToolName;
use crate::host::gate::tools::Held;
use crate::host::servers::connect::ServerConn;
use crate::model::chat::ToolCall;
use crate::record::Event;
use crate::record::transcript::display_arguments;

/// A call about to go to its server, as consent sees it.
pub(in crate::host) struct Consent<'a> {
    pub ticket: &'a str,
    pub turn: u32,
    pub canonical: &'a str,
    pub name: &'a ToolName,
    pub conn: &'a Arc<ServerConn>,
    pub tool: &'a Tool,
    pub call: &'a ToolCall,
    /// Where each checked argument came from, and what the results behind its handles said.
    pub provenance: Vec<Provenance>,
    pub backing: Vec<Backing>,
}

impl Host {
    /// Asks a person when the gate says so, and records the answer. `Err` is the text the
    /// model is told when the call is declined (it never ran). Approving a changed definition
    /// pins it anew.
    pub(in crate::host) async fn ask_consent(&self, asked: &Consent<'_>) -> Result<(), String> {
        let changed = self
            .pins
            .lock()
            .await
            .changed(asked.name, asked.tool, &asked.conn.origin);
        let Verdict::Ask { reason } = self.gate.check(asked.name, changed.is_some()) else {
            return Ok(());
        };
        let trustable = changed.is_none()
            && self
                .config
                .consent
                .read_only
                .contains(&asked.canonical.to_owned());
        let hash = definition_hash(asked.tool);
        let trusted = match trustable {
            true => self
                .trust
                .lock()
                .await
                .covering(asked.canonical, &hash, &asked.conn.origin)
                .cloned(),
            false => None,
        };
        if let Some(grant) = trusted {
            // Nobody is asked, but the record says who decided: the person who trusted it.
            let scope = match grant.scope {
                TrustScope::Session => "for the session",
                TrustScope::Always => "always",
            };
            self.report_in_run(Event::Consent {
                ticket: asked.ticket.to_owned(),
                turn: asked.turn,
                tool: asked.canonical.to_owned(),
                reason,
                unseen: vec![],
                approved: true,
                by: grant.by.clone(),
                shown: None,
                rule: Some(format!("{} {scope}", crate::record::event::TRUSTED)),
            })
            .await;
            return Ok(());
        }
        let ask = ConsentAsk {
            ticket: asked.ticket.to_owned(),
            server: asked.conn.prefix.clone(),
            origin: asked.conn.origin.clone(),
            tool: asked.canonical.to_owned(),
            hints: hints(asked.tool),
            arguments: display_arguments(&asked.call.arguments),
            unseen: asked
                .provenance
                .iter()
                .filter(|p| p.source == ArgSource::Nowhere)
                .map(|p| UnseenValue {
                    argument: p.argument.clone(),
                    value: p.value.clone(),
                })
                .collect(),
            provenance: asked.provenance.clone(),
            backing: asked.backing.clone(),
            changed_definition: changed.clone(),
            trustable,
            reason: reason.clone(),
        };
        let unseen: Vec<String> = ask
            .unseen
            .iter()
            .map(|u| format!("{}={}", u.argument, u.value))
            .collect();
        let answer = self.put_to_a_person(ask).await;
        self.report_in_run(Event::Consent {
            ticket: asked.ticket.to_owned(),
            turn: asked.turn,
            tool: asked.canonical.to_owned(),
            reason,
            unseen,
            approved: answer.approved,
            by: answer.by.clone(),
            shown: changed.clone(),
            rule: answer.rule.clone(),
        })
        .await;
        if !answer.approved {
            return Err(format!(
                "{} declined this call at the desk; it did not run. Tell the customer what you can without it.",
                answer.by
            ));
        }
        if let Some(scope) = answer.trust.filter(|_| trustable) {
            let grant = TrustGrant {
                tool: asked.canonical.to_owned(),
                scope,
                by: answer.by.clone(),
                at: crate::clock::unix_secs(),
                definition: hash,
                origin: asked.conn.origin.clone(),
            };
            self.trust_tool(grant).await;
        }
        if let Some(diff) = &changed {
            self.pins.lock().await.approve(
                asked.name,
                asked.tool,
                &asked.conn.origin,
                &answer.by,
                diff,
            );
        }
        Ok(())
    }

    /// Puts each tool kept from the model, and not yet put to a person in this session, to a
    /// person before `ticket`'s model call `turn` (0: before the ticket is worked): approved,
    /// it is pinned as it is now (with who approved it and what they were shown) and offered
    /// from that call on; declined, it stays out.
    pub(in crate::host) async fn review_held_tools(&self, ticket: &str, turn: u32) {
        let waiting: Vec<(ToolName, Arc<ServerConn>, Tool, Held)> = {
            let tools = self.tools.read().await;
            let mut reviewed = self.reviewed.lock().await;
            tools
                .1
                .iter()
                .filter_map(|(name, o)| Some((name, o, o.held.clone()?)))
                .filter(|(name, o, _)| reviewed.insert(format!("{name} {}", definition(&o.tool))))
                .map(|(name, o, held)| (name.clone(), Arc::clone(&o.conn), o.tool.clone(), held))
                .collect()
        };
        for (name, conn, tool, held) in waiting {
            self.put_held(ticket, turn, &name, &conn, &tool, &held)
                .await;
        }
    }

    /// Puts one held tool's definition to a person, for `ticket` at `turn`: approved, it is
    /// pinned as it is now (with who approved it and what they were shown) and offered from
    /// now on; declined, it stays out. Recorded either way; whether it was approved.
    pub(in crate::host) async fn put_held(
        &self,
        ticket: &str,
        turn: u32,
        name: &ToolName,
        conn: &ServerConn,
        tool: &Tool,
        held: &Held,
    ) -> bool {
        let (reason, shown) = (held.reason(name), held.shown());
        let ask = ConsentAsk {
            ticket: ticket.to_owned(),
            server: conn.prefix.clone(),
            origin: conn.origin.clone(),
            tool: name.to_string(),
            hints: hints(tool),
            arguments: vec![],
            unseen: vec![],
            provenance: vec![],
            backing: vec![],
            changed_definition: Some(shown.clone()),
            trustable: false,
            reason: reason.clone(),
        };
        let answer = self.put_to_a_person(ask).await;
        self.report_in_run(Event::Consent {
            ticket: ticket.to_owned(),
            turn,
            tool: name.to_string(),
            reason,
            unseen: vec![],
            approved: answer.approved,
            by: answer.by.clone(),
            shown: Some(shown.clone()),
            rule: answer.rule.clone(),
        })
        .await;
        if answer.approved {
            self.pins
                .lock()
                .await
                .approve(name, tool, &conn.origin, &answer.by, &shown);
            if let Some(offered) = self.tools.write().await.1.get_mut(name) {
                offered.held = None;
            }
        }
        answer.approved
    }

    /// A person trusts a tool as it is defined now, where its server runs now: it runs unasked
    /// while that lasts.
    async fn trust_tool(&self, grant: TrustGrant) {
        let mut trust = self.trust.lock().await;
        trust.grant(grant);
        let _ = self.events.send(HostEvent::Trust(trust.list()));
    }

    /// The tools people trust right now.
    pub async fn trusted(&self) -> Vec<TrustGrant> {
        self.trust.lock().await.list()
    }

    /// Takes back the trust in `tool`; it is asked about again from its next call.
    pub async fn revoke_trust(&self, tool: &str) -> Result<(), String> {
        let mut trust = self.trust.lock().await;
        if !trust.revoke(tool) {
            return Err(format!(
                "{tool} is not trusted, so there is nothing to revoke"
            ));
        }
        let _ = self.events.send(HostEvent::Trust(trust.list()));
        Ok(())
    }

    /// The question, to whoever answers them (the desk, or a script); unanswered is no.
    async fn put_to_a_person(&self, ask: ConsentAsk) -> ConsentAnswer {
        let (pending, answer) = Pending::new(ask);
        if self
            .questions
            .send(Question::Consent(pending))
            .await
            .is_err()
        {
            return ConsentAnswer {
                approved: false,
                by: "nobody (no one is answering)".into(),
                trust: None,
                rule: None,
            };
        }
        answer.await.unwrap_or(ConsentAnswer {
            approved: false,
            by: "nobody (the question was dropped)".into(),
            trust: None,
            rule: None,
        })
    }
}
