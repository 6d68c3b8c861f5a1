"""The benchmark chains of augment's BenchmarkChains, written with Pillow and
with OpenCV the way a Python user would write them, for a side-by-side
images/s figure. Run by the Go benchmark with Debian's /usr/bin/python3
(python3-pil, python3-opencv, python3-numpy); single-threaded like framelake.

usage: bench_chains.py pillow|opencv flip-blur-crop|rotate-hue-noise IMAGE SECONDS
prints: {"images_per_second": N, "images_per_cpu_second": M, "images": COUNT}
(CPU time counts every thread of the process, so it is fair on a busy machine)

Chains (matching the Go steps):
  flip-blur-crop:    horizontal flip, Gaussian blur sigma 2, centred crop keeping 80% of each side
  rotate-hue-noise:  rotate 17 degrees counter-clockwise about the centre on the same canvas
                     (bilinear, black fill), HSV hue +30 degrees, 5% of pixels set to random colours
Output: JPEG quality 90, 4:2:0 chroma subsampling, in memory.
"""
import io
import json
import os
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

QUALITY = 90
rng = np.random.default_rng(7)


def noise(a, fraction):
    flat = a.reshape(-1, a.shape[2])
    k = int(flat.shape[0] * fraction)
    idx = rng.integers(0, flat.shape[0], k)
    flat[idx] = rng.integers(0, 256, (k, flat.shape[1]), dtype=np.uint8)
    return a


def crop_box(w, h, keep):
    cw, ch = round(w * keep), round(h * keep)
    left, top = round((w - cw) / 2), round((h - ch) / 2)
    return left, top, cw, ch


def pillow_chains():
    from PIL import Image, ImageFilter

    hue_lut = [(v + round(30 * 256 / 360)) % 256 for v in range(256)]

    def flip_blur_crop(buf):
        im = Image.open(io.BytesIO(buf))
        im = im.transpose(Image.Transpose.FLIP_LEFT_RIGHT)
        im = im.filter(ImageFilter.GaussianBlur(2))
        left, top, cw, ch = crop_box(*im.size, 0.8)
        im = im.crop((left, top, left + cw, top + ch))
        out = io.BytesIO()
        im.save(out, "JPEG", quality=QUALITY, subsampling=2)
        return out.getvalue()

    def rotate_hue_noise(buf):
        im = Image.open(io.BytesIO(buf)).convert("RGB")
        im = im.rotate(17, resample=Image.Resampling.BILINEAR, fillcolor=(0, 0, 0))
        h, s, v = im.convert("HSV").split()
        im = Image.merge("HSV", (h.point(hue_lut), s, v)).convert("RGB")
        im = Image.fromarray(noise(np.array(im), 0.05))
        out = io.BytesIO()
        im.save(out, "JPEG", quality=QUALITY, subsampling=2)
        return out.getvalue()

    return {"flip-blur-crop": flip_blur_crop, "rotate-hue-noise": rotate_hue_noise}


def opencv_chains():
    import cv2

    cv2.setNumThreads(1)
    hue_lut = np.array([(v + 15) % 180 if v < 180 else v for v in range(256)], dtype=np.uint8)
    params = [cv2.IMWRITE_JPEG_QUALITY, QUALITY]

    def flip_blur_crop(buf):
        img = cv2.imdecode(np.frombuffer(buf, np.uint8), cv2.IMREAD_COLOR)
        img = cv2.flip(img, 1)
        img = cv2.GaussianBlur(img, (0, 0), 2)
        left, top, cw, ch = crop_box(img.shape[1], img.shape[0], 0.8)
        img = img[top:top + ch, left:left + cw]
        return cv2.imencode(".jpg", img, params)[1].tobytes()

    def rotate_hue_noise(buf):
        img = cv2.imdecode(np.frombuffer(buf, np.uint8), cv2.IMREAD_COLOR)
        h, w = img.shape[:2]
        m = cv2.getRotationMatrix2D((w / 2, h / 2), 17, 1.0)
        img = cv2.warpAffine(img, m, (w, h), flags=cv2.INTER_LINEAR,
                             borderMode=cv2.BORDER_CONSTANT, borderValue=(0, 0, 0))
        hsv = cv2.cvtColor(img, cv2.COLOR_BGR2HSV)
        hsv[..., 0] = cv2.LUT(hsv[..., 0], hue_lut)
        img = cv2.cvtColor(hsv, cv2.COLOR_HSV2BGR)
        img = noise(img, 0.05)
        return cv2.imencode(".jpg", img, params)[1].tobytes()

    return {"flip-blur-crop": flip_blur_crop, "rotate-hue-noise": rotate_hue_noise}


def main():
    lib, chain, path, seconds = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
    fn = {"pillow": pillow_chains, "opencv": opencv_chains}[lib]()[chain]
    buf = open(path, "rb").read()
    for _ in range(2):  # warm up caches and lazy imports
        fn(buf)
    n, start, cpu = 0, time.perf_counter(), time.process_time()
    while n < 5 or time.perf_counter() - start < seconds:
        fn(buf)
        n += 1
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    print(json.dumps({"images_per_second": n / wall, "images_per_cpu_second": n / cpu, "images": n}))


if __name__ == "__main__":
    main()
