"""A convolution is followed by a separate BatchNorm or activation layer instead of being fused.

## What it does
Walks the layer table of each build (build-time `RKNNModelBuildPass` statistics or a runtime
`Network Layer Information Table`) and reports every layer whose type is a plain convolution (`Conv`,
`ConvTranspose`, `DepthwiseConv`) when the next layer is a BatchNorm or an activation (`Relu`, `Clip`,
`Sigmoid`, `HardSwish`, ...) whose first input has the convolution's output shape. RKNN names fused
layers after their parts (`ConvRelu`, `ConvClip`, `ConvExSwish`, `ConvReluAdd`), so a separate row
means the fusion did not happen.

## Why it matters
An unfused activation writes the convolution's whole output to memory and reads it back: one more
feature map in the pool and one more DDR round trip per frame. Conv+BN+ReLU
fused into one op never writes the BN and ReLU intermediate results to global memory.

## Example
A passing case, `fixtures/rknn/11-eval-perf-memory-yolov5-rk3588-tk2-1.5.0-wrapped.log`: every
convolution carries its activation.
```text
2    ConvRelu         INT8     NPU    (1,3,640,640),(32,3,6,6),(32)    (1,32,320,320)  ...  Conv:Conv_0
3    ConvRelu         INT8     NPU    (1,32,320,320),(64,32,3,3),(64)  (1,64,160,160)  ...  Conv:Conv_2
```

## How to fix
- Fold BatchNorm into the convolution before export (`torch.fx` / `onnxsim` do it), and use
  activations RKNN can fuse (ReLU, ReLU6/Clip, SiLU/Swish, LeakyReLU on most targets).
- Keep `optimization_level=3` and the compiler setting `conv_eltwise_activation_fuse = 1`.

## Options
None.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from logscope.model import ParsedLog
from logscope.rules._common import as_int, as_str, columns, filled_frame, parse_shape
from logscope.rules.finding import Finding, Severity

CODE = "FUS001"
NAME = "unfused-conv-activation"
SEVERITY = Severity.warning
NEEDS = ("layers|perf",)

CONVOLUTIONS = {"conv", "convtranspose", "depthwiseconv", "conv2d", "depthwiseconv2d"}
FOLLOWERS = {
    "batchnormalization",
    "batchnorm",
    "relu",
    "relu6",
    "clip",
    "leakyrelu",
    "prelu",
    "sigmoid",
    "hardsigmoid",
    "swish",
    "hardswish",
    "silu",
    "tanh",
    "mish",
    "gelu",
    "elu",
    "selu",
}


CELLS = ("line", "layer_id", "op_type", "full_name", "output_shape", "input_shapes")


@dataclass(frozen=True)
class Options:
    pass


OPTIONS = Options


def _first_input(shapes: str | None) -> tuple[int, ...] | None:
    if not shapes:
        return None
    head = shapes.split("),")[0]
    return parse_shape(head if head.endswith(")") else head + ")")


def check(log: ParsedLog, options: Options) -> Iterator[Finding]:
    for table in (frame for n in ("layers", "perf") if (frame := filled_frame(log, n)) is not None):
        # Every build at once: rows by build (rows outside any build last), then line (a missing line
        # sorts as 0), then frame order; a candidate is a convolution whose next row in the same
        # build is a follower. Op types are tested once per distinct type, not per row.
        cols = columns(table)
        build_codes, builds = cols.build_codes()
        order = np.lexsort((cols.ints("line"), build_codes))
        is_conv = cols.flags("op_type", lambda v: str(v).lower() in CONVOLUTIONS)[order]
        is_follower = cols.flags("op_type", lambda v: str(v).lower() in FOLLOWERS)[order]
        same_build = build_codes[order][:-1] == build_codes[order][1:]
        candidates = np.flatnonzero(is_conv[:-1] & is_follower[1:] & same_build).tolist()
        if not candidates:
            continue
        # Cells only for the candidate rows and their successors: a build has hundreds of layers.
        wanted = sorted({p + d for p in candidates for d in (0, 1)})
        picked = cols.pick(order[wanted].tolist(), CELLS)
        rows = dict(zip(wanted, picked, strict=True))
        for position in candidates:
            conv, nxt = rows[position], rows[position + 1]
            build_index = builds[build_codes[order[position]]]
            out = parse_shape(conv.output_shape)
            if out is None or out != _first_input(as_str(nxt.input_shapes)):
                continue
            conv_line, next_line = as_int(conv.line), as_int(nxt.line)
            yield Finding(
                message=f"layer {as_int(conv.layer_id)} {conv.op_type} ({as_str(conv.full_name)}) is followed by "
                f"a separate {nxt.op_type} (layer {as_int(nxt.layer_id)}, line {next_line}) on its "
                f"{as_str(conv.output_shape)} output: not fused",
                line=conv_line,
                lines=tuple(v for v in (conv_line, next_line) if v is not None),
                subject=as_str(conv.full_name) or f"layer {as_int(conv.layer_id)}",
                evidence={
                    "conv_layer": as_int(conv.layer_id),
                    "conv_op_type": as_str(conv.op_type),
                    "conv_line": conv_line,
                    "next_layer": as_int(nxt.layer_id),
                    "next_op_type": as_str(nxt.op_type),
                    "next_line": next_line,
                    "shape": as_str(conv.output_shape),
                },
                hint="fold BatchNorm into the conv before export and use activations RKNN fuses "
                "(ReLU, Clip, SiLU, LeakyReLU); keep optimization_level=3",
                build_index=build_index,
            )
