-- Schema 2: approvals. A server's form that a lead must answer (the config's `lead_forms`)
-- does not go to the person whose run asked: it waits here for a lead, with everything the
-- lead's desk needs to send the call's next round itself, as the lead.

CREATE TABLE desk.approvals (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    ticket        text NOT NULL,
    turn          integer NOT NULL,
    server        text NOT NULL,   -- the config's prefix for the server that asked
    origin        text NOT NULL,   -- where that server is reached, as the asking desk saw it
    tool          text NOT NULL,   -- the server's own name for the tool
    -- json, not jsonb: kept as written, so the form's fields keep the server's order.
    arguments     json NOT NULL,
    request_key   text NOT NULL,   -- the key of the form among the round's input requests
    form          json NOT NULL,   -- the server's form (message and schema), as it sent it
    request_state text,            -- the server's state for the next round, opaque to the desk
    asked_by      text NOT NULL DEFAULT current_user,
    asked_at      timestamptz NOT NULL DEFAULT clock_timestamp(),
    -- A lead's desk answering it holds it for a short while, so two leads never send the
    -- next round at once; a desk that dies lets go when this runs out.
    answering_by    text,
    answering_until timestamptz,
    closed        text CHECK (closed IN ('accepted', 'declined', 'cancelled', 'withdrawn')),
    closed_by     text,
    closed_at     timestamptz,
    CONSTRAINT closed_is_whole CHECK ((closed IS NULL) = (closed_by IS NULL)
                                      AND (closed IS NULL) = (closed_at IS NULL))
);
-- One open approval per ticket.
CREATE UNIQUE INDEX one_open_approval_per_ticket ON desk.approvals (ticket) WHERE closed IS NULL;

GRANT SELECT, INSERT (ticket, turn, server, origin, tool, arguments, request_key, form,
                      request_state)
    ON desk.approvals TO desk_staff;
GRANT UPDATE (answering_by, answering_until, closed, closed_by, closed_at)
    ON desk.approvals TO desk_staff;

ALTER TABLE desk.approvals ENABLE ROW LEVEL SECURITY;
ALTER TABLE desk.approvals FORCE ROW LEVEL SECURITY;

CREATE POLICY read_all ON desk.approvals FOR SELECT TO desk_staff USING (true);
-- Asked by the person whose run it is, while they hold the ticket.
CREATE POLICY asked_by_the_holder ON desk.approvals FOR INSERT TO desk_staff
    WITH CHECK (
        asked_by = current_user AND closed IS NULL AND answering_by IS NULL
        AND EXISTS (SELECT 1 FROM desk.tickets t
                    WHERE t.id = approvals.ticket AND t.owner = current_user
                      AND t.lease_until > now()));
-- Answered only by a lead who did not ask, one lead at a time, for at most two minutes.
CREATE POLICY a_lead_answers_another ON desk.approvals FOR UPDATE TO desk_leads
    USING (closed IS NULL AND asked_by <> current_user
           AND (answering_by IS NULL OR answering_by = current_user
                OR answering_until IS NULL OR answering_until <= now()))
    WITH CHECK (asked_by <> current_user AND answering_by = current_user
                AND answering_until <= now() + interval '2 minutes'
                AND (closed IS NULL OR (closed IN ('accepted', 'declined', 'cancelled')
                                        AND closed_by = current_user)));
-- The asker may withdraw it while it is open, and only withdraw it.
CREATE POLICY the_asker_withdraws ON desk.approvals FOR UPDATE TO desk_staff
    USING (closed IS NULL AND asked_by = current_user)
    WITH CHECK (closed = 'withdrawn' AND closed_by = current_user);

-- The record of an approval on its ticket: asked and continued within the asker's run (so
-- under the lease, like every run's event), answered by a lead only.
DROP POLICY needs_the_lease ON desk.events;
CREATE POLICY needs_the_lease ON desk.events AS RESTRICTIVE FOR INSERT TO desk_staff
    WITH CHECK (
        kind NOT IN ('ticket_started', 'model_call', 'tool_call', 'consent', 'input_request',
                     'outcome', 'draft', 'ticket_done', 'draft_edited', 'sent', 'handed_over',
                     'approval_asked', 'run_continued')
        OR EXISTS (SELECT 1 FROM desk.tickets t
                   WHERE t.id = events.ticket AND t.owner = current_user AND t.lease_until > now()));
CREATE POLICY leads_answer ON desk.events AS RESTRICTIVE FOR INSERT TO desk_staff
    WITH CHECK (kind <> 'approval_answered' OR pg_has_role(current_user, 'desk_leads', 'member'));
