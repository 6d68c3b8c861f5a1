"""framelake's default `segmentation` model: a classical assist, GrabCut, no weights.

Input (application/json), the contract every `segmentation` package follows:
    {"image": base64 image bytes (JPEG, PNG...),
     "box": [x1, y1, x2, y2]                       # optional, pixels of the image
     "points": [{"x": .., "y": .., "label": 1|0}]}  # optional, 1 positive, 0 negative (SAM's convention)
At least a box or one positive point. Output:
    {"masks": [{"size": [height, width], "counts": COCO's compressed RLE string}],
     "scores": [s, ...]}                            # best first, 0..1

How: cv2.grabCut on the box (plus a margin of context) scaled so its longest side is WORK_SIDE
pixels, outside the box definite background, inside probably foreground; each click paints a disk
of definite foreground (positive) or background (negative) as a seed. GrabCut's colour models are
global to the crop, so the result is cleaned like an annotator would: the connected parts that
touch a positive click (or else the largest one) are kept and holes are filled. The mask is then
scaled back with linear interpolation so its edge is not a staircase of WORK_SIDE's pixels.
A box alone answers the union of GrabCut's mask and a colour posterior's (Lab histograms of the
margin and, by EM, of the box, under a prior highest at the box's centre): GrabCut collapses to
nothing when the background holds the object's colours, the posterior never does. GrabCut's
k-means starts from a fixed RNG seed, so the same request always gets the same mask.
"""
from __future__ import annotations

import base64
import json
import os
from typing import Any, Dict, List, Optional, Tuple

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import cv2  # noqa: E402
import numpy as np  # noqa: E402

WORK_SIDE = int(os.environ.get("FRAMELAKE_GRABCUT_SIDE") or 200)  # crop's longest side for GrabCut
ITERATIONS = 2                                                    # GrabCut's EM rounds
MARGIN = 0.15                  # context around the box, as a fraction of its sides (background samples)
POINT_ONLY_SIDE = 0.25         # no box: a square of this fraction of the image around the positive clicks
SEED_RADIUS = 0.03             # a click's seed disk, as a fraction of the crop's longest side
COLLAPSED = 0.1                # GrabCut keeping less of the box than this has collapsed: not a candidate
BINS = 16                      # colour model: Lab histogram bins per channel
PRIOR_SLOPE = 0.5              # the box prior falls from 0.95 at its centre by this much at its inscribed ellipse


class GrabCut:
    """The 'model': nothing to load, the settings above."""

    def __init__(self, side: int = WORK_SIDE, iterations: int = ITERATIONS):
        self.side, self.iterations = side, iterations

    def segment(self, img: np.ndarray, box: Optional[List[float]], points: List[Tuple[float, float, int]]
                ) -> Tuple[np.ndarray, float]:
        h, w = img.shape[:2]
        drawn = box is not None
        if box is None:
            box = box_around([(x, y) for x, y, lab in points if lab == 1], w, h)
        x1, y1, x2, y2 = clamp_box(box, w, h)
        mx, my = MARGIN * (x2 - x1) + 4, MARGIN * (y2 - y1) + 4
        cx1, cy1 = int(max(0, np.floor(x1 - mx))), int(max(0, np.floor(y1 - my)))
        cx2, cy2 = int(min(w, np.ceil(x2 + mx))), int(min(h, np.ceil(y2 + my)))
        crop = img[cy1:cy2, cx1:cx2]
        s = min(1.0, self.side / max(crop.shape[:2]))
        small = cv2.resize(crop, (max(1, round(crop.shape[1] * s)), max(1, round(crop.shape[0] * s))),
                           interpolation=cv2.INTER_AREA) if s < 1 else crop
        sh, sw = small.shape[:2]
        seed = np.full((sh, sw), cv2.GC_BGD, np.uint8)
        bx1, by1 = int(round((x1 - cx1) * s)), int(round((y1 - cy1) * s))
        bx2, by2 = max(bx1 + 1, int(round((x2 - cx1) * s))), max(by1 + 1, int(round((y2 - cy1) * s)))
        seed[by1:by2, bx1:bx2] = cv2.GC_PR_FGD
        r = max(2, int(round(SEED_RADIUS * max(sh, sw))))
        inside, outside = [], []
        for x, y, lab in points:
            px, py = int(round((x - cx1) * s)), int(round((y - cy1) * s))
            if 0 <= px < sw and 0 <= py < sh:
                cv2.circle(seed, (px, py), r, cv2.GC_FGD if lab == 1 else cv2.GC_BGD, -1)
                (inside if lab == 1 else outside).append((px, py))
        fg = grabcut(small, seed, self.iterations)
        if points:
            raw = int(fg.sum())
            fg = clean(fg, inside, outside)
            score = float(fg.sum()) / raw if raw else 0.0  # how much of GrabCut's answer survived cleaning
        else:
            fg, score = box_only(small, fg, (bx1, by1, bx2, by2))
        if s < 1:
            fg = cv2.resize(fg.astype(np.float32), (crop.shape[1], crop.shape[0]),
                            interpolation=cv2.INTER_LINEAR) >= 0.5
        mask = np.zeros((h, w), bool)
        mask[cy1:cy2, cx1:cx2] = fg
        if drawn:  # the scaled-back edge may bleed a pixel past the box the user drew
            keep = np.zeros((h, w), bool)
            keep[int(np.floor(y1)):int(np.ceil(y2)), int(np.floor(x1)):int(np.ceil(x2))] = True
            mask &= keep
        return mask, min(1.0, score)


def box_only(small: np.ndarray, gc: np.ndarray, bb: Tuple[int, int, int, int]) -> Tuple[np.ndarray, float]:
    """A box alone: the union of GrabCut's answer and the colour posterior's. GrabCut alone
    collapses to nothing on cluttered crops whose background shares the object's colours
    (12 of the 31 measured objects); the posterior (no graph cut) never collapses but misses
    what GrabCut's smoothness joins. The score is how much the two agree (their IoU)."""
    bx1, by1, bx2, by2 = bb
    inbox = np.zeros(gc.shape, bool)
    inbox[by1:by2, bx1:bx2] = True
    post = cv2.GaussianBlur(posterior(small, inbox, bb), (0, 0), 2.0) >= 0.5
    post &= inbox
    gc = gc & inbox
    if gc.sum() < COLLAPSED * inbox.sum():
        gc = np.zeros_like(gc)
    fg = clean(post | gc, [])
    union = int((post | gc).sum())
    return fg, (float((post & gc).sum()) / union if union else 0.0)


def posterior(small: np.ndarray, inbox: np.ndarray, bb: Tuple[int, int, int, int]) -> np.ndarray:
    """P(object | colour, place) for each pixel of the box: Lab histograms, the background's from
    the margin outside the box, the object's by a few EM rounds over the box's pixels (which mix
    object and background), with a prior that is highest at the box's centre."""
    bx1, by1, bx2, by2 = bb
    lab = cv2.cvtColor(small, cv2.COLOR_BGR2Lab).astype(np.int32) * BINS // 256
    q = (lab[..., 0] * BINS + lab[..., 1]) * BINS + lab[..., 2]
    n = BINS ** 3
    out = np.zeros(inbox.shape, np.float32)
    if inbox.all():  # a box over the whole image: no background to learn from, GrabCut answers alone
        return out
    hb = np.bincount(q[~inbox], minlength=n) + 0.1
    hb /= hb.sum()
    yy, xx = np.mgrid[by1:by2, bx1:bx2]
    d = np.hypot((xx - (bx1 + bx2) / 2) / max(1, (bx2 - bx1) / 2), (yy - (by1 + by2) / 2) / max(1, (by2 - by1) / 2))
    prior = np.clip(1.0 - PRIOR_SLOPE * d, 0.05, 0.95).ravel()
    qi = q[by1:by2, bx1:bx2].ravel()
    r = prior
    for _ in range(5):
        hf = np.bincount(qi, weights=r, minlength=n) + 0.1
        hf /= hf.sum()
        pf, pb = hf[qi] * prior, hb[qi] * (1 - prior)
        r = pf / (pf + pb)
    out[by1:by2, bx1:bx2] = r.reshape(by2 - by1, bx2 - bx1)
    return out


def grabcut(small: np.ndarray, seed: np.ndarray, iterations: int) -> np.ndarray:
    fgd = seed == cv2.GC_FGD
    if not ((seed == cv2.GC_PR_FGD) | fgd).any():
        return np.zeros(seed.shape, bool)
    if not (seed == cv2.GC_BGD).any() or (seed == cv2.GC_PR_FGD).sum() + fgd.sum() == seed.size:
        # A box over the whole image leaves GrabCut no background to learn from: say the border is.
        seed[[0, -1], :] = np.where(fgd[[0, -1], :], cv2.GC_FGD, cv2.GC_BGD)
        seed[:, [0, -1]] = np.where(fgd[:, [0, -1]], cv2.GC_FGD, cv2.GC_BGD)
    bgm, fgm = np.zeros((1, 65), np.float64), np.zeros((1, 65), np.float64)
    # GrabCut seeds its colour models by k-means from OpenCV's global RNG: without a fixed seed
    # the same request answers differently depending on the worker's earlier requests.
    cv2.setRNGSeed(0)
    try:
        cv2.grabCut(small, seed, None, bgm, fgm, iterations, cv2.GC_INIT_WITH_MASK)
    except cv2.error:  # too few samples of one side for its colour model: keep the seeds as they are
        pass
    return (seed == cv2.GC_FGD) | (seed == cv2.GC_PR_FGD)


def clean(fg: np.ndarray, inside: List[Tuple[int, int]], outside: List[Tuple[int, int]] = ()) -> np.ndarray:
    """Keep the parts touching a positive click (else the largest), fill their holes except
    those holding a negative click (the annotator's way of saying: this is a hole)."""
    n, lab, stats, _ = cv2.connectedComponentsWithStats(fg.astype(np.uint8), connectivity=8)
    if n <= 1:
        return fg
    keep = {int(lab[y, x]) for x, y in inside if lab[y, x] > 0}
    if not keep:
        keep = {1 + int(np.argmax(stats[1:, cv2.CC_STAT_AREA]))}
    out = np.isin(lab, list(keep))
    # Holes: background not reachable from the crop's border.
    pad = np.pad(~out, 1, constant_values=True).astype(np.uint8)
    ff = np.zeros((pad.shape[0] + 2, pad.shape[1] + 2), np.uint8)
    cv2.floodFill(pad, ff, (0, 0), 2)
    holes = pad[1:-1, 1:-1] == 1
    if outside and holes.any():
        _, hl = cv2.connectedComponents(holes.astype(np.uint8), connectivity=4)
        marked = {int(hl[y, x]) for x, y in outside if hl[y, x] > 0}
        holes &= ~np.isin(hl, list(marked))
    return out | holes


def clamp_box(box: List[float], w: int, h: int) -> Tuple[float, float, float, float]:
    x1, y1, x2, y2 = (float(v) for v in box)
    x1, x2 = sorted((min(max(x1, 0), w), min(max(x2, 0), w)))
    y1, y2 = sorted((min(max(y1, 0), h), min(max(y2, 0), h)))
    if x2 - x1 < 1 or y2 - y1 < 1:
        raise ValueError(f"box {box} has no area inside the {w}x{h} image")
    return x1, y1, x2, y2


def box_around(pos: List[Tuple[float, float]], w: int, h: int) -> List[float]:
    if not pos:
        raise ValueError("give a box or at least one positive point")
    half = POINT_ONLY_SIDE * max(w, h) / 2
    xs, ys = [p[0] for p in pos], [p[1] for p in pos]
    return [min(xs) - half, min(ys) - half, max(xs) + half, max(ys) + half]


def rle_counts(mask: np.ndarray) -> List[int]:
    """Column-major run lengths starting with background, as COCO stores masks."""
    flat = np.asfortranarray(mask).ravel(order="F").astype(np.int8)
    change = np.flatnonzero(np.diff(flat)) + 1
    edges = np.concatenate(([0], change, [flat.size]))
    runs = np.diff(edges).tolist()
    if flat.size and flat[0]:
        runs = [0] + runs
    return runs


def rle_string(counts: List[int]) -> str:
    """pycocotools' rleToString: LEB128-like 5-bit groups, each count after the second as a delta."""
    out = []
    for i, x in enumerate(counts):
        if i > 2:
            x -= counts[i - 2]
        more = True
        while more:
            c = x & 0x1F
            x >>= 5
            more = (x != -1) if (c & 0x10) else (x != 0)
            if more:
                c |= 0x20
            out.append(chr(c + 48))
    return "".join(out)


def encode(mask: np.ndarray) -> Dict[str, Any]:
    return {"size": [int(mask.shape[0]), int(mask.shape[1])], "counts": rle_string(rle_counts(mask))}


def model_fn(model_dir: str) -> GrabCut:
    cv2.setNumThreads(1)
    model = GrabCut()
    rng = np.random.default_rng(0)
    warm = rng.integers(0, 255, (120, 160, 3), np.uint8)
    model.segment(warm, [40, 30, 120, 90], [(80, 60, 1)])  # first-call costs out of the first request
    return model


def input_fn(request_body, request_content_type: str) -> Dict[str, Any]:
    ctype = (request_content_type or "").split(";")[0].strip().lower()
    if ctype not in ("application/json", ""):
        raise ValueError(f"unsupported content type {request_content_type!r}: send application/json")
    req = json.loads(request_body)
    img = cv2.imdecode(np.frombuffer(base64.b64decode(req["image"]), np.uint8), cv2.IMREAD_COLOR)
    if img is None:
        raise ValueError("image is not a decodable image")
    points = [(float(p["x"]), float(p["y"]), 1 if int(p.get("label", 1)) else 0) for p in req.get("points") or []]
    box = req.get("box")
    if box is not None and len(box) != 4:
        raise ValueError("box must be [x1, y1, x2, y2]")
    return {"image": img, "box": box, "points": points}


def predict_fn(data: Dict[str, Any], model: GrabCut) -> Dict[str, Any]:
    mask, score = model.segment(data["image"], data["box"], data["points"])
    return {"masks": [mask], "scores": [score]}


def output_fn(prediction: Dict[str, Any], content_type: str = "application/json") -> Dict[str, Any]:
    return {"masks": [encode(m) for m in prediction["masks"]], "scores": [float(s) for s in prediction["scores"]]}
