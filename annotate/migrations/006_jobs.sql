-- Labelling jobs, their review and comments (issue 35, docs/team.md "Jobs",
-- "Review", "Comments"). A task's frames are cut into jobs of N frames in
-- frame order, numbered 1..n within the task; copy jobs (copy >= 1) hold a
-- seeded share of the task's frames again, for an independent answer stored
-- as the lake annotations of operation '<projectId>/copy<k>'. The jobs'
-- table is label_job: "job" is the background jobs' (internal/job).
CREATE TABLE label_job (
    seq         INTEGER PRIMARY KEY,
    session_seq INTEGER NOT NULL REFERENCES upload_session (seq) ON DELETE CASCADE,
    number      INTEGER NOT NULL CHECK (number >= 1),
    copy        INTEGER NOT NULL DEFAULT 0 CHECK (copy >= 0), -- 0: the task's own answer
    state       TEXT    NOT NULL DEFAULT 'annotation'
                CHECK (state IN ('annotation', 'submitted', 'in_review', 'accepted', 'rejected')),
    assignee    TEXT,    -- user names; no FK: people live in the auth package
    reviewer    TEXT,
    started     INTEGER NOT NULL DEFAULT 0 CHECK (started IN (0, 1)), -- a frame was saved in it
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL,
    UNIQUE (session_seq, number)
) STRICT;

CREATE INDEX label_job_assignee ON label_job (assignee, state);
CREATE INDEX label_job_reviewer ON label_job (reviewer, state);
CREATE INDEX label_job_free ON label_job (state, assignee, session_seq, number);

-- A job's frames. version, annotated and box_count are a copy job's own
-- answer's (a copy-0 job's frames use the frame row's); review is the
-- reviewer's verdict on the frame.
CREATE TABLE job_frame (
    job_seq     INTEGER NOT NULL REFERENCES label_job (seq) ON DELETE CASCADE,
    file_seq    INTEGER NOT NULL REFERENCES file (seq) ON DELETE CASCADE,
    position    INTEGER NOT NULL, -- the frame's sequence number in its task
    review      TEXT CHECK (review IN ('accepted', 'rejected')),
    version     INTEGER NOT NULL DEFAULT 1,
    annotated   INTEGER NOT NULL DEFAULT 0 CHECK (annotated IN (0, 1)),
    box_count   INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (job_seq, file_seq)
) STRICT, WITHOUT ROWID;

CREATE INDEX job_frame_file ON job_frame (file_seq);

-- Every change of a job: its making, assignment, state and per-frame review,
-- with who, when and the note given. detail is JSON (the frames' verdicts,
-- the assignee and reviewer set).
CREATE TABLE job_event (
    seq        INTEGER PRIMARY KEY,
    job_seq    INTEGER NOT NULL REFERENCES label_job (seq) ON DELETE CASCADE,
    at         INTEGER NOT NULL,
    who        TEXT    NOT NULL,
    kind       TEXT    NOT NULL CHECK (kind IN ('created', 'assigned', 'state', 'review')),
    from_state TEXT,
    to_state   TEXT,
    note       TEXT    NOT NULL DEFAULT '',
    detail     TEXT    CHECK (detail IS NULL OR json_valid(detail))
) STRICT;

CREATE INDEX job_event_job ON job_event (job_seq, seq);

-- Comments pinned to a frame of a project, or to one of its shapes (shape
-- keeps the shape's label and box as they were, since a save gives shapes
-- new ids), and to a video frame.
CREATE TABLE comment (
    seq         INTEGER PRIMARY KEY,
    id          TEXT    NOT NULL UNIQUE,
    project_seq INTEGER NOT NULL REFERENCES project (seq) ON DELETE CASCADE,
    file_seq    INTEGER NOT NULL REFERENCES file (seq) ON DELETE CASCADE,
    unique_name TEXT    NOT NULL,
    job_seq     INTEGER REFERENCES label_job (seq) ON DELETE SET NULL,
    shape_id    TEXT,
    shape       TEXT    CHECK (shape IS NULL OR json_valid(shape)),
    frame       INTEGER CHECK (frame IS NULL OR frame >= 0),
    text        TEXT    NOT NULL CHECK (text <> ''),
    author      TEXT    NOT NULL,
    created_at  INTEGER NOT NULL,
    resolved_by TEXT,
    resolved_at INTEGER
) STRICT;

CREATE INDEX comment_frame ON comment (project_seq, file_seq, seq);
CREATE INDEX comment_job ON comment (job_seq, seq);
