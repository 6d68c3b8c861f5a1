-- The history of a frame's shapes (issue 35, docs/team.md): who changed them,
-- when, through what, and what changed.
--
-- A frame's first change keeps the shapes before it whole (base); every
-- change names the shapes it removed (the first 8 bytes of their JSON's
-- SHA-256, in hex: they were in the version before) and keeps those it
-- added, each as JSON or, when shorter, as a patch of a removed shape
-- ({"of": hash, "set": {...}, "unset": [...]}: a moved box is its new x).
-- Any version is the base with the changes up to it replayed.
-- shapes are those of one operation (a project) on one frame of a file.

CREATE TABLE frame_change (
    seq       INTEGER PRIMARY KEY,
    id        TEXT    NOT NULL UNIQUE,
    file_seq  INTEGER NOT NULL REFERENCES file (seq) ON DELETE CASCADE,
    frame     INTEGER NOT NULL,
    operation TEXT    NOT NULL,
    at        INTEGER NOT NULL,
    who       TEXT    NOT NULL,
    via       TEXT    NOT NULL,
    base      TEXT    CHECK (base IS NULL OR json_valid(base)),
    removed   TEXT    NOT NULL CHECK (json_valid(removed)), -- ["<hash>", ...]
    added     TEXT    NOT NULL CHECK (json_valid(added))
) STRICT;

CREATE INDEX frame_change_frame ON frame_change (file_seq, frame, operation, seq);
CREATE INDEX frame_change_who ON frame_change (who, at);
CREATE INDEX frame_change_at ON frame_change (at);
