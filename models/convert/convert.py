"""Convert a TF.js graph model to a self-contained TorchScript file, and prove the file computes
what the interpreter computes.

    python3 convert.py MODEL_JSON SHARD... --outputs NAME[,NAME] --input-shape 1,3,416,416 --out X.pt

The interpreter (graph.TfjsGraph) runs the graph after fuse.fuse's rewrites and is traced; the
saved file is loaded back and compared with the interpreter on the literal, unrewritten graph on
fresh random inputs, so the check covers the rewrites as well as the tracing. A difference above the tolerance is an error, never a warning:
a silently wrong default model would tag every image in the lake wrongly.
"""
from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path
from typing import List, Sequence, Tuple

import torch

import tfjs
from fuse import fuse
from graph import TfjsGraph

TOLERANCE = 1e-4  # relative to the output's magnitude; float32 reordering stays far below it


class ConversionError(RuntimeError):
    pass


def _compare(ref: Sequence[torch.Tensor], got: Sequence[torch.Tensor], names: Sequence[str]) -> float:
    worst = 0.0
    for name, a, b in zip(names, ref, got):
        if a.shape != b.shape:
            raise ConversionError(f"output {name}: TorchScript shape {tuple(b.shape)}, "
                                  f"interpreter {tuple(a.shape)}")
        scale = 1.0 + float(a.abs().max())
        diff = float((a - b).abs().max()) / scale
        if not diff <= TOLERANCE:  # also catches NaN
            raise ConversionError(f"output {name}: TorchScript differs from the interpreter by "
                                  f"{diff:.3g} (relative), tolerance {TOLERANCE}")
        worst = max(worst, diff)
    return worst


def convert(model: tfjs.GraphModel, outputs: List[str], input_shape: Tuple[int, ...], out: Path,
            input_range: Tuple[float, float] = (0.0, 1.0), seed: int = 0) -> float:
    """Trace, save to out, reload and check on two random inputs; returns the worst difference."""
    torch.manual_seed(seed)
    lo, hi = input_range
    module = TfjsGraph(fuse(model), outputs).eval()
    reference = TfjsGraph(model, outputs).eval()
    example = torch.rand(input_shape) * (hi - lo) + lo
    with torch.no_grad(), warnings.catch_warnings():
        # Shape constants read with .tolist() are baked in on purpose: the input size is fixed.
        warnings.simplefilter("ignore", torch.jit.TracerWarning)
        traced = torch.jit.trace(module, example, check_trace=False)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp")
    traced.save(str(tmp))
    loaded = torch.jit.load(str(tmp)).eval()
    worst = 0.0
    firsts: List[torch.Tensor] = []
    with torch.no_grad():
        for _ in range(2):
            x = torch.rand(input_shape) * (hi - lo) + lo
            ref = reference(x)
            worst = max(worst, _compare(ref, loaded(x), outputs))
            firsts.append(ref[0])
    if torch.equal(firsts[0], firsts[1]):
        # Guards the check itself: a graph that ignores its input would compare equal anyway.
        raise ConversionError(f"output {outputs[0]} does not depend on the input")
    tmp.replace(out)
    return worst


def main(argv: Sequence[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("model_json", type=Path)
    p.add_argument("shards", type=Path, nargs="+")
    p.add_argument("--outputs", required=True, help="comma-separated node names")
    p.add_argument("--input-shape", required=True)
    p.add_argument("--out", type=Path, required=True)
    args = p.parse_args(argv)
    model = tfjs.load_files(args.model_json, args.shards)
    shape = tuple(int(v) for v in args.input_shape.split(","))
    try:
        worst = convert(model, args.outputs.split(","), shape, args.out)
    except ConversionError as err:
        print(f"convert: {err}", file=sys.stderr)
        return 1
    print(f"convert: {args.out} (TorchScript vs interpreter: {worst:.2g})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
