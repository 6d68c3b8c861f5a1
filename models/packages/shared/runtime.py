"""What every default package does the same way: threads and image decoding.

inference.py imports this module first, so the OpenMP setting below precedes torch's import.
"""
from __future__ import annotations

import ctypes
import os

# OpenMP threads that spin while waiting for each other collapse when the cores are shared
# (other workers, other jobs): NanoDet took 800 ms instead of 50 ms at load 4 on two cores.
# Passive waiting costs nothing when the cores are free. The runner's environment wins.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import cv2  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402


M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3  # mallopt parameters, glibc's malloc.h
KEEP_BYTES = 1 << 30


def _keep_freed_memory() -> None:
    """Let glibc reuse freed feature maps instead of unmapping them.

    Every multi-megabyte activation is otherwise a fresh mmap whose pages fault in on first
    touch; that was 80% of MobileNet's time here (84 ms -> 16 ms per image on one core).
    """
    try:
        libc = ctypes.CDLL(None)
        libc.mallopt(M_MMAP_THRESHOLD, KEEP_BYTES)
        libc.mallopt(M_TRIM_THRESHOLD, KEEP_BYTES)
    except (OSError, AttributeError):  # not glibc: slower, still correct
        pass


def configure() -> None:
    """Process set-up for inference: malloc reuse, and FRAMELAKE_TORCH_THREADS threads (default 1).

    One thread per worker: images come one at a time and a second thread gained 7% on two idle
    cores (NanoDet 34 -> 32 ms) while costing 30% more CPU per image, which a second worker or
    anyone else sharing the machine would rather have.
    """
    _keep_freed_memory()
    torch.set_num_threads(max(1, int(os.environ.get("FRAMELAKE_TORCH_THREADS") or 1)))


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
