"""A tracking package of framelake's tests: template matching in numpy.

It follows the tracking contract of docs/tracks.md ("A tracker of your own") and checks it as it goes:
the first call of a track is the keyframe's own frame with "start" and the keyframe's box; every
later call is the next frame in the job's order (forward or backward), with the box this package gave
last and the same "track". It keeps the box's grey pattern from the start frame and finds it again by
normalised cross-correlation within SEARCH pixels of where it was. A track labelled "ghost" is lost at
once ({"box": null}). Decoding the JPEG is PIL's (Debian's python3-pil); the tracking is numpy alone.
"""
import base64
import io
import json

import numpy as np
from PIL import Image

SEARCH = 12  # pixels the object may move between two frames


def model_fn(model_dir):
    return {}  # per-track state: track id -> template, box, last frame


def input_fn(body, content_type):
    assert content_type == "application/json", content_type
    req = json.loads(body)
    for k in ("track", "label", "frame", "image", "box"):
        assert k in req, "no %r in the request" % k
    img = Image.open(io.BytesIO(base64.b64decode(req["image"])))
    assert img.format == "JPEG", img.format
    req["pixels"] = np.asarray(img.convert("L"), dtype=np.float64)
    return req


def predict_fn(req, tracks):
    x1, y1, x2, y2 = req["box"]
    g = req["pixels"]
    if req.get("start"):
        ix, iy = int(round(x1)), int(round(y1))
        w, h = int(round(x2 - x1)), int(round(y2 - y1))
        tmpl = g[iy:iy + h, ix:ix + w]
        tracks[req["track"]] = {"tmpl": tmpl - tmpl.mean(), "frame": req["frame"], "box": req["box"]}
        return {"box": req["box"], "score": 1.0}
    st = tracks[req["track"]]  # a KeyError: the track id changed, or no start call came first
    assert abs(req["frame"] - st["frame"]) == 1, "frame %d after %d" % (req["frame"], st["frame"])
    assert req["box"] == st["box"], "box %s, but this package gave %s" % (req["box"], st["box"])
    st["frame"] = req["frame"]
    if req["label"] == "ghost":
        return {"box": None}
    t = st["tmpl"]
    h, w = t.shape
    ix, iy = int(round(x1)), int(round(y1))
    ox, oy = max(0, ix - SEARCH), max(0, iy - SEARCH)
    area = g[oy:min(g.shape[0], iy + h + SEARCH), ox:min(g.shape[1], ix + w + SEARCH)]
    if area.shape[0] < h or area.shape[1] < w:
        return {"box": None}
    win = np.lib.stride_tricks.sliding_window_view(area, (h, w))
    n = h * w
    sums = win.sum(axis=(2, 3))
    sq = np.einsum("ijkl,ijkl->ij", win, win)
    spread = np.sqrt(np.maximum(sq - sums * sums / n, 1e-9))
    ncc = np.einsum("ijkl,kl->ij", win, t) / (spread * np.sqrt((t * t).sum()) + 1e-9)
    dy, dx = np.unravel_index(int(np.argmax(ncc)), ncc.shape)
    bx, by = float(ox + dx), float(oy + dy)
    st["box"] = [bx, by, bx + w, by + h]
    return {"box": st["box"], "score": float(np.clip(ncc[dy, dx], 0, 1))}


def output_fn(pred, accept):
    return json.dumps(pred)
