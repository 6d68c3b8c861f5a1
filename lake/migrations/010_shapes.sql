-- Every shape people label, not only boxes (issue 32, docs/shapes.md).
--
-- type: what the annotation is. Existing rows are boxes.
-- geometry: the shape as the API writes it, in JSON: a polygon's rings, a
--   polyline's points, the keypoints, or a mask's {"size", "counts"} with
--   COCO's compressed counts (a 1080p person mask is about 1.3 KB). NULL for
--   boxes and classes.
-- x, y, w, h stay the box, derived from the shape for every other type (a
--   class's box is its frame), so everything that reads boxes reads shapes.
-- area: the shape's area in pixels (COCO's area when an import gave one).
-- points, visible: a polygon's or polyline's vertices, or the labelled and
--   the visible keypoints: the query language's annotation.points and
--   annotation.keypoints.visible without parsing JSON.

ALTER TABLE annotation ADD COLUMN type TEXT NOT NULL DEFAULT 'box'
    CHECK (type IN ('box', 'polygon', 'mask', 'keypoints', 'polyline', 'class'));
ALTER TABLE annotation ADD COLUMN geometry TEXT;
ALTER TABLE annotation ADD COLUMN points INTEGER;
ALTER TABLE annotation ADD COLUMN visible INTEGER;
