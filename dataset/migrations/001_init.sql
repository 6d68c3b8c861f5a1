-- Dataset groups, their numbered versions and the items (frames) of each
-- version's builds. Times are unix milliseconds, UTC.

CREATE TABLE dataset_group (
    seq        INTEGER PRIMARY KEY,
    id         TEXT    NOT NULL UNIQUE,            -- dsg_...: the datasetId / datasetGroupId
    name       TEXT    NOT NULL CHECK (name <> ''),
    seed       INTEGER NOT NULL,                   -- fixed at creation: splits and augmentations derive from it
    created_by TEXT    NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
) STRICT;

-- A version shows the items of current_build (0: never built, so not shown).
-- A build in progress writes its items under pending_build and, when it
-- completes, makes it current in one transaction; a failed build leaves the
-- current one as it was. recipe is what the latest create/update asked for,
-- built_recipe what the current build was made from.
CREATE TABLE dataset_version (
    seq           INTEGER PRIMARY KEY,
    id            TEXT    NOT NULL UNIQUE,         -- dsv_...
    group_seq     INTEGER NOT NULL REFERENCES dataset_group (seq) ON DELETE CASCADE,
    version_no    INTEGER NOT NULL CHECK (version_no >= 1), -- shown as "<n>.0"
    status        TEXT    NOT NULL CHECK (status IN ('building', 'ready')),
    job_id        TEXT    NOT NULL,                -- the latest build's job
    recipe        TEXT    NOT NULL CHECK (json_valid(recipe)),
    built_recipe  TEXT    CHECK (built_recipe IS NULL OR json_valid(built_recipe)),
    current_build INTEGER NOT NULL DEFAULT 0,
    pending_build INTEGER NOT NULL DEFAULT 0,
    stats         TEXT    NOT NULL DEFAULT '{}' CHECK (json_valid(stats)),
    created_by    TEXT    NOT NULL,
    created_at    INTEGER NOT NULL,
    updated_at    INTEGER NOT NULL,
    built_at      INTEGER,
    UNIQUE (group_seq, version_no)
) STRICT;

-- One frame of one build: a lake file (derived_from NULL) or an augmented
-- frame made from one (derived_from = the source's uniqueName; file_seq the
-- source's), whose bytes are a blob of the media store that no lake file owns.
-- Boxes are a JSON array of {"label","x","y","w","h"} in pixels, top-left
-- origin, labels among the version's.
CREATE TABLE version_item (
    version_seq  INTEGER NOT NULL REFERENCES dataset_version (seq) ON DELETE CASCADE,
    build        INTEGER NOT NULL,
    ord          INTEGER NOT NULL,                 -- frames in order: a real frame, then its augmented ones
    unique_name  TEXT    NOT NULL,
    name         TEXT    NOT NULL,                 -- file name in exports
    file_seq     INTEGER NOT NULL REFERENCES file (seq) ON DELETE CASCADE,
    split        TEXT    NOT NULL CHECK (split IN ('train', 'test', 'validation')),
    derived_from TEXT,
    blob         TEXT    NOT NULL,
    ext          TEXT    NOT NULL,
    width        INTEGER NOT NULL,
    height       INTEGER NOT NULL,
    params       TEXT    CHECK (params IS NULL OR json_valid(params)), -- augmentation steps
    boxes        TEXT    NOT NULL DEFAULT '[]' CHECK (json_valid(boxes)),
    box_count    INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (version_seq, build, ord)
) STRICT, WITHOUT ROWID;

CREATE INDEX version_item_file ON version_item (file_seq);
CREATE INDEX dataset_version_group ON dataset_version (group_seq, version_no);
