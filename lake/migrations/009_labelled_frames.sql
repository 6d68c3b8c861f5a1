-- What a labelled import knows beyond its boxes, for evaluations that follow
-- pycocotools (issue 31):
--
-- labelled_frame: a frame an operation labelled, boxes or none. An image a
-- COCO file lists with no annotations (a YOLO label file with no line, a VOC
-- file with no object, a CVAT image with no shape) is labelled empty: a
-- model's box there is a false positive, where a frame nobody labelled is
-- not judged. image_id is the image's id in its COCO file, NULL for other
-- formats: pycocotools breaks tied scores in image id order.
--
-- annotation.area: COCO's area of the annotation (the segment's, not the
-- box's), NULL when the box's source gave none; evaluations' area ranges
-- use it as pycocotools does.

ALTER TABLE annotation ADD COLUMN area REAL;

CREATE TABLE labelled_frame (
    file_seq  INTEGER NOT NULL REFERENCES file (seq) ON DELETE CASCADE,
    operation TEXT    NOT NULL,
    frame     INTEGER NOT NULL DEFAULT 0,
    image_id  INTEGER,
    PRIMARY KEY (file_seq, operation, frame)
) STRICT, WITHOUT ROWID;

CREATE INDEX labelled_frame_operation ON labelled_frame (operation, file_seq);
