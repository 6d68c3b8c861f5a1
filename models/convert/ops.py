"""TensorFlow ops as PyTorch calls, with TensorFlow's semantics (NHWC images, SAME padding).

Each op is a function (node, args) -> tensor or tuple of tensors. Ops whose constant inputs need a
layout change (convolution filters) also have a prepare function run once at build time, so the
traced graph holds weights in PyTorch's layout and never transposes them per call.
"""
from __future__ import annotations

import math
from typing import Callable, Dict, List, NamedTuple, Optional, Sequence, Tuple

import torch
import torch.nn.functional as F

from tfjs import Node

Args = List[torch.Tensor]
Prepare = Callable[[Node, List[Optional[torch.Tensor]]], List[Optional[torch.Tensor]]]


class OpSpec(NamedTuple):
    fn: Callable[[Node, Args], object]
    prepare: Optional[Prepare] = None


OPS: Dict[str, OpSpec] = {}


def op(*names: str, prepare: Optional[Prepare] = None):
    def register(fn):
        for name in names:
            OPS[name] = OpSpec(fn, prepare)
        return fn
    return register


def _ints(t: torch.Tensor) -> List[int]:
    return [int(v) for v in t.reshape(-1).tolist()]


def _nhwc(node: Node) -> None:
    fmt = node.attr_str("data_format", "NHWC")
    if fmt != "NHWC":
        raise NotImplementedError(f"{node.name}: data_format {fmt}")


def _same_pads(size: int, k: int, stride: int, dilation: int) -> Tuple[int, int]:
    """TensorFlow SAME: output ceil(size/stride), the odd pixel of padding goes after."""
    eff = (k - 1) * dilation + 1
    total = max((math.ceil(size / stride) - 1) * stride + eff - size, 0)
    return total // 2, total - total // 2


def _spatial_pads(node: Node, x: torch.Tensor, kh: int, kw: int, sh: int, sw: int,
                  dh: int = 1, dw: int = 1) -> List[int]:
    """[top, bottom, left, right] for an NCHW tensor, from the node's padding attribute."""
    padding = node.attr_str("padding", "VALID")
    if padding == "VALID":
        return [0, 0, 0, 0]
    if padding == "SAME":
        return [*_same_pads(x.shape[2], kh, sh, dh), *_same_pads(x.shape[3], kw, sw, dw)]
    if padding == "EXPLICIT":
        p = node.attr_int_list("explicit_paddings")  # NHWC pairs
        return [p[2], p[3], p[4], p[5]]
    raise NotImplementedError(f"{node.name}: padding {padding}")


def _pad_nchw(x: torch.Tensor, pads: List[int], value: float = 0.0) -> torch.Tensor:
    top, bottom, left, right = pads
    if not any(pads):
        return x
    return F.pad(x, [left, right, top, bottom], value=value)


# --- convolution and matrix product -------------------------------------------------------------

def _prepare_conv(node: Node, consts):
    """TF filter [kh, kw, in, out] -> torch [out, in, kh, kw]."""
    out = list(consts)
    if out[1] is None:
        raise NotImplementedError(f"{node.name}: non-constant filter")
    out[1] = out[1].permute(3, 2, 0, 1).contiguous(memory_format=torch.channels_last)
    return out


def _prepare_depthwise(node: Node, consts):
    """TF filter [kh, kw, in, mult] -> torch [in*mult, 1, kh, kw] (channel i*mult+m, as TF)."""
    out = list(consts)
    if out[1] is None:
        raise NotImplementedError(f"{node.name}: non-constant filter")
    kh, kw, cin, mult = out[1].shape
    out[1] = (out[1].reshape(kh, kw, cin * mult).permute(2, 0, 1).unsqueeze(1)
              .contiguous(memory_format=torch.channels_last))
    return out


def _activation(node: Node, y: torch.Tensor, extra: Args) -> torch.Tensor:
    """The fused tail of _FusedConv2D and friends, after BiasAdd.

    In place: y is the convolution's fresh output, and a new buffer per activation costs page
    faults on multi-megabyte feature maps (a third of MobileNet's time before this).
    """
    for name in node.attr_str_list("fused_ops"):
        if name == "BiasAdd":
            continue
        if name == "Relu":
            y = F.relu_(y)
        elif name == "Relu6":
            y = y.clamp_(0.0, 6.0)
        elif name == "Elu":
            y = F.elu_(y)
        elif name == "Sigmoid":
            y = y.sigmoid_()
        elif name == "LeakyRelu":
            y = F.leaky_relu_(y, node.attr_float("leakyrelu_alpha", 0.2))
        elif name == "Prelu":
            # Prelu's alpha is the argument after the bias, per channel (NHWC: the last axis).
            y = torch.where(y >= 0, y, y * extra[0].reshape(1, -1, 1, 1))
        else:
            raise NotImplementedError(f"{node.name}: fused op {name}")
    return y


def _conv2d(x: torch.Tensor, w: torch.Tensor, bias: Optional[torch.Tensor], stride, padding,
            dilation, groups: int) -> torch.Tensor:
    """oneDNN on channels-last tensors, which is TF's NHWC without a copy.

    F.conv2d would pick the THNN im2col path for 1x1 convolutions at batch 1 on one thread,
    and Debian's torch does its GEMM with the reference BLAS: 30x slower than oneDNN here.
    """
    x = x.contiguous(memory_format=torch.channels_last)
    if torch.backends.mkldnn.is_available() and x.dtype == torch.float32:
        return torch.mkldnn_convolution(x, w, bias, list(padding), list(stride), list(dilation), groups)
    return F.conv2d(x, w, bias, stride, padding, dilation, groups)


def _conv(node: Node, args: Args, groups_from_input: bool) -> torch.Tensor:
    _nhwc(node)
    x = args[0].permute(0, 3, 1, 2)
    w = args[1]
    fused = node.attr_str_list("fused_ops")
    bias = args[2] if "BiasAdd" in fused else None
    _, sh, sw, _ = node.attr_int_list("strides", (1, 1, 1, 1))
    _, dh, dw, _ = node.attr_int_list("dilations", (1, 1, 1, 1))
    kh, kw = w.shape[2], w.shape[3]
    pads = _spatial_pads(node, x, kh, kw, sh, sw, dh, dw)
    groups = x.shape[1] if groups_from_input else 1
    if pads[0] == pads[1] and pads[2] == pads[3]:
        y = _conv2d(x, w, bias, (sh, sw), (pads[0], pads[2]), (dh, dw), groups)
    else:
        y = _conv2d(_pad_nchw(x, pads), w, bias, (sh, sw), (0, 0), (dh, dw), groups)
    y = _activation(node, y, args[3:])
    return y.permute(0, 2, 3, 1)


@op("Conv2D", "_FusedConv2D", prepare=_prepare_conv)
def conv2d(node: Node, args: Args):
    return _conv(node, args, groups_from_input=False)


@op("DepthwiseConv2dNative", "FusedDepthwiseConv2dNative", prepare=_prepare_depthwise)
def depthwise(node: Node, args: Args):
    return _conv(node, args, groups_from_input=True)


@op("MatMul", "_FusedMatMul")
def matmul(node: Node, args: Args):
    a, b = args[0], args[1]
    if node.attr_bool("transpose_a"):
        a = a.transpose(-1, -2)
    if node.attr_bool("transpose_b"):
        b = b.transpose(-1, -2)
    y = a @ b
    if "BiasAdd" in node.attr_str_list("fused_ops"):
        y = y + args[2]
    tail = [n for n in node.attr_str_list("fused_ops") if n != "BiasAdd"]
    if tail:
        if tail != ["Relu"]:
            raise NotImplementedError(f"{node.name}: fused matmul ops {tail}")
        y = F.relu(y)
    return y


# --- pooling and resizing ------------------------------------------------------------------------

def _pool(node: Node, x: torch.Tensor, kind: str) -> torch.Tensor:
    _nhwc(node)
    _, kh, kw, _ = node.attr_int_list("ksize")
    _, sh, sw, _ = node.attr_int_list("strides")
    x = x.permute(0, 3, 1, 2)
    pads = _spatial_pads(node, x, kh, kw, sh, sw)
    if kind == "max":
        y = F.max_pool2d(_pad_nchw(x, pads, float("-inf")), (kh, kw), (sh, sw))
    else:
        # TF averages over the window's valid pixels only, so divide by a pooled mask.
        summed = F.avg_pool2d(_pad_nchw(x, pads), (kh, kw), (sh, sw))
        if any(pads):
            ones = torch.ones_like(x[:, :1])
            summed = summed / F.avg_pool2d(_pad_nchw(ones, pads), (kh, kw), (sh, sw))
        y = summed
    return y.permute(0, 2, 3, 1)


@op("MaxPool")
def max_pool(node: Node, args: Args):
    return _pool(node, args[0], "max")


@op("AvgPool")
def avg_pool(node: Node, args: Args):
    return _pool(node, args[0], "avg")


def _resize(node: Node, args: Args, mode: str) -> torch.Tensor:
    size = _ints(args[1])
    align = node.attr_bool("align_corners")
    half = node.attr_bool("half_pixel_centers")
    x = args[0].permute(0, 3, 1, 2)
    if mode == "bilinear":
        if not (align or half):
            raise NotImplementedError(f"{node.name}: legacy (asymmetric) bilinear resize")
        y = F.interpolate(x, size=size, mode="bilinear", align_corners=align)
    else:
        if align or not half:
            raise NotImplementedError(f"{node.name}: nearest resize needs half_pixel_centers only")
        y = F.interpolate(x, size=size, mode="nearest-exact")
    return y.permute(0, 2, 3, 1)


@op("ResizeBilinear")
def resize_bilinear(node: Node, args: Args):
    return _resize(node, args, "bilinear")


@op("ResizeNearestNeighbor")
def resize_nearest(node: Node, args: Args):
    return _resize(node, args, "nearest")


# --- element-wise --------------------------------------------------------------------------------

OPS["Add"] = OPS["AddV2"] = OPS["BiasAdd"] = OpSpec(lambda n, a: a[0] + a[1])
OPS["Sub"] = OpSpec(lambda n, a: a[0] - a[1])
OPS["Mul"] = OpSpec(lambda n, a: a[0] * a[1])
OPS["RealDiv"] = OPS["Div"] = OpSpec(lambda n, a: a[0] / a[1])
OPS["Maximum"] = OpSpec(lambda n, a: torch.maximum(a[0], a[1]))
OPS["Minimum"] = OpSpec(lambda n, a: torch.minimum(a[0], a[1]))
OPS["Relu"] = OpSpec(lambda n, a: F.relu(a[0]))
OPS["Relu6"] = OpSpec(lambda n, a: F.hardtanh(a[0], 0.0, 6.0))
OPS["LeakyRelu"] = OpSpec(lambda n, a: F.leaky_relu(a[0], n.attr_float("alpha", 0.2)))
OPS["Sigmoid"] = OpSpec(lambda n, a: torch.sigmoid(a[0]))
OPS["Tanh"] = OpSpec(lambda n, a: torch.tanh(a[0]))
OPS["Exp"] = OpSpec(lambda n, a: torch.exp(a[0]))
OPS["Sqrt"] = OpSpec(lambda n, a: torch.sqrt(a[0]))
OPS["Rsqrt"] = OpSpec(lambda n, a: torch.rsqrt(a[0]))
OPS["Softmax"] = OpSpec(lambda n, a: torch.softmax(a[0], dim=-1))
OPS["Identity"] = OPS["StopGradient"] = OpSpec(lambda n, a: a[0])


@op("Cast")
def cast(node: Node, args: Args):
    dtype = node.attr.get("DstT", {}).get("type", "DT_FLOAT")
    table = {"DT_FLOAT": torch.float32, "DT_INT32": torch.int32, "DT_INT64": torch.int64,
             "DT_BOOL": torch.bool}
    return args[0].to(table[dtype])


# --- shape ---------------------------------------------------------------------------------------

@op("Reshape")
def reshape(node: Node, args: Args):
    return args[0].reshape(_ints(args[1]))


@op("Squeeze")
def squeeze(node: Node, args: Args):
    dims = node.attr_int_list("squeeze_dims") or node.attr_int_list("axis")
    x = args[0]
    if not dims:
        return x.squeeze()
    for d in sorted((d % x.dim() for d in dims), reverse=True):
        x = x.squeeze(d)
    return x


@op("ExpandDims")
def expand_dims(node: Node, args: Args):
    return args[0].unsqueeze(_ints(args[1])[0])


@op("Transpose")
def transpose(node: Node, args: Args):
    return args[0].permute(_ints(args[1]))


@op("ConcatV2")
def concat(node: Node, args: Args):
    axis = _ints(args[-1])[0]
    return torch.cat(args[:-1], dim=axis)


@op("Pack")
def pack(node: Node, args: Args):
    return torch.stack(args, dim=node.attr_int("axis", 0))


@op("Pad", "PadV2")
def pad(node: Node, args: Args):
    pairs = _ints(args[1])
    value = float(args[2].reshape(-1)[0]) if len(args) > 2 else 0.0
    flat: List[int] = []
    for d in reversed(range(len(pairs) // 2)):  # torch lists the last axis first
        flat += [pairs[2 * d], pairs[2 * d + 1]]
    return F.pad(args[0], flat, value=value)


@op("SplitV")
def split_v(node: Node, args: Args):
    sizes = _ints(args[1])
    axis = _ints(args[2])[0]
    if -1 in sizes:
        known = sum(s for s in sizes if s != -1)
        sizes[sizes.index(-1)] = args[0].shape[axis] - known
    return tuple(torch.split(args[0], sizes, dim=axis))


@op("Split")
def split(node: Node, args: Args):
    axis = _ints(args[0])[0]
    return tuple(torch.chunk(args[1], node.attr_int("num_split", 1), dim=axis))


@op("Mean")
def mean(node: Node, args: Args):
    dims = _ints(args[1])
    return args[0].mean(dim=dims, keepdim=node.attr_bool("keep_dims"))


@op("StridedSlice")
def strided_slice(node: Node, args: Args):
    x = args[0]
    begin, end, strides = _ints(args[1]), _ints(args[2]), _ints(args[3])
    masks = {k: node.attr_int(k, 0) for k in
             ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask")}
    if masks["ellipsis_mask"] or masks["new_axis_mask"]:
        raise NotImplementedError(f"{node.name}: ellipsis/new-axis masks")
    index = []
    for d, (b, e, s) in enumerate(zip(begin, end, strides)):
        if masks["shrink_axis_mask"] >> d & 1:
            index.append(b)
            continue
        index.append(slice(None if masks["begin_mask"] >> d & 1 else b,
                           None if masks["end_mask"] >> d & 1 else e, s))
    return x[tuple(index)]


@op("SparseToDense")
def sparse_to_dense(node: Node, args: Args):
    indices, shape, values, default = args
    out = torch.full(_ints(shape), default.item(), dtype=values.dtype)
    if indices.numel():
        idx = indices.reshape(indices.shape[0], -1).long()
        vals = values.expand(idx.shape[0]) if values.dim() == 0 else values
        out[tuple(idx.t())] = vals
    return out


def supported(names: Sequence[str]) -> List[str]:
    """The names among these that no op implements (Const and Placeholder are the graph's)."""
    return sorted({n for n in names if n not in OPS and n not in ("Const", "Placeholder")})
