"""Build the TFLite Micro corpus: .tflite models made with tflite-micro's model editor, each run in the
real TFLite Micro interpreter, its RecordingMicroAllocator printout kept beside it.

    .venv/bin/python tools/corpus/tflm.py [--out fixtures/tflm-corpus] [--only NAME ...]

Needs the `tflite-micro` package (`pip install -e '.[corpus]'`); `make corpus-tflm` runs it under
`nice -n 10`. Every model is run in its own subprocess (a kernel that aborts takes only its own model
down), with `arena_size` 16 MiB (a figure far above every model here: the printout reports what is
used, not what was given). The weights are deterministic pseudo-random numbers (seeded by the model
name): memory does not depend on their values. Writes, per model, `NAME.tflite` and `NAME.txt` (the
printout verbatim), and `manifest.json` (name, family, dtype, ops, file sizes, sha256, the printed
figures, the tflite-micro version).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import subprocess
import sys
import zlib
from collections.abc import Callable
from pathlib import Path

import numpy as np

ARENA_SIZE = 16 * 1024 * 1024


def _editor():  # type: ignore[no-untyped-def]
    from tflite_micro.tensorflow.lite.micro.compression import model_editor as me
    from tflite_micro.tensorflow.lite.micro.python import schema_py_generated as s

    return me, s


class Net:
    """A one-subgraph model under construction: each method adds one operator and returns its output."""

    def __init__(self, name: str, dtype: str) -> None:
        self.me, self.s = _editor()
        self.name = name
        self.int8 = dtype == "int8"
        self.rng = np.random.default_rng(zlib.crc32(name.encode()))
        self.model = self.me.Model(description=f"logscope tflm corpus: {name}")
        self.sg = self.model.add_subgraph(name="main")
        self.count = 0
        self.ops: list[str] = []

    # -- tensors
    def _name(self, kind: str) -> str:
        self.count += 1
        return f"{kind}_{self.count}"

    def _act_q(self):  # type: ignore[no-untyped-def]
        return self.me.Quantization(scales=0.05, zero_points=-128) if self.int8 else None

    def act(self, shape: tuple[int, ...], kind: str = "act"):  # type: ignore[no-untyped-def]
        dt = self.s.TensorType.INT8 if self.int8 else self.s.TensorType.FLOAT32
        t = self.me.Tensor(shape=shape, dtype=dt, quantization=self._act_q(), name=self._name(kind))
        self.sg.tensors.append(t)
        return t

    def input(self, shape: tuple[int, ...]):  # type: ignore[no-untyped-def]
        t = self.act(shape, "input")
        self.sg.inputs.append(t)
        return t

    def weights(self, shape: tuple[int, ...], axis: int | None):  # type: ignore[no-untyped-def]
        if self.int8:
            data = self.rng.integers(-127, 128, size=shape, dtype=np.int8)
            n = shape[axis] if axis is not None else 1
            q = self.me.Quantization(
                scales=[0.01] * n if axis is not None else 0.01,
                zero_points=[0] * n if axis is not None else 0,
                axis=axis,
            )
            t = self.me.Tensor(
                shape=shape,
                dtype=self.s.TensorType.INT8,
                data=data,
                quantization=q,
                name=self._name("weights"),
            )
        else:
            data = self.rng.standard_normal(size=shape).astype(np.float32) * 0.1
            t = self.me.Tensor(
                shape=shape, dtype=self.s.TensorType.FLOAT32, data=data, name=self._name("weights")
            )
        self.sg.tensors.append(t)
        return t

    def bias(self, n: int, per_channel: bool):  # type: ignore[no-untyped-def]
        if self.int8:
            q = self.me.Quantization(
                scales=[0.0005] * n if per_channel else 0.0005,
                zero_points=[0] * n if per_channel else 0,
                axis=0 if per_channel else None,
            )
            t = self.me.Tensor(
                shape=(n,),
                dtype=self.s.TensorType.INT32,
                data=self.rng.integers(-1000, 1000, size=n, dtype=np.int32),
                quantization=q,
                name=self._name("bias"),
            )
        else:
            t = self.me.Tensor(
                shape=(n,),
                dtype=self.s.TensorType.FLOAT32,
                data=(self.rng.standard_normal(n) * 0.1).astype(np.float32),
                name=self._name("bias"),
            )
        self.sg.tensors.append(t)
        return t

    # -- operators
    def _op(self, code: str, inputs: list, outputs: list, options_type: str | None = None, options=None):  # type: ignore[no-untyped-def]
        op = self.me.Operator(opcode=getattr(self.s.BuiltinOperator, code), inputs=inputs, outputs=outputs)
        if options is not None and options_type is not None:
            op._fb.builtinOptionsType = getattr(self.s.BuiltinOptions, options_type)
            op._fb.builtinOptions = options
        self.sg.operators.append(op)
        self.ops.append(code)
        return outputs[0]

    @staticmethod
    def _out(size: int, k: int, stride: int, same: bool) -> int:
        return -(-size // stride) if same else (size - k) // stride + 1

    def conv(self, x, cout: int, k: int = 3, stride: int = 1, same: bool = True, relu: bool = True):  # type: ignore[no-untyped-def]
        _, h, w, cin = x.shape
        o = self.s.Conv2DOptionsT()
        o.padding = self.s.Padding.SAME if same else self.s.Padding.VALID
        o.strideH = o.strideW = stride
        o.dilationHFactor = o.dilationWFactor = 1
        o.fusedActivationFunction = self.s.ActivationFunctionType.RELU if relu else 0
        y = self.act((1, self._out(h, k, stride, same), self._out(w, k, stride, same), cout))
        return self._op(
            "CONV_2D", [x, self.weights((cout, k, k, cin), 0), self.bias(cout, True)], [y], "Conv2DOptions", o
        )

    def dw(self, x, k: int = 3, stride: int = 1, same: bool = True, multiplier: int = 1):  # type: ignore[no-untyped-def]
        _, h, w, c = x.shape
        o = self.s.DepthwiseConv2DOptionsT()
        o.padding = self.s.Padding.SAME if same else self.s.Padding.VALID
        o.strideH = o.strideW = stride
        o.depthMultiplier = multiplier
        o.dilationHFactor = o.dilationWFactor = 1
        o.fusedActivationFunction = self.s.ActivationFunctionType.RELU6
        cout = c * multiplier
        y = self.act((1, self._out(h, k, stride, same), self._out(w, k, stride, same), cout))
        return self._op(
            "DEPTHWISE_CONV_2D",
            [x, self.weights((1, k, k, cout), 3), self.bias(cout, True)],
            [y],
            "DepthwiseConv2DOptions",
            o,
        )

    def fc(self, x, units: int, relu: bool = False):  # type: ignore[no-untyped-def]
        n = int(np.prod(x.shape[1:]))
        o = self.s.FullyConnectedOptionsT()
        o.fusedActivationFunction = self.s.ActivationFunctionType.RELU if relu else 0
        y = self.act((1, units))
        return self._op(
            "FULLY_CONNECTED",
            [x, self.weights((units, n), None), self.bias(units, False)],
            [y],
            "FullyConnectedOptions",
            o,
        )

    def pool(self, x, kind: str, k: int, stride: int, same: bool = False):  # type: ignore[no-untyped-def]
        _, h, w, c = x.shape
        o = self.s.Pool2DOptionsT()
        o.padding = self.s.Padding.SAME if same else self.s.Padding.VALID
        o.strideH = o.strideW = stride
        o.filterHeight = o.filterWidth = k
        y = self.act((1, self._out(h, k, stride, same), self._out(w, k, stride, same), c))
        return self._op(kind, [x], [y], "Pool2DOptions", o)

    def add(self, a, b):  # type: ignore[no-untyped-def]
        o = self.s.AddOptionsT()
        return self._op("ADD", [a, b], [self.act(tuple(a.shape))], "AddOptions", o)

    def concat(self, xs: list, axis: int = 3):  # type: ignore[no-untyped-def]
        shape = list(xs[0].shape)
        shape[axis] = sum(x.shape[axis] for x in xs)
        o = self.s.ConcatenationOptionsT()
        o.axis = axis
        return self._op("CONCATENATION", list(xs), [self.act(tuple(shape))], "ConcatenationOptions", o)

    def softmax(self, x):  # type: ignore[no-untyped-def]
        o = self.s.SoftmaxOptionsT()
        o.beta = 1.0
        y = self.act(tuple(x.shape))
        if self.int8:
            y.quantization = self.me.Quantization(scales=1 / 256, zero_points=-128)
        return self._op("SOFTMAX", [x], [y], "SoftmaxOptions", o)

    def reshape(self, x, shape: tuple[int, ...]):  # type: ignore[no-untyped-def]
        o = self.s.ReshapeOptionsT()
        o.newShape = list(shape)
        target = self.me.Tensor(
            shape=(len(shape),),
            dtype=self.s.TensorType.INT32,
            data=np.array(shape, dtype=np.int32),
            name=self._name("shape"),
        )
        self.sg.tensors.append(target)
        return self._op("RESHAPE", [x, target], [self.act(shape)], "ReshapeOptions", o)

    def finish(self, *outputs) -> bytes:  # type: ignore[no-untyped-def]
        self.sg.outputs.extend(outputs)
        return bytes(self.model.build())


# ---------------------------------------------------------------------------------------- the models
def single_conv(n: Net) -> bytes:
    return n.finish(n.conv(n.input((1, 24, 24, 3)), 8))


def single_conv_valid_stride2(n: Net) -> bytes:
    return n.finish(n.conv(n.input((1, 25, 25, 4)), 12, k=5, stride=2, same=False))


def single_dw(n: Net) -> bytes:
    return n.finish(n.dw(n.input((1, 20, 20, 16))))


def single_dw_multiplier2(n: Net) -> bytes:
    return n.finish(n.dw(n.input((1, 15, 15, 6)), stride=2, multiplier=2))


def single_fc(n: Net) -> bytes:
    return n.finish(n.fc(n.input((1, 64)), 10))


def single_fc_from_4d(n: Net) -> bytes:
    return n.finish(n.fc(n.input((1, 4, 4, 8)), 16, relu=True))


def single_add(n: Net) -> bytes:
    return n.finish(n.add(n.input((1, 8, 8, 8)), n.input((1, 8, 8, 8))))


def single_concat(n: Net) -> bytes:
    return n.finish(n.concat([n.input((1, 6, 6, 4)), n.input((1, 6, 6, 12)), n.input((1, 6, 6, 8))]))


def single_avgpool(n: Net) -> bytes:
    return n.finish(n.pool(n.input((1, 16, 16, 8)), "AVERAGE_POOL_2D", 2, 2))


def single_maxpool(n: Net) -> bytes:
    return n.finish(n.pool(n.input((1, 17, 17, 6)), "MAX_POOL_2D", 3, 2, same=True))


def single_softmax(n: Net) -> bytes:
    return n.finish(n.softmax(n.input((1, 12))))


def single_reshape(n: Net) -> bytes:
    return n.finish(n.reshape(n.input((1, 4, 4, 6)), (1, 96)))


def conv_chain(n: Net) -> bytes:
    x = n.input((1, 32, 32, 3))
    for c in (8, 16, 16, 8):
        x = n.conv(x, c)
    return n.finish(x)


def conv_pool_chain(n: Net) -> bytes:
    x = n.conv(n.input((1, 28, 28, 1)), 8)
    x = n.pool(x, "MAX_POOL_2D", 2, 2)
    x = n.conv(x, 16)
    x = n.pool(x, "AVERAGE_POOL_2D", 2, 2)
    x = n.reshape(x, (1, 7 * 7 * 16))
    return n.finish(n.softmax(n.fc(x, 10)))


def residual(n: Net) -> bytes:
    x = n.conv(n.input((1, 16, 16, 8)), 16)
    y = n.conv(x, 16)
    y = n.conv(y, 16, relu=False)
    x = n.add(x, y)
    z = n.conv(x, 16)
    return n.finish(n.add(x, z))


def inception(n: Net) -> bytes:
    x = n.conv(n.input((1, 20, 20, 4)), 16)
    a = n.conv(x, 8, k=1)
    b = n.conv(n.conv(x, 8, k=1), 12)
    c = n.pool(x, "MAX_POOL_2D", 3, 1, same=True)
    d = n.dw(x)
    y = n.concat([a, b, c, d])
    return n.finish(n.conv(y, 8, k=1))


def two_outputs(n: Net) -> bytes:
    x = n.conv(n.input((1, 12, 12, 3)), 8, stride=2)
    a = n.fc(n.reshape(x, (1, 6 * 6 * 8)), 5)
    b = n.conv(x, 4)
    return n.finish(n.softmax(a), b)


def kws(n: Net) -> bytes:
    """A DS-CNN keyword-spotting net (49x10 MFCC input, 64 channels, 4 depthwise-separable blocks)."""
    x = n.conv(n.input((1, 49, 10, 1)), 64, k=3, stride=2)
    for _ in range(4):
        x = n.dw(x)
        x = n.conv(x, 64, k=1)
    x = n.pool(x, "AVERAGE_POOL_2D", 5, 5)
    x = n.reshape(x, (1, int(np.prod(x.shape[1:]))))
    return n.finish(n.softmax(n.fc(x, 12)))


def _mobilenet(n: Net, size: int, channels: int, alpha: float, classes: int) -> bytes:
    def c(v: int) -> int:
        return max(8, int(v * alpha))

    x = n.input((1, size, size, channels))
    if channels == 1:  # the converter writes a 1-channel 3x3 conv as a depthwise conv (multiplier 32α)
        x = n.dw(x, stride=2, multiplier=c(32))
    else:
        x = n.conv(x, c(32), stride=2)
    plan = [
        (64, 1),
        (128, 2),
        (128, 1),
        (256, 2),
        (256, 1),
        (512, 2),
        (512, 1),
        (512, 1),
        (512, 1),
        (512, 1),
        (512, 1),
        (1024, 2),
        (1024, 1),
    ]
    for cout, stride in plan:
        x = n.dw(x, stride=stride)
        x = n.conv(x, c(cout), k=1)
    k = x.shape[1]
    x = n.pool(x, "AVERAGE_POOL_2D", k, k)
    x = n.conv(x, classes, k=1, relu=False)
    x = n.reshape(x, (1, classes))
    return n.finish(n.softmax(x))


def mobilenet_small(n: Net) -> bytes:
    """MobileNet v1, 0.25 width, 64x64x3 input, 10 classes."""
    return _mobilenet(n, 64, 3, 0.25, 10)


def person_detection(n: Net) -> bytes:
    """The person-detection shape: MobileNet v1 0.25 on 96x96x1, 2 classes, with the op sequence the
    published person_detect.tflite shows (14 DEPTHWISE_CONV_2D, 14 CONV_2D, AVERAGE_POOL_2D, RESHAPE,
    SOFTMAX; 89 tensors)."""
    return _mobilenet(n, 96, 1, 0.25, 2)


def _random_dag(n: Net, ops: int, head: bool = False) -> bytes:
    """A random DAG of 1x1 convolutions, ADDs, CONCATENATIONs and 3x3 max pools on 10x10 maps, with
    skip connections reaching back several ops: lifetimes that overlap in many ways, to test the
    planner's order and gap search (seeded by the model name)."""
    live = [n.input((1, 10, 10, int(n.rng.integers(2, 9))))]
    consumed: set[int] = set()
    for _ in range(ops):
        pick = int(n.rng.integers(max(0, len(live) - 5), len(live)))
        x = live[pick]
        kind = int(n.rng.integers(0, 4))
        if kind == 1:
            same = [i for i, t in enumerate(live) if t.shape == x.shape and i != pick]
            if same:
                other = same[int(n.rng.integers(0, len(same)))]
                consumed.update({pick, other})
                live.append(n.add(x, live[other]))
                continue
        if kind == 2 and len(live) > 1:
            other = int(n.rng.integers(0, len(live)))
            if other != pick and live[other].shape[3] + x.shape[3] <= 48:
                consumed.update({pick, other})
                live.append(n.concat([x, live[other]]))
                continue
        consumed.add(pick)
        if kind == 3:
            live.append(n.pool(x, "MAX_POOL_2D", 3, 1, same=True))
        else:
            live.append(n.conv(x, int(n.rng.integers(2, 25)), k=1))
    outputs = [t for i, t in enumerate(live) if i not in consumed and i > 0]
    if head:  # a classifier on the last tensor: depthwise, pooling, reshape, FC, softmax
        x = n.pool(n.dw(outputs[-1], stride=2), "AVERAGE_POOL_2D", 5, 5)
        x = n.reshape(x, (1, x.shape[3]))
        outputs[-1] = n.softmax(n.fc(x, 6))
    return n.finish(*outputs)


def random_dag_a(n: Net) -> bytes:
    return _random_dag(n, 12)


def random_dag_b(n: Net) -> bytes:
    return _random_dag(n, 20)


def random_dag_c(n: Net) -> bytes:
    return _random_dag(n, 30)


def random_head_a(n: Net) -> bytes:
    return _random_dag(n, 10, head=True)


def random_head_b(n: Net) -> bytes:
    return _random_dag(n, 25, head=True)


def _sequence(seq: str) -> Callable[[Net], bytes]:
    """A chain on an 8x8x4 input, one letter per op: C conv, M max pool, A average pool, R reshape to
    (1, N), F fully connected (10 units), S softmax. Short chains of every op pair and triple the MCU nets
    use: the tail's alignment depends on the order of the op-data and builtin-struct allocations."""

    def build(n: Net):  # type: ignore[no-untyped-def]
        x = n.input((1, 8, 8, 4))
        for s in seq:
            if s == "C":
                x = n.conv(x, 8)
            elif s in "MA" and len(x.shape) == 4 and x.shape[1] >= 2:
                x = n.pool(x, "MAX_POOL_2D" if s == "M" else "AVERAGE_POOL_2D", 2, 2)
            elif s == "R":
                x = n.reshape(x, (1, int(np.prod(x.shape[1:]))))
            elif s == "F":
                x = n.fc(x, 10)
            elif s == "S":
                x = n.softmax(x)
        return n.finish(x)

    return build


def _sequences() -> list[str]:
    import random

    fixed = [
        "RFS",
        "CMCARFS",
        "MCARFS",
        "CRF",
        "MRF",
        "RF",
        "FS",
        "FF",
        "FFS",
        "RRF",
        "SRF",
        "ARF",
        "AFS",
        "MFS",
        "CFS",
        "CFFS",
        "RFF",
        "FRS",
        "SFS",
        "CAFS",
    ]
    rng = random.Random(1)
    out = list(dict.fromkeys(fixed))
    while len(out) < 60:
        seq = "".join(rng.choice("CMARFS") for _ in range(rng.randint(2, 7)))
        flat = min((seq.index(c) for c in "RF" if c in seq), default=len(seq))
        if seq not in out and "C" not in seq[flat:]:  # no convolution after the tensor is flattened
            out.append(seq)
    return out


MODELS: dict[str, tuple[str, Callable[[Net], bytes]]] = {
    "single_conv": ("op", single_conv),
    "single_conv_valid_stride2": ("op", single_conv_valid_stride2),
    "single_dw": ("op", single_dw),
    "single_dw_multiplier2": ("op", single_dw_multiplier2),
    "single_fc": ("op", single_fc),
    "single_fc_from_4d": ("op", single_fc_from_4d),
    "single_add": ("op", single_add),
    "single_concat": ("op", single_concat),
    "single_avgpool": ("op", single_avgpool),
    "single_maxpool": ("op", single_maxpool),
    "single_softmax": ("op", single_softmax),
    "single_reshape": ("op", single_reshape),
    "conv_chain": ("net", conv_chain),
    "conv_pool_chain": ("net", conv_pool_chain),
    "residual": ("net", residual),
    "inception": ("net", inception),
    "two_outputs": ("net", two_outputs),
    "kws": ("net", kws),
    "mobilenet_small": ("net", mobilenet_small),
    "random_dag_a": ("dag", random_dag_a),
    "random_dag_b": ("dag", random_dag_b),
    "random_dag_c": ("dag", random_dag_c),
    "random_head_a": ("dag", random_head_a),
    "random_head_b": ("dag", random_head_b),
    "person_detection": ("net", person_detection),
}
MODELS.update({f"seq_{s}": ("seq", _sequence(s)) for s in _sequences()})
DTYPES = ("int8", "float")
# The float person-detection net adds 0.9 MB of float weights and nothing the int8 one does not test.
SKIP = {("person_detection", "float")}

_RUN = """
import sys
from tflite_micro.python.tflite_micro import runtime
it = runtime.Interpreter.from_file(sys.argv[1], arena_size=int(sys.argv[2]))
it.print_allocations()
"""

_FIGURE = re.compile(r"Arena allocation (total|head|tail) (\d+) bytes")


def run_model(path: Path) -> str:
    """The interpreter's printout for `path` (stdout and stderr, as printed)."""
    proc = subprocess.run(
        [sys.executable, "-c", _RUN, str(path), str(ARENA_SIZE)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"{path.name}: interpreter exited {proc.returncode}: {proc.stderr[-400:]}")
    return proc.stdout + proc.stderr


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("fixtures/tflm-corpus"))
    parser.add_argument("--only", nargs="*", default=None)
    args = parser.parse_args()
    from importlib.metadata import version

    tflm_version = version("tflite-micro")
    args.out.mkdir(parents=True, exist_ok=True)
    manifest_path = args.out / "manifest.json"
    old = json.loads(manifest_path.read_text()) if manifest_path.exists() else {"models": []}
    entries = {m["name"]: m for m in old.get("models", [])}
    for base, (family, build) in MODELS.items():
        for dtype in DTYPES:
            name = f"{base}_{dtype}"
            if (base, dtype) in SKIP or (args.only and base not in args.only and name not in args.only):
                continue
            net = Net(name, dtype)
            data = build(net)
            model_path = args.out / f"{name}.tflite"
            model_path.write_bytes(data)
            try:
                printout = run_model(model_path)
            except RuntimeError as exc:  # a chain TFLM refuses (e.g. CONV_2D after a 2-D reshape)
                print(f"{name}: skipped, {str(exc).splitlines()[-1] if str(exc) else exc}")
                model_path.unlink()
                entries.pop(name, None)
                continue
            (args.out / f"{name}.txt").write_text(printout)
            figures = {k: int(v) for k, v in _FIGURE.findall(printout)}
            entries[name] = {
                "name": name,
                "family": family,
                "dtype": dtype,
                "ops": net.ops,
                "model": model_path.name,
                "model_bytes": len(data),
                "model_sha256": hashlib.sha256(data).hexdigest(),
                "printout": f"{name}.txt",
                "arena_total_bytes": figures.get("total"),
                "arena_head_bytes": figures.get("head"),
                "arena_tail_bytes": figures.get("tail"),
            }
            print(f"{name}: {len(data)} B model, head {figures.get('head')} tail {figures.get('tail')}")
    manifest = {
        "generator": "tools/corpus/tflm.py",
        "runtime": f"tflite-micro {tflm_version} (Python interpreter, x86-64, reference kernels)",
        "arena_size_given": ARENA_SIZE,
        "models": [entries[k] for k in sorted(entries)],
    }
    manifest_path.write_text(json.dumps(manifest, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
