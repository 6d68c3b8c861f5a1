-- Annotation projects, their labels, upload sessions (one task each) and the
-- frames received. Frames are lake files; their boxes are lake annotations
-- (source 'human', operation = project id). Times are unix milliseconds, UTC.

CREATE TABLE project (
    seq          INTEGER PRIMARY KEY,
    id           TEXT    NOT NULL UNIQUE,
    name         TEXT    NOT NULL,
    content_type INTEGER NOT NULL CHECK (content_type IN (1, 2)), -- 1 video, 2 image
    created_at   INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL
) STRICT;

CREATE TABLE project_label (
    project_seq INTEGER NOT NULL REFERENCES project (seq) ON DELETE CASCADE,
    name        TEXT    NOT NULL CHECK (name <> ''),
    description TEXT    NOT NULL DEFAULT '',
    position    INTEGER NOT NULL, -- order given at creation
    PRIMARY KEY (project_seq, name)
) STRICT, WITHOUT ROWID;

-- An upload session and the task that tracks it: one row, two public ids.
-- The counters are kept up to date in the transaction that stores each frame,
-- so listing tasks never counts frames.
CREATE TABLE upload_session (
    seq              INTEGER PRIMARY KEY,
    id               TEXT    NOT NULL UNIQUE,          -- upl_...: the uploadId
    task_id          TEXT    NOT NULL UNIQUE,          -- tsk_...: the task's id
    project_seq      INTEGER NOT NULL REFERENCES project (seq) ON DELETE CASCADE,
    collection_id    TEXT    NOT NULL,                 -- the lake collection the frames are listed under
    collection_name  TEXT    NOT NULL UNIQUE,          -- lake collection names are unique
    total_file_count INTEGER NOT NULL CHECK (total_file_count >= 1),
    received         INTEGER NOT NULL DEFAULT 0,       -- frames stored
    completed_frames INTEGER NOT NULL DEFAULT 0,       -- frames with at least one box
    last_sequence_id INTEGER NOT NULL DEFAULT -1,      -- highest sequence number received
    width            INTEGER NOT NULL DEFAULT 0,       -- of the first frame received
    height           INTEGER NOT NULL DEFAULT 0,
    status           INTEGER NOT NULL DEFAULT 0 CHECK (status IN (0, 1, 2)), -- task: not started, in progress, completed
    created_at       INTEGER NOT NULL,
    updated_at       INTEGER NOT NULL,
    completed_at     INTEGER,
    CHECK (received <= total_file_count AND completed_frames <= received)
) STRICT;

CREATE INDEX upload_session_project ON upload_session (project_seq, seq);

CREATE TABLE frame (
    session_seq INTEGER NOT NULL REFERENCES upload_session (seq) ON DELETE CASCADE,
    sequence_no INTEGER NOT NULL CHECK (sequence_no >= 0),
    file_seq    INTEGER NOT NULL UNIQUE REFERENCES file (seq) ON DELETE CASCADE,
    unique_name TEXT    NOT NULL UNIQUE,  -- the file's, copied so downloads need no file reads
    width       INTEGER NOT NULL,
    height      INTEGER NOT NULL,
    box_count   INTEGER NOT NULL DEFAULT 0,
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL,
    PRIMARY KEY (session_seq, sequence_no)
) STRICT, WITHOUT ROWID;
