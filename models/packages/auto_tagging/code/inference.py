"""framelake's default auto tagging model: NanoDet (COCO, 80 classes) converted to TorchScript.

Contract (docs/spec/rest.md, Model package contract): the body is a JPEG already resized by the server to
input_resolution; the output holds boxes in pixels of that image and class indices into
label_list.yaml. The score floor is low because the server applies the user's
confidence_threshold; NanoDet's own 416x416 input size is handled here, not by the server.
"""
from __future__ import annotations

import runtime  # first: it sets OpenMP's wait policy before cv2 and torch load OpenMP

from typing import Any, Dict

import numpy as np

from nanodet import Detections, Detector

SCORE_FLOOR = 0.05


def model_fn(model_dir: str) -> Detector:
    runtime.configure()
    detector = Detector(model_dir)
    detector.warm_up()
    return detector


def input_fn(request_body, request_content_type: str) -> np.ndarray:
    return runtime.decode_image(request_body, request_content_type)


def predict_fn(input_data: np.ndarray, model: Detector) -> Detections:
    return model.detect(input_data, threshold=SCORE_FLOOR)


def output_fn(prediction: Detections, content_type: str = "application/json") -> Dict[str, Any]:
    return {
        "boxes": [[round(float(v), 2) for v in box] for box in prediction.boxes],
        "classes": [int(c) for c in prediction.classes],
        "scores": [round(float(s), 4) for s in prediction.scores],
    }
