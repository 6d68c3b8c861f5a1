-- Named evaluations of a model run's boxes against human boxes: parameters,
-- state, figures, and each box's outcome at the evaluation's IoU. Per-file
-- counts live in the lake's file_eval (eval.<key>.tp|fp|fn). Times are unix
-- milliseconds, UTC.

CREATE TABLE evaluation (
    seq         INTEGER PRIMARY KEY,
    key         TEXT    NOT NULL UNIQUE,
    params      TEXT    NOT NULL CHECK (json_valid(params)),
    status      TEXT    NOT NULL CHECK (status IN ('running', 'completed', 'failed')),
    job_id      TEXT    NOT NULL,
    error       TEXT    NOT NULL DEFAULT '',
    result      TEXT    CHECK (result IS NULL OR json_valid(result)),
    created_by  TEXT    NOT NULL DEFAULT '',
    created_at  INTEGER NOT NULL,
    finished_at INTEGER
) STRICT;

-- The outcomes of one file's judged boxes, packed (evaluate/outcomes.go):
-- a row a file rather than a box, so an evaluation of millions of boxes
-- writes a row per file. Boxes replaced since keep no outcome.
CREATE TABLE evaluation_file (
    eval_seq INTEGER NOT NULL REFERENCES evaluation (seq) ON DELETE CASCADE,
    file_seq INTEGER NOT NULL,
    outcomes BLOB    NOT NULL,
    PRIMARY KEY (eval_seq, file_seq)
) STRICT, WITHOUT ROWID;
