-- An import's boxes without the per-row count triggers (issue 32's import
-- figure; lake/import_counts.go).
--
-- The triggers of migrations 004, 012 and 014 that an annotation's insert and
-- delete fire (label_files, shape_counts, label_file, source_files and the
-- list generation label_file's rows bump) cost 17 of the 36 µs an import's
-- box insert took: a probe of the file's other annotations and an upsert
-- each, per row. A writer that inserts or deletes many annotations of a known
-- set of files puts the one row of bulk_write in its transaction, takes those
-- files' counts out before it writes, and puts them back from what the files
-- then hold after, in a few set-based statements (lake.bulkCounts). While the
-- row is there, these triggers do nothing. The row is deleted before the
-- transaction commits, and a transaction that fails rolls it back with the
-- rest, so no other writer ever sees it: every other write (a person's edit,
-- a workspace save, a history restore, a delete) fires them as before.
-- Updates of an annotation's label, type, source or file are not bulk writes
-- and keep their triggers unguarded.

CREATE TABLE bulk_write (
    one INTEGER PRIMARY KEY CHECK (one = 1)
) STRICT;

DROP TRIGGER label_files_insert;
DROP TRIGGER label_files_delete;
DROP TRIGGER shape_counts_insert;
DROP TRIGGER shape_counts_delete;
DROP TRIGGER label_file_insert;
DROP TRIGGER label_file_delete;
DROP TRIGGER source_files_insert;
DROP TRIGGER source_files_delete;
DROP TRIGGER list_generation_label_insert;
DROP TRIGGER list_generation_label_delete;

-- The bodies are migrations 004, 012 and 014's; only the first test of each
-- WHEN is new, so that a bulk write skips the probes too.

CREATE TRIGGER label_files_insert AFTER INSERT ON annotation
WHEN NOT EXISTS (SELECT 1 FROM bulk_write)
    AND NOT EXISTS (SELECT 1 FROM annotation WHERE file_seq = NEW.file_seq AND label = NEW.label AND seq != NEW.seq)
BEGIN
    INSERT INTO label_files (label, files) VALUES (NEW.label, 1) ON CONFLICT (label) DO UPDATE SET files = files + 1;
END;

CREATE TRIGGER label_files_delete AFTER DELETE ON annotation
WHEN NOT EXISTS (SELECT 1 FROM bulk_write)
    AND NOT EXISTS (SELECT 1 FROM annotation WHERE file_seq = OLD.file_seq AND label = OLD.label)
BEGIN
    UPDATE label_files SET files = files - 1 WHERE label = OLD.label;
    DELETE FROM label_files WHERE label = OLD.label AND files <= 0;
END;

CREATE TRIGGER shape_counts_insert AFTER INSERT ON annotation
WHEN NOT EXISTS (SELECT 1 FROM bulk_write)
BEGIN
    INSERT INTO shape_counts (type, annotations, files)
    VALUES (NEW.type, 1, NOT EXISTS (SELECT 1 FROM annotation WHERE file_seq = NEW.file_seq AND type = NEW.type AND seq != NEW.seq))
    ON CONFLICT (type) DO UPDATE SET annotations = annotations + 1, files = files + excluded.files;
END;

CREATE TRIGGER shape_counts_delete AFTER DELETE ON annotation
WHEN NOT EXISTS (SELECT 1 FROM bulk_write)
BEGIN
    UPDATE shape_counts SET annotations = annotations - 1,
        files = files - NOT EXISTS (SELECT 1 FROM annotation WHERE file_seq = OLD.file_seq AND type = OLD.type)
    WHERE type = OLD.type;
    DELETE FROM shape_counts WHERE type = OLD.type AND annotations <= 0;
END;

CREATE TRIGGER label_file_insert AFTER INSERT ON annotation
WHEN NOT EXISTS (SELECT 1 FROM bulk_write)
BEGIN
    INSERT OR IGNORE INTO label_file (label, file_seq, type, updated_at)
    SELECT NEW.label, f.seq, f.type, f.updated_at FROM file f WHERE f.seq = NEW.file_seq;
END;

CREATE TRIGGER label_file_delete AFTER DELETE ON annotation
WHEN NOT EXISTS (SELECT 1 FROM bulk_write)
    AND NOT EXISTS (SELECT 1 FROM annotation WHERE file_seq = OLD.file_seq AND label = OLD.label)
BEGIN
    DELETE FROM label_file WHERE label = OLD.label AND file_seq = OLD.file_seq;
END;

CREATE TRIGGER source_files_insert AFTER INSERT ON annotation
WHEN NOT EXISTS (SELECT 1 FROM bulk_write)
    AND NOT EXISTS (SELECT 1 FROM annotation WHERE source = NEW.source AND file_seq = NEW.file_seq AND seq != NEW.seq)
BEGIN
    INSERT INTO source_files (source, type, files) SELECT NEW.source, f.type, 1 FROM file f WHERE f.seq = NEW.file_seq
    ON CONFLICT (source, type) DO UPDATE SET files = files + 1;
    UPDATE list_generation SET n = n + 1;
END;

CREATE TRIGGER source_files_delete AFTER DELETE ON annotation
WHEN NOT EXISTS (SELECT 1 FROM bulk_write)
    AND NOT EXISTS (SELECT 1 FROM annotation WHERE source = OLD.source AND file_seq = OLD.file_seq)
BEGIN
    UPDATE source_files SET files = files - 1
    WHERE source = OLD.source AND type = (SELECT f.type FROM file f WHERE f.seq = OLD.file_seq);
    DELETE FROM source_files WHERE files <= 0;
    UPDATE list_generation SET n = n + 1;
END;

-- A bulk write takes its files' label_file rows out and puts them back:
-- it adds one to the generation once, at its end.
CREATE TRIGGER list_generation_label_insert AFTER INSERT ON label_file
WHEN NOT EXISTS (SELECT 1 FROM bulk_write)
BEGIN
    UPDATE list_generation SET n = n + 1;
END;

CREATE TRIGGER list_generation_label_delete AFTER DELETE ON label_file
WHEN NOT EXISTS (SELECT 1 FROM bulk_write)
BEGIN
    UPDATE list_generation SET n = n + 1;
END;
