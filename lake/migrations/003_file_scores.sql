-- Figures that analyses compute for a file after ingest: quality scores and
-- near-duplicate groups (curation), label disagreements between a model run
-- and people, uniqueness among embeddings, and the per-file outcome counts of
-- named evaluations. The query language reads them (quality.*, duplicates.*,
-- disagreement.count, uniqueness, eval.<key>.*); the packages that compute
-- them write them through lake methods. A file without a row has no figure,
-- except the counts with a natural default (duplicates.count 1,
-- disagreement.count 0). Rows go with their file.

CREATE TABLE file_quality (
    file_seq   INTEGER PRIMARY KEY REFERENCES file (seq) ON DELETE CASCADE,
    sharpness  REAL NOT NULL,
    brightness REAL NOT NULL,
    contrast   REAL NOT NULL,
    entropy    REAL NOT NULL,
    aspect     REAL NOT NULL,
    phash      INTEGER NOT NULL -- 64-bit perceptual hash, as a signed integer
);
CREATE INDEX file_quality_sharpness ON file_quality (sharpness);
CREATE INDEX file_quality_brightness ON file_quality (brightness);
CREATE INDEX file_quality_contrast ON file_quality (contrast);
CREATE INDEX file_quality_entropy ON file_quality (entropy);
CREATE INDEX file_quality_aspect ON file_quality (aspect);

CREATE TABLE file_duplicate (
    file_seq     INTEGER PRIMARY KEY REFERENCES file (seq) ON DELETE CASCADE,
    group_id     TEXT NOT NULL,
    member_count INTEGER NOT NULL CHECK (member_count >= 1)
);
CREATE INDEX file_duplicate_group ON file_duplicate (group_id);

CREATE TABLE file_disagreement (
    file_seq INTEGER PRIMARY KEY REFERENCES file (seq) ON DELETE CASCADE,
    run_id   TEXT NOT NULL,
    count    INTEGER NOT NULL CHECK (count >= 0)
);

CREATE TABLE file_uniqueness (
    file_seq   INTEGER PRIMARY KEY REFERENCES file (seq) ON DELETE CASCADE,
    model_name TEXT NOT NULL,
    score      REAL NOT NULL
);
CREATE INDEX file_uniqueness_score ON file_uniqueness (score);

CREATE TABLE file_eval (
    eval_key TEXT NOT NULL,
    file_seq INTEGER NOT NULL REFERENCES file (seq) ON DELETE CASCADE,
    tp       INTEGER NOT NULL CHECK (tp >= 0),
    fp       INTEGER NOT NULL CHECK (fp >= 0),
    fn       INTEGER NOT NULL CHECK (fn >= 0),
    PRIMARY KEY (eval_key, file_seq)
) WITHOUT ROWID;
CREATE INDEX file_eval_file ON file_eval (file_seq);
