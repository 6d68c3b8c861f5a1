-- Versions are immutable snapshots: a lake file deleted later stays in the
-- versions that hold it, served from its blob (which the lake keeps while a
-- version_item names it). So file_seq becomes NULL when the file goes,
-- instead of the item going with it. SQLite cannot change a foreign key in
-- place: the table is rebuilt with the same columns.
CREATE TABLE version_item_new (
    version_seq  INTEGER NOT NULL REFERENCES dataset_version (seq) ON DELETE CASCADE,
    build        INTEGER NOT NULL,
    ord          INTEGER NOT NULL,
    unique_name  TEXT    NOT NULL,
    name         TEXT    NOT NULL,
    file_seq     INTEGER REFERENCES file (seq) ON DELETE SET NULL, -- NULL: the lake file was deleted
    split        TEXT    NOT NULL CHECK (split IN ('train', 'test', 'validation')),
    derived_from TEXT,
    blob         TEXT    NOT NULL,
    ext          TEXT    NOT NULL,
    width        INTEGER NOT NULL,
    height       INTEGER NOT NULL,
    params       TEXT    CHECK (params IS NULL OR json_valid(params)),
    boxes        TEXT    NOT NULL DEFAULT '[]' CHECK (json_valid(boxes)),
    box_count    INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (version_seq, build, ord)
) STRICT, WITHOUT ROWID;

INSERT INTO version_item_new SELECT version_seq, build, ord, unique_name, name, file_seq, split, derived_from,
    blob, ext, width, height, params, boxes, box_count FROM version_item;
DROP TABLE version_item;
ALTER TABLE version_item_new RENAME TO version_item;

CREATE INDEX version_item_file ON version_item (file_seq);
CREATE INDEX version_item_blob ON version_item (blob, ext);
