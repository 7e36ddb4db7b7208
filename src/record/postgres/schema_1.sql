-- Schema 1 of the team's desk record, run by team_init as desk_owner (who then owns every
-- object here) inside the schema `desk`. Who may do what is decided here, by the database:
-- the desk's own checks are for friendlier errors, never for safety.

-- Unix milliseconds, as the desk's events carry their times.
CREATE FUNCTION desk.unix_ms(t timestamptz) RETURNS bigint
    LANGUAGE sql STABLE AS $$ SELECT (extract(epoch FROM t) * 1000)::bigint $$;

-- Claims: one owner per ticket, as a lease that runs out unless renewed.
CREATE TABLE desk.tickets (
    id          text PRIMARY KEY,
    owner       text,          -- the role holding (or last holding) the claim
    lease_until timestamptz    -- the claim is held while this is in the future
);

-- The event log: append-only, by the role that is logged in, at the database's time.
CREATE TABLE desk.events (
    seq    bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    ticket text,
    actor  text NOT NULL DEFAULT current_user,
    kind   text NOT NULL,
    body   jsonb NOT NULL,
    at     timestamptz NOT NULL DEFAULT clock_timestamp(),
    CONSTRAINT kind_is_the_events_tag CHECK (body->>'event' = kind),
    CONSTRAINT ticket_is_the_events_ticket CHECK (body->>'ticket' IS NOT DISTINCT FROM ticket)
);
CREATE INDEX events_by_ticket ON desk.events (ticket, seq);
CREATE UNIQUE INDEX one_reply_per_ticket ON desk.events (ticket) WHERE kind = 'sent';

-- Each ticket's state as its events left it (derived: replaying the events gives it again).
CREATE TABLE desk.ticket_states (
    ticket text PRIMARY KEY,
    seq    bigint NOT NULL REFERENCES desk.events (seq),
    state  jsonb NOT NULL
);

GRANT USAGE ON SCHEMA desk TO desk_staff;
GRANT SELECT ON desk.schema_version TO desk_staff;
-- Staff name only these columns: who and when are the database's to fill in.
GRANT SELECT, INSERT (ticket, kind, body) ON desk.events TO desk_staff;
GRANT SELECT, INSERT (id), UPDATE (owner, lease_until) ON desk.tickets TO desk_staff;
GRANT SELECT, INSERT (ticket, seq, state), UPDATE (seq, state) ON desk.ticket_states TO desk_staff;

-- FORCE: the owner is held to the policies too (nobody logs in as it).
ALTER TABLE desk.events ENABLE ROW LEVEL SECURITY;
ALTER TABLE desk.events FORCE ROW LEVEL SECURITY;
ALTER TABLE desk.tickets ENABLE ROW LEVEL SECURITY;
ALTER TABLE desk.tickets FORCE ROW LEVEL SECURITY;
ALTER TABLE desk.ticket_states ENABLE ROW LEVEL SECURITY;
ALTER TABLE desk.ticket_states FORCE ROW LEVEL SECURITY;

CREATE POLICY read_all ON desk.events FOR SELECT TO desk_staff USING (true);
CREATE POLICY append_as_self ON desk.events FOR INSERT TO desk_staff
    WITH CHECK (actor = current_user);
-- An event that names a person (a send, an edit, a note, a consent) names the one logged in.
CREATE POLICY by_is_the_actor ON desk.events AS RESTRICTIVE FOR INSERT TO desk_staff
    WITH CHECK (body->>'by' IS NULL OR body->>'by' = actor);
-- A run's events, edits of the reply, sends and hand-overs need the ticket's live lease.
CREATE POLICY needs_the_lease ON desk.events AS RESTRICTIVE FOR INSERT TO desk_staff
    WITH CHECK (
        kind NOT IN ('ticket_started', 'model_call', 'tool_call', 'consent', 'input_request',
                     'outcome', 'draft', 'ticket_done', 'draft_edited', 'sent', 'handed_over')
        OR EXISTS (SELECT 1 FROM desk.tickets t
                   WHERE t.id = events.ticket AND t.owner = current_user AND t.lease_until > now()));
-- A cut-off run is settled only when nobody else holds the ticket.
CREATE POLICY settles_only_unheld ON desk.events AS RESTRICTIVE FOR INSERT TO desk_staff
    WITH CHECK (
        kind <> 'needs_person'
        OR NOT EXISTS (SELECT 1 FROM desk.tickets t
                       WHERE t.id = events.ticket AND t.owner <> current_user AND t.lease_until > now()));

CREATE POLICY read_all ON desk.tickets FOR SELECT TO desk_staff USING (true);
CREATE POLICY add_unclaimed ON desk.tickets FOR INSERT TO desk_staff WITH CHECK (owner IS NULL);
CREATE POLICY change_own ON desk.tickets FOR UPDATE TO desk_staff
    USING (owner = current_user) WITH CHECK (owner = current_user);
CREATE POLICY claim_free ON desk.tickets FOR UPDATE TO desk_staff
    USING (owner IS NULL OR lease_until IS NULL OR lease_until <= now())
    WITH CHECK (owner = current_user);
CREATE POLICY leads_change_any ON desk.tickets FOR UPDATE TO desk_leads USING (true) WITH CHECK (true);
CREATE POLICY lease_at_most_30_s ON desk.tickets AS RESTRICTIVE FOR UPDATE TO desk_staff
    USING (true)
    WITH CHECK (lease_until IS NULL OR lease_until <= now() + interval '30 seconds'
                OR pg_has_role(current_user, 'desk_leads', 'member'));

-- A state row moves only to follow the newest event of its ticket, appended by whoever moves it.
CREATE FUNCTION desk.follows_own_event(ticket text, seq bigint) RETURNS boolean
    LANGUAGE sql STABLE AS $$
        SELECT EXISTS (SELECT 1 FROM desk.events e
                       WHERE e.seq = follows_own_event.seq AND e.ticket = follows_own_event.ticket
                         AND e.actor = current_user)
           AND follows_own_event.seq = (SELECT max(e.seq) FROM desk.events e
                                        WHERE e.ticket = follows_own_event.ticket)
    $$;
CREATE POLICY read_all ON desk.ticket_states FOR SELECT TO desk_staff USING (true);
CREATE POLICY follows_own_event ON desk.ticket_states FOR INSERT TO desk_staff
    WITH CHECK (desk.follows_own_event(ticket, seq));
CREATE POLICY follows_own_event_on_update ON desk.ticket_states FOR UPDATE TO desk_staff
    USING (true) WITH CHECK (desk.follows_own_event(ticket, seq));
CREATE POLICY leads_change_any ON desk.ticket_states FOR UPDATE TO desk_leads
    USING (true) WITH CHECK (true);

-- Appends take turns on one lock held to commit, so seq order is commit order: a desk that
-- has seen seq n has seen everything before it.
CREATE FUNCTION desk.serialize_appends() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_advisory_xact_lock('desk.events'::regclass::oid::bigint);
    RETURN NULL;
END $$;
CREATE TRIGGER serialize_appends BEFORE INSERT ON desk.events
    FOR EACH STATEMENT EXECUTE FUNCTION desk.serialize_appends();

-- Live desks hear the seq (only the seq: any role that can connect can listen) at commit.
CREATE FUNCTION desk.notify_event() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('desk_events', NEW.seq::text);
    RETURN NULL;
END $$;
CREATE TRIGGER notify_event AFTER INSERT ON desk.events
    FOR EACH ROW EXECUTE FUNCTION desk.notify_event();
