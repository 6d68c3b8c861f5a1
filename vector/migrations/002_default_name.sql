-- The shipped default embedding model stored its vectors as "default"; it is now
-- named default-embedding everywhere (analysis.DefaultName), and "default" in a
-- request is resolved to the current default embedding model by the caller.
UPDATE embedding_model SET name = 'default-embedding'
WHERE name = 'default'
  AND NOT EXISTS (SELECT 1 FROM embedding_model WHERE name = 'default-embedding');
