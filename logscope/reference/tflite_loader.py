"""Reading a .tflite model: subgraphs, tensors, constant buffers, quantization, operators and options.

The flatbuffer is read with the `tflite` package (the TFLite schema compiled to pure Python, with
`flatbuffers`): no TensorFlow, no native code. A flatbuffer is read by offsets taken from the file
itself, so a hostile or cut file could point anywhere. Every read here is bounded: the file size is
checked first, the file identifier must be `TFL3`, every vector's length is checked against the bytes
the file holds before it is iterated, and any failure inside the generated readers (an offset past the
end, a truncated vector) becomes a `ModelFormatError` that names the file — never a traceback.

Tensor values are not kept: the memory analysis needs shapes, types, which tensors hold constant data
(and how much), and the quantization parameter counts.
"""

from __future__ import annotations

import math
import os
import re
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from logscope.reference.errors import ModelFormatError, ModelTooLargeError
from logscope.reference.graph import MAX_TENSOR_ELEMENTS

MiB = 1024 * 1024
MAX_TFLITE_BYTES = 2 * 1024 * MiB - 1  # flatbuffers address with 32-bit offsets
MAX_TENSORS = 1_000_000
MAX_OPERATORS = 1_000_000
MAX_SUBGRAPHS = 10_000

# Element sizes of TFLite's TensorType, as TfLiteTypeSizeOf gives them (TFLM's eval tensor byte length).
TYPE_BYTES: dict[str, int] = {
    "FLOAT32": 4,
    "FLOAT16": 2,
    "BFLOAT16": 2,
    "FLOAT64": 8,
    "INT32": 4,
    "UINT32": 4,
    "INT64": 8,
    "UINT64": 8,
    "INT16": 2,
    "UINT16": 2,
    "INT8": 1,
    "UINT8": 1,
    "BOOL": 1,
    "COMPLEX64": 8,
    "COMPLEX128": 16,
    "INT4": 1,  # TFLM stores unpacked int4 tensors one value per byte
    "STRING": 0,
    "RESOURCE": 0,
    "VARIANT": 0,
}


@dataclass(frozen=True)
class Quant:
    """A tensor's quantization: how many scales and zero points it has, and the channel axis."""

    scales: int
    zero_points: int
    quantized_dimension: int
    first_scale: float | None
    first_zero_point: int | None


@dataclass(frozen=True)
class TfTensor:
    index: int
    name: str
    dtype: str
    shape: tuple[int, ...]
    buffer: int
    data_bytes: int  # bytes of constant data in the flatbuffer (0: the runtime must allocate it)
    is_variable: bool
    quant: Quant | None

    @property
    def numel(self) -> int:
        n = 1
        for d in self.shape:
            n *= max(d, 0)
        return n

    @property
    def size_bytes(self) -> int:
        """TfLiteEvalTensorByteLength: elements × element size (a scalar has one element)."""
        return self.numel * TYPE_BYTES.get(self.dtype, 0)


@dataclass(frozen=True)
class TfOperator:
    index: int
    opcode: str
    version: int
    inputs: tuple[int, ...]  # -1: an omitted optional input
    outputs: tuple[int, ...]
    intermediates: tuple[int, ...]
    options_type: str | None
    options: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class TfSubgraph:
    index: int
    name: str
    tensors: tuple[TfTensor, ...]
    operators: tuple[TfOperator, ...]
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]


@dataclass(frozen=True)
class TfliteModel:
    source: str
    file_bytes: int
    schema_version: int
    description: str
    subgraphs: tuple[TfSubgraph, ...]
    buffers: int
    metadata: dict[str, int]  # name -> buffer index
    offline_offsets: tuple[int, ...] | None  # TFLM's OfflineMemoryAllocation for subgraph 0, if any
    buffer_bytes: int = 0  # data bytes of every buffer of the file (constants and metadata)

    @property
    def main(self) -> TfSubgraph:
        return self.subgraphs[0]

    @property
    def constant_bytes(self) -> int:
        return sum(t.data_bytes for sg in self.subgraphs for t in sg.tensors)


def is_tflite(path: str | os.PathLike[str]) -> bool:
    """True when the file carries the TFLite flatbuffer identifier `TFL3` (bytes 4-7)."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(8)
    except OSError:
        return False
    return len(head) == 8 and head[4:8] == b"TFL3"


def load_tflite(path: str | os.PathLike[str], max_bytes: int = MAX_TFLITE_BYTES) -> TfliteModel:
    """Read a .tflite file. Raises `InputError` / `ModelError` subclasses only."""
    from logscope.reference.loader import model_file_size

    file = Path(path)
    size = model_file_size(file, max_bytes, ".tflite")
    if size < 16:
        raise ModelFormatError(f"{file}: {size} bytes, too short for a .tflite model")
    data = file.read_bytes()
    return read_tflite(data, str(file))


def read_tflite(data: bytes, source: str = "<model>") -> TfliteModel:
    if len(data) < 16 or data[4:8] != b"TFL3":
        raise ModelFormatError(f"{source}: not a .tflite model (no TFL3 file identifier)")
    try:
        return _read(data, source)
    except ModelFormatError:
        raise
    except (
        struct.error,
        IndexError,
        ValueError,
        TypeError,
        UnicodeDecodeError,
        OverflowError,
        AttributeError,
    ) as exc:
        raise ModelFormatError(
            f"{source}: malformed .tflite flatbuffer ({type(exc).__name__}: {exc})"
        ) from None


def _count(n: int, limit: int, what: str, data: bytes, source: str, elem: int = 4) -> int:
    """A vector length, checked: non-negative, under `limit`, and not more than the file can hold."""
    if n < 0 or n > limit or n * elem > len(data):
        raise ModelFormatError(f"{source}: {what} count {n} is impossible for a {len(data)}-byte file")
    return n


def _enum_names(enum_class: type) -> dict[int, str]:
    return {v: k for k, v in vars(enum_class).items() if not k.startswith("_") and isinstance(v, int)}


def _read(data: bytes, source: str) -> TfliteModel:
    import tflite
    from tflite.BuiltinOperator import BuiltinOperator
    from tflite.BuiltinOptions import BuiltinOptions
    from tflite.TensorType import TensorType

    ops_names = _enum_names(BuiltinOperator)
    type_names = _enum_names(TensorType)
    option_names = _enum_names(BuiltinOptions)
    model = tflite.Model.GetRootAs(data, 0)
    n_codes = _count(model.OperatorCodesLength(), 100_000, "operator code", data, source)
    codes: list[tuple[str, int]] = []
    for i in range(n_codes):
        oc = model.OperatorCodes(i)
        code = max(_builtin_code(oc), int(oc.DeprecatedBuiltinCode()))
        name = ops_names.get(code, f"BUILTIN_{code}")
        if name == "CUSTOM":
            custom = oc.CustomCode()
            name = f"CUSTOM:{_text(custom)}" if custom else "CUSTOM"
        codes.append((name, int(oc.Version())))
    n_buffers = _count(model.BuffersLength(), 10_000_000, "buffer", data, source)
    buffer_bytes: list[int] = []
    for i in range(n_buffers):
        b = model.Buffers(i)
        n = b.DataLength()
        if n == 0 and b.Offset() > 1:
            n = int(b.Size())  # a buffer stored after the flatbuffer (models over 2 GiB)
        buffer_bytes.append(_count(n, len(data), "buffer byte", data, source, elem=1))
    metadata: dict[str, int] = {}
    for i in range(_count(model.MetadataLength(), 10_000, "metadata", data, source)):
        m = model.Metadata(i)
        metadata[_text(m.Name())] = int(m.Buffer())
    n_sub = _count(model.SubgraphsLength(), MAX_SUBGRAPHS, "subgraph", data, source)
    if n_sub == 0:
        raise ModelFormatError(f"{source}: the model has no subgraph")
    subgraphs = []
    for s in range(n_sub):
        sg = model.Subgraphs(s)
        tensors = []
        for t in range(_count(sg.TensorsLength(), MAX_TENSORS, "tensor", data, source)):
            tensors.append(_tensor(sg.Tensors(t), t, type_names, buffer_bytes, data, source))
        operators = []
        for o in range(_count(sg.OperatorsLength(), MAX_OPERATORS, "operator", data, source)):
            operators.append(_operator(sg.Operators(o), o, codes, option_names, len(tensors), data, source))
        inputs = tuple(int(v) for v in _ints(sg.InputsAsNumpy()))
        outputs = tuple(int(v) for v in _ints(sg.OutputsAsNumpy()))
        for v in (*inputs, *outputs):
            if not 0 <= v < len(tensors):
                raise ModelFormatError(f"{source}: subgraph {s} names tensor {v} of {len(tensors)}")
        name = _text(sg.Name())
        subgraphs.append(TfSubgraph(s, name, tuple(tensors), tuple(operators), inputs, outputs))
    description = _text(model.Description())
    offline = _offline_offsets(model, metadata, data, source, len(subgraphs[0].tensors))
    return TfliteModel(
        source,
        len(data),
        int(model.Version()),
        description,
        tuple(subgraphs),
        n_buffers,
        metadata,
        offline,
        sum(buffer_bytes),
    )


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def _text(raw: bytes | None, limit: int = 256) -> str:
    """A name from the file as printable text: control characters (an ANSI escape in a tensor name would
    reach the terminal) become '?', and at most `limit` characters are kept."""
    text = (raw or b"").decode("utf-8", "replace")
    return _CONTROL.sub("?", text[:limit])


def _builtin_code(oc: Any) -> int:
    """OperatorCode.builtin_code (field 3) as written. The `tflite` package's `BuiltinCode()` returns
    the deprecated int8 field for codes below 127, which is 0 in files that fill only the new field
    (tflite-micro's model editor writes those); TFLM takes max(builtin_code, deprecated_builtin_code)."""
    import flatbuffers

    o = oc._tab.Offset(10)
    return int(oc._tab.Get(flatbuffers.number_types.Int32Flags, o + oc._tab.Pos)) if o else 0


def _ints(values: Any) -> list[int]:
    """A flatbuffer int vector read as numpy (bounded by numpy: a length past the end raises)."""
    return [] if isinstance(values, int) else [int(v) for v in values]


def _tensor(
    t: Any, index: int, type_names: dict[int, str], buffer_bytes: list[int], data: bytes, source: str
) -> TfTensor:
    shape = tuple(_ints(t.ShapeAsNumpy()))
    if any(d < 0 for d in shape) and _ints(t.ShapeSignatureAsNumpy()):
        shape = tuple(max(d, 1) for d in shape)
    # The same limit as an ONNX tensor's: the arena sums sizes in int64 frames, and a flatbuffer word
    # changed by a cut download or on purpose can declare any dimension.
    elements = math.prod(max(d, 0) for d in shape)
    if elements > MAX_TENSOR_ELEMENTS:
        raise ModelTooLargeError(
            f"{source}: tensor {index} has {elements} elements (shape {shape}), over the limit of "
            f"{MAX_TENSOR_ELEMENTS} (2**40)"
        )
    buf = int(t.Buffer())
    if not 0 <= buf < max(len(buffer_bytes), 1):
        raise ModelFormatError(f"{source}: tensor {index} names buffer {buf} of {len(buffer_bytes)}")
    q = t.Quantization()
    quant = None
    if q is not None:
        scales = q.ScaleAsNumpy()
        zps = q.ZeroPointAsNumpy()
        n_scales = 0 if isinstance(scales, int) else len(scales)
        n_zps = 0 if isinstance(zps, int) else len(zps)
        if n_scales or n_zps:
            quant = Quant(
                n_scales,
                n_zps,
                int(q.QuantizedDimension()),
                float(scales[0]) if n_scales else None,
                int(zps[0]) if n_zps else None,
            )
    name = _text(t.Name()) or f"tensor_{index}"
    dtype = type_names.get(int(t.Type()), f"TYPE_{int(t.Type())}")
    data_bytes = buffer_bytes[buf] if buffer_bytes else 0
    return TfTensor(index, name, dtype, shape, buf, data_bytes, bool(t.IsVariable()), quant)


def _operator(
    op: Any,
    index: int,
    codes: list[tuple[str, int]],
    option_names: dict[int, str],
    n_tensors: int,
    data: bytes,
    source: str,
) -> TfOperator:
    code = int(op.OpcodeIndex())
    if not 0 <= code < len(codes):
        raise ModelFormatError(f"{source}: operator {index} has opcode index {code} of {len(codes)}")
    inputs = tuple(_ints(op.InputsAsNumpy()))
    outputs = tuple(_ints(op.OutputsAsNumpy()))
    intermediates = tuple(_ints(op.IntermediatesAsNumpy()))
    for v in (*inputs, *outputs, *intermediates):
        if not -1 <= v < n_tensors:
            raise ModelFormatError(f"{source}: operator {index} names tensor {v} of {n_tensors}")
    options_type = option_names.get(int(op.BuiltinOptionsType()))
    options: dict[str, Any] = {}
    if options_type and options_type != "NONE":
        options = _options(op, options_type)
    else:
        options_type = None
    name, version = codes[code]
    return TfOperator(index, name, version, inputs, outputs, intermediates, options_type, options)


_SKIP_METHODS = ("Init", "GetRootAs")


def _options(op: Any, options_type: str) -> dict[str, Any]:
    """The builtin options table as {field: value}: scalars, and int vectors (e.g. Reshape's new_shape)."""
    import importlib

    table = op.BuiltinOptions()
    if table is None:
        return {}
    try:
        module = importlib.import_module(f"tflite.{options_type}")
    except ImportError:
        return {}
    cls = getattr(module, options_type, None)
    if cls is None:
        return {}
    obj = cls()
    obj.Init(table.Bytes, table.Pos)
    out: dict[str, Any] = {}
    for attr in dir(cls):
        if not attr[:1].isupper() or attr.startswith(_SKIP_METHODS) or "BufferHasIdentifier" in attr:
            continue
        if attr.endswith(("IsNone", "Length")):
            continue
        fn = getattr(obj, attr)
        if attr.endswith("AsNumpy"):
            out[_snake(attr[: -len("AsNumpy")])] = _ints(fn())
            continue
        if fn.__code__.co_argcount != 1:
            continue  # a vector element accessor (j): read through its AsNumpy twin
        value = fn()
        if isinstance(value, (int, float, bool)):
            out[_snake(attr)] = value
    return out


def _snake(name: str) -> str:
    out = []
    for i, ch in enumerate(name):
        if ch.isupper() and i and not name[i - 1].isupper():
            out.append("_")
        out.append(ch.lower())
    return "".join(out)


def _offline_offsets(
    model: Any, metadata: dict[str, int], data: bytes, source: str, n_tensors: int
) -> tuple[int, ...] | None:
    """TFLM's `OfflineMemoryAllocation` metadata: [version, subgraph, tensor count, offset per tensor]
    (int32, -1 for a tensor the online planner places)."""
    index = metadata.get("OfflineMemoryAllocation")
    if index is None:
        return None
    if not 0 <= index < model.BuffersLength():
        raise ModelFormatError(f"{source}: OfflineMemoryAllocation names buffer {index}")
    raw = model.Buffers(index).DataAsNumpy()
    if isinstance(raw, int) or len(raw) < 12:
        raise ModelFormatError(f"{source}: OfflineMemoryAllocation metadata shorter than its header")
    values = [int.from_bytes(bytes(raw[i : i + 4]), "little", signed=True) for i in range(0, len(raw) - 3, 4)]
    count = values[2]
    if count != n_tensors or len(values) < 3 + count:
        raise ModelFormatError(
            f"{source}: OfflineMemoryAllocation lists {count} tensors, subgraph 0 has {n_tensors}"
        )
    return tuple(values[3 : 3 + count])
