-- Durable jobs: long work (analysis, dataset builds, exports) that survives a restart.
-- seq is the internal key and the queue order; id is the public identifier.
-- Times are unix milliseconds, UTC.

CREATE TABLE job (
    seq              INTEGER PRIMARY KEY,
    id               TEXT    NOT NULL UNIQUE,
    type             TEXT    NOT NULL CHECK (type <> ''),
    status           TEXT    NOT NULL
                     CHECK (status IN ('queued', 'running', 'completed', 'failed', 'cancelled')),
    payload          TEXT    NOT NULL DEFAULT 'null' CHECK (json_valid(payload)),
    result           TEXT    CHECK (result IS NULL OR json_valid(result)),
    error            TEXT    NOT NULL DEFAULT '',
    done             INTEGER NOT NULL DEFAULT 0,
    total            INTEGER NOT NULL DEFAULT 0,
    attempts         INTEGER NOT NULL DEFAULT 0,  -- starts, not counting ones a graceful stop interrupted
    cancel_requested INTEGER NOT NULL DEFAULT 0 CHECK (cancel_requested IN (0, 1)),
    created_at       INTEGER NOT NULL,
    started_at       INTEGER,                     -- start of the latest attempt
    finished_at      INTEGER,
    updated_at       INTEGER NOT NULL
) STRICT;

-- Claiming takes the oldest queued job and restart recovery finds running ones
-- by (status, seq); listing filters by status and/or type, newest first.
CREATE INDEX job_status_seq ON job (status, seq);
CREATE INDEX job_type_seq   ON job (type, seq);
