"""Tensors fell back from INT8 to float16 (hybrid dtype) during conversion.

## What it does
Reports, per build, the tensors the compiler left in float16 in an otherwise quantised model:
`Meet hybrid type, dtype: float16, tensor: ...` and `Tensor ... need parameter qtype, type is set to
float16 by default` (1.5.2 spells it `paramter`). Information, with the tensors named.

## Why it matters
A float16 feature map or constant takes twice the bytes of INT8 and moves at half the rate; float16
layers also run slower on the NPU. Often this is intended (a final softmax), sometimes it is a tensor
the quantiser had no parameters for.

## Example
`fixtures/rknn/09-...-rv1106-tk2-1.5.2-simulator.log`:
```text
I RKNN: [15:13:15.591] Meet hybrid type, dtype: float16, tensor: MobilenetV1/Logits/Conv2d_1c_1x1/BiasAdd__float16
W RKNN: [15:13:15.899] Warning: Tensor MobilenetV1/Logits/SpatialSqueeze_2reshape_shape need paramter qtype, type is set to float16 by default!
```

## How to fix
If the fallback is not wanted, give those tensors quantisation parameters (hybrid quantisation config,
`rknn.hybrid_quantization_step1/2`), or make sure the calibration dataset reaches them.

## Options
None.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from logscope.model import ParsedLog
from logscope.rules._common import columns, message_groups
from logscope.rules.finding import Finding, Severity

CODE = "QNT003"
NAME = "hybrid-dtype-fallback"
SEVERITY = Severity.info
NEEDS = ("messages",)

_TENSOR = re.compile(r"(?:tensor:\s*(\S+)|Tensor\s+(\S+)\s+need)")


@dataclass(frozen=True)
class Options:
    pass


OPTIONS = Options


def check(log: ParsedLog, options: Options) -> Iterator[Finding]:
    messages = columns(log.frames["messages"])
    for build_index, positions in message_groups(log, ["hybrid-dtype"]):
        line_col, text_col = messages["line"], messages["message"]
        lines = tuple(int(line_col[p]) for p in positions)
        tensors: list[str] = []
        for text in (text_col[p] for p in positions):
            match = _TENSOR.search(str(text))
            if match:
                name = match.group(1) or match.group(2)
                if name not in tensors:
                    tensors.append(name)
        yield Finding(
            message=f"{len(tensors)} tensor(s) fall back to float16 (lines {lines[0]}-{lines[-1]}): "
            + ", ".join(tensors[:5])
            + (" ..." if len(tensors) > 5 else ""),
            line=lines[0],
            lines=lines,
            subject=tensors[0] if tensors else "hybrid dtype",
            evidence={"tensors": tensors, "messages": len(positions)},
            hint="if unintended, give these tensors quantisation parameters (hybrid quantisation config) or "
            "make the calibration data reach them",
            build_index=build_index,
        )
