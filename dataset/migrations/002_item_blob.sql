-- The lake asks whether a version still names a blob before it removes one.
CREATE INDEX version_item_blob ON version_item (blob, ext);
