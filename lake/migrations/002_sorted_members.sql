-- Listings driven by a set (the files of a collection, the files whose
-- metadata key has a value) used to walk the file table's sort index and
-- probe the set for each file, so page 50 cost fifty times page 0 and a rare
-- value walked every file. The sets now carry their files' sort keys and are
-- indexed by them: a page of a set is a walk of its own index, and deep
-- OFFSETs skip index entries only. Triggers keep the copies equal to file's
-- columns whichever code writes them.

ALTER TABLE collection_file ADD COLUMN type TEXT;
ALTER TABLE collection_file ADD COLUMN updated_at INTEGER;
ALTER TABLE collection_file ADD COLUMN created_at INTEGER;
ALTER TABLE collection_file ADD COLUMN name TEXT;
ALTER TABLE collection_file ADD COLUMN size INTEGER;
ALTER TABLE collection_file ADD COLUMN video_index INTEGER;

UPDATE collection_file SET (type, updated_at, created_at, name, size, video_index) =
    (SELECT f.type, f.updated_at, f.created_at, f.name, f.size, f.video_index FROM file f WHERE f.seq = file_seq);

-- type last: a listing narrowed to one file type stays inside the index.
CREATE INDEX collection_file_updated ON collection_file (collection_seq, updated_at, file_seq, type);
CREATE INDEX collection_file_created ON collection_file (collection_seq, created_at, file_seq, type);
CREATE INDEX collection_file_name    ON collection_file (collection_seq, name, file_seq, type);
CREATE INDEX collection_file_size    ON collection_file (collection_seq, size, file_seq, type);
CREATE INDEX collection_file_vindex  ON collection_file (collection_seq, video_index, file_seq, type);

CREATE TRIGGER collection_file_keys AFTER INSERT ON collection_file BEGIN
    UPDATE collection_file SET (type, updated_at, created_at, name, size, video_index) =
        (SELECT f.type, f.updated_at, f.created_at, f.name, f.size, f.video_index FROM file f WHERE f.seq = NEW.file_seq)
    WHERE collection_seq = NEW.collection_seq AND file_seq = NEW.file_seq;
END;

CREATE TRIGGER file_keys_to_collections AFTER UPDATE OF type, updated_at, created_at, name, size, video_index ON file BEGIN
    UPDATE collection_file SET type = NEW.type, updated_at = NEW.updated_at, created_at = NEW.created_at,
        name = NEW.name, size = NEW.size, video_index = NEW.video_index
    WHERE file_seq = NEW.seq;
END;

-- One row per top-level scalar of a file's metadata, as json_extract returns
-- it (true and false as 1 and 0), so `metadata.k = v` is an index lookup
-- instead of parsing every file's JSON. Text values longer than 256
-- characters are left out; the query compiler tests such values on the JSON.
CREATE TABLE file_meta (
    file_seq   INTEGER NOT NULL REFERENCES file (seq) ON DELETE CASCADE,
    key        TEXT    NOT NULL,
    value      ANY     NOT NULL,
    type       TEXT    NOT NULL,     -- the file's type (listings are of one) and
    updated_at INTEGER NOT NULL,     -- date_modified, the default sort
    PRIMARY KEY (file_seq, key)
) STRICT, WITHOUT ROWID;

CREATE INDEX file_meta_value ON file_meta (key, value, type, updated_at, file_seq);

-- The rows file_meta holds for each file.
CREATE VIEW file_meta_rows AS
    SELECT f.seq AS file_seq, j.key AS key, j.atom AS value, f.type AS type, f.updated_at AS updated_at
    FROM file f, json_each(f.metadata) j
    WHERE j.type IN ('integer', 'real', 'true', 'false') OR j.type = 'text' AND length(j.atom) <= 256;

INSERT OR IGNORE INTO file_meta SELECT * FROM file_meta_rows;

CREATE TRIGGER file_meta_insert AFTER INSERT ON file BEGIN
    INSERT OR IGNORE INTO file_meta SELECT * FROM file_meta_rows WHERE file_seq = NEW.seq;
END;

CREATE TRIGGER file_meta_update AFTER UPDATE OF metadata, type, updated_at ON file BEGIN
    DELETE FROM file_meta WHERE file_seq = NEW.seq;
    INSERT OR IGNORE INTO file_meta SELECT * FROM file_meta_rows WHERE file_seq = NEW.seq;
END;
