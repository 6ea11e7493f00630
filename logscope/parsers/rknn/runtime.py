"""Board side, the runtime (librknnrt, the PC<->board proxy, the C API demos): versions, allocations,
tensor attributes, and how a session starts."""

from __future__ import annotations

import re

from logscope.parsers.grammar import Fields
from logscope.parsers.rknn.state import RknnState, _Build
from logscope.parsers.rknn.values import _float_or_none, _int_or_none

# Failed runtime allocations: what was asked for and why it failed (`failed to malloc npu memory!, size:
# 59187712, flags: 0x2` [34], `failed to allocate handle, ret: -1, errno: 12` [35]).
_FAILED_ALLOC = re.compile(
    r"failed to (?P<what>malloc npu memory|allocate handle)!?,?"
    r"(?:.*?size: (?P<size>\d+))?(?:.*?flags: (?P<flags>0x[0-9a-fA-F]+))?(?:.*?errno: (?P<errno>\d+))?"
)


class Runtime(RknnState):
    """Runtime information, allocations, proxy versions and tensor attributes."""

    def _runtime_info(self, f: Fields, line: str, number: int) -> None:
        self._structural()
        build = self._segment("RUNTIME_INFO", number)
        build.versions["runtime_version"] = f["version"]
        build.versions["runtime_line"] = number

    def _sdk_version(self, f: Fields, line: str, number: int) -> None:
        """A C demo's `sdk version: 2.3.2 (...) driver version: 0.7.2`: the runtime and driver versions."""
        self._structural()
        build = self._segment("SDK_VERSION", number)
        build.versions["runtime_version"], build.versions["runtime_line"] = f["version"], number
        build.versions["driver_version"], build.versions["driver_line"] = f["driver"], number

    def _driver_info(self, f: Fields, line: str, number: int) -> None:
        self._structural()
        build = self._segment("DRIVER_INFO", number)
        build.versions["driver_version"], build.versions["driver_line"] = f["version"], number

    def _model_info(self, f: Fields, line: str, number: int) -> None:
        self._structural()
        build = self._current(number)
        build.versions["model_toolkit_version"] = (f["toolkit"] or "").strip() or None
        build.versions["model_compiler_version"] = f["compiler"]
        build.versions["model_format_version"] = int(f["model_version"] or 0)
        build.versions["model_info_line"] = number
        if build.target_platform is None and f["platform"]:
            build.target_platform = f["platform"].strip().lower() or None

    def _allocation(self, f: Fields, line: str, number: int) -> None:
        self._structural()
        build = self._current(number)
        self.rows["allocations"].append(
            {
                "build_index": build.index,
                "name": f["name"],
                "status": "allocated",
                "size_bytes": int(f["size"] or 0),
                "aligned_size_bytes": int(f["aligned"] or 0),
                "virt_addr": f["virt"],
                "dma_addr": f["dma"],
                "fd": int(f["fd"] or 0),
                "handle": int(f["handle"] or 0),
                "flags": f["flags"],
                "line": number,
            }
        )

    def _proxy_version(self, f: Fields, line: str, number: int) -> None:
        self._structural()
        if f["api"]:
            build = self._segment("PROXY_VERSION:api", number)
            build.versions["api_version"], build.versions["api_line"] = f["api"], number
            return
        key = "server_version" if f["driver"] == "rknn_server" else "proxy_runtime_version"
        self._current(number).versions[key] = f["driver_version"]

    def _proxy_io(self, f: Fields, line: str, number: int) -> None:
        self._structural()
        self.attr_io = (f["io"] or "").lower() or None

    def _tensor_attr(self, f: Fields, line: str, number: int) -> None:
        self._structural()
        build = self._current(number)
        self.rows["tensor_attrs"].append(
            {
                "build_index": build.index,
                "io": self.attr_io,
                "index": int(f["index"] or 0),
                "name": f["name"],
                "n_dims": int(f["n_dims"] or 0),
                "dims": f["dims"],
                "n_elems": int(f["n_elems"] or 0),
                "size_bytes": int(f["size"] or 0),
                "w_stride": _int_or_none(f["w_stride"] or ""),
                "size_with_stride_bytes": _int_or_none(f["size_with_stride"] or ""),
                "fmt": f["fmt"],
                "dtype": f["type"],
                "qnt_type": f["qnt_type"],
                "zp": int(f["zp"] or 0),
                "scale": _float_or_none(f["scale"] or ""),
                "line": number,
            }
        )

    def _failed_allocation(self, text: str, build: _Build, number: int) -> None:
        """Read `failed to malloc npu memory!, size: N, flags: F` and `failed to allocate handle, errno: N`.

        The failed request becomes an `allocations` row (status `failed`) so a rule can name its size.
        """
        m = _FAILED_ALLOC.search(text)
        if m is None:
            return
        self.rows["allocations"].append(
            {
                "build_index": build.index,
                "name": m.group("what"),
                "status": "failed",
                "size_bytes": int(m.group("size")) if m.group("size") else None,
                "flags": m.group("flags"),
                "errno": int(m.group("errno")) if m.group("errno") else None,
                "line": number,
            }
        )
