"""Loading an ONNX model safely: bounded sizes, no path outside the model's folder, clear errors.

`onnx.load` follows external-data paths as written, so a model could make it read any file on the
machine (`location: ../../etc/passwd`, an absolute path, a symlink in the model folder pointing out).
This loader parses the protobuf itself and never lets onnx touch external data: every external
reference is checked (relative, no `..`, resolving inside the model's folder, inside the file's
bounds), and only the small integer tensors that shape inference needs (Reshape targets, `__SHAPE`
tensors) are read in. Weights stay on disk: the analysis needs their dims and dtypes, not their values.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import TYPE_CHECKING

from logscope.errors import InputError
from logscope.reference.errors import ModelFormatError, ModelTooLargeError, UnsafeModelError

if TYPE_CHECKING:
    import onnx

MiB = 1024 * 1024


@dataclass(frozen=True)
class LoadLimits:
    """Upper bounds applied before and while reading a model (all in bytes or counts)."""

    # protobuf refuses messages of 2 GiB and more; a larger .onnx file cannot be a valid model.
    max_model_bytes: int = 2 * 1024 * MiB - 1
    # Sum of the external-data byte ranges the model references (they are checked, not read).
    max_external_bytes: int = 256 * 1024 * MiB
    max_nodes: int = 1_000_000
    # If/Loop/Scan bodies nest graphs; a hostile model could nest them without end.
    max_graph_depth: int = 32
    # External integer tensors at most this large are read in, for shape inference.
    max_shape_tensor_bytes: int = 1 * MiB


def load_model(path: str | os.PathLike[str], limits: LoadLimits | None = None) -> onnx.ModelProto:
    """Read and check an ONNX model file. Raises `InputError` / `ModelError` subclasses, never others."""
    import onnx
    from google.protobuf.message import DecodeError

    limits = limits or LoadLimits()
    file = Path(path)
    size = model_file_size(file, limits.max_model_bytes, "model")
    if size == 0:
        raise ModelFormatError(f"{file}: empty file, not an ONNX model")
    data = file.read_bytes()
    model = onnx.ModelProto()
    try:
        model.ParseFromString(data)
    except (DecodeError, ValueError, RuntimeError) as exc:
        raise ModelFormatError(f"{file}: not an ONNX model (protobuf decoding failed: {exc})") from None
    if model.ir_version <= 0 or not model.HasField("graph"):
        # A few random bytes can decode as an (almost empty) protobuf message: demand the basics.
        raise ModelFormatError(f"{file}: not an ONNX model (no ir_version or no graph)")
    if not model.graph.output:
        raise ModelFormatError(f"{file}: the graph declares no output")
    for what in ("producer_name", "producer_version", "domain"):
        if not isinstance(getattr(model, what), str):
            raise ModelFormatError(f"{file}: the model's {what} is not UTF-8 text: {getattr(model, what)!r}")
    _check_graph_bounds(file, model, limits)
    _resolve_external_data(file, model, limits)
    return model


def model_file_size(file: Path, max_bytes: int, what: str) -> int:
    """The size of a model file that exists, is a regular file and is within `max_bytes`; else the
    `InputError` / `ModelTooLargeError` that says which."""
    if not file.exists():
        raise InputError(f"{file}: no such file")
    if not file.is_file():
        raise InputError(f"{file}: not a regular file")
    size = file.stat().st_size
    if size > max_bytes:
        raise ModelTooLargeError(f"{file}: {size} bytes, over the {max_bytes}-byte {what} limit")
    return size


def _check_graph_bounds(file: Path, model: onnx.ModelProto, limits: LoadLimits) -> None:
    nodes = 0
    for depth, graph in _graphs(model.graph, 0):
        if depth > limits.max_graph_depth:
            raise ModelTooLargeError(f"{file}: subgraphs nested deeper than {limits.max_graph_depth}")
        nodes += len(graph.node)
        if nodes > limits.max_nodes:
            raise ModelTooLargeError(f"{file}: more than {limits.max_nodes} nodes")
        _check_names(file, graph)


def _check_names(file: Path, graph: onnx.GraphProto) -> None:
    """ONNX's string fields must be UTF-8; protobuf hands back `bytes` for one that is not (a flipped
    byte, a crafted file), which no later step expects. Refused here, naming the field."""
    if not isinstance(graph.name, str):
        raise ModelFormatError(f"{file}: a graph name is not UTF-8 text: {graph.name!r}")
    for i, node in enumerate(graph.node):
        for what, values in (
            ("op type", (node.op_type,)),
            ("name", (node.name,)),
            ("domain", (node.domain,)),
            ("input", node.input),
            ("output", node.output),
            ("attribute name", [a.name for a in node.attribute]),
        ):
            for value in values:
                if not isinstance(value, str):
                    raise ModelFormatError(f"{file}: node {i}: its {what} is not UTF-8 text: {value!r}")
    for what, protos in (
        ("graph input", graph.input),
        ("graph output", graph.output),
        ("value info", graph.value_info),
        ("initializer", graph.initializer),
    ):
        for proto in protos:
            if not isinstance(proto.name, str):
                raise ModelFormatError(f"{file}: a {what} name is not UTF-8 text: {proto.name!r}")


def _graphs(graph: onnx.GraphProto, depth: int) -> Iterator[tuple[int, onnx.GraphProto]]:
    """The graph and every subgraph (If/Loop/Scan bodies), depth-first, with their nesting depth."""
    yield depth, graph
    for node in graph.node:
        for attr in node.attribute:
            if attr.HasField("g"):
                yield from _graphs(attr.g, depth + 1)
            for sub in attr.graphs:
                yield from _graphs(sub, depth + 1)


def _tensors(model: onnx.ModelProto) -> Iterator[onnx.TensorProto]:
    """Every TensorProto that can carry data: initializers, sparse initializers, Constant attributes."""
    for _, graph in _graphs(model.graph, 0):
        yield from graph.initializer
        for sparse in graph.sparse_initializer:
            yield sparse.values
            yield sparse.indices
        for node in graph.node:
            for attr in node.attribute:
                if attr.HasField("t"):
                    yield attr.t
                yield from attr.tensors
                if attr.HasField("sparse_tensor"):
                    yield attr.sparse_tensor.values
                    yield attr.sparse_tensor.indices


def external_path(model_file: Path, location: str) -> Path:
    """The file an external-data `location` names, or `UnsafeModelError` if it leaves the model's folder."""
    if not location or "\x00" in location:
        raise UnsafeModelError(f"{model_file}: external data with an empty or invalid location")
    windows = PureWindowsPath(location)
    posix = PurePosixPath(location.replace("\\", "/"))
    if posix.is_absolute() or windows.drive or windows.root:
        raise UnsafeModelError(f"{model_file}: external data location {location!r} is an absolute path")
    if ".." in posix.parts:
        raise UnsafeModelError(f"{model_file}: external data location {location!r} climbs out with '..'")
    base = model_file.resolve().parent
    target = (base / posix).resolve()  # follows symlinks: a link pointing out is caught here
    if not target.is_relative_to(base):
        raise UnsafeModelError(
            f"{model_file}: external data location {location!r} resolves outside the model's folder"
        )
    return target


def _resolve_external_data(file: Path, model: onnx.ModelProto, limits: LoadLimits) -> None:
    import onnx

    referenced = 0
    for tensor in _tensors(model):
        if tensor.data_location != onnx.TensorProto.EXTERNAL:
            continue
        entries = {e.key: e.value for e in tensor.external_data}
        if not all(isinstance(text, str) for entry in entries.items() for text in entry):
            raise ModelFormatError(
                f"{file}: tensor {tensor.name!r} has external-data entries that are not UTF-8 text: "
                f"{entries!r}"
            )
        target = external_path(file, entries.get("location", ""))
        if not target.is_file():
            raise ModelFormatError(
                f"{file}: external data file {entries.get('location')!r} of tensor {tensor.name!r} is missing"
            )
        available = target.stat().st_size
        try:
            offset = int(entries.get("offset", "0"))
            length = int(entries["length"]) if "length" in entries else available - offset
        except ValueError:
            raise ModelFormatError(
                f"{file}: tensor {tensor.name!r} has a non-numeric offset/length"
            ) from None
        if offset < 0 or length < 0 or offset + length > available:
            raise ModelFormatError(
                f"{file}: tensor {tensor.name!r} reads bytes [{offset}, {offset + length}) of "
                f"{entries['location']!r}, which holds {available}"
            )
        referenced += length
        if referenced > limits.max_external_bytes:
            raise ModelTooLargeError(f"{file}: external data over the {limits.max_external_bytes}-byte limit")
        integer = tensor.data_type in (onnx.TensorProto.INT64, onnx.TensorProto.INT32)
        if integer and length <= limits.max_shape_tensor_bytes:
            with target.open("rb") as fh:
                fh.seek(offset)
                tensor.raw_data = fh.read(length)
            del tensor.external_data[:]
            tensor.data_location = onnx.TensorProto.DEFAULT
