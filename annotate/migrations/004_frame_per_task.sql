-- A lake file may be a frame of several tasks, each of another project: each
-- project keeps its own boxes of the file (operation = the project's id), and
-- each task its frame's state (annotated, version, box count). Within one
-- project a file is still a frame of one task at most, which CreateTask
-- checks: a project's boxes of a file are one answer. The table is rebuilt
-- because SQLite cannot drop the UNIQUE constraints on file_seq and
-- unique_name; nothing references it.
CREATE TABLE frame_new (
    session_seq INTEGER NOT NULL REFERENCES upload_session (seq) ON DELETE CASCADE,
    sequence_no INTEGER NOT NULL CHECK (sequence_no >= 0),
    file_seq    INTEGER NOT NULL REFERENCES file (seq) ON DELETE CASCADE,
    unique_name TEXT    NOT NULL,  -- the file's, copied so downloads need no file reads
    width       INTEGER NOT NULL,
    height      INTEGER NOT NULL,
    box_count   INTEGER NOT NULL DEFAULT 0,
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL,
    annotated   INTEGER NOT NULL DEFAULT 1 CHECK (annotated IN (0, 1)),
    version     INTEGER NOT NULL DEFAULT 1,
    PRIMARY KEY (session_seq, sequence_no),
    UNIQUE (session_seq, file_seq)
) STRICT, WITHOUT ROWID;

INSERT INTO frame_new (session_seq, sequence_no, file_seq, unique_name, width, height, box_count, created_at,
    updated_at, annotated, version)
SELECT session_seq, sequence_no, file_seq, unique_name, width, height, box_count, created_at, updated_at,
    annotated, version FROM frame;

DROP TABLE frame;
ALTER TABLE frame_new RENAME TO frame;

CREATE INDEX frame_file ON frame (file_seq);
CREATE INDEX frame_unique_name ON frame (unique_name);
