-- How many annotations of each shape type the lake has, and how many files
-- have one, kept by triggers, so the web app's sidebar counts shapes by type
-- for a whole lake (the landing page) without reading its millions of
-- annotations: a GROUP BY over 1M annotations takes most of a second. A file
-- counts once per type however many shapes of the type it has; tracks'
-- keyframes are not annotations and are not counted.

CREATE TABLE shape_counts (
    type        TEXT    PRIMARY KEY,
    annotations INTEGER NOT NULL,
    files       INTEGER NOT NULL
) STRICT, WITHOUT ROWID;

INSERT INTO shape_counts SELECT type, count(*), count(DISTINCT file_seq) FROM annotation GROUP BY type;

-- One upsert per row: the annotation always counts, the file when it is the
-- file's first annotation of the type (its last, on delete). The probe reads
-- the file's annotations through annotation_file (file_seq, label).
CREATE TRIGGER shape_counts_insert AFTER INSERT ON annotation
BEGIN
    INSERT INTO shape_counts (type, annotations, files)
    VALUES (NEW.type, 1, NOT EXISTS (SELECT 1 FROM annotation WHERE file_seq = NEW.file_seq AND type = NEW.type AND seq != NEW.seq))
    ON CONFLICT (type) DO UPDATE SET annotations = annotations + 1, files = files + excluded.files;
END;

CREATE TRIGGER shape_counts_delete AFTER DELETE ON annotation
BEGIN
    UPDATE shape_counts SET annotations = annotations - 1,
        files = files - NOT EXISTS (SELECT 1 FROM annotation WHERE file_seq = OLD.file_seq AND type = OLD.type)
    WHERE type = OLD.type;
    DELETE FROM shape_counts WHERE type = OLD.type AND annotations <= 0;
END;

-- An update that changes a row's type or file is its delete and its insert.
CREATE TRIGGER shape_counts_update_old AFTER UPDATE OF type, file_seq ON annotation
WHEN OLD.type != NEW.type OR OLD.file_seq != NEW.file_seq
BEGIN
    UPDATE shape_counts SET annotations = annotations - 1,
        files = files - NOT EXISTS (SELECT 1 FROM annotation WHERE file_seq = OLD.file_seq AND type = OLD.type)
    WHERE type = OLD.type;
    DELETE FROM shape_counts WHERE type = OLD.type AND annotations <= 0;
END;

CREATE TRIGGER shape_counts_update_new AFTER UPDATE OF type, file_seq ON annotation
WHEN OLD.type != NEW.type OR OLD.file_seq != NEW.file_seq
BEGIN
    INSERT INTO shape_counts (type, annotations, files)
    VALUES (NEW.type, 1, NOT EXISTS (SELECT 1 FROM annotation WHERE file_seq = NEW.file_seq AND type = NEW.type AND seq != NEW.seq))
    ON CONFLICT (type) DO UPDATE SET annotations = annotations + 1, files = files + excluded.files;
END;
