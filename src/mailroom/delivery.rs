//! Replies out by mail: a reply's Message-ID is made and recorded (the `sent` event) before
//! the mail server is asked; each attempt's answer is a `delivery` event. A desk killed
//! between the two asks again with the same Message-ID, so the customer gets that message
//! once more at worst, never a different one, and never none.

use std::time::{Duration, SystemTime};

use crate::mail::message::Address;
use crate::mail::smtp::{Outgoing, SmtpAccount, submit};
use crate::record::Event;
use crate::tickets::Ticket;

/// Where replies go out, and who they are from.
#[derive(Debug, Clone)]
pub struct Outbound {
    pub account: SmtpAccount,
    pub from: Address,
}

/// The reply `message_id` of `ticket` as a message: to its sender, in its thread as it
/// stood when the reply was sent (answering the message it answered, referring to every
/// message before it). `None` when the ticket holds no such reply or no sender.
pub fn outgoing(from: &Address, ticket: &Ticket, message_id: &str) -> Option<Outgoing> {
    let to = ticket.from.clone()?;
    let at = ticket
        .thread
        .iter()
        .position(|entry| entry.ours && entry.message.message_id == message_id)?;
    let reply = &ticket.thread[at].message;
    Some(Outgoing {
        from: from.clone(),
        to,
        subject: ticket.subject.clone(),
        message_id: message_id.to_owned(),
        in_reply_to: reply.in_reply_to.clone(),
        references: ticket.thread[..at]
            .iter()
            .map(|entry| entry.message.message_id.clone())
            .collect(),
        text: reply.text.clone(),
        date: SystemTime::now(),
    })
}

/// One attempt (`attempt` counts from 1) to hand the reply `message_id` of `ticket` to the
/// mail server: the event that says how it went, and the message as it went (for a copy in
/// the Sent folder).
pub async fn attempt(
    outbound: &Outbound,
    ticket: &Ticket,
    message_id: &str,
    attempt: u32,
) -> (Event, Option<Outgoing>) {
    let delivery = |delivered, permanent, words: String| Event::Delivery {
        ticket: ticket.ticket_id.clone(),
        message_id: message_id.to_owned(),
        delivered,
        words,
        attempt,
        permanent,
    };
    let Some(outgoing) = outgoing(&outbound.from, ticket, message_id) else {
        return (
            delivery(
                false,
                true,
                format!(
                    "{} has no reply <{message_id}> to a sender the desk knows; answer the customer another way and solve the ticket",
                    ticket.ticket_id
                ),
            ),
            None,
        );
    };
    match submit(&outbound.account, &outgoing).await {
        Ok(words) => (delivery(true, false, words), Some(outgoing)),
        Err(error) => (
            delivery(false, !error.is_transient(), error.to_string()),
            None,
        ),
    }
}

/// How long to wait after failed attempt `attempt` before the next: 30 s, doubling, at
/// most half an hour.
pub fn backoff(attempt: u32) -> Duration {
    let secs = 30u64.saturating_mul(1u64 << attempt.saturating_sub(1).min(6));
    Duration::from_secs(secs.min(1800))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retries_wait_longer_each_time_up_to_half_an_hour() {
        let waits: Vec<u64> = (1..=9).map(|n| backoff(n).as_secs()).collect();
        assert_eq!(waits, [30, 60, 120, 240, 480, 960, 1800, 1800, 1800]);
    }
}
