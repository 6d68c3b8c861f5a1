-- The shipped system default models were registered as system-<application>-<12 hex>,
-- a name that changed with every rebuild, while their vectors were stored as "default".
-- They are now registered as default-<application> (analysis.DefaultName) and the
-- hash of the files they were built from moves to source. Runs follow the new
-- names; embedding runs of the default stored their vectors under "default", which
-- the vector store's own migration renames to default-embedding.
ALTER TABLE model ADD COLUMN source TEXT NOT NULL DEFAULT '';

UPDATE model SET
    source = substr(name, -12),
    name = 'default-' || replace(application, '_', '-')
WHERE created_by = 'framelake'
  AND name GLOB 'system-' || replace(application, '_', '-') || '-[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]'
  AND NOT EXISTS (SELECT 1 FROM model AS taken WHERE taken.name = 'default-' || replace(model.application, '_', '-'));

UPDATE run SET model_name = 'default-' || replace(application, '_', '-')
WHERE model_name GLOB 'system-' || replace(application, '_', '-') || '-[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]';

UPDATE run SET vector_name = 'default-embedding' WHERE vector_name = 'default';
