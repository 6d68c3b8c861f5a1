"""colour-tagger: an example auto_tagging package for framelake (docs/spec/interface.md 2.7, docs/spec/rest.md's Model package contract).

It tags an image with the colours that cover a large share of it and boxes where each colour is.
The image is shrunk to a grid of cells by ffmpeg (which framelake needs anyway), each cell is named
by its hue, saturation and value, and a colour's score is the share of cells it holds, so
confidence_threshold 0.3 keeps the colours covering at least 30% of the image. Standard library only:
code/requirements.txt names nothing, so registering it needs no package index.
"""
import colorsys
import json
import os
import subprocess


def model_fn(model_dir):
    """The "model" is palette.pt: the grid size and the hue ranges of the colours (JSON)."""
    with open(os.path.join(model_dir, "palette.pt")) as f:
        palette = json.load(f)
    with open(os.path.join(model_dir, "label_list.yaml")) as f:
        labels = [line.strip()[2:].strip() for line in f if line.strip().startswith("- ")]
    return {"grid": int(palette["grid"]), "hues": palette["hues"], "labels": labels}


def input_fn(request_body, request_content_type):
    """JPEG bytes -> (width, height, the bytes); predict_fn has ffmpeg shrink them."""
    if not request_content_type.startswith("image/"):
        raise ValueError(f"unsupported content type {request_content_type!r}: send image/jpeg")
    width, height = jpeg_size(bytes(request_body))
    return width, height, request_body


def jpeg_size(jpeg):
    """The width and height in a JPEG's frame header (SOFn)."""
    i = 2
    while i + 9 <= len(jpeg) and jpeg[i] == 0xFF:
        marker = jpeg[i + 1]
        if marker == 0xFF:  # fill byte
            i += 1
            continue
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            return int.from_bytes(jpeg[i + 7:i + 9], "big"), int.from_bytes(jpeg[i + 5:i + 7], "big")
        i += 2 + int.from_bytes(jpeg[i + 2:i + 4], "big")
    raise ValueError("the request body is not a JPEG with a frame header")


def predict_fn(input_data, model):
    width, height, jpeg = input_data
    n = model["grid"]
    cells = subprocess.run(["ffmpeg", "-v", "error", "-f", "jpeg_pipe", "-i", "-", "-vf", f"scale={n}:{n}:flags=area",
                            "-f", "rawvideo", "-pix_fmt", "rgb24", "-"],
                           input=jpeg, capture_output=True, check=True).stdout
    where = {}  # label -> list of (column, row)
    for i in range(n * n):
        r, g, b = cells[3 * i], cells[3 * i + 1], cells[3 * i + 2]
        where.setdefault(colour_name(r, g, b, model["hues"]), []).append((i % n, i // n))
    boxes, classes, scores = [], [], []
    cw, ch = width / n, height / n
    for label, spots in sorted(where.items(), key=lambda kv: -len(kv[1])):
        cols, rows = [c for c, _ in spots], [r for _, r in spots]
        boxes.append([min(cols) * cw, min(rows) * ch, (max(cols) + 1) * cw, (max(rows) + 1) * ch])
        classes.append(model["labels"].index(label))
        scores.append(len(spots) / (n * n))
    return {"boxes": boxes, "classes": classes, "scores": scores}


def colour_name(r, g, b, hues):
    h, s, v = colorsys.rgb_to_hsv(r / 255, g / 255, b / 255)
    if v < 0.2:
        return "black"
    if s < 0.2:
        return "white" if v > 0.8 else "grey"
    degrees = h * 360
    for name, (lo, hi) in hues.items():
        if lo <= degrees < hi:
            return name
    return "red"  # the hue circle wraps: 345..360 is red again


def output_fn(prediction_output, content_type):
    return json.dumps(prediction_output)
