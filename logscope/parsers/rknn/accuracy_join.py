"""The accuracy_analysis table joined per layer with the build's layer table (`accuracy_layers`).

The two tables name different things. The accuracy table lists *tensors* in execution order, each
under the ONNX op that wrote it (`[Conv] Conv3_o0`, `[Relu] Relu4_o0`), and a fused chain prints its
members without values, the last member carrying the chain's values (`[Conv] Conv3_o0` has empty cells,
`[Relu] Relu4_o0` the ConvRelu's). The layer table lists the compiler's *ops* by FullName
(`Conv:Conv3`), after fusion and rewrites (`Conv:Relu17_o0_conv_ConvAddRelu`,
`exSDPAttention:MatMul30_2sdpa`, `Conv:MatMul35#2_ConvAdd`).

So a chain (its value-less members and the row with its values) is one group, joined to one layer by
the best name match of any member, tried in this order (`match`):

- `name`: the tensor's name is the layer's (`input_rs#1` and `Reshape:input_rs#1`);
- `tensor`: the tensor's name is the layer's plus the output suffix `_o<N>` and the row's op type is
  part of the layer's (`[Conv] Conv3_o0`, `ConvRelu` `Conv:Conv3`; not `[exDataConvert] Gemm22_o0`,
  the convert after `Conv:Gemm22`);
- `prefix`: the layer's name is the tensor's plus a fusion suffix, an op type (`MatMul35#2`,
  `Conv:MatMul35#2_ConvAdd`; `Relu17_o0_conv`, `Conv:Relu17_o0_conv_ConvAddRelu`), not a rewrite
  suffix (`Gemm22_o0_mm` is the conv's output that `Reshape:Gemm22_o0_mm_tp_rs` reads);
- `op`: both begin with the same ONNX op name and the row's op type is part of the layer's
  (`[exSDPAttention] MatMul30_o0_sdpa`, `exSDPAttention:MatMul30_2sdpa`; `[Conv] Gemm22_o0_mm`,
  `Conv:Gemm22`);
- `graph`: the row's tensor is the graph input or output that an `InputOperator` / `OutputOperator`
  carries (`[Input] input`; `[exDataConvert] Gemm22_o0`, `OutputOperator:Gemm22_o0`). Last, because
  an op writing the graph output directly names the same tensor (`[MaxPool] MaxPool5_o0` is
  `MaxPool:MaxPool5`, not `OutputOperator:MaxPool5_o0`); these two layers join by name only.

Among layers that match equally, the first one at or after the previous group's layer is taken (the
tables run in execution order; for `op`, the first one after it: chain_75's
`GlobalAveragePool18_2conv0` then `GlobalAveragePool18_o0` are its two pooling convs), else the first.
A group no layer matches is `unmatched` (a dtype
convert the layer table does not list, `[exDataConvert] input_int8`; a tensor named after its reader,
`Reshape23_o0_sw-rs` written by `Conv:MatMul19#2`); a layer no group joins is a row of its own,
`missing` (the `OutputOperator`, an op whose tensor the accuracy table names otherwise).

The layer table joined is the build's last one that starts before the accuracy table (a log prints it
once per build; a build with several keeps the one that ran).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pandas as pd

from logscope.frames import build_frame

_OUTPUT_SUFFIX = re.compile(r"_o\d+$")
_OP_NAME = re.compile(r"[A-Za-z]+\d+")
MATCH_LEVELS = ("name", "tensor", "prefix", "op", "graph")
_GRAPH_IO = frozenset({"InputOperator", "OutputOperator"})
_VALUES = ("entire_cos", "entire_euc", "single_cos", "single_euc")


def _layer_name(full_name: Any) -> str:
    """`Conv:Conv3` -> `Conv3` (the op's name after its type); a name without a type stays as printed."""
    text = "" if full_name is None or full_name is pd.NA else str(full_name).strip()
    return text.split(":", 1)[1].strip() if ":" in text else text


def _op_name(name: str) -> str | None:
    m = _OP_NAME.match(name)
    return m.group(0) if m else None


def match_level(tensor: str, layer: str, op_type: str = "", layer_op_type: str = "") -> int | None:
    """The index in MATCH_LEVELS of how accuracy row `[op_type] tensor` names layer `layer` (of type
    `layer_op_type`), None if it does not (module docstring)."""
    if not tensor or not layer:
        return None
    if layer_op_type in _GRAPH_IO:
        return 4 if tensor == layer else None
    if tensor == layer:
        return 0
    same_op = bool(op_type) and op_type.lower() in layer_op_type.lower()
    if _OUTPUT_SUFFIX.sub("", tensor) == layer and same_op:
        return 1
    if layer.startswith(tensor + "_") and layer[len(tensor) + 1 : len(tensor) + 2].isupper():
        return 2
    op = _op_name(tensor)
    if op is not None and op == _op_name(layer) and same_op:
        return 3
    return None


def _groups(rows: list[dict[str, Any]]) -> Iterator[list[dict[str, Any]]]:
    """Fused chains: value-less rows up to and including the next row with values."""
    group: list[dict[str, Any]] = []
    for r in rows:
        group.append(r)
        if any(r.get(v) is not None and r.get(v) is not pd.NA for v in _VALUES):
            yield group
            group = []
    yield from ([r] for r in group)  # trailing value-less rows: each on its own


def _layer_table(layers: list[dict[str, Any]], before: int) -> list[dict[str, Any]]:
    """The build's last layer table starting before line `before` (tables split where layer_id restarts)."""
    tables: list[list[dict[str, Any]]] = []
    for r in layers:
        if not tables or (
            r["layer_id"] is not None
            and tables[-1][-1]["layer_id"] is not None
            and r["layer_id"] <= tables[-1][-1]["layer_id"]
        ):
            tables.append([])
        tables[-1].append(r)
    earlier = [t for t in tables if t[0]["line"] < before]
    return earlier[-1] if earlier else (tables[0] if tables else [])


def _records(frame: pd.DataFrame, columns: tuple[str, ...]) -> list[dict[str, Any]]:
    out = []
    for values in zip(*(frame[c].tolist() for c in columns), strict=True):
        out.append({c: (None if v is pd.NA else v) for c, v in zip(columns, values, strict=True)})
    return out


def join_accuracy_layers(accuracy: pd.DataFrame, layers: pd.DataFrame) -> pd.DataFrame:
    """The `accuracy_layers` frame: every accuracy row with its layer (or `unmatched`), then every layer
    of the joined table that no row names (`missing`); `line` is the accuracy row's (the layer's for a
    missing one), `layer_line` the layer row's, `value_line` the row holding the chain's values."""
    if accuracy.empty:
        return build_frame("accuracy_layers", [])
    acc_cols = ("build_index", "op_type", "layer_name", *_VALUES, "line")
    layer_cols = ("build_index", "layer_id", "op_type", "full_name", "line")
    acc = _records(accuracy, acc_cols)
    lay = _records(layers, layer_cols) if not layers.empty else []
    out: list[dict[str, Any]] = []
    for build in sorted({r["build_index"] for r in acc}, key=lambda b: (b is None, b or 0)):
        rows = sorted((r for r in acc if r["build_index"] == build), key=lambda r: r["line"])
        table = _layer_table([r for r in lay if r["build_index"] == build], rows[0]["line"])
        names = [(_layer_name(r["full_name"]), str(r["op_type"] or "")) for r in table]
        joined: set[int] = set()
        previous = 0
        for group in _groups(rows):
            best: tuple[int, int] | None = None  # (level, layer index)
            for member in group:
                tensor, op_type = str(member["layer_name"] or ""), str(member["op_type"] or "")
                candidates = [
                    (lvl, i)
                    for i, (n, t) in enumerate(names)
                    if (lvl := match_level(tensor, n, op_type, t)) is not None
                ]
                if not candidates:
                    continue
                level = min(c[0] for c in candidates)
                at = [i for lvl, i in candidates if lvl == level]
                after = [i for i in at if i > previous] if level == 3 else []
                pick = next(iter(after), next((i for i in at if i >= previous), at[0]))
                if best is None or level < best[0]:
                    best = (level, pick)
            layer = table[best[1]] if best is not None else None
            if best is not None:
                joined.add(best[1])
                previous = best[1]
            value_line = group[-1]["line"]
            for member in group:
                out.append(
                    {
                        "build_index": build,
                        "op_type": member["op_type"],
                        "layer_name": member["layer_name"],
                        **{v: member[v] for v in _VALUES},
                        "value_line": value_line,
                        "layer_id": layer["layer_id"] if layer else None,
                        "layer_op_type": layer["op_type"] if layer else None,
                        "layer_full_name": layer["full_name"] if layer else None,
                        "layer_line": layer["line"] if layer else None,
                        "match": MATCH_LEVELS[best[0]] if best is not None else "unmatched",
                        "line": member["line"],
                    }
                )
        for i, layer in enumerate(table):
            if i not in joined:
                out.append(
                    {
                        "build_index": build,
                        "layer_id": layer["layer_id"],
                        "layer_op_type": layer["op_type"],
                        "layer_full_name": layer["full_name"],
                        "layer_line": layer["line"],
                        "match": "missing",
                        "line": layer["line"],
                    }
                )
    return build_frame("accuracy_layers", out)
