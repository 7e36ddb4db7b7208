-- Schema 5: owners and tags. A ticket's assignee is whoever its latest `assigned` event names
-- (nobody before the first). Who may give a ticket to whom is decided here: a lead gives any
-- ticket to anyone on the team; staff take a ticket that is nobody's, or give away one that
-- is theirs, but never move a ticket that is someone else's.

CREATE FUNCTION desk.assignee(of_ticket text) RETURNS text
    LANGUAGE sql STABLE AS $$
        SELECT e.body->>'to' FROM desk.events e
        WHERE e.ticket = of_ticket AND e.kind = 'assigned'
        ORDER BY e.seq DESC LIMIT 1
    $$;

CREATE INDEX events_assigned ON desk.events (ticket, seq) WHERE kind = 'assigned';

CREATE POLICY who_assigns_whom ON desk.events AS RESTRICTIVE FOR INSERT TO desk_staff
    WITH CHECK (
        kind <> 'assigned'
        OR pg_has_role(current_user, 'desk_leads', 'member')
        OR coalesce(desk.assignee(ticket), current_user) = current_user);

-- Only to a person of the team (or to nobody).
CREATE POLICY assigned_to_the_team ON desk.events AS RESTRICTIVE FOR INSERT TO desk_staff
    WITH CHECK (
        kind <> 'assigned'
        OR body->>'to' IS NULL
        OR EXISTS (SELECT 1 FROM pg_roles r
                   WHERE r.rolname = body->>'to' AND r.rolcanlogin
                     AND pg_has_role(r.oid, 'desk_staff', 'member')));
