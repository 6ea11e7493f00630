"""What logscope knows about each chip, in one place: NPU channel blocks and SRAM.

Channel blocks (C2 of the NPU's NC1HWC2 native layout, per dtype) are from the RKNPU User Guide
(rknpu2 `doc/Rockchip_RKNPU_User_Guide_RKNN_API_V1.5.2_EN.pdf` §4.4.5.3, Table 4-6; copied in
`shared/docs/reference-anchors.md` §6.2). The RK3588 SRAM figure is from rknpu2
`doc/RK3588_NPU_SRAM_usage.md`: the SoC has 1 MB of SRAM of which at most 956 KB can be given to the
NPU. Where no public figure was found a value is None (unknown), never guessed. MCU entries carry only
the SRAM size, from the vendor datasheet figure the background notes use (STM32F746: 320 KB, note 004).

The rules' `--target` presets (logscope.rules.targets) and the reference analyzer's RKNN emulation
(logscope.reference.rknn) both read this table.
"""

from __future__ import annotations

from typing import Any

KiB = 1024

#: C2 per platform and dtype (`int8`, `fp16`, `int16`); platforms whose table is unknown are absent.
CHANNEL_BLOCKS: dict[str, dict[str, int]] = {
    "rk3566": {"int8": 8, "fp16": 4, "int16": 4},
    "rk3568": {"int8": 8, "fp16": 4, "int16": 4},
    "rk3588": {"int8": 16, "fp16": 8, "int16": 8},
    "rv1106": {"int8": 16, "fp16": 8, "int16": 8},
    "rv1103": {"int8": 16, "fp16": 8, "int16": 8},
    "rk3562": {"int8": 16, "fp16": 8, "int16": 8},
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
    # Toolkit 1 chips (their logs parse: fixtures 12 and 25, rk1808 and rv1126); no public SRAM figure.
    "rk1808": {"npu_cores": 1, "sram_bytes": None},
    "rv1126": {"npu_cores": 1, "sram_bytes": None},
    "stm32f746": {"sram_bytes": 320 * KiB},
}
