"""End-to-end tests of the default model packages on real photos (Debian's darknet package).

Each package is loaded the way framelake's Python worker loads it (code/ on sys.path, then
model_fn -> input_fn -> predict_fn -> output_fn) and fed what the server sends: a JPEG resized
to input_resolution. Run with the interpreter that has python3-torch:

    /usr/bin/python3 -m unittest discover -s models/tests -v

FRAMELAKE_MODELS_DIR overrides where `make models` put the packages (default build/models).
"""
from __future__ import annotations

import os

# As the packages' runtime.py does, before cv2 or torch loads OpenMP (see there for why).
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import base64
import importlib.util
import json
import sys
import unittest
from pathlib import Path
from types import ModuleType
from typing import Any, Dict, List, Sequence, Tuple

import cv2
import numpy as np

REPO = Path(__file__).resolve().parents[2]
MODELS = Path(os.environ.get("FRAMELAKE_MODELS_DIR", REPO / "build" / "models"))
PHOTOS = Path(os.environ.get("FRAMELAKE_TEST_PHOTOS", "/usr/share/darknet/data"))
SHARED_MODULES = ("runtime", "nanodet", "prompt_map")
# The interface's default confidence_threshold: the default detector calibrates its scores so
# that this default keeps what NanoDet's own demo (0.35 on raw scores) keeps.
THRESHOLD = 0.5

# Reference boxes (x1, y1, x2, y2) in the photos' own pixels, from the well-known detections.
REFERENCE = {
    "dog.jpg": {"dog": (128, 224, 314, 537), "bicycle": (124, 127, 568, 420)},
    "person.jpg": {"person": (190, 98, 271, 380), "horse": (397, 130, 606, 349)},
    "giraffe.jpg": {"giraffe": (165, 30, 450, 440), "zebra": (306, 203, 422, 444)},
}


class Package:
    """A model package driven like analysis/worker/worker.py drives it."""

    def __init__(self, app: str):
        self.dir = MODELS / app
        code = self.dir / "code"
        for name in SHARED_MODULES:  # each package brings its own copies
            sys.modules.pop(name, None)
        sys.path.insert(0, str(code))
        try:
            spec = importlib.util.spec_from_file_location(f"inference_{app}", code / "inference.py")
            self.module: ModuleType = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(self.module)
            self.model = self.module.model_fn(str(self.dir))
        finally:
            sys.path.remove(str(code))

    def __call__(self, body: Any, content_type: str) -> Dict[str, Any]:
        m = self.module
        out = m.output_fn(m.predict_fn(m.input_fn(body, content_type), self.model), "application/json")
        if isinstance(out, (str, bytes)):
            out = json.loads(out)
        return json.loads(json.dumps(out))  # what the runner would serialise


def photo(name: str) -> np.ndarray:
    img = cv2.imread(str(PHOTOS / name))
    if img is None:
        raise FileNotFoundError(f"{PHOTOS / name}: install Debian's darknet package")
    return img


def jpeg(img: np.ndarray, size: Tuple[int, int] = None) -> bytes:
    """What the server sends: the image resized to input_resolution (width, height), as JPEG."""
    if size is not None:
        img = cv2.resize(img, size, interpolation=cv2.INTER_AREA)
    ok, buf = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, 90])
    assert ok
    return buf.tobytes()


def iou(a: Sequence[float], b: Sequence[float]) -> float:
    w = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    h = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - w * h
    return w * h / union if union > 0 else 0.0


def labels(app: str = "auto_tagging") -> List[str]:
    text = (MODELS / app / "label_list.yaml").read_text().splitlines()
    return [l.strip()[2:] for l in text if l.strip().startswith("- ")]


def setUpModule() -> None:
    if not (MODELS / "STAMP.json").is_file():
        raise RuntimeError(f"no default models in {MODELS}: run `make models`")


class AutoTaggingTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.pkg = Package("auto_tagging")
        cls.labels = labels()

    def tags(self, name: str, size: Tuple[int, int]) -> Dict[str, List[Tuple[float, List[float]]]]:
        out = self.pkg(jpeg(photo(name), size), "image/jpeg")
        self.assertEqual(set(out), {"boxes", "classes", "scores"})
        self.assertEqual(len(out["boxes"]), len(out["classes"]))
        self.assertEqual(len(out["boxes"]), len(out["scores"]))
        found: Dict[str, List[Tuple[float, List[float]]]] = {}
        for box, klass, score in zip(out["boxes"], out["classes"], out["scores"]):
            self.assertTrue(0 <= box[0] <= box[2] <= size[0] and 0 <= box[1] <= box[3] <= size[1], box)
            if score >= THRESHOLD:
                found.setdefault(self.labels[klass], []).append((score, box))
        return found

    def test_label_list_is_coco(self) -> None:
        self.assertEqual(len(self.labels), 80)
        self.assertEqual(self.labels[:3], ["person", "bicycle", "car"])
        self.assertEqual(self.labels[-1], "toothbrush")

    def test_photos(self) -> None:
        for name, want in REFERENCE.items():
            h, w = photo(name).shape[:2]
            for size in ((416, 416), (300, 300), (w, h)):
                with self.subTest(photo=name, input_resolution=size):
                    found = self.tags(name, size)
                    for label, ref in want.items():
                        self.assertIn(label, found, f"{name}: tags {sorted(found)}")
                        # Boxes come in pixels of the image received; scale the reference to it.
                        sx, sy = size[0] / w, size[1] / h
                        ref_scaled = (ref[0] * sx, ref[1] * sy, ref[2] * sx, ref[3] * sy)
                        best = max(iou(box, ref_scaled) for _, box in found[label])
                        self.assertGreater(best, 0.6, f"{name} {label}: best IoU {best:.2f}")

    def test_blank_image_tags_nothing(self) -> None:
        out = self.pkg(jpeg(np.full((300, 300, 3), 127, np.uint8)), "image/jpeg")
        self.assertFalse([s for s in out["scores"] if s >= THRESHOLD])

    def test_rejects_non_images(self) -> None:
        with self.assertRaises(ValueError):
            self.pkg(b"not a jpeg", "image/jpeg")
        with self.assertRaises(ValueError):
            self.pkg(jpeg(photo("dog.jpg")), "text/plain")


class EmbeddingTest(unittest.TestCase):
    NAMES = ("dog.jpg", "person.jpg", "giraffe.jpg", "horses.jpg", "eagle.jpg", "kite.jpg", "scream.jpg")

    @classmethod
    def setUpClass(cls) -> None:
        cls.pkg = Package("embedding")

    def embed(self, img: np.ndarray) -> np.ndarray:
        out = self.pkg(jpeg(img, (300, 300)), "image/jpeg")
        self.assertEqual(set(out), {"embedding"})
        return np.array(out["embedding"], np.float64)

    def test_shape_and_norm(self) -> None:
        v = self.embed(photo("dog.jpg"))
        self.assertEqual(v.shape, (1792,))
        self.assertAlmostEqual(float(np.linalg.norm(v)), 1.0, places=4)

    def test_edited_copies_find_their_original(self) -> None:
        originals = np.stack([self.embed(photo(n)) for n in self.NAMES])
        edits = {
            "flipped": lambda im: im[:, ::-1],
            "cropped to 80%": lambda im: im[im.shape[0] // 10: im.shape[0] * 9 // 10,
                                            im.shape[1] // 10: im.shape[1] * 9 // 10],
            "darkened": lambda im: (im.astype(np.float32) * 0.5).astype(np.uint8),
        }
        for edit, fn in edits.items():
            for i, name in enumerate(self.NAMES):
                with self.subTest(photo=name, edit=edit):
                    sims = originals @ self.embed(np.ascontiguousarray(fn(photo(name))))
                    self.assertEqual(self.NAMES[int(np.argmax(sims))], name,
                                     f"similarities {dict(zip(self.NAMES, np.round(sims, 3)))}")


class AutoAnnotationTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.pkg = Package("auto_annotation")

    def annotate(self, name: str, prompts: List[str], size=(416, 416)) -> Dict[str, Any]:
        body = json.dumps({"image": base64.b64encode(jpeg(photo(name), size)).decode(),
                           "prompts": [{"label": p, "description": ""} for p in prompts]})
        out = self.pkg(body, "application/json")
        self.assertTrue({"boxes", "scores", "phrases", "unsupported"} <= set(out))
        self.assertEqual(len(out["boxes"]), len(out["phrases"]))
        return out

    def test_puppy_boxes_the_dog(self) -> None:
        out = self.annotate("dog.jpg", ["puppy"])
        h, w = photo("dog.jpg").shape[:2]
        ref = [v * 416 / s for v, s in zip(REFERENCE["dog.jpg"]["dog"], (w, h, w, h))]
        boxes = [b for b, p, s in zip(out["boxes"], out["phrases"], out["scores"])
                 if p == "puppy" and s >= THRESHOLD]
        self.assertTrue(boxes, out)
        self.assertGreater(max(iou(b, ref) for b in boxes), 0.6)
        self.assertEqual(out["unsupported"], [])

    def test_unsupported_prompts_are_reported(self) -> None:
        out = self.annotate("dog.jpg", ["bicycle", "unicorn", "tiger"])
        self.assertEqual(out["unsupported"], ["unicorn", "tiger"])
        self.assertIn("bicycle", out["phrases"])
        self.assertNotIn("unicorn", out["phrases"])

    def test_hypernym_and_synonym_prompts(self) -> None:
        out = self.annotate("person.jpg", ["human", "animal"])
        strong = {p for p, s in zip(out["phrases"], out["scores"]) if s >= THRESHOLD}
        self.assertEqual(strong, {"human", "animal"})

    def test_prompt_mapping(self) -> None:
        mapper = self.pkg.model.mapper
        names = mapper.classes
        cases = {"puppy": {"dog"}, "lorry": {"truck"}, "Lorries": {"truck"}, "dogs": {"dog"},
                 "small brown dog": {"dog"}, "sedan": {"car"}, "traffic lights": {"traffic light"},
                 "hot-dog": {"hot dog"}, "woman": {"person"}, "kitten": {"cat"},
                 "vehicle": {"car", "truck", "bus", "bicycle", "motorcycle", "train", "airplane", "boat"},
                 "unicorn": set(), "tiger": set()}
        for prompt, want in cases.items():
            with self.subTest(prompt=prompt):
                self.assertEqual({names[i] for i in mapper.classes_for(prompt)}, want)


if __name__ == "__main__":
    unittest.main()
