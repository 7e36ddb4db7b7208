-- Schema 7: the team's saved replies and macros. Every desk of the team loads them (over the
-- config's and its data directory's, on a name clash); everyone reads them, only leads add,
-- change or remove one, and each row says which lead last wrote it and when, in the
-- database's words.

CREATE TABLE desk.saved_replies (
    -- The name `:reply NAME` finds: one word.
    name       text PRIMARY KEY CHECK (name <> '' AND name !~ '[[:space:][:cntrl:]]'),
    -- The reply as a config's [replies.NAME] table: text, tags, assign, note, state.
    reply      jsonb NOT NULL CHECK (jsonb_typeof(reply) = 'object'),
    changed_by text NOT NULL DEFAULT current_user,
    changed_at timestamptz NOT NULL DEFAULT clock_timestamp()
);

-- Who and when are the database's to fill in: a client names only the name and the reply.
GRANT SELECT, INSERT (name, reply), UPDATE (reply), DELETE ON desk.saved_replies TO desk_staff;

-- A change is by whoever makes it, at the database's time (an insert gets both from the
-- defaults; an update, which cannot name them, from here). Not SECURITY DEFINER: current_user
-- is the person.
CREATE FUNCTION desk.saved_reply_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.changed_by := current_user;
    NEW.changed_at := clock_timestamp();
    RETURN NEW;
END $$;
CREATE TRIGGER saved_reply_changed BEFORE UPDATE ON desk.saved_replies
    FOR EACH ROW EXECUTE FUNCTION desk.saved_reply_changed();

-- FORCE: the owner is held to the policies too (nobody logs in as it).
ALTER TABLE desk.saved_replies ENABLE ROW LEVEL SECURITY;
ALTER TABLE desk.saved_replies FORCE ROW LEVEL SECURITY;

CREATE POLICY read_all ON desk.saved_replies FOR SELECT TO desk_staff USING (true);
CREATE POLICY write_as_self ON desk.saved_replies FOR INSERT TO desk_staff
    WITH CHECK (changed_by = current_user);
CREATE POLICY change_as_self ON desk.saved_replies FOR UPDATE TO desk_staff
    USING (true) WITH CHECK (changed_by = current_user);
CREATE POLICY remove_any ON desk.saved_replies FOR DELETE TO desk_staff USING (true);

-- Only leads write them. Restrictive, so a refusal names the policy (a desk says it in words);
-- a staff member's DELETE or plain UPDATE finds no row, and an upsert is refused outright.
CREATE POLICY leads_add ON desk.saved_replies AS RESTRICTIVE FOR INSERT TO desk_staff
    WITH CHECK (pg_has_role(current_user, 'desk_leads', 'member'));
CREATE POLICY leads_change ON desk.saved_replies AS RESTRICTIVE FOR UPDATE TO desk_staff
    USING (pg_has_role(current_user, 'desk_leads', 'member'))
    WITH CHECK (pg_has_role(current_user, 'desk_leads', 'member'));
CREATE POLICY leads_remove ON desk.saved_replies AS RESTRICTIVE FOR DELETE TO desk_staff
    USING (pg_has_role(current_user, 'desk_leads', 'member'));

-- As everywhere in the record: a member who becomes the group role (SET ROLE desk_leads) is
-- nobody here, so changed_by always names a person.
CREATE POLICY is_the_person ON desk.saved_replies AS RESTRICTIVE FOR ALL TO desk_staff
    USING (current_user = session_user) WITH CHECK (current_user = session_user);
