"""Learn the compiler's feature table for a transformer block from the corpus, and write it as data.

    python tools/corpus/rknn_transformer_templates.py          # rewrite reference/rknn_transformer_data.py
    python tools/corpus/rknn_transformer_templates.py --check  # exit 1 if that module is not current

For each (toolkit, target, dtype) the corpus has development builds of (fixtures/rknn-compiler/
transformer-dev/, transformer-heldout/, transformer-sweep/, transformer-sweep-targets/; a template needs
builds of at least two widths and two head counts), the builds inside the rules' domain
(33 <= T <= 128, head width a multiple of 16; on rk3588 from 2.3.2 also T not a multiple of 16 and D a
multiple of 32, where the compiler lists other rows) must all print the same row list. That list becomes
a template: each row's op, user, name and shape written in terms of the block's ONNX names and T, D, h,
hd, F (read off one build whose five numbers differ), checked against every other build; each row's size
is the simplest combination of the terms of `rknn_transformer_tables.Sizes` that gives the logged size of
every build exactly. The exSDPAttention scratch is the measured table `ATTENTION_SCRATCH` (read from the
sweeps here as well) or rk3588 int8's formula. A combination with builds of more than one row list, or a
row no combination fits, is reported and left out. The corpus `transformer` builds (T 49, D 64, 4 heads)
are never read here: they are what the result is measured on.
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
CORPUS = ROOT / "fixtures" / "rknn-compiler"
OUT = ROOT / "logscope" / "reference" / "rknn_transformer_data.py"
FOLDERS = ("transformer-dev", "transformer-sweep", "transformer-sweep-targets", "transformer-heldout")
MODEL_RE = re.compile(r"tf_t(\d+)_d(\d+)_h(\d+)")

sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import rknn_models  # noqa: E402

import logscope  # noqa: E402
from logscope.reference.graph import build_graph  # noqa: E402
from logscope.reference.rknn_transformer_tables import (  # noqa: E402
    CONV_BYTES,
    TERMS,
    Sizes,
    block_sizes,
    in_domain,
    match_block,
)


def _builds() -> list[tuple[Path, dict[str, Any], tuple[int, int, int]]]:
    out = []
    for folder in FOLDERS:
        manifest = json.loads((CORPUS / folder / "manifest.json").read_text())["builds"]
        for b in manifest:
            match = MODEL_RE.fullmatch(b["model"])
            if b["built"] and match:
                out.append((CORPUS / folder, b, tuple(int(g) for g in match.groups())))
    return out


def _tables(path: Path) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    log = logscope.parse(path)
    t = log.frames["tensors"]
    f = t[t["table"] == "feature"]
    rows = [
        (int(r.op_id), str(r.user_op), str(r.name), str(r.orig_shape), str(r.data_format), int(r.size_bytes))
        for r in f.itertuples(index=False)
    ]
    layers = [
        (
            int(r.layer_id),
            str(r.op_type),
            str(r.full_name),
            r.output_shape if isinstance(r.output_shape, str) else "",
        )
        for r in log.frames["layers"].itertuples(index=False)
    ]
    return rows, layers


_NAMES: dict[str, dict[str, str]] = {}


def _names(model: str) -> dict[str, str]:
    if model not in _NAMES:
        block = match_block(build_graph(rknn_models.build(model, "zeros")))
        assert block is not None, model
        _NAMES[model] = block.names()
    return _NAMES[model]


def _abstract_name(name: str, names: dict[str, str]) -> str:
    """`MatMul5_o0_mm_tp_sw` -> `<q_mm.out>_mm_tp_sw`: the longest ONNX name the text starts with."""
    best = max(
        ((k, v) for k, v in names.items() if name.startswith(v)), key=lambda kv: len(kv[1]), default=None
    )
    if best is None:
        return name
    key = "y" if best[1] == names["y"] else best[0]
    return f"<{key}>{name[len(best[1]) :]}"


def _abstract_shape(shape: str, dims: dict[str, int]) -> str:
    by_value = {v: k for k, v in dims.items()}
    return re.sub(
        r"\d+", lambda m: f"<{by_value[int(m.group())]}>" if int(m.group()) in by_value else m.group(), shape
    )


def _abstract(rows, layers, model, dims):  # type: ignore[no-untyped-def]
    names = _names(model)
    r = tuple(
        (op, user, _abstract_name(n, names), _abstract_shape(s, dims), fmt) for op, user, n, s, fmt, _ in rows
    )
    full = []
    for i, op, f, s in layers:
        kind, name = f.split(":", 1)
        full.append((i, op, f"{kind}:{_abstract_name(name, names)}", _abstract_shape(s, dims)))
    return r, tuple(full)


def _fill(text: str, names: dict[str, str], dims: dict[str, int]) -> str:
    return re.sub(r"<([a-zA-Z0-9_.]+)>", lambda m: str(dims.get(m.group(1), names.get(m.group(1)))), text)


def _concrete(shape, model, dims):  # type: ignore[no-untyped-def]
    """The template `shape` filled in with one build's names and numbers."""
    names = _names(model)
    rows = [(op, user, _fill(n, names, dims), _fill(s, names, dims), fmt) for op, user, n, s, fmt in shape[0]]
    layers = [(i, op, _fill(f, names, dims), _fill(s, names, dims)) for i, op, f, s in shape[1]]
    return rows, layers


def _listed(rows, layers):  # type: ignore[no-untyped-def]
    return [r[:5] for r in rows], [tuple(r) for r in layers]


def _distinct(dims: dict[str, int]) -> bool:
    values = list(dims.values())
    return (
        len(set(values)) == len(values) and all(v > 4 or k == "h" for k, v in dims.items()) and dims["h"] > 1
    )


def _fit(samples: list[tuple[Sizes, int, int | None]]) -> tuple[tuple[float, str], ...] | None:
    """The simplest exact combination of TERMS for (sizes, logged bytes, attention scratch) samples."""
    names = list(TERMS)
    X = np.array([[TERMS[n](s, a) for n in names] for s, _, a in samples], dtype=float)
    y = np.array([v for _, v, _ in samples], dtype=float)
    for k in (1, 2, 3):
        for combo in itertools.combinations(range(len(names)), k):
            A = X[:, combo]
            if not A.any(axis=0).all():
                continue
            coef, *_ = np.linalg.lstsq(A, y, rcond=None)
            coef = np.round(coef * 4) / 4
            if (coef != 0).all() and np.allclose(A @ coef, y, atol=0.5):
                return tuple((float(c), names[i]) for c, i in zip(coef, combo, strict=True))
    return None


def learn() -> tuple[dict[tuple[str, str, str], dict[str, Any]], list[str]]:
    groups: dict[tuple[str, str, str], list[tuple[Path, dict[str, Any], tuple[int, int, int]]]] = defaultdict(
        list
    )
    for folder, b, thd in _builds():
        if b["target"] in CONV_BYTES and in_domain(b["toolkit"], b["target"], *thd):
            groups[(b["toolkit"], b["target"], b["dtype"])].append((folder, b, thd))
    templates: dict[tuple[str, str, str], dict[str, Any]] = {}
    report: list[str] = []
    for key in sorted(groups):
        members = groups[key]
        parsed = []
        for folder, b, (t, d, h) in members:
            rows, layers = _tables(folder / b["log"])
            dims = {"T": t, "D": d, "h": h, "hd": d // h, "F": 4 * d}
            parsed.append((b, dims, rows, layers))
        if len({p[1]["D"] for p in parsed}) < 2 or len({p[1]["h"] for p in parsed}) < 2:
            report.append(f"{key}: its {len(parsed)} builds do not vary D and h: no template")
            continue
        ref = next((p for p in parsed if _distinct(p[1])), None)
        if ref is None:
            report.append(f"{key}: no build with distinct T, D, h, hd, F")
            continue
        shape = _abstract(ref[2], ref[3], ref[0]["model"], ref[1])
        mismatch = [
            p[0]["id"] for p in parsed if _concrete(shape, p[0]["model"], p[1]) != _listed(p[2], p[3])
        ]
        if mismatch:
            report.append(
                f"{key}: {len(mismatch)} of {len(parsed)} builds list other rows ({mismatch[0]}, ...)"
            )
            continue
        sizes = []
        failed = []
        for i in range(len(shape[0])):
            samples = []
            for _build, dims, rows, _ in parsed:
                s = block_sizes(key[1], key[2], dims["T"], dims["D"], dims["h"], dims["F"])
                samples.append((s, rows[i][5], s.attention(key[0], key[1], key[2])))
            formula = _fit(samples)
            if formula is None:
                failed.append(f"row {i} {shape[0][i][2]}: {sorted({v for _, v, _ in samples})[:6]}")
            sizes.append(formula)
        if failed:
            report.append(f"{key}: no size rule for " + "; ".join(failed))
            continue
        rows_out = tuple((*r, f) for r, f in zip(shape[0], sizes, strict=True))
        templates[key] = {
            "rows": rows_out,
            "layers": shape[1],
            "builds": len(parsed),
            "tokens": sorted({p[1]["T"] for p in parsed}),
        }
        report.append(f"{key}: {len(parsed)} builds, {len(rows_out)} rows")
    return templates, report


def render(templates: dict[tuple[str, str, str], dict[str, Any]]) -> str:
    lines = [
        '"""The compiler\'s feature and layer tables for a transformer block, per toolkit, target and dtype.',
        "",
        "Generated by tools/corpus/rknn_transformer_templates.py from the development builds of",
        "fixtures/rknn-compiler/ (never the corpus `transformer` builds); do not edit. Rows: (op id, user",
        "op, name, original shape, layout, size), names and shapes with <placeholders> (`Block.names()`,",
        "T, D, h, hd, F), the size a sum of coefficient x term of `rknn_transformer_tables.TERMS`. `builds`",
        'is how many builds a template was learned from and checked on, `tokens` their token counts."""',
        "",
        "# ruff: noqa: E501",
        "from typing import TypedDict",
        "",
        "Row = tuple[int, str, str, str, str, tuple[tuple[float, str], ...]]",
        "Layer = tuple[int, str, str, str]",
        "",
        "",
        "class Template(TypedDict):",
        "    builds: int",
        "    tokens: list[int]",
        "    rows: tuple[Row, ...]",
        "    layers: tuple[Layer, ...]",
        "",
        "",
        "# fmt: off",
        "TEMPLATES: dict[tuple[str, str, str], Template] = {",
    ]
    for key, t in sorted(templates.items()):
        lines.append(f"    {key!r}: {{")
        lines.append(f"        'builds': {t['builds']}, 'tokens': {t['tokens']!r},")
        lines.append("        'rows': (")
        lines += [f"            {r!r}," for r in t["rows"]]
        lines.append("        ),")
        lines.append("        'layers': (")
        lines += [f"            {r!r}," for r in t["layers"]]
        lines.append("        ),")
        lines.append("    },")
    lines.append("}")
    lines.append("# fmt: on")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--check", action="store_true")
    args = p.parse_args(argv)
    templates, report = learn()
    print("\n".join(report))
    text = render(templates)
    if args.check:
        current = OUT.read_text() if OUT.exists() else ""
        if current != text:
            print(f"{OUT.relative_to(ROOT)} is not current: run tools/corpus/rknn_transformer_templates.py")
            return 1
        return 0
    OUT.write_text(text)
    print(f"wrote {OUT.relative_to(ROOT)} ({len(templates)} templates)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
