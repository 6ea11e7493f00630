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

from logscope.model import ParsedLog
from logscope.rules._common import Row, as_int, as_str, columns, parse_shape
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
    tables = [log.frames[n] for n in ("layers", "perf") if n in log.frames and len(log.frames[n])]
    for table in tables:
        # Every build at once: rows by build (rows outside any build last), then line; a candidate is
        # a convolution whose next row in the same build is a follower.
        cols = columns(table)
        builds = [v if type(v) is int else as_int(v) for v in cols["build_index"]]
        lines = cols["line"]
        if all(type(v) is int for v in lines):  # the split by build, in line order, other rules use too
            order = [p for positions in cols.by_line().values() for p in positions]
        else:  # a row without a line sorts as line 0
            zeroed = [as_int(v) or 0 for v in lines]
            order = sorted(range(len(builds)), key=lambda i: (builds[i] is None, builds[i] or 0, zeroed[i]))
        kinds = [
            k.lower() if type(k) is str else ("" if as_str(k) is None else str(k).lower())
            for k in cols["op_type"]
        ]
        candidates = [
            p
            for p in range(len(order) - 1)
            if kinds[order[p]] in CONVOLUTIONS
            and kinds[order[p + 1]] in FOLLOWERS
            and builds[order[p]] == builds[order[p + 1]]
        ]
        if not candidates:
            continue
        # Only the candidate rows and their successors as tuples: a build has hundreds of layers.
        wanted = sorted({p + d for p in candidates for d in (0, 1)})
        rows = {p: Row(cols, order[p]) for p in wanted}
        for position in candidates:
            conv, nxt = rows[position], rows[position + 1]
            build_index = builds[order[position]]
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
