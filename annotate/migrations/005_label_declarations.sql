-- What a project's label declares (docs/shapes.md, "Declaring labels"): its
-- typed attributes and, for a keypoints label, its point names, skeleton,
-- flip pairs and sigmas, as one JSON object ({"attributes": [...],
-- "keypoints": [...], ...}); NULL when it declares nothing, as every label
-- made before this did, so old projects keep free attributes.
ALTER TABLE project_label ADD COLUMN declaration TEXT CHECK (declaration IS NULL OR json_valid(declaration));

-- A label name's skeleton is the same in every project that declares one,
-- so a lookup by name (evaluation's sigmas, augmentation's flip pairs) is
-- unambiguous; declaring one checks the other projects' labels of that name.
CREATE INDEX project_label_name ON project_label (name);
