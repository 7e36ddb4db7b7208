-- Schema 8: an approval may be for a server's task (the Tasks extension): the call runs on at
-- the server, and the lead's answer goes to that task instead of a new round of the call.
-- The asker's desk names the task when it files the approval; nobody changes it afterwards.

ALTER TABLE desk.approvals ADD COLUMN task_id text CHECK (task_id <> '');

GRANT INSERT (task_id) ON desk.approvals TO desk_staff;

-- A server's task starts within a run, so under the ticket's live lease like every run's
-- event; it ends once, and only a task the ticket started can end. Whoever follows it to its
-- end may record that (the desk of the person who started it, or of one who cancelled it):
-- a second end of the same task is refused.
CREATE POLICY tasks_start_in_a_run ON desk.events AS RESTRICTIVE FOR INSERT TO desk_staff
    WITH CHECK (
        kind <> 'task_started'
        OR EXISTS (SELECT 1 FROM desk.tickets t
                   WHERE t.id = events.ticket AND t.owner = current_user AND t.lease_until > now()));
CREATE POLICY tasks_end_once_started ON desk.events AS RESTRICTIVE FOR INSERT TO desk_staff
    WITH CHECK (
        kind <> 'task_ended'
        OR EXISTS (SELECT 1 FROM desk.events s
                   WHERE s.ticket = events.ticket AND s.kind = 'task_started'
                     AND s.body->>'server' = events.body->>'server'
                     AND s.body->>'task' = events.body->>'task'));
CREATE UNIQUE INDEX one_end_per_task ON desk.events (ticket, (body->>'server'), (body->>'task'))
    WHERE kind = 'task_ended';
