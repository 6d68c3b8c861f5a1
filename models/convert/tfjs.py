"""Reading a TensorFlow.js graph model: topology from model.json, constants from the weight bytes.

Only what the converter needs: nodes with their op, inputs and attributes, and every Const as a
numpy array decoded from the weights manifest (float32, int32, and the float16 and uint8/uint16
quantized encodings the TF.js converter writes).
"""
from __future__ import annotations

import base64
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

import numpy as np

_DTYPES = {"float32": np.float32, "int32": np.int32, "bool": np.bool_, "float16": np.float16,
           "uint8": np.uint8, "uint16": np.uint16}


@dataclass
class Node:
    name: str
    op: str
    inputs: List[str]
    attr: Dict[str, Any] = field(default_factory=dict)

    def attr_int_list(self, key: str, default: Sequence[int] = ()) -> List[int]:
        value = self.attr.get(key, {}).get("list", {}).get("i")
        return [int(v) for v in value] if value else list(default)

    def attr_str(self, key: str, default: str = "") -> str:
        value = self.attr.get(key, {}).get("s")
        return base64.b64decode(value).decode() if value else default

    def attr_str_list(self, key: str) -> List[str]:
        return [base64.b64decode(v).decode() for v in self.attr.get(key, {}).get("list", {}).get("s", [])]

    def attr_float(self, key: str, default: float) -> float:
        value = self.attr.get(key, {}).get("f")
        return float(value) if value is not None else default

    def attr_bool(self, key: str, default: bool = False) -> bool:
        value = self.attr.get(key, {}).get("b")
        return bool(value) if value is not None else default

    def attr_int(self, key: str, default: int) -> int:
        value = self.attr.get(key, {}).get("i")
        return int(value) if value is not None else default


@dataclass
class GraphModel:
    nodes: List[Node]
    consts: Dict[str, np.ndarray]
    signature: Dict[str, Any]


def _decode(entry: Dict[str, Any], buf: bytes, offset: int) -> tuple[np.ndarray, int]:
    shape = [int(d) for d in entry["shape"]]
    count = int(np.prod(shape)) if shape else 1
    quant: Optional[Dict[str, Any]] = entry.get("quantization")
    dtype = _DTYPES[entry["dtype"]]
    if not quant:
        raw = np.frombuffer(buf, dtype, count, offset)
        return raw.reshape(shape).copy(), offset + raw.nbytes
    raw = np.frombuffer(buf, _DTYPES[quant["dtype"]], count, offset)
    end = offset + raw.nbytes
    if quant["dtype"] == "float16":
        return raw.astype(dtype).reshape(shape), end
    # Affine quantization, as tfjs-core io.decodeWeights: value = q * scale + min.
    values = raw.astype(np.float64) * float(quant["scale"]) + float(quant["min"])
    return values.astype(dtype).reshape(shape), end


def decode_weights(manifest: List[Dict[str, Any]], buf: bytes) -> Dict[str, np.ndarray]:
    """All groups' weights in manifest order over the concatenation of every shard."""
    consts: Dict[str, np.ndarray] = {}
    offset = 0
    for group in manifest:
        for entry in group["weights"]:
            if entry["dtype"] not in _DTYPES:
                raise ValueError(f"weight {entry['name']}: dtype {entry['dtype']} not supported")
            consts[entry["name"]], offset = _decode(entry, buf, offset)
    if offset != len(buf):
        raise ValueError(f"weights manifest covers {offset} bytes but the shards hold {len(buf)}")
    return consts


def load(model_json: Path, weights: bytes) -> GraphModel:
    """model_json: the graph model's JSON; weights: every shard's bytes, concatenated in order."""
    spec = json.loads(Path(model_json).read_text())
    if spec.get("format") != "graph-model":
        raise ValueError(f"{model_json}: format {spec.get('format')!r}, want graph-model")
    nodes = [Node(n["name"], n["op"], list(n.get("input", [])), n.get("attr", {}))
             for n in spec["modelTopology"]["node"]]
    consts = decode_weights(spec["weightsManifest"], weights)
    missing = [n.name for n in nodes if n.op == "Const" and n.name not in consts]
    if missing:
        raise ValueError(f"Const nodes without weights: {missing[:5]}")
    signature = spec.get("signature") or spec.get("userDefinedMetadata", {}).get("signature", {})
    return GraphModel(nodes, consts, signature)


def load_files(model_json: Path, shard_paths: Sequence[Path]) -> GraphModel:
    return load(model_json, b"".join(Path(p).read_bytes() for p in shard_paths))
