"""What logscope knows about each chip, in one place: the targets the compiler accepts, NPU channel
blocks, core counts and SRAM.

Channel blocks (C2 of the NPU's NC1HWC2 native layout, per dtype) are from the RKNPU User Guide
(rknpu2 `doc/Rockchip_RKNPU_User_Guide_RKNN_API_V1.5.2_EN.pdf` §4.4.5.3, Table 4-6). The RK3588 SRAM
figure is from rknpu2 `doc/RK3588_NPU_SRAM_usage.md`: the SoC has 1 MB of SRAM of which at most 956 KB
can be given to the NPU. Where no public figure was found a value is None (unknown), never guessed. MCU
entries carry only the SRAM size, from the vendor datasheet (STM32F746: 320 KB of SRAM).

Targets the RKNPU guide does not cover (rk3576, rv1103b, rv1106b, rv1126b, rk2118) take their channel
blocks from the compiler itself: the C2 of the NativeShape column of every feature-tensor row in the
build logs of `fixtures/rknn-compiler/` (rknn-toolkit2 2.2.0-2.5.0; `CHANNEL_BLOCK_SOURCES` says
which). Those logs also confirm the guide's values for the other six. rk2118 builds only in fp16 there
(the int8 build aborts inside the compiler), so its int8 block is unknown; rv1103/rv1106, rv1103b and
rv1106b refuse fp16, so their fp16 entry is the guide's (or absent).

Which targets the compiler accepts (`ACCEPTED_TARGETS`, per toolkit version) is read from each
rknn-toolkit2 wheel; NPU core counts and SRAM sizes (`CHIPS`) carry their source or the reason they are
unknown in `CHIP_SOURCES`.

The rules' `--target` presets (logscope.rules.targets) and the reference analyzer's RKNN emulation
(logscope.reference.rknn) both read this table.
"""

from __future__ import annotations

from typing import Any

KiB = 1024

#: C2 per platform and dtype (`int8`, `fp16`, `int16`); a dtype whose block is unknown is absent.
CHANNEL_BLOCKS: dict[str, dict[str, int]] = {
    "rk3566": {"int8": 8, "fp16": 4, "int16": 4},
    "rk3568": {"int8": 8, "fp16": 4, "int16": 4},
    "rk3588": {"int8": 16, "fp16": 8, "int16": 8},
    "rv1106": {"int8": 16, "fp16": 8, "int16": 8},
    "rv1103": {"int8": 16, "fp16": 8, "int16": 8},
    "rk3562": {"int8": 16, "fp16": 8, "int16": 8},
    "rk3576": {"int8": 16, "fp16": 8},
    "rv1126b": {"int8": 16, "fp16": 8},
    "rv1103b": {"int8": 8},
    "rv1106b": {"int8": 8},
    "rk2118": {"fp16": 4},
}

GUIDE = "RKNPU User Guide V1.5.2 Table 4-6"
CORPUS = "NativeShape C2 in fixtures/rknn-compiler build logs (toolkit 2.2.0-2.5.0)"
#: Where each platform's channel blocks come from.
CHANNEL_BLOCK_SOURCES: dict[str, str] = {
    "rk3566": f"{GUIDE}; agrees with the {CORPUS}",
    "rk3568": f"{GUIDE}; agrees with the {CORPUS}",
    "rk3588": f"{GUIDE}; agrees with the {CORPUS}",
    "rv1106": f"{GUIDE}; int8 agrees with the {CORPUS} (fp16 builds are refused)",
    "rv1103": f"{GUIDE}; int8 agrees with the {CORPUS} (fp16 builds are refused)",
    "rk3562": f"{GUIDE}; agrees with the {CORPUS}",
    "rk3576": CORPUS,
    "rv1126b": f"{CORPUS}; toolkit 2.5.0 only",
    "rv1103b": f"{CORPUS}; fp16 builds are refused",
    "rv1106b": f"{CORPUS}; fp16 builds are refused",
    "rk2118": f"{CORPUS}; int8 builds abort in the compiler",
}

#: The targets each rknn-toolkit2 version accepts (`RKNN.config(target_platform=...)`): the list in that
#: method's docstring in each wheel (`rknn/api/rknn.py`, "currently support rv1103 / rv1103b / ..."),
#: which the compiler enforces (2.2.0 and 2.3.0 raise `Invalid target_platform 'rv1126b'!`; 2.3.2 builds
#: for rv1126b; every version refuses rk3399pro, rk1808, rv1109 and rv1126, the toolkit 1 chips).
_TARGETS_22 = (
    "rv1103",
    "rv1103b",
    "rv1106",
    "rv1106b",
    "rk2118",
    "rk3562",
    "rk3566",
    "rk3568",
    "rk3576",
    "rk3588",
)
ACCEPTED_TARGETS: dict[str, tuple[str, ...]] = {
    "2.2.0": _TARGETS_22,
    "2.3.0": _TARGETS_22,
    "2.3.2": (*_TARGETS_22, "rv1126b"),
    "2.5.0": (*_TARGETS_22, "rv1126b"),
}
#: Every target some rknn-toolkit2 version accepts.
COMPILER_TARGETS: tuple[str, ...] = tuple(sorted({t for ts in ACCEPTED_TARGETS.values() for t in ts}))

#: Other facts per chip: NPU cores and the SRAM a model may use (None: unknown; `CHIP_SOURCES` says why).
CHIPS: dict[str, dict[str, Any]] = {
    "rk3588": {"npu_cores": 3, "sram_bytes": 956 * KiB},
    "rk3576": {"npu_cores": None, "sram_bytes": None},
    "rk3566": {"npu_cores": 1, "sram_bytes": None},
    "rk3568": {"npu_cores": 1, "sram_bytes": None},
    "rk3562": {"npu_cores": 1, "sram_bytes": None},
    "rv1106": {"npu_cores": 1, "sram_bytes": None},
    "rv1103": {"npu_cores": 1, "sram_bytes": None},
    "rv1103b": {"npu_cores": 1, "sram_bytes": None},
    "rv1106b": {"npu_cores": 1, "sram_bytes": None},
    "rv1126b": {"npu_cores": 1, "sram_bytes": None},
    "rk2118": {"npu_cores": 1, "sram_bytes": None},
    # Toolkit 1 chips (their logs parse: fixtures 12 and 25, rk1808 and rv1126); no toolkit 2 version
    # accepts them.
    "rk1808": {"npu_cores": None, "sram_bytes": None},
    "rv1126": {"npu_cores": None, "sram_bytes": None},
    "stm32f746": {"sram_bytes": 320 * KiB},
}

_SINGLE_CORE = (
    "the toolkit's `init_runtime` docstring (2.2.0-2.5.0) says `core_mask` is \"only valid for rk3588, "
    'rk3576", and librknn_api refuses a core mask elsewhere ("Please confirm that it is called on '
    'multi-core NPU platforms!"): one NPU core'
)
_NO_CORES = "no source in the repository gives the NPU core count"
_NO_SRAM = (
    "no SRAM figure in the toolkit's files or the corpus logs (which print no SRAM line: every build "
    "runs with `op_group_sram_opt = 0`)"
)
#: Where each value of `CHIPS` comes from, or why it is None.
CHIP_SOURCES: dict[str, dict[str, str]] = {
    "rk3588": {
        "npu_cores": (
            "fixture 07 (eval_perf on rk3588 with core mask 0_1_2): `WorkLoad(0/1/2)` 33.3%/33.3%/33.3% and "
            "MacUsage 6.95/6.95/6.95, one value per core; the toolkit's core masks go up to NPU_CORE_0_1_2"
        ),
        "sram_bytes": (
            "rknpu2 doc/RK3588_NPU_SRAM_usage.md: 1 MB of SRAM, at most 956 KB for the NPU (the document "
            "itself is not in the repository; fixture 29, its log sample, allocates 524,288 B of it)"
        ),
    },
    "rk3576": {
        "npu_cores": (
            "more than one (`core_mask` is valid for rk3588 and rk3576, per the toolkit's `init_runtime` "
            "docstring), but no source in the repository gives the number"
        ),
        "sram_bytes": _NO_SRAM,
    },
    "rk3566": {
        "npu_cores": _SINGLE_CORE,
        "sram_bytes": (
            _NO_SRAM
            + "; the 512 KB of the project's domain notes is a worked example, not a datasheet figure"
        ),
    },
    **{
        chip: {"npu_cores": _SINGLE_CORE, "sram_bytes": _NO_SRAM}
        for chip in ("rk3568", "rk3562", "rv1106", "rv1103", "rv1103b", "rv1106b", "rv1126b", "rk2118")
    },
    "rk1808": {"npu_cores": _NO_CORES, "sram_bytes": _NO_SRAM.replace("toolkit's", "toolkit 2's")},
    "rv1126": {"npu_cores": _NO_CORES, "sram_bytes": _NO_SRAM.replace("toolkit's", "toolkit 2's")},
    "stm32f746": {"sram_bytes": "the STM32F746 datasheet: 320 KB of SRAM"},
}
