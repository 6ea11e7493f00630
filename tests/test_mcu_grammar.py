"""grammars/mcu.lark: conventions, and the fast lexer agreeing with Lark's LALR reference parser."""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import logscope.io
from logscope.parsers.grammar import grammar_text, load_line_grammar
from logscope.parsers.mcu import _heap_shortcut
from logscope.parsers.mcu.assembler import McuAssembler
from logscope.parsers.mcu.state import HEAP_FIELDS
from logscope.parsers.mcu.vocabulary import FOREIGN, NOISE, WEAK, format_of
from tests.regenerate_golden import mcu_fixtures

TRACES = mcu_fixtures()
TERMINAL_DEF = re.compile(r"^([A-Z_][A-Z0-9_]*)(\.\d+)?:(.*)$", re.M)
SHARED = {
    "ESP_PREFIX",
    "RULE",
    "BORDER",
    "SIM_NOISE",
    "RTOS_NOISE",
    "C_LINE",
    "SHELL",
    "APP_MARKER",
    "ESP_MSG",
    "OTHER",
}


def _terminals() -> list[tuple[str, str, str]]:
    # `_NL`, `_EOL` and the shared value fragments (`_HEX`, `_INT` ...) are pieces of terminals, not lines.
    return [m for m in TERMINAL_DEF.findall(grammar_text("mcu")) if not m[0].startswith("_")]


def test_every_terminal_has_an_explicit_priority_and_a_family():
    for name, priority, _ in _terminals():
        assert priority, name
        assert name in SHARED or format_of(name) is not None, name


def test_fields_are_built_from_the_shared_fragments():
    """A field holding a hex address, a byte count or a decimal is spelt with its fragment, never again."""
    for name, _, body in _terminals():
        for spelt in (">0x[0-9a-fA-F]+)", ">\\d+)", ">\\d+(?:\\.\\d+)?)", ">\\d[\\d,]*)"):
            assert spelt not in body, (name, spelt)
    fragments = ("_INT", "_NUMBER", "_GROUPED", "_HEX", "_BYTE_UNIT")
    assert all(f"{name}:" in grammar_text("mcu") for name in fragments)


def test_every_terminal_consumes_its_whole_line():
    """A body terminal ends in `_EOL` or `[^\\n]*`, so a line that only starts like it falls through."""
    for name, _, body in _terminals():
        if name.endswith("_PREFIX"):
            continue
        if body.strip().startswith("/(?:"):  # an alternation: each branch must end the line
            assert body.strip().endswith("_EOL"), name
        body = re.sub(r"\)+/$", "/", body.strip())  # `...(?P<name>[^\n]*))/` ends like `...[^\n]*/`
        assert body.endswith("_EOL") or body.endswith("[^\\n]*/") or body.endswith("[^\\n]+/"), name


def test_every_terminal_is_read_counted_or_foreign():
    """No terminal silently falls through to `unparsed`: a handler reads it, or it is noise or foreign."""
    handlers = set(McuAssembler(logscope.io.decode_bytes(b"", "<empty>")).handlers)
    for name, _, _ in _terminals():
        if name in ("ESP_PREFIX", "OTHER"):
            continue
        assert name in handlers or name in NOISE or name in FOREIGN, name
    assert not handlers - {name for name, _, _ in _terminals()}  # no handler for a terminal that is gone
    assert not (NOISE & FOREIGN)
    assert {"OTHER", "ESP_MSG", "RULE"} <= WEAK


@pytest.mark.parametrize("path", TRACES, ids=lambda p: p.stem[:40])
def test_fast_lexer_agrees_with_lark_reference(path):
    grammar = load_line_grammar("mcu")
    lines = logscope.io.read_log(path).lines
    reference = dict(grammar.reference_kinds(lines))
    for i, line in enumerate(lines):
        if line.strip():
            assert grammar.lexer.classify(line)[0] == reference[i], f"line {i + 1}: {line[:80]!r}"


ALL_LINES = [line for path in TRACES for line in logscope.io.read_log(path).lines if line.strip()]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from(ALL_LINES),
    st.text(alphabet=st.characters(blacklist_characters="\n\r"), max_size=12),
    st.integers(0, 200),
)
def test_fast_lexer_agrees_with_lark_on_mangled_lines(line, junk, pos):
    mangled = (line[:pos] + junk + line[pos:]).rstrip(" \t")
    if not mangled.strip():
        return
    grammar = load_line_grammar("mcu")
    ((_, expected),) = grammar.reference_kinds([mangled])
    assert grammar.lexer.classify(mangled)[0] == expected


def test_lexer_reads_heap_op_variants():
    lexer = load_line_grammar("mcu").lexer
    kind, f = lexer.classify("Op[1] ReLU:   delta=0,      total=45000")
    assert kind == "HEAP_OP" and (f["index"], f["name"], f["delta"], f["total"]) == (
        "1",
        "ReLU",
        "0",
        "45000",
    )
    kind, f = lexer.classify("I (1122) kws: Op[0] CONV_2D: delta=+15.62KiB, total=46.88KiB")
    assert kind == "HEAP_OP" and f["esp_tag"] == "kws" and f["delta_unit"] == "KiB"
    kind, f = lexer.classify(
        "[00:00:01.015,000] <inf> app: Op[6] dense_1/BiasAdd:0: delta=+0.0 KB, total=23.9 KB"
    )
    assert kind == "HEAP_OP" and f["name"] == "dense_1/BiasAdd:0" and f["total_unit"] == "KB"
    kind, f = lexer.classify("op [12] Add: delta = -512 bytes; total = 8192 bytes, peak=9000")
    assert kind == "HEAP_OP" and f["extra"] == ", peak=9000"
    assert lexer.classify("Op[2] Conv2D: delta=+8000, total=")[0] == "OTHER"


def _check_shortcut(line: str) -> None:
    """The shortcut claims a line only if the lexer reads it as HEAP_OP with the same fields; the HEAP_OP
    lines it leaves to the lexer are the ESP-IDF-prefixed ones."""
    heap_match, groups, prefixed = _heap_shortcut()
    kind, fields = load_line_grammar("mcu").lexer.classify(line)
    m = heap_match(line)
    if m is not None and prefixed(line) is None:
        assert kind == "HEAP_OP" and m.group(*groups) == fields.take(HEAP_FIELDS), line
    elif kind == "HEAP_OP":
        assert prefixed(line) is not None, line


@pytest.mark.parametrize("path", TRACES, ids=lambda p: p.stem[:40])
def test_heap_shortcut_agrees_with_the_lexer(path):
    for line in logscope.io.read_log(path).lines:
        if line:
            _check_shortcut(line)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(ALL_LINES), st.text(max_size=12), st.integers(0, 80))
def test_heap_shortcut_agrees_on_mangled_lines(line, junk, pos):
    mangled = (line[:pos] + junk + line[pos:]).replace("\n", " ").replace("\r", " ").rstrip(" \t")
    if mangled:
        _check_shortcut(mangled)


def test_declared_sections_name_terminals_that_have_handlers():
    """The run-boundary table names real terminals, each read by a handler (a typo would never split)."""
    from logscope.parsers.mcu.assembler import SECTIONS

    handlers = set(McuAssembler(logscope.io.decode_bytes(b"", "<empty>")).handlers)
    assert set(SECTIONS) <= {name for name, _, _ in _terminals()} & handlers


# HEAP_OP as it was first written: the same reading, but its nested lazy name and blank runs backtracked
# polynomially (minutes for one 16 KB line). The grammar's form must read every line exactly as this one.
_PLAIN_HEAP_OP = re.compile(
    r"(?P<prefix>[^\n]*?)\b[Oo][Pp] ?\[ *(?P<index>\d+) *\] *(?P<name>[^\n]*?) *: *delta *[=:] *"
    r"(?P<delta>[-+]?\d+(?:\.\d+)?) *(?P<delta_unit>(?:[KkMG]i?B|B|[Bb]ytes))? *[,;]? *total *[=:] *"
    r"(?P<total>\d+(?:\.\d+)?) *(?P<total_unit>(?:[KkMG]i?B|B|[Bb]ytes))?(?P<extra>(?:[,;(] *[^\n]*)?)"
    r"[ \t]*(?=\n|$)\Z"
)


def test_heap_op_reads_as_its_plain_form_and_in_linear_time():
    import random

    heap = load_line_grammar("mcu").lexer.terminal_regex("HEAP_OP")
    rng = random.Random(18)
    alphabet = " \t:=,;(Op[]0123456789.-+KiBdeltaotal x"
    lines = [line for line in ALL_LINES if "p[" in line or "P[" in line]
    lines += ["Op[1] a:b: delta=1, total=2  , peak=3", "Op[ 3 ]  x  y :delta: -1.5 KiB ; total : 2kB (x)"]
    checked = 0
    for line in lines:
        for _ in range(40):
            chars = list(line)
            for _ in range(rng.randint(1, 4)):
                i = rng.randrange(len(chars) + 1)
                if rng.random() < 0.5 and chars[i:]:
                    del chars[i]
                else:
                    chars.insert(i, rng.choice(alphabet))
            mangled = "".join(chars)
            got, plain = heap.match(mangled), _PLAIN_HEAP_OP.match(mangled)
            assert (got and got.groupdict()) == (plain and plain.groupdict()), mangled
            checked += 1
    assert checked > 1000
    # The inputs that took the plain form minutes (16 KB of blanks around the name, repeated heads) are
    # refused at once; benchmarks/degenerate.py measures the time.
    for hostile in ("Op[1] " + " " * 16_000 + "x", "[0.1] Op[1] a: delta=" + " " * 16_000, "Op[1] " * 2_600):
        assert heap.match(hostile) is None
