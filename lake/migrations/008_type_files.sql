-- How many files of each type the lake has, kept by triggers, so the count of
-- every image (the grid's item count with no query) and the rows after a
-- deep page (a listing read from its far end, "go to item 900,000") are a row
-- read instead of a walk of a million index entries (70-90 ms of CPU each).

CREATE TABLE type_files (
    type  TEXT    PRIMARY KEY,
    files INTEGER NOT NULL
) STRICT, WITHOUT ROWID;

INSERT INTO type_files SELECT type, count(*) FROM file GROUP BY type;

CREATE TRIGGER type_files_insert AFTER INSERT ON file
BEGIN
    INSERT INTO type_files (type, files) VALUES (NEW.type, 1) ON CONFLICT (type) DO UPDATE SET files = files + 1;
END;

CREATE TRIGGER type_files_delete AFTER DELETE ON file
BEGIN
    UPDATE type_files SET files = files - 1 WHERE type = OLD.type;
END;

CREATE TRIGGER type_files_update AFTER UPDATE OF type ON file
WHEN OLD.type != NEW.type
BEGIN
    UPDATE type_files SET files = files - 1 WHERE type = OLD.type;
    INSERT INTO type_files (type, files) VALUES (NEW.type, 1) ON CONFLICT (type) DO UPDATE SET files = files + 1;
END;
