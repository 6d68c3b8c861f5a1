-- The embedding map: one fitted 2D projection per model and every vector's
-- place on it (see vector/projection.go). Rebuildable from the vectors.

CREATE TABLE embedding_projection (
    model_seq    INTEGER PRIMARY KEY,          -- embedding_model.seq
    layout       BLOB,                         -- the fitted layout (JSON); NULL before the first fit
    fitted_count INTEGER NOT NULL DEFAULT 0,   -- vectors at the last full fit
    seen         INTEGER NOT NULL DEFAULT 0,   -- last embedding_change.seq reflected in the points
    computed_at  INTEGER NOT NULL DEFAULT 0,   -- unix milliseconds of the last update
    job_id       TEXT    NOT NULL DEFAULT '',  -- the latest projection job
    job_target   INTEGER NOT NULL DEFAULT 0    -- embedding_change.seq when that job was asked for
) STRICT;

CREATE TABLE embedding_projection_point (
    model_seq INTEGER NOT NULL,
    file_seq  INTEGER NOT NULL,
    x         REAL    NOT NULL,
    y         REAL    NOT NULL,
    PRIMARY KEY (model_seq, file_seq)
) STRICT, WITHOUT ROWID;
