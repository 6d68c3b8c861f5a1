"""framelake's default embedding model: the 1792-d pooled feature of MobileNetV2-1.4.

The backbone is nsfwjs's mobilenet_v2_mid (ImageNet-pretrained, then fine-tuned by nsfwjs);
its classifier is cut off by the converter, so the vector is the global-average-pooled output
of the last convolution, L2-normalised so cosine similarity is a dot product.
"""
from __future__ import annotations

import runtime  # first: it sets OpenMP's wait policy before cv2 and torch load OpenMP

import json
from pathlib import Path
from typing import Any, Dict

import cv2
import numpy as np
import torch



class Embedder:
    def __init__(self, model_dir: str):
        meta = json.loads((Path(model_dir) / "model_meta.json").read_text())["mobilenet"]
        self.size = int(meta["input_size"])
        self.dim = int(meta["dim"])
        self.model = torch.jit.load(str(Path(model_dir) / meta["file"]), map_location="cpu").eval()

    def preprocess(self, image_bgr: np.ndarray) -> torch.Tensor:
        h, w = image_bgr.shape[:2]
        # Whole image, no centre crop: a crop would hide what lies near the border.
        shrink = h > self.size or w > self.size
        img = cv2.resize(image_bgr, (self.size, self.size),
                         interpolation=cv2.INTER_AREA if shrink else cv2.INTER_LINEAR)
        rgb = cv2.cvtColor(img, cv2.COLOR_BGR2RGB).astype(np.float32) / 255.0  # nsfwjs's input
        return torch.from_numpy(rgb)[None]  # NHWC, as the TF.js graph

    def embed(self, image_bgr: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            (feature,) = self.model(self.preprocess(image_bgr))
        v = feature[0].numpy().astype(np.float64)
        return (v / max(np.linalg.norm(v), 1e-12)).astype(np.float32)


def model_fn(model_dir: str) -> Embedder:
    runtime.configure()
    embedder = Embedder(model_dir)
    blank = np.zeros((embedder.size, embedder.size, 3), np.uint8)
    for _ in range(3):  # oneDNN builds its kernels on the first calls
        embedder.embed(blank)
    return embedder


def input_fn(request_body, request_content_type: str) -> np.ndarray:
    return runtime.decode_image(request_body, request_content_type)


def predict_fn(input_data: np.ndarray, model: Embedder) -> np.ndarray:
    return model.embed(input_data)


def output_fn(prediction: np.ndarray, content_type: str = "application/json") -> Dict[str, Any]:
    return {"embedding": [float(v) for v in prediction]}
