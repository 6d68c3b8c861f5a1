-- Label clicks and deep pages on a million-file lake (issue 31 items 21, 22;
-- docs/scale.md).
--
-- label_file: one row per (label, file) with the file's type and sort key, as
-- collection_file carries its members' keys (migration 002), so the grid page,
-- the count and the sidebar's sample of one label read one range of
-- label_file_updated in date order instead of probing annotation rows per
-- file (a label click cost 290-410 ms of server CPU at 1M files). Triggers
-- keep it equal to annotation and file.updated_at in the writing transaction,
-- whatever code writes. Tracks' keyframes are not annotations and are not in it.
--
-- source_files: how many files of each type have an annotation of each source,
-- as label_files counts labels (migration 004): `annotation.source = machine`
-- alone is a row read instead of a scan of its 632,075 files (187 ms).
--
-- list_generation: a number every write that can change what an anchored
-- listing holds, or its order, adds one to (a file added, removed, retyped or
-- modified; a file's first or last box of a label or a source; a collection
-- member added or removed). Page anchors (lake/anchors.go) are kept with the
-- number they were found under and used only while it is unchanged, read in
-- the same snapshot as the page, so a deep page is never answered from stale
-- anchors.

CREATE TABLE label_file (
    label      TEXT    NOT NULL,
    file_seq   INTEGER NOT NULL,
    type       TEXT    NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (label, file_seq)
) STRICT, WITHOUT ROWID;

-- type before the key: a page of one label's images is one range.
CREATE INDEX label_file_updated ON label_file (label, type, updated_at, file_seq);

INSERT INTO label_file (label, file_seq, type, updated_at)
SELECT a.label, a.file_seq, f.type, f.updated_at
FROM (SELECT DISTINCT label, file_seq FROM annotation) a JOIN file f ON f.seq = a.file_seq;

CREATE TABLE source_files (
    source TEXT    NOT NULL,
    type   TEXT    NOT NULL,
    files  INTEGER NOT NULL,
    PRIMARY KEY (source, type)
) STRICT, WITHOUT ROWID;

INSERT INTO source_files (source, type, files)
SELECT a.source, f.type, count(*)
FROM (SELECT DISTINCT source, file_seq FROM annotation) a JOIN file f ON f.seq = a.file_seq
GROUP BY a.source, f.type;

CREATE TABLE list_generation (
    one INTEGER PRIMARY KEY CHECK (one = 1),
    n   INTEGER NOT NULL
) STRICT;

INSERT INTO list_generation (one, n) VALUES (1, 0);

-- An annotation adds its (label, file) unless the file has the label already;
-- the last annotation of a label on a file removes it. Deleting a file
-- deletes its annotations by cascade, which fires these.
CREATE TRIGGER label_file_insert AFTER INSERT ON annotation
BEGIN
    INSERT OR IGNORE INTO label_file (label, file_seq, type, updated_at)
    SELECT NEW.label, f.seq, f.type, f.updated_at FROM file f WHERE f.seq = NEW.file_seq;
END;

CREATE TRIGGER label_file_delete AFTER DELETE ON annotation
WHEN NOT EXISTS (SELECT 1 FROM annotation WHERE file_seq = OLD.file_seq AND label = OLD.label)
BEGIN
    DELETE FROM label_file WHERE label = OLD.label AND file_seq = OLD.file_seq;
END;

-- An update that changes a row's label or file is its delete and its insert.
CREATE TRIGGER label_file_update AFTER UPDATE OF label, file_seq ON annotation
WHEN OLD.label != NEW.label OR OLD.file_seq != NEW.file_seq
BEGIN
    DELETE FROM label_file WHERE label = OLD.label AND file_seq = OLD.file_seq
        AND NOT EXISTS (SELECT 1 FROM annotation WHERE file_seq = OLD.file_seq AND label = OLD.label);
    INSERT OR IGNORE INTO label_file (label, file_seq, type, updated_at)
    SELECT NEW.label, f.seq, f.type, f.updated_at FROM file f WHERE f.seq = NEW.file_seq;
END;

-- The file's labels are found through annotation_file (file_seq, label), so
-- label_file needs no index by file.
CREATE TRIGGER file_keys_to_labels AFTER UPDATE OF type, updated_at ON file
BEGIN
    UPDATE label_file SET type = NEW.type, updated_at = NEW.updated_at
    WHERE file_seq = NEW.seq AND label IN (SELECT label FROM annotation WHERE file_seq = NEW.seq);
END;

-- A file's first annotation of a source adds the file to its type's count,
-- its last removes it; the probes read annotation_source (source, file_seq).
CREATE TRIGGER source_files_insert AFTER INSERT ON annotation
WHEN NOT EXISTS (SELECT 1 FROM annotation WHERE source = NEW.source AND file_seq = NEW.file_seq AND seq != NEW.seq)
BEGIN
    INSERT INTO source_files (source, type, files) SELECT NEW.source, f.type, 1 FROM file f WHERE f.seq = NEW.file_seq
    ON CONFLICT (source, type) DO UPDATE SET files = files + 1;
    UPDATE list_generation SET n = n + 1;
END;

-- A file's own delete is counted before it (below): its annotations go by
-- cascade once the file row is gone, when this finds no type and changes nothing.
CREATE TRIGGER source_files_delete AFTER DELETE ON annotation
WHEN NOT EXISTS (SELECT 1 FROM annotation WHERE source = OLD.source AND file_seq = OLD.file_seq)
BEGIN
    UPDATE source_files SET files = files - 1
    WHERE source = OLD.source AND type = (SELECT f.type FROM file f WHERE f.seq = OLD.file_seq);
    DELETE FROM source_files WHERE files <= 0;
    UPDATE list_generation SET n = n + 1;
END;

CREATE TRIGGER source_files_file_delete BEFORE DELETE ON file
BEGIN
    UPDATE source_files SET files = files - 1
    WHERE type = OLD.type AND source IN (SELECT source FROM annotation WHERE file_seq = OLD.seq);
    DELETE FROM source_files WHERE files <= 0;
END;

CREATE TRIGGER source_files_update_old AFTER UPDATE OF source, file_seq ON annotation
WHEN (OLD.source != NEW.source OR OLD.file_seq != NEW.file_seq)
    AND NOT EXISTS (SELECT 1 FROM annotation WHERE source = OLD.source AND file_seq = OLD.file_seq)
BEGIN
    UPDATE source_files SET files = files - 1
    WHERE source = OLD.source AND type = (SELECT f.type FROM file f WHERE f.seq = OLD.file_seq);
    DELETE FROM source_files WHERE files <= 0;
    UPDATE list_generation SET n = n + 1;
END;

CREATE TRIGGER source_files_update_new AFTER UPDATE OF source, file_seq ON annotation
WHEN (OLD.source != NEW.source OR OLD.file_seq != NEW.file_seq)
    AND NOT EXISTS (SELECT 1 FROM annotation WHERE source = NEW.source AND file_seq = NEW.file_seq AND seq != NEW.seq)
BEGIN
    INSERT INTO source_files (source, type, files) SELECT NEW.source, f.type, 1 FROM file f WHERE f.seq = NEW.file_seq
    ON CONFLICT (source, type) DO UPDATE SET files = files + 1;
    UPDATE list_generation SET n = n + 1;
END;

-- A file that changes type moves its sources' counts with it.
CREATE TRIGGER source_files_retype AFTER UPDATE OF type ON file
WHEN OLD.type != NEW.type
BEGIN
    UPDATE source_files SET files = files - 1
    WHERE type = OLD.type AND source IN (SELECT source FROM annotation WHERE file_seq = NEW.seq);
    DELETE FROM source_files WHERE files <= 0;
    INSERT INTO source_files (source, type, files)
    SELECT DISTINCT source, NEW.type, 1 FROM annotation WHERE file_seq = NEW.seq
    ON CONFLICT (source, type) DO UPDATE SET files = files + 1;
END;

-- The generation: a file added, removed or moved in the date order (any
-- update of updated_at or type counts, changed or not), a label gained or
-- lost, a collection member added or removed.
CREATE TRIGGER list_generation_file_insert AFTER INSERT ON file
BEGIN
    UPDATE list_generation SET n = n + 1;
END;

CREATE TRIGGER list_generation_file_delete AFTER DELETE ON file
BEGIN
    UPDATE list_generation SET n = n + 1;
END;

CREATE TRIGGER list_generation_file_update AFTER UPDATE OF type, updated_at ON file
BEGIN
    UPDATE list_generation SET n = n + 1;
END;

CREATE TRIGGER list_generation_label_insert AFTER INSERT ON label_file
BEGIN
    UPDATE list_generation SET n = n + 1;
END;

CREATE TRIGGER list_generation_label_delete AFTER DELETE ON label_file
BEGIN
    UPDATE list_generation SET n = n + 1;
END;

CREATE TRIGGER list_generation_member_insert AFTER INSERT ON collection_file
BEGIN
    UPDATE list_generation SET n = n + 1;
END;

CREATE TRIGGER list_generation_member_delete AFTER DELETE ON collection_file
BEGIN
    UPDATE list_generation SET n = n + 1;
END;
