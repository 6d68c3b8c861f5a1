-- Tracks: one object followed through a video's frames (issue 34, docs/tracks.md).
--
-- track: a video's object, numbered in its video (MOT's id, CVAT's track id)
--   per operation, so a model run's track 3 and the human track 3 both live;
--   first_frame, last_frame and keyframes are kept by the writer so the
--   query language and the timeline read spans without the keyframes.
-- outside: frames where the object leaves the view; it stays out until the
--   next keyframe (CVAT's outside keyframe).
-- track_keyframe: the track's shape where someone (or a model) drew it: the
--   annotation's columns, one row a frame. Frames between two keyframes are
--   interpolated when read, never stored: a track of 18,000 frames with 20
--   keyframes is 20 rows.

CREATE TABLE track (
    seq         INTEGER PRIMARY KEY,
    id          TEXT    NOT NULL UNIQUE,
    file_seq    INTEGER NOT NULL REFERENCES file (seq) ON DELETE CASCADE,
    number      INTEGER NOT NULL CHECK (number >= 0),
    label       TEXT    NOT NULL CHECK (label <> ''),
    source      TEXT    NOT NULL CHECK (source IN ('human', 'machine')),
    operation   TEXT    NOT NULL,
    type        TEXT    NOT NULL CHECK (type IN ('box', 'polygon', 'mask', 'keypoints', 'polyline')),
    first_frame INTEGER NOT NULL,
    last_frame  INTEGER NOT NULL CHECK (last_frame >= first_frame),
    keyframes   INTEGER NOT NULL CHECK (keyframes >= 1),
    outside     TEXT    NOT NULL DEFAULT '[]' CHECK (json_valid(outside)),
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL,
    UNIQUE (file_seq, operation, number)
) STRICT;

CREATE INDEX track_label ON track (label, file_seq);

CREATE TABLE track_keyframe (
    track_seq  INTEGER NOT NULL REFERENCES track (seq) ON DELETE CASCADE,
    frame      INTEGER NOT NULL CHECK (frame >= 0),
    x          REAL    NOT NULL,
    y          REAL    NOT NULL,
    w          REAL    NOT NULL CHECK (w > 0),
    h          REAL    NOT NULL CHECK (h > 0),
    confidence REAL,
    attributes TEXT    NOT NULL DEFAULT '{}' CHECK (json_valid(attributes)),
    geometry   TEXT,
    area       REAL,
    PRIMARY KEY (track_seq, frame)
) STRICT, WITHOUT ROWID;
