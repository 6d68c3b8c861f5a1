"""The evaluation client functions (issues 21 and 24), mixed into Client.

evaluate_detections and find_label_disagreements start jobs and return
{"jobId"}; wait for them with Client.wait_job, whose "result" holds the
evaluation or the disagreements.
"""

from __future__ import annotations

import json
from typing import Optional


class EvaluationFunctions:
    """Named evaluations of a model run against human boxes, and label disagreements."""

    def call(self, function: str, **params):  # provided by Client
        raise NotImplementedError

    def _request(self, path, body, content_type, method="POST", headers=None):  # provided by Client
        raise NotImplementedError

    def evaluate_detections(self, pred_run_id: str, key: str, gt_operations: Optional[list] = None,
                            query: Optional[str] = None, collection_id: Optional[str] = None,
                            iou: Optional[float] = None, confidence: Optional[float] = None,
                            version_id: Optional[str] = None, split: Optional[str] = None,
                            tie_order: Optional[str] = None, area_source: Optional[str] = None,
                            voc_ap: Optional[str] = None, iou_type: Optional[str] = None) -> dict:
        """Evaluates the run's boxes against human boxes (of gt_operations, else all); key names the result.

        version_id (and split: train, validation or test) narrow the files to a dataset version's; with
        none of collection_id, query, version_id and gt_operations, the files the run covered are judged.
        tie_order ("image_id", default, or "file"), area_source ("annotation", default, or "box") and
        voc_ap ("all_points", default, or "voc07") are the named choices (README "Evaluating a model");
        iou_type is "bbox" (default) or "segm" (masks; docs/shapes.md)."""
        return self.call("evaluate_detections", pred_run_id=pred_run_id, key=key, gt_operations=gt_operations,
                         query=query, collection_id=collection_id, iou=iou, confidence=confidence,
                         version_id=version_id, split=split, tie_order=tie_order, area_source=area_source,
                         voc_ap=voc_ap, iou_type=iou_type)

    def set_lake_annotations(self, operation: str, files: list) -> dict:
        """Makes the given boxes the human boxes operation ("import:<name>") gives each file: the truth an
        evaluation names in gt_operations. files: [{"uniqueName", "annotations": [{"label", "x", "y",
        "width", "height"}, ...]}], or other shapes ({"label", "type": "polygon", "polygon": [[x1, y1, ...]]},
        masks, keypoints, polylines, classes: docs/shapes.md); an empty list labels a file empty. Answers
        {"changed", "unchanged"}."""
        body = json.dumps({"operation": operation, "files": files}).encode()
        with self._request("/api/v1/lake/annotations", body, "application/json", method="PUT") as resp:
            return json.load(resp)

    def get_evaluation(self, key: str, unique_name: Optional[str] = None) -> dict:
        """The figures; with unique_name also "boxes", the outcome of each box of that file."""
        return self.call("get_evaluation", key=key, unique_name=unique_name)

    def compare_evaluations(self, key_a: str, key_b: str) -> dict:
        return self.call("compare_evaluations", key_a=key_a, key_b=key_b)

    def delete_evaluation(self, key: str) -> dict:
        return self.call("delete_evaluation", key=key)

    def list_evaluations(self) -> dict:
        return self.call("list_evaluations")

    def find_label_disagreements(self, run_id: str, query: Optional[str] = None, iou: Optional[float] = None) -> dict:
        """Starts the job listing boxes the run missed, added or labelled otherwise than people did."""
        return self.call("find_label_disagreements", run_id=run_id, query=query, iou=iou)
