-- Schema 3: the record holds against its own members. Each person has their own login and
-- can reach the database without the desk (psql), so every promise the record makes (who did
-- what, once, nobody answering their own request) is kept here, whatever a client sends.

-- Who is the session's person. A member of desk_staff or desk_leads may SET ROLE to that
-- group (PostgreSQL allows it by default), and current_user would then name no person: every
-- row of the desk is read and written only as the person who logged in.
CREATE POLICY is_the_person ON desk.events AS RESTRICTIVE FOR ALL TO desk_staff
    USING (current_user = session_user) WITH CHECK (current_user = session_user);
CREATE POLICY is_the_person ON desk.tickets AS RESTRICTIVE FOR ALL TO desk_staff
    USING (current_user = session_user) WITH CHECK (current_user = session_user);
CREATE POLICY is_the_person ON desk.approvals AS RESTRICTIVE FOR ALL TO desk_staff
    USING (current_user = session_user) WITH CHECK (current_user = session_user);

-- The database derives, clients append: a ticket's state is what its events say, folded by
-- whoever reads them, never a row a desk writes (a written state could say "sent" with no
-- send behind it).
DROP TABLE desk.ticket_states;
DROP FUNCTION desk.follows_own_event(text, bigint);

-- A lead's claim runs out like anyone's: no lease longer than 30 seconds, for leads too.
DROP POLICY lease_at_most_30_s ON desk.tickets;
CREATE POLICY lease_at_most_30_s ON desk.tickets AS RESTRICTIVE FOR ALL TO desk_staff
    USING (true)
    WITH CHECK (lease_until IS NULL OR lease_until <= now() + interval '30 seconds');

-- An approval is answered on its ticket only by the lead whose desk holds it, for a request
-- someone else made, in the transaction that closes it with that answer.
CREATE POLICY answered_as_it_closes ON desk.events AS RESTRICTIVE FOR INSERT TO desk_staff
    WITH CHECK (
        kind <> 'approval_answered'
        OR EXISTS (SELECT 1 FROM desk.approvals a
                   WHERE a.id::text = events.body->>'approval' AND a.ticket = events.ticket
                     AND a.asked_by <> current_user AND a.answering_by = current_user
                     AND a.closed IN ('accepted', 'declined', 'cancelled')
                     AND a.closed_by = current_user
                     AND a.xmin = pg_current_xact_id()::xid));
-- And withdrawn only by its asker, in the transaction that closes it as withdrawn.
CREATE POLICY withdrawn_as_it_closes ON desk.events AS RESTRICTIVE FOR INSERT TO desk_staff
    WITH CHECK (
        kind <> 'approval_withdrawn'
        OR EXISTS (SELECT 1 FROM desk.approvals a
                   WHERE a.id::text = events.body->>'approval' AND a.ticket = events.ticket
                     AND a.asked_by = current_user AND a.closed = 'withdrawn'
                     AND a.closed_by = current_user
                     AND a.xmin = pg_current_xact_id()::xid));

-- A withdraw and a lead's answer never cross: while a lead's desk holds the approval (it is
-- sending the answer to the server), its asker cannot withdraw it.
DROP POLICY the_asker_withdraws ON desk.approvals;
CREATE POLICY the_asker_withdraws ON desk.approvals FOR UPDATE TO desk_staff
    USING (closed IS NULL AND asked_by = current_user
           AND (answering_by IS NULL OR answering_until IS NULL OR answering_until <= now()))
    WITH CHECK (closed = 'withdrawn' AND closed_by = current_user);
