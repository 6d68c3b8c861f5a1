-- A fifth application, tracking (a model package that follows a video track's object, issue 34).
-- SQLite cannot change a CHECK in place: the model table is rebuilt with the same columns, as in 004.
CREATE TABLE model_new (
    seq            INTEGER PRIMARY KEY,
    id             TEXT    NOT NULL UNIQUE,
    name           TEXT    NOT NULL UNIQUE,
    application    TEXT    NOT NULL CHECK (application IN ('auto_tagging', 'auto_annotation', 'embedding', 'segmentation', 'tracking')),
    dir            TEXT    NOT NULL,               -- folder under <data>/models holding package/ and venv/
    labels         TEXT    NOT NULL DEFAULT '[]' CHECK (json_valid(labels)), -- label_list.yaml, in order
    endpoint       TEXT    NOT NULL DEFAULT '',    -- SageMaker-compatible endpoint for inference_platform aws
    system_default INTEGER NOT NULL DEFAULT 0 CHECK (system_default IN (0, 1)),
    package_bytes  INTEGER NOT NULL DEFAULT 0,
    created_by     TEXT    NOT NULL DEFAULT '',
    created_at     INTEGER NOT NULL,
    updated_at     INTEGER NOT NULL,
    source         TEXT    NOT NULL DEFAULT ''     -- shipped defaults: hash of the files built from (003)
) STRICT;
INSERT INTO model_new SELECT * FROM model;
DROP TABLE model;
ALTER TABLE model_new RENAME TO model;
CREATE UNIQUE INDEX model_default ON model (application) WHERE system_default = 1;
