"""What logscope knows about each chip, in one place: NPU channel blocks and SRAM.

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

#: Other facts per chip: NPU cores and the SRAM a model may use (None: no public figure).
CHIPS: dict[str, dict[str, Any]] = {
    "rk3588": {"npu_cores": 3, "sram_bytes": 956 * KiB},
    "rk3576": {"npu_cores": 2, "sram_bytes": None},
    "rk3566": {"npu_cores": 1, "sram_bytes": None},
    "rk3568": {"npu_cores": 1, "sram_bytes": None},
    "rk3562": {"npu_cores": 1, "sram_bytes": None},
    "rv1106": {"npu_cores": 1, "sram_bytes": None},
    "rv1103": {"npu_cores": 1, "sram_bytes": None},
    "rv1103b": {"npu_cores": None, "sram_bytes": None},
    "rv1106b": {"npu_cores": None, "sram_bytes": None},
    "rv1126b": {"npu_cores": None, "sram_bytes": None},
    "rk2118": {"npu_cores": None, "sram_bytes": None},
    # Toolkit 1 chips (their logs parse: fixtures 12 and 25, rk1808 and rv1126); no public SRAM figure.
    "rk1808": {"npu_cores": 1, "sram_bytes": None},
    "rv1126": {"npu_cores": 1, "sram_bytes": None},
    "stm32f746": {"sram_bytes": 320 * KiB},
}
