"""A TF.js graph model as an nn.Module: the interpreter the converter traces.

Build time folds every node whose inputs are all constant (shape arithmetic the TF converter left
in, such as SparseToDense of an empty index set), so forward runs only the data path. The module
is traced, not scripted: the schedule is a Python loop over fixed nodes and disappears in the trace.
"""
from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np
import torch
from torch import nn

from ops import OPS, OpSpec, supported
from tfjs import GraphModel, Node


def _ref(name: str) -> Tuple[str, int]:
    """'node:1' -> ('node', 1); control inputs ('^node') are dropped by the caller."""
    base, _, idx = name.partition(":")
    return base, int(idx) if idx else 0


class OpModule(nn.Module):
    """One node: its constant inputs as buffers, the runtime ones passed to forward in order."""

    def __init__(self, node: Node, spec: OpSpec, consts: List[Optional[torch.Tensor]]):
        super().__init__()
        self.node = node
        self.spec = spec
        if spec.prepare is not None:
            consts = spec.prepare(node, consts)
        self.arity = len(consts)
        self.const_slots = [i for i, c in enumerate(consts) if c is not None]
        for i in self.const_slots:
            self.register_buffer(f"c{i}", consts[i])

    def forward(self, *runtime: torch.Tensor):
        it = iter(runtime)
        args = [getattr(self, f"c{i}") if i in self.const_slots else next(it)
                for i in range(self.arity)]
        out = self.spec.fn(self.node, args)
        return out if isinstance(out, tuple) else (out,)


class TfjsGraph(nn.Module):
    """forward(input) -> tuple of the requested output tensors, in the order given."""

    def __init__(self, model: GraphModel, outputs: Sequence[str], input_name: Optional[str] = None):
        super().__init__()
        nodes = {n.name: n for n in model.nodes}
        missing = supported(n.op for n in model.nodes)
        if missing:
            raise NotImplementedError(f"ops not implemented: {missing}")
        placeholders = [n.name for n in model.nodes if n.op == "Placeholder"]
        self.input_name = input_name or placeholders[0]
        self.outputs = [_ref(o) for o in outputs]
        for base, _ in self.outputs:
            if base not in nodes:
                raise KeyError(f"output node {base} not in the graph")
        self.schedule: List[Tuple[str, List[Tuple[str, int]], int]] = []
        self.ops = nn.ModuleList()
        self._build(nodes, model.consts)

    def _needed(self, nodes: Dict[str, Node]) -> List[str]:
        """Nodes the outputs depend on, inputs before users (iterative DFS: graphs are deep)."""
        order: List[str] = []
        state: Dict[str, int] = {}
        stack: List[Tuple[str, bool]] = [(b, False) for b, _ in reversed(self.outputs)]
        while stack:
            name, expanded = stack.pop()
            if expanded:
                state[name] = 2
                order.append(name)
                continue
            if state.get(name):
                continue
            state[name] = 1
            stack.append((name, True))
            for inp in reversed(nodes[name].inputs):
                if not inp.startswith("^") and not state.get(_ref(inp)[0]):
                    stack.append((_ref(inp)[0], False))
        return order

    def _build(self, nodes: Dict[str, Node], weights: Dict[str, np.ndarray]) -> None:
        const: Dict[Tuple[str, int], torch.Tensor] = {}
        for name in self._needed(nodes):
            node = nodes[name]
            if node.op == "Const":
                const[(name, 0)] = torch.from_numpy(np.array(weights[name]))
                continue
            if node.op == "Placeholder":
                if name != self.input_name:
                    raise ValueError(f"second graph input {name}: only one is supported")
                continue
            refs = [_ref(i) for i in node.inputs if not i.startswith("^")]
            module = OpModule(node, OPS[node.op], [const.get(r) for r in refs])
            if all(r in const for r in refs):
                with torch.no_grad():
                    for k, value in enumerate(module()):
                        const[(name, k)] = value
                continue
            self.ops.append(module)
            runtime = [r for r in refs if r not in const]
            self.schedule.append((name, runtime, len(self.ops) - 1))
        for ref in self.outputs:
            if ref in const:
                raise ValueError(f"output {ref[0]} is constant")

    def forward(self, x: torch.Tensor) -> Tuple[torch.Tensor, ...]:
        values: Dict[Tuple[str, int], torch.Tensor] = {(self.input_name, 0): x}
        for name, runtime, idx in self.schedule:
            outs = self.ops[idx](*[values[r] for r in runtime])
            for k, value in enumerate(outs):
                values[(name, k)] = value
        return tuple(values[r] for r in self.outputs)
