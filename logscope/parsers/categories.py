"""Message categories: which warnings and errors mean what, first match wins.

Each pattern is copied from a real log (file numbers refer to fixtures/rknn/) and keeps the
toolkit's spelling. `fatal` marks messages after which the build cannot have produced a model.
"""

from __future__ import annotations

import re
from typing import NamedTuple


class Category(NamedTuple):
    name: str
    pattern: re.Pattern[str]
    fatal: bool


def _c(name: str, pattern: str, fatal: bool = False) -> Category:
    return Category(name, re.compile(pattern), fatal)


CATEGORIES: tuple[Category, ...] = (
    # [34] [16] [35] [38]; `invalid tensor malloc size, tensor name: , target: CPU, size: 0` is the
    # title line of the report [18] was copied from (the line itself is not in [18]).
    _c(
        "allocation-failure",
        r"failed to malloc npu memory|failed to allocate handle|Cannot allocate memory"
        r"|can not create weight memory|invalid tensor malloc size|RKNN_ERR_MALLOC_FAIL|out of memory"
        r"|Memory allocation failed|exceeds limit",  # the compact compiler summary's wording
    ),
    _c("swiotlb-full", r"swiotlb buffer is full"),  # [16]
    _c("fd-exhaustion", r"Too many open files"),  # [35]
    _c(
        "compiler-memory-corruption", r"buffer overflow!!!|memory corruption|double free", fatal=True
    ),  # [26] [51]
    _c("process-killed", r"^(?:Killed|已杀死)$", fatal=True),  # [52]
    _c(
        "process-aborted",
        r"^Aborted|^Segmentation fault|^段错误|stack smashing|^terminate called",
        fatal=True,
    ),
    _c("process-crash", r"Fatal signal \d+ \(SIG", fatal=True),  # [16] logcat: the app died
    # The NPU did not finish a submitted task: librknnrt `failed to submit!, op id: 159, op name: ...` [63]
    # [64], then the C API's `rknn_run fail! ret=-1` [64]. The inference produced nothing.
    _c("run-failure", r"failed to submit|rknn_run fail", fatal=True),
    _c("zero-size-tensor", r"invalid tensor reset size"),  # [32]
    _c("regtask-overflow", r"REGTASK: The bit width of field value exceeds the limit"),  # [08] [18]
    # `E RKNN: [08:30:31.518] Unkown op target: 0` (sic), non-fatal, usually in pairs [41].
    _c("unknown-op-target", r"Unkown op target|Unknown op target"),
    _c("argb-config-failure", r"failed to config argb mode layer", fatal=True),  # [05]
    _c("quant-outliers", r"found outlier value"),  # [09] [44] [47]
    # tk2 2.x: `W build: For tensor [...], the value smaller than -3e+38 or greater than 3e+38 has been
    # corrected to -10000 or 10000. Set opt_level to 2 or lower to disable this correction.`
    _c("value-clamping", r"has been corrected to"),
    _c("dtype-change", r"default (?:input|output) dtype of .* is changed"),  # [09] [44]
    _c("hybrid-dtype", r"Meet hybrid type|need paramter qtype|need parameter qtype"),  # [09] [41]
    _c("activation-peak", r"(?i)activation memory peak exceeds|peak exceeds"),  # compact summary
    _c(
        "model-version-mismatch",
        r"Invalid RKNN model version|exportDataSize large then model size"
        r"|rknn model is too small",
    ),  # [54] [36] [17]
    _c("unsupported-op", r"No lowering found|not support|unsupported op|Unsupport"),  # [40] [06]
    _c(
        "model-not-loaded",
        r"has not been loaded|load model failed|Import rknn model failed"
        r"|Catch exception when loading",
        fatal=True,
    ),  # [04] [38] [55]
    _c(
        "build-exception", r"Catch exception when building|Build model failed|build failed", fatal=True
    ),  # [27]
    # The runtime could not start, so nothing ran: [36] [37] [54], and the PC<->board connection as
    # rknn-toolkit2's init_runtime reports it (`Connect to Device Failure (-1)`, `server connect fail`,
    # an adb client/server version mismatch `adb server version (41) doesn't match this client (39)`).
    _c(
        "runtime-init-failure",
        r"RKNN init failed|rknn_init fail|runtime has not been initialized"
        r"|recv\(MsgLoadAck\) fail|RKNN_ERR_|Init runtime environment failed|Connect to Device Failure"
        r"|server connect fail|driver open fail|adb server version \(\d+\) doesn't match",
        fatal=True,
    ),
    _c("dataset-ignored", r"dataset=.* is ignored"),  # [19]
    _c("onnx-opset", r"onnx opset|opset_version|opset_verison"),  # [19] [45]
    _c("eval-flag", r"Flag (?:perf_debug|eval_mem) has been set"),  # [11]
    _c("simulator", r"(?i)target is None, use simulator"),  # [09] [42]
    _c("config", r"^config: |target_platform|mean_values|std_values|quant_img_RGB2BGR"),  # [05] [42]
    _c("python-traceback", r"^Traceback \(most recent call last\)", fatal=True),
    _c("python-exception", r"^(?:[\w.]+)?(?:Error|Exception)\b", fatal=True),
)


# Exceptions that say the code is wrong (the toolkit's or the script's), whatever words their message
# holds: `TypeError: '<=' not supported between instances of 'NoneType' and 'int'` raised inside
# rknn-toolkit2 1.4.0's load_onnx [65] is a toolkit bug, not an unsupported operator.
_PROGRAMMING_ERRORS = frozenset(
    {"TypeError", "AttributeError", "NameError", "IndexError", "KeyError", "AssertionError"}
    | {"ZeroDivisionError", "UnboundLocalError", "SyntaxError", "ImportError", "ModuleNotFoundError"}
)
_BY_NAME = {category.name: category for category in CATEGORIES}
# The categories an exception's message may name. Looser ones stay out: `ValueError: rk3588 does not
# support sparse inference` [06] is a configuration error raised as an exception, not an unsupported op.
_EXCEPTION_CATEGORIES = frozenset(
    {"allocation-failure", "fd-exhaustion", "run-failure", "runtime-init-failure", "model-not-loaded"}
    | {"build-exception", "model-version-mismatch", "onnx-opset"}
)


def classify_exception(exception: str, text: str) -> Category:
    """The category of a traceback from its exception line (`exception` is the class, `text` the line).

    A programming error is `python-exception`; `MemoryError` an allocation failure; any other
    exception takes the category its message names when that is one of `_EXCEPTION_CATEGORIES`
    (`Exception: RKNN init failed. error code: RKNN_ERR_...`), else `python-exception`.
    """
    name = exception.rsplit(".", 1)[-1]
    if name == "MemoryError":
        return _BY_NAME["allocation-failure"]
    if name not in _PROGRAMMING_ERRORS:
        category = classify_message(text)
        if category is not None and category.name in _EXCEPTION_CATEGORIES:
            return category
    return _BY_NAME["python-exception"]


def classify_message(text: str) -> Category | None:
    """The first category whose pattern occurs in `text` (search, not match, unless anchored).

    Remembered per text: a log repeats its messages (a million `I x` lines, a warning per layer), and
    trying every pattern on each copy made message lines the slowest lines per byte. The cache holds
    at most `_CACHE_SIZE` texts, then starts again, so memory stays bounded whatever the log says.
    """
    found = _CACHE.get(text, _MISS)
    if found is not _MISS:
        return found  # type: ignore[return-value]
    if len(_CACHE) >= _CACHE_SIZE:
        _CACHE.clear()
    found = _CACHE[text] = _classify(text)
    return found


_CACHE_SIZE = 4096
_CACHE: dict[str, Category | None] = {}
_MISS = object()


def _classify(text: str) -> Category | None:
    global _PREFILTER
    if _PREFILTER is None:
        _PREFILTER = _prefilter(CATEGORIES)
    required, always = _PREFILTER
    if not any(map(text.__contains__, required)):  # no category outside `always` can occur in it
        for category in always:
            if category.pattern.search(text):
                return category
        return None
    for category in CATEGORIES:
        if category.pattern.search(text):
            return category
    return None


def _prefilter(categories: tuple[Category, ...]) -> tuple[tuple[str, ...], tuple[Category, ...]]:
    """(strings, categories): every match of a category not among the returned ones holds one of the
    strings (`grammar.required_substrings`, case-sensitive patterns only); the returned categories, in
    order, are those for which that cannot be shown (the case-blind ones).

    A text holding none of the strings can only be named by those categories, so `_classify` tries just
    them: most messages name no category and a log's messages are often all distinct (a warning per
    tensor), and 72 substring tests in C cost a fifth of trying the 32 patterns."""
    from logscope.parsers.grammar import required_substrings

    required: set[str] = set()
    always: list[Category] = []
    for category in categories:
        found = required_substrings(category.pattern.pattern)
        if found is None or found[1] or category.pattern.flags & re.IGNORECASE:
            always.append(category)
        else:
            required |= found[0]
    return tuple(sorted(required)), tuple(always)


_PREFILTER: tuple[tuple[str, ...], tuple[Category, ...]] | None = None
