-- Schema 8: an approval may be for a server's task (the Tasks extension): the call runs on at
-- the server, and the lead's answer goes to that task instead of a new round of the call.
-- The asker's desk names the task when it files the approval; nobody changes it afterwards.

ALTER TABLE desk.approvals ADD COLUMN task_id text CHECK (task_id <> '');

GRANT INSERT (task_id) ON desk.approvals TO desk_staff;
