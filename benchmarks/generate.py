"""Generate a large, realistic verbose RKNN-Toolkit2 1.5.2 build log for the benchmarks.

The log is a sequence of complete builds modelled line by line on the real fixture
`09-build-verbose-mobilenetv1-rv1106-tk2-1.5.2-simulator.log` (a verbose build of MobileNetV1 for
rv1106 on the PC simulator). The fixture's script prelude (prompt, toolkit banner, optimiser steps,
outlier table, tqdm bars, dtype warning), its native pass sequence and its tail (export, simulator
inference) are reused; what changes from build to build is generated with a seeded RNG:

- the network: op types, channel counts, spatial sizes, tensor names (ONNX or TF naming style);
- the `RKNNModelBuildPass` layer table (1.5.2 column set, simulator zeros in the cycle columns);
- the feature tensor table (NativeShape column, no DataFormat) and the const tensor table, with
  hex `[Start End) Size` that always satisfy End - Start == Size;
- the 40-dash totals block (`Total Weight Memory Size` / `Total Internal Memory Size` in bytes).

`noise_ratio` is the fraction of all lines that are known compiler chatter (`not need tranpose`,
`finish initComputeZoneMap`, `emit max`, `remove core consumption 2 regtasks for op Conv:Conv_145`),
interleaved inside the native passes (never inside a table, as in real logs). The data rows of
build `i` depend only on `(seed, i)`, so two logs with the same seed and the same number of builds
hold exactly the same tables whatever their noise ratio (used by the memory check in run.py).

Usage: python benchmarks/generate.py OUT.log [--mb 50] [--noise 0.5] [--seed 0] [--builds N] [--layers N]
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
from dataclasses import dataclass, field
from pathlib import Path

FIXTURE_NAME = "09-build-verbose-mobilenetv1-rv1106-tk2-1.5.2-simulator.log"
FIXTURE_CANDIDATES = (
    Path(__file__).resolve().parents[1] / "fixtures" / "rknn" / FIXTURE_NAME,
    Path("/work/shared/data/rknn-logs") / FIXTURE_NAME,
)

# Bump when the output for a given (target_mb, noise_ratio, seed, builds) changes: run.py's cache key.
GENERATOR_VERSION = 1

_NATIVE = "{level} RKNN: [{ts}] {body}\n"
_INTERNAL_BASE = 0x00454680  # where the fixture's feature tensors start (after the weights, rounded)
_ALIGN = 0x40


def fixture_path() -> Path:
    """The real verbose-build fixture the generator is modelled on."""
    for candidate in FIXTURE_CANDIDATES:
        if candidate.is_file():
            return candidate
    raise FileNotFoundError(f"fixture {FIXTURE_NAME} not found in: {', '.join(map(str, FIXTURE_CANDIDATES))}")


@dataclass(frozen=True)
class _Template:
    """What is reused from the fixture."""

    prelude: list[str]  # script + Python toolkit lines before `I rknn building ...`
    config_line: str  # body of the `compress = 0, ...` line
    version_line: str  # body of the `librknnc version: ...` line
    passes: list[str]  # native pass names in fixture order (OpEmit appears twice)
    tail: list[str]  # lines after `I rknn buiding done.`


def _load_template(path: Path) -> _Template:
    lines = path.read_text(encoding="utf-8").splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith("I rknn building ..."))
    done = next(i for i, ln in enumerate(lines) if ln.startswith("I rknn buiding done."))
    native = lines[start:done]
    config = next(ln for ln in native if "compress = " in ln).split("RKNN: ", 1)[1]
    config = config.split("] ", 1)[1] if config.startswith("[") else config
    version = next(ln for ln in native if "librknnc version:" in ln).split("RKNN: ", 1)[1]
    passes = [ln.split(">>>>>> start: ", 1)[1].strip() for ln in native if ">>>>>> start: " in ln]
    return _Template(lines[:start], config, version, passes, lines[done + 1 :])


# ------------------------------------------------------------------------------------------ the network


@dataclass
class _Tensor:
    name: str
    shape: tuple[int, ...]
    dtype: str = "INT8"


@dataclass
class _Layer:
    lid: int
    op_type: str
    dtype: str
    target: str
    inputs: list[_Tensor]  # feature inputs
    consts: list[_Tensor]  # weights/bias (appear in InputShape after the feature inputs)
    output: _Tensor | None
    full_name: str
    secondary: list[_Tensor] = field(default_factory=list)  # `_exSecondary` feature tensors


_CONV_OPS = ("ConvClip", "ConvRelu", "Conv", "ConvAdd", "ConvAddRelu", "ConvSigmoid", "ConvExSwish")
_ELTWISE_OPS = ("Add", "Mul", "Sigmoid", "Relu", "Clip", "exSwish")
_SHAPE_OPS = ("Concat", "MaxPool", "Resize", "Reshape", "Transpose", "Split", "Slice", "AveragePool")


class _Namer:
    """ONNX-export (`/model.3/cv1/conv/Conv`, `onnx::Conv_412`) or TF-export (`Relu6__57:0`) names."""

    def __init__(self, rng: random.Random, style: str, model: str) -> None:
        self.rng = rng
        self.style = style
        self.model = model
        self.counter = rng.randint(2, 40)

    def layer(self, op: str, block: int) -> str:
        self.counter += self.rng.randint(1, 3)
        base = "Conv" if op.startswith("Conv") else op
        if self.style == "onnx":
            part = self.rng.choice(("cv1", "cv2", "cv3", "m.0", "m.1", "conv", "bottleneck"))
            return f"/model.{block}/{part}/{base}_{self.counter}"
        return (
            f"{self.model}/{self.model}/Conv2d_{block}_{self.rng.choice(('depthwise', 'pointwise'))}/{base}"
        )

    def tensor(self, op: str) -> str:
        self.counter += 1
        if self.style == "onnx":
            return self.rng.choice(
                (f"onnx::Conv_{self.counter}", f"/model.{self.counter % 60}/{op}_output_0")
            )
        return f"{self.rng.choice(('Relu6', 'Relu', 'add', 'concat'))}__{self.counter}:0"

    def const(self, kind: str, layer_name: str) -> str:
        self.counter += 1
        if self.style == "onnx":
            return (
                f"model.{self.counter % 97}.conv.{kind}"
                if self.rng.random() < 0.6
                else f"onnx::Conv_{self.counter}"
            )
        if kind == "weight":
            return f"const_fold_opt__{self.counter}"
        return f"{layer_name.rsplit('/', 1)[0]}/Conv2D_bias"


def _build_network(rng: random.Random, n_layers: int) -> tuple[list[_Layer], str]:
    style = rng.choice(("onnx", "onnx", "tf"))
    model = rng.choice(("MobilenetV1", "MobilenetV2", "ResNet50", "yolov5s", "yolov8n", "EfficientNetB0"))
    namer = _Namer(rng, style, model)
    side = rng.choice((224, 256, 320, 384, 416, 480, 512, 640))
    cur = _Tensor("input" if style == "tf" else "images", (1, 3, side, side))
    layers = [_Layer(0, "InputOperator", "INT8", "CPU", [], [], cur, "InputOperator:" + cur.name)]
    history = [cur]
    block = 0
    base, cap = rng.choice((16, 24, 32)), rng.choice((256, 512, 1024))
    stage_c = base  # channels grow with each downsampling, as in real backbones
    p_down = 6.0 / (n_layers * 0.62)  # about six stride-2 convolutions spread over the network
    for lid in range(1, n_layers - 1):
        c, h, w = cur.shape[1], cur.shape[2], cur.shape[3]
        roll = rng.random()
        if roll < 0.62:
            op = rng.choice(_CONV_OPS)
            k = rng.choice((1, 1, 1, 3, 3, 3, 3, 5)) if c > 3 else 3
            depthwise = k == 3 and c > 3 and rng.random() < 0.3
            stride = 2 if (h > 7 and rng.random() < p_down) else 1
            if stride == 2:
                stage_c = min(cap, stage_c * 2)
            cout = (
                c
                if depthwise
                else rng.choice((stage_c, stage_c, stage_c, max(8, stage_c // 2), min(cap, stage_c * 2)))
            )
            out = _Tensor(namer.tensor(op), (1, cout, max(1, h // stride), max(1, w // stride)))
            name = namer.layer(op, block)
            wshape = (1, c, k, k) if depthwise else (cout, c, k, k)
            consts = [
                _Tensor(namer.const("weight", name), wshape, "INT8"),
                _Tensor(namer.const("bias", name), (cout,), "INT32"),
            ]
            inputs = [cur]
            if op.startswith("ConvAdd") and len(history) > 2:
                inputs.append(rng.choice(history[-4:]))
            layer = _Layer(lid, op, "INT8", "NPU", inputs, consts, out, f"Conv:{name}")
            block += stride == 2 or rng.random() < 0.15
        elif roll < 0.82:
            op = rng.choice(_ELTWISE_OPS)
            out = _Tensor(namer.tensor(op), cur.shape)
            inputs = [cur] + ([rng.choice(history[-5:])] if op in ("Add", "Mul") and len(history) > 2 else [])
            layer = _Layer(lid, op, "INT8", "NPU", inputs, [], out, f"{op}:{namer.layer(op, block)}")
        else:
            op = rng.choice(_SHAPE_OPS)
            if op == "Concat" and len(history) > 2:
                other = rng.choice(history[-6:])
                inputs = [cur, _Tensor(other.name, (1, other.shape[1], h, w))]
                out = _Tensor(namer.tensor(op), (1, min(cap, c + other.shape[1]), h, w))
            elif op in ("MaxPool", "AveragePool") and h > 7:
                inputs, out = [cur], _Tensor(namer.tensor(op), (1, c, h // 2, w // 2))
            elif op == "Resize" and h < 160:
                inputs, out = [cur], _Tensor(namer.tensor(op), (1, c, h * 2, w * 2))
            else:
                inputs, out = [cur], _Tensor(namer.tensor(op), cur.shape)
            target = "CPU" if op in ("Reshape", "Transpose") and rng.random() < 0.3 else "NPU"
            layer = _Layer(lid, op, "INT8", target, inputs, [], out, f"{op}:{namer.layer(op, block)}")
            if op == "Reshape":
                layer.consts = [_Tensor(namer.tensor("shape") + "_shape", (len(cur.shape),), "INT64")]
        if rng.random() < 0.01:  # the fixture's exSoftmax13/OutputOperator carry `_exSecondary` tensors
            layer.secondary.append(_Tensor(out.name.replace(":0", "") + "_exSecondary", out.shape, "INT8"))
        layers.append(layer)
        history.append(out)
        cur = out
    tail_op = _Layer(
        n_layers - 1, "OutputOperator", "INT8", "NPU", [cur], [], None, f"OutputOperator:{cur.name}"
    )
    layers.append(tail_op)
    return layers, model


# ------------------------------------------------------------------------------------------ formatting


def _shape(shape: tuple[int, ...]) -> str:
    return "(" + ",".join(map(str, shape)) + ")"


def _native_shape(t: _Tensor) -> tuple[int, ...]:
    if len(t.shape) != 4:
        return t.shape
    n, c, h, w = t.shape
    c2 = 8 if t.dtype.startswith("FLOAT") else 16
    if c <= 4:
        return (n, 1, h, w, c)
    return (n, -(-c // c2), h, w, c2)


_BYTES = {"INT8": 1, "UINT8": 1, "INT16": 2, "FLOAT16": 2, "INT32": 4, "FLOAT": 4, "INT64": 8}


def _nbytes(shape: tuple[int, ...], dtype: str) -> int:
    size = math.prod(shape) * _BYTES.get(dtype, 1)
    return max(_ALIGN, -(-size // _ALIGN) * _ALIGN)


def _pad(text: str, width: int) -> str:
    # Columns overflow like the compiler's: at least one space after every value.
    return text + " " * max(1, width - len(text))


class _Clock:
    """`hh:mm:ss.mmm`, advancing a little per line."""

    def __init__(self, rng: random.Random, start_ms: int) -> None:
        self.rng = rng
        self.ms = start_ms

    def tick(self, most: int = 2) -> str:
        self.ms += self.rng.randint(0, most)
        ms = self.ms % 86_400_000
        return f"{ms // 3_600_000:02d}:{ms // 60_000 % 60:02d}:{ms // 1000 % 60:02d}.{ms % 1000:03d}"


_LAYER_COLS = (5, 17, 9, 7, 45, 23, 15, 15, 15, 15, 15, 15, 15, 15)
_LAYER_NAMES = (
    "ID",
    "OpType",
    "DataType",
    "Target",
    "InputShape",
    "OutputShape",
    "DDR Cycles",
    "NPU Cycles",
    "Total Cycles",
    "Time(us)",
    "MacUsage(%)",
    "Task Number",
    "Lut Number",
    "RW(KB)",
)
# The 1.5.2 header, exactly as in the fixture (column widths included).
_LAYER_HEADER = (
    "".join(name.ljust(w) for name, w in zip(_LAYER_NAMES, _LAYER_COLS, strict=True)) + "FullName        "
)


def _layer_row(layer: _Layer) -> str:
    ins = ",".join(_shape(t.shape) for t in layer.inputs + layer.consts) or "\\"
    out = _shape(layer.output.shape) if layer.output is not None else "\\"
    rw = sum(
        _nbytes(t.shape, t.dtype)
        for t in [*layer.inputs, *layer.consts] + ([layer.output] if layer.output else [])
    )
    values = (
        str(layer.lid),
        layer.op_type,
        layer.dtype,
        layer.target,
        ins,
        out,
        "0",
        "0",
        "0",
        "0",
        "\\",
        "0",
        "0",
        f"{rw / 1024:.2f}",
    )
    return "".join(_pad(v, w) for v, w in zip(values, _LAYER_COLS, strict=True)) + layer.full_name


def _tensor_tables(rng: random.Random, layers: list[_Layer]) -> tuple[list[str], list[str], int, int]:
    """(feature table lines, const table lines, total weight bytes, total internal bytes)."""
    feature: list[tuple[int, str, str, str, str, str, int, int, str]] = []
    addr_b, flip, internal_end = _INTERNAL_BASE, False, _INTERNAL_BASE
    for layer in layers[1:]:
        for t in layer.inputs + layer.secondary:
            size = _nbytes(_native_shape(t), t.dtype)
            # Ping-pong between the region start and the end of the previous tensor, like the fixture.
            start = _INTERNAL_BASE if flip else addr_b
            flip = not flip if rng.random() < 0.8 else flip
            addr_b = start + size
            internal_end = max(internal_end, addr_b)
            feature.append(
                (
                    layer.lid,
                    layer.op_type,
                    t.name,
                    t.dtype,
                    _shape(t.shape),
                    _shape(_native_shape(t)),
                    start,
                    size,
                    " ",
                )
            )
    consts = [(layer.lid, layer.op_type, t) for layer in layers for t in layer.consts]
    order = list(range(len(consts)))
    rng.shuffle(order)  # weights are laid out in a different order than the table lists them
    offsets: dict[int, int] = {}
    addr = 0
    for i in order:
        t = consts[i][2]
        offsets[i] = addr
        addr += _nbytes(t.shape, t.dtype)
    weight_total = addr
    const_rows = [
        (
            lid,
            op,
            t.name,
            t.dtype,
            _shape(t.shape),
            "",
            offsets[i],
            _nbytes(t.shape, t.dtype),
            "*" if rng.random() < 0.005 else " ",
        )
        for i, (lid, op, t) in enumerate(consts)
    ]
    return (
        _format_table(feature, native=True),
        _format_table(const_rows, native=False),
        weight_total,
        internal_end - _INTERNAL_BASE,
    )


def _format_table(rows: list[tuple[int, str, str, str, str, str, int, int, str]], native: bool) -> list[str]:
    uw = max([len("User")] + [len(r[1]) for r in rows]) + 1
    nw = max([len("Tensor")] + [len(r[2]) for r in rows]) + 1
    ow = max([len("OrigShape")] + [len(r[4]) for r in rows]) + 1
    sw = max([len("NativeShape")] + [len(r[5]) for r in rows]) + 1 if native else 0
    head = "ID  " + _pad("User", uw) + _pad("Tensor", nw) + "DataType  " + _pad("OrigShape", ow)
    head += _pad("NativeShape", sw) if native else ""
    width = len(head)
    rule = "-" * width + "+" + "-" * 33
    out = [rule, head + "|     [Start       End)       Size", rule]
    for lid, user, name, dtype, orig, nat, start, size, flag in rows:
        row = _pad(str(lid), 4) + _pad(user, uw) + _pad(name, nw) + _pad(dtype, 10) + _pad(orig, ow)
        row += _pad(nat, sw) if native else ""
        out.append(f"{row}| 0x{start:08x}{flag}0x{start + size:08x} 0x{size:08x}")
    out.append(rule)
    return out


# ------------------------------------------------------------------------------------------ one build

_NOISE_EMIT = (
    "emit max",
    "emit tp0",
    "emit sub",
    "emit exp",
    "emit reduce sum",
    "emit prearare2",
    "emit div",
    "emit fpToint",
    "emit tp1",
)


def _noise_line(rng: random.Random, slot: str, convs: list[str]) -> str:
    if slot == "N4rknn18RKNNModelBuildPassE":
        conv = rng.choice(convs)
        return f"remove core consumption {rng.choice((2, 2, 2, 3))} regtasks for op {conv}"
    roll = rng.random()
    if roll < 0.35:
        return "not need tranpose"
    if roll < 0.55:
        return rng.choice(("finish initComputeZoneMap", "finish initComputeZoneMapByStepsVector"))
    if roll < 0.85:
        return rng.choice(_NOISE_EMIT)
    conv = rng.choice(convs)
    return f"remove core consumption {rng.choice((2, 3))} regtasks for op {conv}"


def _replace_model(text: str, model: str) -> str:
    return text.replace("MobilenetV1", model).replace("mobilenet_v1", model.lower())


def _build(
    tpl: _Template, seed: int, index: int, noise_ratio: float, layers: int | None = None
) -> tuple[str, dict[str, int]]:
    data_rng = random.Random(f"logscope-bench:{seed}:{index}:data")
    noise_rng = random.Random(f"logscope-bench:{seed}:{index}:noise:{noise_ratio!r}")
    n_layers = data_rng.randint(200, 900)
    if layers is not None:  # drawn anyway, so the rest of the build's random stream is unchanged
        n_layers = layers
    layers, model = _build_network(data_rng, n_layers)
    feature, const, weight_total, internal_total = _tensor_tables(data_rng, layers)
    clock = _Clock(random.Random(f"logscope-bench:{seed}:{index}:clock"), data_rng.randint(0, 86_399_000))

    # Python toolkit prelude, copied from the fixture with the model name and op counts changed.
    out: list[str] = [
        _replace_model(ln, model).replace("58/58", f"{n_layers}/{n_layers}") + "\n" for ln in tpl.prelude
    ]
    out.append("I rknn building ...\n")
    # Native part, as a list of (kind, body) where kind "slot" marks where noise may be inserted.
    native: list[tuple[str, str]] = [
        ("I", tpl.config_line),
        ("I", tpl.version_line),
        ("D", "RKNN is invoked"),
    ]
    out_name = layers[-1].inputs[0].name
    native += [
        ("I", f"Meet hybrid type, dtype: float16, tensor: {out_name}{sfx}")
        for sfx in ("__float16", "", "_before")
    ]
    n_layer_tables = 0
    for name in tpl.passes:
        native.append(("D", f">>>>>> start: {name}"))
        if name in (
            "OpEmit",
            "N4rknn19RKNNLayoutMatchPassE",
            "N4rknn20RKNNMultiSurfacePassE",
            "N4rknn18RKNNModelBuildPassE",
            "N4rknn23RKNNWeightTransposePassE",
        ):
            native.append(("slot", name))
        if name == "N4rknn23RKNNProfileAnalysisPassE":
            native.append(("D", f"node: {layers[-2].full_name}, Target: NPU"))
        elif name == "N4rknn23RKNNWeightTransposePassE":
            warn = f"Warning: Tensor {out_name}_shape need paramter qtype, type is set to float16 by default!"
            native += [("W", warn), ("W", warn)]
        elif name == "N4rknn18RKNNModelBuildPassE":
            regcfg = data_rng.randint(40_000, 3_000_000)
            native += [
                ("D", "RKNNModelBuildPass: [Statistics]"),
                ("D", f"total_regcfg_size     : {regcfg:>9}"),
                ("D", f"total_diff_regcfg_size: {int(regcfg * data_rng.uniform(0.2, 0.95)):>9}"),
                ("D", _LAYER_HEADER),
            ]
            native += [("D", _layer_row(layer)) for layer in layers]
            n_layer_tables += 1
        elif name == "N4rknn22RKNNMiniModelBuildPassE":
            tmp = f"/tmp/tmp{data_rng.getrandbits(32):08x}"
            native.append(("D", f"Export Mini RKNN model to {tmp}/dumps/tf2onnx.mini.rknn"))
        elif name == "N4rknn21RKNNMemStatisticsPassE":
            native += [("D", ln) for ln in feature + const]
            predict_internal = int(internal_total * data_rng.uniform(3, 9))
            predict_weight = weight_total + data_rng.randint(0, 40_000)
            native += [
                ("D", "-" * 40),
                ("D", f"Total Weight Memory Size: {weight_total}"),
                ("D", f"Total Internal Memory Size: {internal_total}"),
                ("D", f"Predict Internal Memory RW Amount: {predict_internal}"),
                ("D", f"Predict Weight Memory RW Amount: {predict_weight}"),
                ("D", "-" * 40),
            ]
        native.append(("D", f"<<<<<<<< end: {name}"))

    data_lines = len(out) + 1 + sum(kind != "slot" for kind, _ in native) + 1 + len(tpl.tail)
    n_noise = round(data_lines * noise_ratio / (1.0 - noise_ratio)) if noise_ratio > 0 else 0
    slots = [body for kind, body in native if kind == "slot"]
    per_slot = dict.fromkeys(range(len(slots)), 0)
    for _ in range(n_noise):
        per_slot[noise_rng.randrange(len(slots))] += 1
    slot_i = 0
    convs = [layer.full_name for layer in layers if layer.full_name.startswith("Conv:")] or ["Conv:Conv_145"]
    for kind, body in native:
        if kind == "slot":
            for _ in range(per_slot[slot_i]):
                out.append(
                    _NATIVE.format(level="D", ts=clock.tick(1), body=_noise_line(noise_rng, body, convs))
                )
            slot_i += 1
        else:
            out.append(_NATIVE.format(level=kind, ts=clock.tick(), body=body))
    out.append("I rknn buiding done.\n")
    out += [_replace_model(ln, model) + "\n" for ln in tpl.tail]
    stats = {
        "lines": len(out),
        "noise": n_noise,
        "layer": n_layers,
        "layer_tables": n_layer_tables,
        "feature_tensor": len(feature) - 4,
        "const_tensor": len(const) - 4,
    }
    return "".join(out), stats


def generate_log(
    path: str | Path,
    target_mb: float = 50,
    noise_ratio: float = 0.5,
    seed: int = 0,
    builds: int | None = None,
    layers: int | None = None,
) -> dict[str, object]:
    """Write a verbose RKNN-Toolkit2 1.5.2 build log of about `target_mb` MB (10**6 bytes) to `path`.

    With `builds` set, exactly that many builds are written and `target_mb` is ignored. With `layers`
    set, every build has that many layers (default: 200-900, drawn per build). Returns stats:
    bytes, lines, builds, noise lines, rows per kind. The output is a pure function of the arguments.
    """
    if not 0.0 <= noise_ratio < 1.0:
        raise ValueError("noise_ratio must be in [0, 1)")
    tpl = _load_template(fixture_path())
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    target = int(target_mb * 1_000_000)
    totals = {
        "bytes": 0,
        "lines": 0,
        "builds": 0,
        "noise": 0,
        "layer": 0,
        "feature_tensor": 0,
        "const_tensor": 0,
    }
    with path.open("w", encoding="utf-8", newline="\n") as fh:
        index = 0
        while (builds is None and totals["bytes"] < target) or (builds is not None and index < builds):
            text, stats = _build(tpl, seed, index, noise_ratio, layers)
            fh.write(text)
            totals["bytes"] += len(text.encode("utf-8"))
            totals["builds"] += 1
            for key in ("lines", "noise", "layer", "feature_tensor", "const_tensor"):
                totals[key] += stats[key]
            index += 1
    totals["tensor"] = totals["feature_tensor"] + totals["const_tensor"]
    result: dict[str, object] = dict(totals)
    result.update(
        path=str(path),
        seed=seed,
        noise_ratio=noise_ratio,
        target_mb=target_mb,
        noise_fraction=round(totals["noise"] / max(1, totals["lines"]), 4),
        fixture=str(fixture_path()),
        generator_version=GENERATOR_VERSION,
    )
    return result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--mb", type=float, default=50)
    ap.add_argument("--noise", type=float, default=0.5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--builds", type=int, default=None)
    ap.add_argument("--layers", type=int, default=None)
    args = ap.parse_args(argv)
    result = generate_log(args.out, args.mb, args.noise, args.seed, args.builds, args.layers)
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
