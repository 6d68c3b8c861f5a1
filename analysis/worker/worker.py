"""framelake model worker: runs one model package's code/inference.py.

Started by framelake as `python worker.py MODEL_DIR`. It imports
MODEL_DIR/code/inference.py, calls model_fn(MODEL_DIR) once, then answers
requests on stdin with responses on stdout until stdin closes.

Every message, both ways, is one frame: two big-endian uint32 lengths (a JSON
header, then a body), the header, the body. Requests: {"op": "invoke",
"content_type": ..., "accept": ...} with the request body, or {"op": "ping"}.
Responses: {"ok": true, "content_type": ...} with output_fn's bytes, or
{"ok": false, "stage": ..., "error": ..., "traceback": ...}. The first
message the worker writes, unasked, says whether the model loaded.

The protocol owns the original stdin and stdout; the package's own prints go
to stderr (framelake keeps its tail for error reports) and its reads see an
empty stdin.
"""

import importlib.util
import json
import os
import signal
import struct
import sys
import traceback

HEADER = struct.Struct(">II")
FUNCTIONS = ("model_fn", "input_fn", "predict_fn", "output_fn")


def open_protocol():
    rin = os.fdopen(os.dup(0), "rb", buffering=1 << 16)
    rout = os.fdopen(os.dup(1), "wb", buffering=1 << 16)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return rin, rout


def read_frame(rin):
    head = rin.read(HEADER.size)
    if len(head) < HEADER.size:
        return None, None
    hlen, blen = HEADER.unpack(head)
    meta = rin.read(hlen)
    body = rin.read(blen)
    if len(meta) < hlen or len(body) < blen:
        return None, None
    return json.loads(meta), body


def write_frame(rout, meta, body=b""):
    m = json.dumps(meta).encode()
    rout.write(HEADER.pack(len(m), len(body)))
    rout.write(m)
    rout.write(body)
    rout.flush()


def failure(stage, exc):
    # The package's own frames only: this file's and importlib's say nothing.
    frames = [f for f in traceback.extract_tb(exc.__traceback__)
              if f.filename != __file__ and not f.filename.startswith("<frozen")]
    tb = "".join(["Traceback (most recent call last):\n"] + traceback.format_list(frames)
                 + traceback.format_exception_only(type(exc), exc))
    msg = "".join(traceback.format_exception_only(type(exc), exc)).strip()
    return {"ok": False, "stage": stage, "error": msg, "traceback": tb}


def to_jsonable(o):
    if hasattr(o, "tolist"):
        return o.tolist()
    if hasattr(o, "item"):
        return o.item()
    if isinstance(o, (set, tuple)):
        return list(o)
    raise TypeError("output_fn returned %s, which is not JSON serializable" % type(o).__name__)


def encode_output(out):
    """output_fn may return a JSON string, bytes, a (body, content_type) pair,
    or anything json can serialize (numpy and torch values included)."""
    ctype = "application/json"
    if isinstance(out, tuple) and len(out) == 2 and isinstance(out[1], str):
        out, ctype = out
    if isinstance(out, str):
        return out.encode(), ctype
    if isinstance(out, (bytes, bytearray, memoryview)):
        return bytes(out), ctype
    return json.dumps(out, default=to_jsonable).encode(), ctype


def load(model_dir):
    path = os.path.join(model_dir, "code", "inference.py")
    sys.path.insert(0, os.path.dirname(path))
    spec = importlib.util.spec_from_file_location("inference", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["inference"] = module
    spec.loader.exec_module(module)
    missing = [f for f in FUNCTIONS if not callable(getattr(module, f, None))]
    if missing:
        raise AttributeError("code/inference.py does not define %s" % ", ".join(missing))
    return module


def main():
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    rin, rout = open_protocol()
    model_dir = os.path.abspath(sys.argv[1])
    os.chdir(model_dir)
    try:
        module = load(model_dir)
    except BaseException as e:  # a SyntaxError or SystemExit in user code too
        write_frame(rout, failure("import", e))
        return 3
    try:
        model = module.model_fn(model_dir)
    except BaseException as e:
        write_frame(rout, failure("model_fn", e))
        return 3
    write_frame(rout, {"ok": True, "ready": True, "python": sys.version.split()[0]})
    input_fn, predict_fn, output_fn = module.input_fn, module.predict_fn, module.output_fn
    while True:
        meta, body = read_frame(rin)
        if meta is None:
            return 0
        if meta.get("op") == "ping":
            write_frame(rout, {"ok": True})
            continue
        stage = "input_fn"
        try:
            data = input_fn(body, meta.get("content_type", "application/octet-stream"))
            stage = "predict_fn"
            pred = predict_fn(data, model)
            stage = "output_fn"
            out, ctype = encode_output(output_fn(pred, meta.get("accept", "application/json")))
        except Exception as e:
            write_frame(rout, failure(stage, e))
            continue
        write_frame(rout, {"ok": True, "content_type": ctype}, out)


if __name__ == "__main__":
    sys.exit(main())
