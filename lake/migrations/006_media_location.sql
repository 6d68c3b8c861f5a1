-- Where the lake's media lives. No row: the folder media/ of the data
-- directory. A row: the S3-compatible bucket its url names (no secrets in
-- it; credentials come from the environment). framelake media migrate
-- writes it only once every blob is in place at the new location.
CREATE TABLE media_location (
    id  INTEGER PRIMARY KEY CHECK (id = 1),
    url TEXT NOT NULL
) STRICT;
