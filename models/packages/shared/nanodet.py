"""NanoDet on TorchScript: preprocessing, distribution-focal box decoding and per-class NMS.

The build copies this file into the code/ folder of every package that detects (auto tagging,
auto annotation), so each package stays a self-contained folder. model_meta.json, written by the
converter beside nanodet.pt, holds what must agree with the graph (input size, strides, reg_max).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import List, Tuple

import cv2
import numpy as np
import torch

# NanoDet's training normalisation (its config's img_norm_cfg), on BGR pixels.
MEAN_BGR = np.array([103.53, 116.28, 123.675], dtype=np.float32)
STD_BGR = np.array([57.375, 57.12, 58.395], dtype=np.float32)


@dataclass
class Detections:
    boxes: np.ndarray    # [n, 4] x1, y1, x2, y2 in pixels of the image given to detect
    scores: np.ndarray   # [n]
    classes: np.ndarray  # [n] indices into label_list.yaml

    def __len__(self) -> int:
        return len(self.scores)


# NanoDet's scores are IoU-aware quality scores, lower than class probabilities:
# its own demo draws boxes above 0.35, and a clear dog scores 0.47. The
# interface's default confidence_threshold is 0.5, so scores are mapped by the
# monotonic power s ** CALIBRATION, which sends 0.35 to 0.5 and keeps 0 and 1
# (and every ranking) where they were. Thresholds given to detect() are raw.
CALIBRATION = float(np.log(0.5) / np.log(0.35))


def calibrate(scores: np.ndarray) -> np.ndarray:
    return np.power(scores, CALIBRATION).astype(np.float32)


def nms(boxes: np.ndarray, scores: np.ndarray, iou: float) -> List[int]:
    """Greedy non-maximum suppression; indices kept, best first."""
    order = np.argsort(-scores, kind="stable")
    areas = (boxes[:, 2] - boxes[:, 0]).clip(0) * (boxes[:, 3] - boxes[:, 1]).clip(0)
    keep: List[int] = []
    while order.size:
        i = int(order[0])
        keep.append(i)
        rest = order[1:]
        w = (np.minimum(boxes[i, 2], boxes[rest, 2]) - np.maximum(boxes[i, 0], boxes[rest, 0])).clip(0)
        h = (np.minimum(boxes[i, 3], boxes[rest, 3]) - np.maximum(boxes[i, 1], boxes[rest, 1])).clip(0)
        inter = w * h
        overlap = inter / np.maximum(areas[i] + areas[rest] - inter, 1e-9)
        order = rest[overlap <= iou]
    return keep


class Detector:
    def __init__(self, model_dir: Path):
        model_dir = Path(model_dir)
        meta = json.loads((model_dir / "model_meta.json").read_text())["nanodet"]
        self.size = int(meta["input_size"])
        self.strides: Tuple[int, ...] = tuple(meta["strides"])
        self.reg_max = int(meta["reg_max"])
        self.num_classes = int(meta["num_classes"])
        self.model = torch.jit.load(str(model_dir / meta["file"]), map_location="cpu").eval()
        self.centers = [self._centers(s) for s in self.strides]
        self.bins = torch.arange(self.reg_max + 1, dtype=torch.float32)

    def _centers(self, stride: int) -> np.ndarray:
        n = self.size // stride
        ys, xs = np.divmod(np.arange(n * n), n)
        # NanoDet's GFL head puts each prior at the centre of its cell.
        return np.stack([(xs + 0.5) * stride, (ys + 0.5) * stride], 1).astype(np.float32)

    def warm_up(self) -> None:
        """The first calls build oneDNN kernels and take ~10x longer; pay that in model_fn."""
        blank = np.zeros((self.size, self.size, 3), np.uint8)
        for _ in range(3):
            self.detect(blank)

    def preprocess(self, image_bgr: np.ndarray) -> torch.Tensor:
        # Plain resize (no letterbox) as @vladmandic/human feeds this graph; boxes scale back per axis.
        img = cv2.resize(image_bgr, (self.size, self.size), interpolation=cv2.INTER_LINEAR)
        x = (img.astype(np.float32) - MEAN_BGR) / STD_BGR
        return torch.from_numpy(np.ascontiguousarray(x.transpose(2, 0, 1)))[None]

    def _decode_level(self, cls: torch.Tensor, reg: torch.Tensor, level: int, threshold: float):
        scores = cls[0].numpy()                       # sigmoid already applied in the graph
        cell, klass = np.nonzero(scores > threshold)
        if cell.size == 0:
            return None
        # Distribution focal loss: each side is a softmax over reg_max+1 bins; its expectation
        # is the distance from the prior, in strides.
        dist = torch.softmax(reg[0, torch.from_numpy(cell)].reshape(-1, 4, self.reg_max + 1), -1)
        dist = (dist @ self.bins).numpy() * self.strides[level]
        c = self.centers[level][cell]
        boxes = np.concatenate([c - dist[:, :2], c + dist[:, 2:]], 1)
        return boxes, scores[cell, klass], klass

    def detect(self, image_bgr: np.ndarray, threshold: float = 0.05, iou: float = 0.6,
               max_detections: int = 100) -> Detections:
        h, w = image_bgr.shape[:2]
        with torch.no_grad():
            outs = self.model(self.preprocess(image_bgr))
        levels = len(self.strides)
        parts = [self._decode_level(outs[i], outs[levels + i], i, threshold) for i in range(levels)]
        parts = [p for p in parts if p is not None]
        if not parts:
            return Detections(np.zeros((0, 4), np.float32), np.zeros(0, np.float32), np.zeros(0, np.int64))
        boxes = np.concatenate([p[0] for p in parts])
        scores = np.concatenate([p[1] for p in parts])
        classes = np.concatenate([p[2] for p in parts])
        top = np.argsort(-scores, kind="stable")[:1000]
        boxes, scores, classes = boxes[top], scores[top], classes[top]
        # Per-class NMS in one pass: shift each class's boxes to their own region of the plane.
        shifted = boxes + (classes[:, None] * (2 * self.size + 1)).astype(np.float32)
        keep = nms(shifted, scores, iou)[:max_detections]
        boxes = boxes[keep] * np.array([w / self.size, h / self.size] * 2, np.float32)
        boxes[:, 0::2] = boxes[:, 0::2].clip(0, w)
        boxes[:, 1::2] = boxes[:, 1::2].clip(0, h)
        return Detections(boxes, calibrate(scores[keep]), classes[keep].astype(np.int64))
