-- Embedding models and the change log of their vectors. Each model's vectors
-- live in a vec0 table vec_<seq> (rowid = file.seq), created with the model
-- together with a trigger on the lake's file table; see package vector.

CREATE TABLE embedding_model (
    seq        INTEGER PRIMARY KEY AUTOINCREMENT, -- never reused: names vec_<seq>
    name       TEXT    NOT NULL UNIQUE,
    dim        INTEGER NOT NULL CHECK (dim BETWEEN 1 AND 8192),
    metric     TEXT    NOT NULL CHECK (metric IN ('cosine', 'l2')),
    table_name TEXT    NOT NULL UNIQUE,
    created_at INTEGER NOT NULL                   -- unix milliseconds, UTC
) STRICT;

-- One row per vector written or deleted, so in-memory copies (this process or
-- another) can catch up without reloading. AUTOINCREMENT keeps seq monotonic
-- even when old rows are pruned.
CREATE TABLE embedding_change (
    seq       INTEGER PRIMARY KEY AUTOINCREMENT,
    model_seq INTEGER NOT NULL,
    file_seq  INTEGER NOT NULL
) STRICT;

-- Changes up to pruned_through were deleted; a copy that saw less reloads.
CREATE TABLE embedding_state (
    id             INTEGER PRIMARY KEY CHECK (id = 1),
    pruned_through INTEGER NOT NULL
) STRICT;

INSERT INTO embedding_state (id, pruned_through) VALUES (1, 0);
