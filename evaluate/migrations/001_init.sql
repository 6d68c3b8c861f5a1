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

-- One row a judged box (annotation.seq): outcome 0 tp, 1 fp, 2 fn, 3 ignored;
-- match_seq the box it was paired with (another label's: a label mismatch,
-- mismatch = 1), iou their overlap. Boxes replaced since keep no outcome.
CREATE TABLE evaluation_box (
    eval_seq  INTEGER NOT NULL REFERENCES evaluation (seq) ON DELETE CASCADE,
    box_seq   INTEGER NOT NULL,
    outcome   INTEGER NOT NULL CHECK (outcome BETWEEN 0 AND 3),
    match_seq INTEGER,
    iou       REAL,
    mismatch  INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (eval_seq, box_seq)
) STRICT, WITHOUT ROWID;
