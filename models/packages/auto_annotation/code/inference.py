"""framelake's default auto annotation model: text prompts answered by a closed-set detector.

No open-vocabulary detector (Grounding DINO, OWL-ViT) can be had offline, so each prompt is
mapped onto the COCO classes NanoDet knows (prompt_map.py), the detector runs once, and every
box of a mapped class is labelled with the user's prompt. Prompts that map to nothing come back
in "unsupported" so the caller can tell "not found" from "cannot look for this".

Request (docs/spec/rest.md, Model package contract): {"image": "<base64 JPEG>", "prompts": [{"label": ..., "description": ...}]}.
"""
from __future__ import annotations

import runtime  # first: it sets OpenMP's wait policy before cv2 and torch load OpenMP

import base64
import binascii
import json
from pathlib import Path
from typing import Any, Dict, List, NamedTuple

import cv2
import numpy as np

from nanodet import Detector
from prompt_map import PromptMapper

SCORE_FLOOR = 0.05


class Model(NamedTuple):
    detector: Detector
    mapper: PromptMapper


class Request(NamedTuple):
    image: np.ndarray
    labels: List[str]


def _labels(model_dir: Path) -> List[str]:
    return [l.strip()[2:].strip() for l in (model_dir / "label_list.yaml").read_text().splitlines()
            if l.strip().startswith("- ")]


def model_fn(model_dir: str) -> Model:
    runtime.configure()
    root = Path(model_dir)
    detector = Detector(root)
    detector.warm_up()
    return Model(detector, PromptMapper(_labels(root), root / "coco_vocab.json"))


def input_fn(request_body, request_content_type: str) -> Request:
    ctype = (request_content_type or "application/json").split(";")[0].strip().lower()
    if ctype != "application/json":
        raise ValueError(f"unsupported content type {request_content_type!r}: send application/json")
    body = json.loads(request_body)
    if not isinstance(body, dict) or not isinstance(body.get("image"), str):
        raise ValueError('the request needs "image": a base64 JPEG')
    try:
        raw = base64.b64decode(body["image"], validate=False)
    except (binascii.Error, ValueError) as err:
        raise ValueError(f'"image" is not base64: {err}') from err
    image = cv2.imdecode(np.frombuffer(raw, np.uint8), cv2.IMREAD_COLOR)
    if image is None:
        raise ValueError('"image" is not a decodable image')
    prompts = body.get("prompts") or []
    labels = []
    for p in prompts:
        label = p.get("label") if isinstance(p, dict) else p
        if not isinstance(label, str) or not label.strip():
            raise ValueError('every prompt needs a non-empty "label"')
        labels.append(label)
    return Request(image, labels)


def predict_fn(input_data: Request, model: Model) -> Dict[str, Any]:
    wanted = {label: model.mapper.classes_for(label) for label in input_data.labels}
    result: Dict[str, Any] = {"boxes": [], "scores": [], "phrases": [],
                              "unsupported": [l for l, c in wanted.items() if not c]}
    if not any(wanted.values()):
        return result
    found = model.detector.detect(input_data.image, threshold=SCORE_FLOOR)
    for box, score, klass in zip(found.boxes, found.scores, found.classes):
        for label, classes in wanted.items():
            if int(klass) in classes:
                result["boxes"].append([round(float(v), 2) for v in box])
                result["scores"].append(round(float(score), 4))
                result["phrases"].append(label)
    return result


def output_fn(prediction: Dict[str, Any], content_type: str = "application/json") -> Dict[str, Any]:
    return prediction
