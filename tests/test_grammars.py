"""The grammar files: conventions, and the fast lexer agreeing with Lark's LALR reference parser."""

from __future__ import annotations

import re

import pytest

import logscope.io
from logscope.parsers.grammar import grammar_text, load_line_grammar, load_value_parser
from tests.conftest import FIXTURES

LOGS = sorted((FIXTURES / "rknn").glob("*.log")) + sorted((FIXTURES / "synthetic").glob("*.log"))
TERMINAL_DEF = re.compile(r"^([A-Z_][A-Z0-9_]*)(\.\d+)?:", re.M)


def test_every_terminal_has_an_explicit_priority():
    text = grammar_text("rknn")
    # `_HEX`, `_FLOAT` ... are fragments Lark inlines into line terminals: they have no priority of their own.
    missing = [name for name, prio in TERMINAL_DEF.findall(text) if not prio and not name.startswith("_")]
    assert missing == []


@pytest.mark.parametrize("path", LOGS, ids=lambda p: p.stem[:40])
def test_fast_lexer_agrees_with_lark_reference(path):
    grammar = load_line_grammar("rknn")
    lines = logscope.io.read_log(path).lines
    reference = dict(grammar.reference_kinds(lines))
    for i, line in enumerate(lines):
        if line.strip():
            assert grammar.lexer.classify(line)[0] == reference[i], f"line {i + 1}: {line[:80]!r}"


def test_lexer_reads_fields():
    lexer = load_line_grammar("rknn").lexer
    kind, fields = lexer.classify(
        "D RKNN: [22:45:08.789] 2   OutputOperator output   FLOAT16   NC1HWC2      (1,6,4,5)    (1,8,4,5,8)"
        "  | 0xffec7100*0xffec7380 0x00000280"
    )
    assert kind == "TENSOR_ROW"
    assert fields["data_format"] == "NC1HWC2" and fields["flag"] == "*" and fields["ts"] == "22:45:08.789"
    assert lexer.classify("D RKNN: Total Internal Memory Size: 0.875KB")[1]["unit"] == "KB"
    assert lexer.classify("I rknn buiding done.")[0] == "BUILD_DONE"


def test_value_grammar_parses_wrapped_and_bare_lists():
    parser = load_value_parser()
    assert parser.parse("remove node = [],").children[0].data == "node_clauses"
    assert parser.parse("['Relu6__57', \"it's\"]").children[0].data == "node_clauses"
    assert parser.parse("compress = 0, global_fuse = 1,enable_argb_group=0").children[0].data == "settings"


def _payloads() -> list[str]:
    """Every node-list and settings payload of the fixtures, plus mangled copies (seeded)."""
    import random

    lexer = load_line_grammar("rknn").lexer
    bodies = []
    for path in LOGS:
        for line in logscope.io.read_log(path).lines:
            kind, fields = lexer.classify(line) if line else ("", None)
            if kind in ("FUSE_RESULT", "FUSE_CONT", "FOLD_REMOVE", "CONFIG_LINE"):
                bodies.append(fields["body"] or "")
            elif kind == "TOOLKIT_SETTINGS":
                bodies.append(line.strip())
    bodies += [
        "remove node = [],",
        "['a\\'b', \"it's\", '\\\\']",
        "[,]",
        "remove nodes = ['a']",
        "add node=['x'] , remove node = [ 'y' , ] ,",
        "a = b=c , d= e  ,",
        "remove node=1",
        "x\t=\t1,\ty = 2",
        "['a']['b']",
        "compress = 0,, x = 1",
    ]
    rng = random.Random(15)
    alphabet = "'\"[],= \t\\\x0babx-_.node"
    mangled = []
    for body in bodies:
        for _ in range(30):
            chars = list(body)
            for _ in range(rng.randint(1, 3)):
                i = rng.randrange(len(chars) + 1)
                op = rng.random()
                if op < 0.4 and chars[i:]:
                    del chars[i]
                elif op < 0.8:
                    chars.insert(i, rng.choice(alphabet))
                elif chars[i:]:
                    chars[i] = rng.choice(alphabet)
            mangled.append("".join(chars))
    return bodies + mangled


def test_payload_regexes_agree_with_the_value_grammar():
    """The regex reading of node lists and settings (the parse's fast path) accepts only what Lark's
    grammar accepts and reads the same values; every payload of the fixtures takes the fast path."""
    from logscope.parsers.rknn.values import _lark_nodes, _lark_settings, _read_nodes, _read_settings

    payloads = _payloads()
    fast = 0
    for body in payloads:
        for read, reference in ((_read_nodes, _lark_nodes), (_read_settings, _lark_settings)):
            got = read(body.strip())
            if got is not None:
                fast += 1
                assert got == reference(body), body
    real = [b for b in payloads[: len(payloads) // 31]]
    assert all(_read_nodes(b.strip()) or _read_settings(b.strip()) for b in real[:-10])
    assert fast > 300


ROW_MATCHERS = [
    ("NATIVE_PREFIX", "TENSOR_ROW"),
    ("NATIVE_PREFIX", "LAYER_ROW"),
    ("NATIVE_PREFIX", "NATIVE_NOISE"),
    ("NATIVE_PREFIX", "PASS_MARK"),
]


def _row_lines() -> list[str]:
    """Every fixture line, plus table rows and noise lines mangled the ways real copies are."""
    lines = [line for path in LOGS for line in logscope.io.read_log(path).lines if line]
    extra = []
    for line in lines[:4000]:
        extra += [line + "  | 0x0 0x0 0x0", " " + line, line.replace("] ", "]  ", 1), line[:-3]]
    return lines + extra


@pytest.mark.parametrize(("prefix", "body"), ROW_MATCHERS, ids=lambda v: v)
def test_row_matchers_agree_with_classify(prefix, body):
    """The parse loop's one-regex fast paths must classify and read exactly as `classify` does."""
    lexer = load_line_grammar("rknn").lexer
    matcher = lexer.row_matcher(prefix, body)
    hits = 0
    for line in _row_lines():
        m = matcher.match(line)
        if m is None:
            continue
        hits += 1
        kind, fields = lexer.classify(line)
        assert kind == body, line[:100]
        assert dict(matcher.fields(m)) == dict(fields), line[:100]
    assert hits > 20  # the fixtures do exercise each fast path


def test_every_rknn_terminal_is_read_counted_or_foreign():
    """No terminal silently falls through to `unparsed`: a handler reads it, or it is noise, foreign or a
    message (prefixes only start a line; fragments are inlined into other terminals)."""
    from logscope.io import decode_bytes
    from logscope.parsers.rknn.assembler import RknnAssembler
    from logscope.parsers.rknn.state import _FOREIGN, _MESSAGE_KINDS, _NOISE

    handlers = set(RknnAssembler(decode_bytes(b"", "<empty>")).handlers)
    kinds = load_line_grammar("rknn").lexer.kinds
    for name in kinds:
        if name.endswith("_PREFIX"):
            continue
        assert name in handlers or name in _NOISE or name in _FOREIGN or name in _MESSAGE_KINDS, name
    assert not (_NOISE & _FOREIGN) and not (_NOISE & _MESSAGE_KINDS) and not (_FOREIGN & _MESSAGE_KINDS)
    assert {"SDK_VERSION", "RANKING_ROW", "EXCEPTION", "BARE_MSG"} <= kinds


def _blank_variants() -> list[str]:
    """Fixture lines, and each behind a blank run, with blanks inserted after its first word, and cut."""
    lines = []
    for path in LOGS[::3] + sorted((FIXTURES / "mcu").glob("*.txt"))[::2]:
        for line in logscope.io.read_log(path).lines[:400]:
            head, _, rest = line.partition(" ")
            lines += [line, "   " + line, "\t " + line, f"{head}    {rest}", line[: len(line) // 2] + "   "]
    return lines


def test_tries_after_answers_from_the_order_classify_tries():
    """The joined-run readers are built only for a body tried after its prefix (`tries_after`): the
    answer is the membership of the lexer's own order, and False for a name the grammar lacks."""
    lexer = load_line_grammar("rknn").lexer
    order = lexer.plan.order
    for context, names in order.items():
        for name in lexer.kinds:
            assert lexer.tries_after(context, name) == (name in names), (context, name)
    assert lexer.tries_after("NATIVE_PREFIX", "PASS_MARK")
    assert lexer.tries_after("PY_PREFIX", "FUSE_RESULT")
    assert not lexer.tries_after("PY_PREFIX", "PASS_MARK")  # a native body, never after the Python prefix
    assert not lexer.tries_after("NATIVE_PREFIX", "NO_SUCH_TERMINAL")
    assert not lexer.tries_after("NO_SUCH_PREFIX", "PASS_MARK")


@pytest.mark.parametrize("grammar_name", ["rknn", "mcu"])
def test_possessive_leading_blanks_match_what_the_terminal_matched(grammar_name):
    """`possessive_lead` rewrites a terminal only where no match can change: check it on real lines."""
    from logscope.parsers.grammar import possessive_lead

    terminals = load_line_grammar(grammar_name).lexer.plan.terminals
    rewritten = {n: r for n, r in terminals.items() if possessive_lead(r) != r}
    assert len(rewritten) > 20  # the rewrite is not a no-op on the shipped grammars
    lines = _blank_variants()
    for name, regexp in rewritten.items():
        before, after = re.compile(regexp), re.compile(possessive_lead(regexp))
        for line in lines:
            a, b = before.match(line), after.match(line)
            assert (a and a.group(0)) == (b and b.group(0)), (name, line[:80])
            assert a is None or a.groupdict() == b.groupdict(), (name, line[:80])
