"""Throughput of the default packages on the Python side: images/s through input_fn, predict_fn,
output_fn and JSON encoding, one image at a time as the runner sends them.

    /usr/bin/python3 models/bench.py [--n 100] [--threads N]

Prints wall-clock and CPU-second rates with the load average, since the machine may be shared.
"""
from __future__ import annotations

import os

# As the packages' runtime.py does, before cv2 or torch loads OpenMP (see there for why).
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import argparse
import json
import sys
import time
from pathlib import Path

import cv2

sys.path.insert(0, str(Path(__file__).resolve().parent / "tests"))
import test_defaults as td  # noqa: E402  (reuses the runner-like harness)

PHOTOS = ("dog.jpg", "person.jpg", "giraffe.jpg", "horses.jpg", "eagle.jpg", "kite.jpg")


def bench(app: str, size, n: int) -> None:
    pkg = td.Package(app)
    bodies = [td.jpeg(td.photo(p), size) for p in PHOTOS]
    load = os.getloadavg()[0]
    wall, cpu = time.perf_counter(), time.process_time()
    for i in range(n):
        json.dumps(pkg(bodies[i % len(bodies)], "image/jpeg"))
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    label = f"{size[0]}x{size[1]}" if size else "original size"
    print(f"{app:13s} {label:13s} {n / wall:6.1f} images/s wall, {n / cpu:6.1f} images/CPU-s, "
          f"{1000 * wall / n:6.1f} ms/image (load {load:.2f} -> {os.getloadavg()[0]:.2f})")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--n", type=int, default=100)
    p.add_argument("--threads", type=int, help="FRAMELAKE_TORCH_THREADS for the packages")
    args = p.parse_args()
    if args.threads:
        os.environ["FRAMELAKE_TORCH_THREADS"] = str(args.threads)
    cv2.setNumThreads(1)
    print(f"cores {len(os.sched_getaffinity(0))}, threads {os.environ.get('FRAMELAKE_TORCH_THREADS', '1 (default)')}")
    bench("auto_tagging", (416, 416), args.n)
    bench("auto_tagging", (300, 300), args.n)
    bench("embedding", (300, 300), args.n)
    bench("embedding", None, args.n)
    return 0


if __name__ == "__main__":
    sys.exit(main())
