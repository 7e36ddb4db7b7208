-- Schema 4: the team's support mailbox. One desk (or `support-desk mail serve`) reads it at a
-- time, under a lease that runs out unless renewed; mail enters the record only through the
-- holder; one Message-ID is one ticket message; a reply answers one of its ticket's messages.

CREATE TABLE desk.mail_lease (
    mailbox     text PRIMARY KEY,
    holder      text NOT NULL,
    lease_until timestamptz NOT NULL
);
GRANT SELECT, INSERT (mailbox, holder, lease_until), UPDATE (holder, lease_until)
    ON desk.mail_lease TO desk_staff;
ALTER TABLE desk.mail_lease ENABLE ROW LEVEL SECURITY;
ALTER TABLE desk.mail_lease FORCE ROW LEVEL SECURITY;
CREATE POLICY read_all ON desk.mail_lease FOR SELECT TO desk_staff USING (true);
CREATE POLICY take_as_self ON desk.mail_lease FOR INSERT TO desk_staff
    WITH CHECK (holder = current_user);
-- Renewed by its holder, or taken once it ran out; never for more than 30 seconds at a time.
CREATE POLICY renew_own_or_take_lapsed ON desk.mail_lease FOR UPDATE TO desk_staff
    USING (holder = current_user OR lease_until <= now())
    WITH CHECK (holder = current_user);
CREATE POLICY lease_at_most_30_s ON desk.mail_lease AS RESTRICTIVE FOR ALL TO desk_staff
    USING (true) WITH CHECK (lease_until <= now() + interval '30 seconds');
CREATE POLICY is_the_person ON desk.mail_lease AS RESTRICTIVE FOR ALL TO desk_staff
    USING (current_user = session_user) WITH CHECK (current_user = session_user);

-- Mail enters the record only from the desk that holds its mailbox's lease.
CREATE POLICY mail_under_the_lease ON desk.events AS RESTRICTIVE FOR INSERT TO desk_staff
    WITH CHECK (
        kind NOT IN ('message_received', 'mailbox_read')
        OR EXISTS (SELECT 1 FROM desk.mail_lease m
                   WHERE m.mailbox = events.body->>'mailbox' AND m.holder = current_user
                     AND m.lease_until > now()));
CREATE UNIQUE INDEX one_message_per_message_id ON desk.events ((body->'message'->>'message_id'))
    WHERE kind = 'message_received';

-- One reply per ticket, as before, for a ticket that did not come by mail; one reply per
-- customer's message for one that did, and that message is the latest a person sent on it.
DROP INDEX desk.one_reply_per_ticket;
CREATE UNIQUE INDEX one_reply_per_message ON desk.events (ticket, (coalesce(body->>'answers', '')))
    WHERE kind = 'sent';
CREATE POLICY a_reply_answers_the_latest_message ON desk.events AS RESTRICTIVE FOR INSERT
    TO desk_staff
    WITH CHECK (
        kind <> 'sent'
        OR body->>'answers' IS NOT DISTINCT FROM (
            SELECT r.body->'message'->>'message_id' FROM desk.events r
            WHERE r.kind = 'message_received' AND r.ticket = events.ticket
              AND r.body->'message'->'automatic' IS NULL
            ORDER BY r.seq DESC LIMIT 1));
