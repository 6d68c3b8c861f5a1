"""What every default package does the same way: threads and image decoding."""
from __future__ import annotations

import os

import cv2
import numpy as np
import torch


def configure_threads() -> None:
    """FRAMELAKE_TORCH_THREADS, else every core this process may run on."""
    want = os.environ.get("FRAMELAKE_TORCH_THREADS")
    n = int(want) if want else len(os.sched_getaffinity(0))
    torch.set_num_threads(max(1, n))


def decode_image(body, content_type: str) -> np.ndarray:
    """JPEG (or any image OpenCV reads) bytes -> BGR uint8 array."""
    ctype = (content_type or "").split(";")[0].strip().lower()
    if ctype and not (ctype.startswith("image/") or ctype == "application/octet-stream"):
        raise ValueError(f"unsupported content type {content_type!r}: send image/jpeg")
    if isinstance(body, str):
        body = body.encode("latin-1")
    img = cv2.imdecode(np.frombuffer(bytes(body), np.uint8), cv2.IMREAD_COLOR)
    if img is None:
        raise ValueError("the request body is not a decodable image")
    return img
