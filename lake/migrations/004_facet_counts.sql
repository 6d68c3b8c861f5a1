-- How many files have each box label and each tag name, kept by triggers, so
-- the web app's sidebar counts a whole lake's labels and tags (the landing
-- page, and the label list after a label click, which leaves out the label's
-- own terms) without reading its millions of boxes: the scan of 3M boxes
-- took over a second. A file counts once per label (or tag) however many
-- boxes (or operations) give it that label.

CREATE TABLE label_files (
    label TEXT    PRIMARY KEY,
    files INTEGER NOT NULL
) STRICT, WITHOUT ROWID;

CREATE TABLE tag_files (
    name  TEXT    PRIMARY KEY,
    files INTEGER NOT NULL
) STRICT, WITHOUT ROWID;

INSERT INTO label_files SELECT label, count(*) FROM (SELECT DISTINCT label, file_seq FROM annotation) GROUP BY label;
INSERT INTO tag_files SELECT name, count(*) FROM (SELECT DISTINCT name, file_seq FROM file_tag) GROUP BY name;

-- A file's first box of a label adds the file; its last one removes it.
-- Deleting a file deletes its boxes and tags by cascade, which fires these.
CREATE TRIGGER label_files_insert AFTER INSERT ON annotation
WHEN NOT EXISTS (SELECT 1 FROM annotation WHERE file_seq = NEW.file_seq AND label = NEW.label AND seq != NEW.seq)
BEGIN
    INSERT INTO label_files (label, files) VALUES (NEW.label, 1) ON CONFLICT (label) DO UPDATE SET files = files + 1;
END;

CREATE TRIGGER label_files_delete AFTER DELETE ON annotation
WHEN NOT EXISTS (SELECT 1 FROM annotation WHERE file_seq = OLD.file_seq AND label = OLD.label)
BEGIN
    UPDATE label_files SET files = files - 1 WHERE label = OLD.label;
    DELETE FROM label_files WHERE label = OLD.label AND files <= 0;
END;

CREATE TRIGGER label_files_update_old AFTER UPDATE OF label, file_seq ON annotation
WHEN (OLD.label != NEW.label OR OLD.file_seq != NEW.file_seq)
    AND NOT EXISTS (SELECT 1 FROM annotation WHERE file_seq = OLD.file_seq AND label = OLD.label)
BEGIN
    UPDATE label_files SET files = files - 1 WHERE label = OLD.label;
    DELETE FROM label_files WHERE label = OLD.label AND files <= 0;
END;

CREATE TRIGGER label_files_update_new AFTER UPDATE OF label, file_seq ON annotation
WHEN (OLD.label != NEW.label OR OLD.file_seq != NEW.file_seq)
    AND NOT EXISTS (SELECT 1 FROM annotation WHERE file_seq = NEW.file_seq AND label = NEW.label AND seq != NEW.seq)
BEGIN
    INSERT INTO label_files (label, files) VALUES (NEW.label, 1) ON CONFLICT (label) DO UPDATE SET files = files + 1;
END;

CREATE TRIGGER tag_files_insert AFTER INSERT ON file_tag
WHEN NOT EXISTS (SELECT 1 FROM file_tag WHERE file_seq = NEW.file_seq AND name = NEW.name AND operation != NEW.operation)
BEGIN
    INSERT INTO tag_files (name, files) VALUES (NEW.name, 1) ON CONFLICT (name) DO UPDATE SET files = files + 1;
END;

CREATE TRIGGER tag_files_delete AFTER DELETE ON file_tag
WHEN NOT EXISTS (SELECT 1 FROM file_tag WHERE file_seq = OLD.file_seq AND name = OLD.name)
BEGIN
    UPDATE tag_files SET files = files - 1 WHERE name = OLD.name;
    DELETE FROM tag_files WHERE name = OLD.name AND files <= 0;
END;
