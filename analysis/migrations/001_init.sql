-- Automatic analysis: registered model packages and the runs made with them.
-- Times are unix milliseconds, UTC.

CREATE TABLE model (
    seq            INTEGER PRIMARY KEY,
    id             TEXT    NOT NULL UNIQUE,
    name           TEXT    NOT NULL UNIQUE,
    application    TEXT    NOT NULL CHECK (application IN ('auto_tagging', 'auto_annotation', 'embedding')),
    dir            TEXT    NOT NULL,               -- folder under <data>/models holding package/ and venv/
    labels         TEXT    NOT NULL DEFAULT '[]' CHECK (json_valid(labels)), -- label_list.yaml, in order
    endpoint       TEXT    NOT NULL DEFAULT '',    -- SageMaker-compatible endpoint for inference_platform aws
    system_default INTEGER NOT NULL DEFAULT 0 CHECK (system_default IN (0, 1)),
    package_bytes  INTEGER NOT NULL DEFAULT 0,
    created_by     TEXT    NOT NULL DEFAULT '',
    created_at     INTEGER NOT NULL,
    updated_at     INTEGER NOT NULL
) STRICT;

-- At most one system default per application.
CREATE UNIQUE INDEX model_default ON model (application) WHERE system_default = 1;

-- A run is one analysis job: its id is the operation of the tags and boxes it writes.
CREATE TABLE run (
    seq         INTEGER PRIMARY KEY,
    id          TEXT    NOT NULL UNIQUE,
    job_id      TEXT    NOT NULL UNIQUE,
    model_name  TEXT    NOT NULL,                  -- the model resolved at start ("default" resolved to its name)
    vector_name TEXT    NOT NULL DEFAULT '',       -- embeddings: the vector model name written to
    application TEXT    NOT NULL,
    platform    TEXT    NOT NULL CHECK (platform IN ('local', 'aws')),
    params      TEXT    NOT NULL CHECK (json_valid(params)),
    items       INTEGER NOT NULL DEFAULT 0,        -- files analysed
    frames      INTEGER NOT NULL DEFAULT 0,        -- images and video frames sent to the model
    tags        INTEGER NOT NULL DEFAULT 0,
    boxes       INTEGER NOT NULL DEFAULT 0,
    embeddings  INTEGER NOT NULL DEFAULT 0,
    skipped     INTEGER NOT NULL DEFAULT 0,        -- files that could not be read
    created_at  INTEGER NOT NULL,
    finished_at INTEGER
) STRICT;

CREATE INDEX run_model ON run (model_name, created_at);
CREATE INDEX run_created ON run (created_at);
