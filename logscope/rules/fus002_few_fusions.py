"""Few of the convolutions were fused with what follows them, by the compiler's own fusion lines.

## What it does
Where the log prints compiler fusion lines (`[Compiler]: Op fusion: conv_0 + bn_0 + relu_0 ->
fused_conv_0`, the compact compiler summary) and a layer table counts the convolutions of the same
build, reports a build in which fewer than `min_ratio` (50%) of the convolutions are fused: named in a
fusion line, or already typed as a compound layer (`ConvRelu`, `ConvClip`) in the table. Builds without
both pieces are not judged.

## Why it matters
Every convolution left unfused keeps its BatchNorm / activation intermediate in memory. Background
note 000: "if the log shows few fusions, intermediate tensors are redundant".

## Example
A synthetic excerpt (no public log prints both fusion lines and a layer table):
```text
I [Compiler]: Op fusion: conv_0 + bn_0 + relu_0 -> fused_conv_0
D RKNN: [10:00:00.000] 1    Conv             INT8     NPU    (1,3,224,224),(32,3,3,3),(32)    (1,32,112,112)  ...  Conv:conv_0
D RKNN: [10:00:00.000] 2    Conv             INT8     NPU    (1,32,112,112),(32,32,3,3),(32)  (1,32,112,112)  ...  Conv:conv_1
D RKNN: [10:00:00.000] 3    Conv             INT8     NPU    (1,32,112,112),(64,32,1,1),(64)  (1,64,112,112)  ...  Conv:conv_2
```
One fusion line for three convolutions: 33% fused.

## How to fix
- Fold BatchNorm before export and prefer activations the compiler fuses.
- Build with `optimization_level=3`; check that `conv_eltwise_activation_fuse = 1` in the compiler
  settings line.

## Options
- `min_ratio` (float, 0.5): fused convolutions / convolutions below this is reported.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from logscope.model import ParsedLog
from logscope.rules._common import as_int, build_order, build_slices, columns, pct
from logscope.rules.finding import Finding, Severity

CODE = "FUS002"
NAME = "few-fusions"
SEVERITY = Severity.info
NEEDS = ("fusions", "layers")
PLAIN = {"conv", "convtranspose", "depthwiseconv"}


@dataclass(frozen=True)
class Options:
    min_ratio: float = 0.5


OPTIONS = Options


def check(log: ParsedLog, options: Options) -> Iterator[Finding]:
    fusions = columns(log.frames["fusions"])
    # The compiler's fusion lines, per build (build order, frame order within): found by one test per
    # distinct section, as most logs have none (the corpus logs print only `fuse_ops` sections).
    on_compiler = np.flatnonzero(fusions.flags("section", lambda v: v == "compiler")).tolist()
    if not on_compiler:
        return
    fusion_builds = fusions["build_index"]
    compilers: dict[int | None, list[int]] = {}
    for p in on_compiler:
        compilers.setdefault(as_int(fusion_builds[p]), []).append(p)
    removed, fusion_lines = fusions["removed_nodes"], fusions["line"]
    layers = columns(log.frames["layers"])
    # Layer types are tested once per distinct type; each build's convolutions are a slice of
    # `convs` (by build, frame order within).
    is_conv = layers.flags("op_type", lambda v: str(v).startswith("Conv"))
    is_plain = layers.flags("op_type", lambda v: str(v).lower() in PLAIN)
    layer_codes, layer_builds = layers.build_codes()
    code_of = {build: code for code, build in enumerate(layer_builds)}
    convs = np.flatnonzero(is_conv)
    order, bounds = build_slices(layer_codes[convs], len(layer_builds))
    convs = convs[order]
    for build_index in sorted(compilers, key=build_order):
        compiler = compilers[build_index]
        code = code_of.get(build_index)
        if code is None or bounds[code] == bounds[code + 1]:
            continue
        build_convs = convs[bounds[code] : bounds[code + 1]]
        in_lines = sum(
            1
            for nodes in (removed[p] for p in compiler)
            if any(str(n).lower().startswith("conv") for n in (nodes or []))
        )
        # A layer typed `ConvRelu` / `ConvClip` is already fused whatever the fusion lines say.
        compound = int((~is_plain[build_convs]).sum())
        fused = min(len(build_convs), in_lines + compound)
        ratio = fused / len(build_convs)
        if ratio >= options.min_ratio:
            continue
        lines = tuple(sorted(int(fusion_lines[p]) for p in compiler))
        yield Finding(
            message=f"{fused} of {len(build_convs)} convolutions ({pct(ratio)}) are fused (fusion "
            + (f"line {lines[0]}" if len(lines) == 1 else f"lines {lines[0]}-{lines[-1]}")
            + "); the rest keep separate intermediates",
            line=lines[0],
            lines=lines,
            subject="operator fusion",
            evidence={
                "fused_convolutions": fused,
                "convolutions": len(build_convs),
                "convolution_lines": [as_int(v) for v in layers.take("line", build_convs.tolist())],
                "fusion_lines": list(lines),
                "ratio": round(ratio, 6),
                "min_ratio": options.min_ratio,
                "fusion_lines_with_conv": in_lines,
                "compound_conv_layers": compound,
                "computation": "fused = fusion lines whose removed nodes include a conv + layers typed Conv<Act>; "
                "ratio = fused / layer rows whose type starts with Conv",
            },
            hint="fold BatchNorm before export, prefer fusable activations, build with optimization_level=3",
            build_index=build_index,
        )
