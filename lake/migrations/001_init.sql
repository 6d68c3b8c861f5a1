-- The media lake: files, collections, tags and annotations.
-- seq columns are internal integer keys (fast joins at millions of rows);
-- id columns are the opaque public identifiers. Times are unix milliseconds, UTC.

CREATE TABLE file (
    seq         INTEGER PRIMARY KEY,
    id          TEXT    NOT NULL UNIQUE,
    unique_name TEXT    NOT NULL UNIQUE,
    name        TEXT    NOT NULL,
    type        TEXT    NOT NULL CHECK (type IN ('image', 'video', 'other')),
    blob        TEXT    NOT NULL,              -- sha256 hex of the bytes: media/ab/cd/<blob>.<ext>
    ext         TEXT    NOT NULL,              -- stored extension, lowercase, no dot
    mime        TEXT    NOT NULL,
    size        INTEGER NOT NULL,
    format      TEXT    NOT NULL DEFAULT '',   -- jpeg, png, mov,mp4,... as probed
    width       INTEGER,
    height      INTEGER,
    frame_count INTEGER,
    frame_rate  REAL,
    duration    REAL,                          -- seconds, videos only
    video_index INTEGER,                       -- position in its video or upload sequence
    metadata    TEXT    NOT NULL DEFAULT '{}' CHECK (json_valid(metadata)),
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL
) STRICT;

CREATE INDEX file_type_updated ON file (type, updated_at, seq);
CREATE INDEX file_type_created ON file (type, created_at, seq);
CREATE INDEX file_type_name    ON file (type, name, seq);
CREATE INDEX file_type_size    ON file (type, size, seq);
CREATE INDEX file_type_vindex  ON file (type, video_index, seq);
CREATE INDEX file_blob         ON file (blob);

CREATE TABLE collection (
    seq        INTEGER PRIMARY KEY,
    id         TEXT    NOT NULL UNIQUE,
    name       TEXT    NOT NULL UNIQUE,        -- users name collections in queries: one name, one collection
    type       TEXT    NOT NULL CHECK (type IN ('image_collection', 'video_collection', 'other_collection')),
    metadata   TEXT    NOT NULL DEFAULT '{}' CHECK (json_valid(metadata)),
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
) STRICT;

CREATE INDEX collection_updated ON collection (type, updated_at, seq);
CREATE INDEX collection_created ON collection (type, created_at, seq);

CREATE TABLE collection_file (
    collection_seq INTEGER NOT NULL REFERENCES collection (seq) ON DELETE CASCADE,
    file_seq       INTEGER NOT NULL REFERENCES file (seq) ON DELETE CASCADE,
    added_at       INTEGER NOT NULL,
    PRIMARY KEY (collection_seq, file_seq)
) STRICT, WITHOUT ROWID;

CREATE INDEX collection_file_file ON collection_file (file_seq, collection_seq);

-- Tags name what a model (operation = its run id) or a user (operation 'user') saw.
CREATE TABLE file_tag (
    file_seq   INTEGER NOT NULL REFERENCES file (seq) ON DELETE CASCADE,
    name       TEXT    NOT NULL,
    operation  TEXT    NOT NULL DEFAULT 'user',
    confidence REAL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (file_seq, name, operation)
) STRICT, WITHOUT ROWID;

CREATE INDEX file_tag_name ON file_tag (name, file_seq);

CREATE TABLE collection_tag (
    collection_seq INTEGER NOT NULL REFERENCES collection (seq) ON DELETE CASCADE,
    name           TEXT    NOT NULL,
    operation      TEXT    NOT NULL DEFAULT 'user',
    confidence     REAL,
    created_at     INTEGER NOT NULL,
    PRIMARY KEY (collection_seq, name, operation)
) STRICT, WITHOUT ROWID;

CREATE INDEX collection_tag_name ON collection_tag (name, collection_seq);

-- Boxes in pixels, top-left origin. Human boxes come from annotation projects
-- (operation = project id), machine boxes from model runs (operation = run id).
CREATE TABLE annotation (
    seq        INTEGER PRIMARY KEY,
    id         TEXT    NOT NULL UNIQUE,
    file_seq   INTEGER NOT NULL REFERENCES file (seq) ON DELETE CASCADE,
    frame      INTEGER NOT NULL DEFAULT 0,
    label      TEXT    NOT NULL,
    x          REAL    NOT NULL,
    y          REAL    NOT NULL,
    w          REAL    NOT NULL CHECK (w > 0),
    h          REAL    NOT NULL CHECK (h > 0),
    confidence REAL,
    source     TEXT    NOT NULL CHECK (source IN ('human', 'machine')),
    operation  TEXT    NOT NULL,
    attributes TEXT    NOT NULL DEFAULT '{}' CHECK (json_valid(attributes)),
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
) STRICT;

CREATE INDEX annotation_file      ON annotation (file_seq, label);
CREATE INDEX annotation_label     ON annotation (label, file_seq);
CREATE INDEX annotation_source    ON annotation (source, file_seq);
CREATE INDEX annotation_operation ON annotation (operation, file_seq);
