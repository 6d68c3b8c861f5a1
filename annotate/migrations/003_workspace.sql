-- Tasks made in the web app from lake files (not uploaded): their frames
-- arrive all at once, unannotated, and the task completes when its annotator
-- marks it done. Frames carry a version so two annotators of one frame do not
-- silently overwrite each other, and a project remembers which model boxes
-- (suggestions) its annotators accepted or rejected.

-- name: the task's name when given one after creation (else the collection's).
-- done: NULL for uploaded tasks, which complete when every frame has arrived;
-- 0 or 1 for tasks whose annotator marks them done (1) or reopens them (0).
ALTER TABLE upload_session ADD COLUMN name TEXT;
ALTER TABLE upload_session ADD COLUMN done INTEGER CHECK (done IN (0, 1));

-- annotated: 1 once the frame's labels were given ([] included); uploaded
-- frames come with theirs. version: bumped by every change of its boxes.
ALTER TABLE frame ADD COLUMN annotated INTEGER NOT NULL DEFAULT 1 CHECK (annotated IN (0, 1));
ALTER TABLE frame ADD COLUMN version INTEGER NOT NULL DEFAULT 1;

CREATE TABLE suggestion_decision (
    project_seq   INTEGER NOT NULL REFERENCES project (seq) ON DELETE CASCADE,
    annotation_id TEXT    NOT NULL, -- the machine box's id
    file_seq      INTEGER NOT NULL REFERENCES file (seq) ON DELETE CASCADE,
    decision      TEXT    NOT NULL CHECK (decision IN ('accepted', 'rejected')),
    decided_at    INTEGER NOT NULL,
    PRIMARY KEY (project_seq, annotation_id)
) STRICT, WITHOUT ROWID;

CREATE INDEX suggestion_decision_file ON suggestion_decision (file_seq);
