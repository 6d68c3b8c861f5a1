-- Perceptual hashes of the centre of each scored image (0.9 and 0.8 of its
-- width and height, package curate's CentreScales), written with its
-- file_quality row, so that near-duplicate search by hash finds centred
-- crops: a copy cropped by 5% on every side is its original's centre 0.9.
-- Images scored before this table have no row: their whole-image hash alone
-- is compared. Rows go with their file.
CREATE TABLE file_centre_hash (
    file_seq INTEGER PRIMARY KEY REFERENCES file (seq) ON DELETE CASCADE,
    centre90 INTEGER NOT NULL, -- 64-bit hashes, as signed integers
    centre80 INTEGER NOT NULL
);
