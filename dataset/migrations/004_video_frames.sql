-- Frames sampled from lake videos (docs/tracks.md "Datasets from videos"):
-- an item whose bytes ffmpeg extracted from frame video_frame of the video
-- whose uniqueName is video (file_seq is the video's, so every frame of it
-- follows it into one split). Both NULL for images and augmented frames.
-- phash and the two centre hashes are the frame's perceptual hashes
-- (curate.Measure), kept for leakage: the lake scores its files, not the
-- frames a build extracts. They hold the uint64 bits as a signed integer.
ALTER TABLE version_item ADD COLUMN video TEXT;
ALTER TABLE version_item ADD COLUMN video_frame INTEGER CHECK (video_frame IS NULL OR video_frame >= 0);
ALTER TABLE version_item ADD COLUMN phash INTEGER;
ALTER TABLE version_item ADD COLUMN phash_c1 INTEGER;
ALTER TABLE version_item ADD COLUMN phash_c2 INTEGER;
