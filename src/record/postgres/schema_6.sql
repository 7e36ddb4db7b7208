-- Schema 6: an approval no lead answers in time falls back. The asking desk files, with the
-- approval, how long it may wait and what then: it goes to a named lead (and stays open), or
-- it is declined back to its asker (closed as lapsed). Whichever desk of the team sees it due
-- carries that out; the database lets it happen once, only when due, only as filed.

ALTER TABLE desk.approvals
    ADD COLUMN fallback_after interval CHECK (fallback_after > interval '0'),
    ADD COLUMN fallback_to    text,        -- the lead it goes to; NULL: declined
    ADD COLUMN fell_back_at   timestamptz,
    ADD CONSTRAINT a_fallback_has_a_wait CHECK (fallback_to IS NULL OR fallback_after IS NOT NULL),
    DROP CONSTRAINT approvals_closed_check,
    ADD CONSTRAINT approvals_closed_check
        CHECK (closed IN ('accepted', 'declined', 'cancelled', 'withdrawn', 'lapsed'));

GRANT INSERT (fallback_after, fallback_to) ON desk.approvals TO desk_staff;
GRANT UPDATE (fell_back_at) ON desk.approvals TO desk_staff;

-- An approval goes only to a lead of the team.
CREATE POLICY falls_back_to_a_lead ON desk.approvals AS RESTRICTIVE FOR INSERT TO desk_staff
    WITH CHECK (
        fallback_to IS NULL
        OR EXISTS (SELECT 1 FROM pg_roles r
                   WHERE r.rolname = fallback_to AND r.rolcanlogin
                     AND pg_has_role(r.oid, 'desk_leads', 'member')));

-- Any desk carries out a fallback that is due, while no lead's desk is answering it: passed on
-- (still open), or, with no lead named, closed as lapsed by whoever carried it out.
CREATE POLICY falls_back_when_due ON desk.approvals FOR UPDATE TO desk_staff
    USING (closed IS NULL AND fell_back_at IS NULL AND fallback_after IS NOT NULL
           AND asked_at + fallback_after <= now()
           AND (answering_by IS NULL OR answering_until IS NULL OR answering_until <= now()))
    WITH CHECK (fell_back_at IS NOT NULL
                AND ((fallback_to IS NULL AND closed = 'lapsed' AND closed_by = current_user)
                     OR (fallback_to IS NOT NULL AND closed IS NULL)));

-- Whatever policy lets a row be changed, a fallback is only ever due, and a lapse only its
-- fallback; and only the asker withdraws (the fallback's reach must not lend anyone that).
CREATE POLICY fallback_only_when_due ON desk.approvals AS RESTRICTIVE FOR UPDATE TO desk_staff
    USING (true)
    WITH CHECK (
        (fell_back_at IS NULL OR (fallback_after IS NOT NULL AND asked_at + fallback_after <= now()))
        AND (closed IS DISTINCT FROM 'lapsed' OR (fallback_to IS NULL AND fell_back_at IS NOT NULL))
        AND (closed IS DISTINCT FROM 'withdrawn' OR asked_by = current_user));

-- The fallback on its ticket: in the transaction that carried it out, as filed, once.
CREATE POLICY fell_back_as_it_falls ON desk.events AS RESTRICTIVE FOR INSERT TO desk_staff
    WITH CHECK (
        kind <> 'approval_fell_back'
        OR EXISTS (SELECT 1 FROM desk.approvals a
                   WHERE a.id::text = events.body->>'approval' AND a.ticket = events.ticket
                     AND a.fell_back_at IS NOT NULL
                     AND a.fallback_to IS NOT DISTINCT FROM events.body->>'to'
                     AND a.xmin = pg_current_xact_id()::xid));
CREATE UNIQUE INDEX one_fallback_per_approval ON desk.events ((body->>'approval'))
    WHERE kind = 'approval_fell_back';
