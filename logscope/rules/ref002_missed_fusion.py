"""A fusion the model offers was not made: the log runs part of the chain as a separate layer.

## What it does
Runs only on a log checked against its ONNX model (`logscope check LOG --onnx MODEL`). The reference
finds the model's fusion candidates — Conv/Gemm/MatMul, then BatchNorm or a Mul/Add by a constant, at
most one residual Add, at most one activation, every intermediate read once — and names each as RKNN
names the fused layer (`ConvRelu`, `ConvClip`, `ConvAddRelu`). The cross-check (`check_fusions`) looks
for each candidate's layer in the log's layer table by output shape; a candidate whose layer is of
another type that shares the convolution prefix (`Conv` instead of `ConvAddRelu`) was not (fully)
fused — unless the log's type names every part of the expected one in another order or with more
(`ConvReluAdd`, as [11] prints YOLOv5's Conv → Relu → Add, covers a `ConvRelu` candidate). One finding
per missed candidate, at the log layer's line. Candidates with no log layer of their output shape are
not judged (the check's summary counts them), nor are logs without a layer table.

Unlike FUS001, which sees only a convolution followed by an activation row in the log, this rule knows
the whole chain from the model: a residual Add or a BatchNorm left out of the fusion is reported too.

## Why it matters
Every part of a chain left unfused writes its intermediate feature map to memory and reads it back: one
more tensor in the pool and one more DDR round trip per inference.

## Example
A synthetic excerpt (written for this case; no public log with a residual block prints a layer table),
checked against a model with Conv → Relu → Conv → Add(residual) → Relu:
```text
D RKNN: 1    ConvRelu       INT8     NPU    (1,3,32,32),(16,3,3,3),(16)   (1,16,32,32) Conv:conv1
D RKNN: 2    Conv           INT8     NPU    (1,16,32,32),(16,16,3,3),(16) (1,16,32,32) Conv:conv2
D RKNN: 3    Add            INT8     NPU    (1,16,32,32),(1,16,32,32)     (1,16,32,32) Add:add
D RKNN: 4    Relu           INT8     NPU    (1,16,32,32)                  (1,16,32,32) Relu:relu2
```
The model's `conv2 + add + relu2` is a `ConvAddRelu` candidate; the log runs layer 2 as `Conv`, then
the Add and the Relu on their own: reported at layer 2's line. [09] checked against the MobileNet v1 of
the tests fuses all 27 candidates (`ConvClip`) and is not reported.

## How to fix
- Fold BatchNorm before export and use activations RKNN fuses (ReLU, ReLU6/Clip, SiLU, LeakyReLU).
- Keep the residual Add's other input produced before the convolution, and the intermediate read by
  nothing else (a second reader blocks the fusion).
- Build with `optimization_level=3` and a newer toolkit (fusion patterns grow between releases).

## Options
None.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from logscope.model import ParsedLog
from logscope.rules._common import as_int, as_str
from logscope.rules._reference import build_of_line
from logscope.rules.finding import Finding, Severity

CODE = "REF002"
NAME = "missed-fusion"
SEVERITY = Severity.warning
NEEDS = ("check_fusions",)


@dataclass(frozen=True)
class Options:
    pass


OPTIONS = Options


def check(log: ParsedLog, options: Options) -> Iterator[Finding]:
    fusions = log.frames["check_fusions"]
    # fused_in_log is NA when the log has no layer of the candidate's output shape: not judged.
    missed = fusions[~fusions["fused_in_log"].fillna(True).astype(bool)]
    total = len(fusions)
    for row in missed.itertuples(index=False):
        line = as_int(row.log_line)
        if line is None:
            continue
        layer = as_int(row.log_layer_id)
        expected, got = as_str(row.rknn_name), as_str(row.log_op_type)
        ops = as_str(row.ops)
        yield Finding(
            message=f"the model's {ops} should fuse into one {expected} layer, but the log runs layer "
            f"{layer} as {got}: the rest of the chain keeps its own intermediate",
            line=line,
            lines=(line,),
            subject=ops,
            evidence={
                "chain": as_int(row.chain),
                "model_ops": ops,
                "expected_layer_type": expected,
                "output_shape": as_str(row.output_shape),
                "log_layer": layer,
                "log_layer_type": got,
                "log_line": line,
                "candidates": total,
                "candidates_not_fused": len(missed),
                "note": as_str(row.note),
                "computation": "fusion candidates from the ONNX graph (Conv/Gemm/MatMul + BN or constant "
                "Mul/Add + at most one residual Add + at most one activation, single-reader intermediates); "
                "matched to the first later log layer with the candidate's output shape",
            },
            hint="fold BatchNorm before export, use fusable activations, keep the chain's intermediates "
            "single-reader, build with optimization_level=3 and a newer toolkit",
            build_index=build_of_line(log, line),
        )
