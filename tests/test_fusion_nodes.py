"""Fusion results' node lists printed plainly are read by one regex (`toolkit._nodes`): exactly as the
general reading (`values._parse_nodes`) reads them, on every fixture body and on mangled ones."""

from __future__ import annotations

import gzip
import random

import logscope.io
from logscope.parsers.grammar import load_line_grammar
from logscope.parsers.rknn.toolkit import _PLAIN_NODES, _nodes
from logscope.parsers.rknn.values import _parse_nodes
from tests.conftest import FIXTURES

TRANSFORMER = FIXTURES / "rknn-compiler" / "transformer-dev" / "2.5.0" / "tf_t49_d64_h8-rv1106b-int8.log.gz"


def _bodies() -> list[str]:
    lexer = load_line_grammar("rknn").lexer
    lines = [
        line
        for path in sorted((FIXTURES / "rknn").glob("*.log"))
        for line in logscope.io.read_log(path).lines
    ]
    with gzip.open(TRANSFORMER, "rt", encoding="utf-8") as fh:
        lines += fh.read().split("\n")
    bodies = []
    for line in lines:
        kind, fields = lexer.classify(line)
        if kind in ("FUSE_RESULT", "FUSE_CONT", "FOLD_REMOVE"):
            bodies.append(fields["body"] or "")
    return bodies


def _mangle(body: str, rng: random.Random) -> str:
    choice = rng.randrange(10)
    i = rng.randrange(len(body) + 1)
    if choice == 0:
        return body[:i]
    if choice == 1:
        return body[:i] + rng.choice(["'", '"', "\\", ",", " ", "\t", "[", "]", "''", "', '"]) + body[i:]
    if choice == 2:
        return body.replace(", ", ",", 1)
    if choice == 3:
        return body.replace("', '", "'  ,  '", 1)
    if choice == 4:
        return body + " "
    if choice == 5:
        return body.replace("'", '"', 2)
    if choice == 6:
        return body.replace("remove node", "add node", 1)
    if choice == 7:
        return body.replace("]", ",]", 1)
    if choice == 8:
        return "[" + body.partition("[")[2].partition("]")[0] + "]"
    return body.replace("'", "'\\'", 1)


def test_plain_node_lists_read_as_the_general_reading() -> None:
    rng = random.Random(3)
    bodies = _bodies()
    assert len(bodies) > 100
    cases = bodies + [_mangle(body, rng) for body in bodies for _ in range(6)]
    cases += ["[]", "['']", "['', 'a']", "remove node = [], add node = []", "[''']", "['a', 'b'", "x"]
    # A `remove node` list alone (a fifth of the largest real compiler log's fusion results).
    cases += ["remove node = ['a', 'b']", "remove node = []", "remove node = ['a'], ", "add node = ['a']"]
    cases += ["remove node = ['a'], add node = ['b'], add node = ['c']", "remove node = ['a'] "]
    assert _nodes("remove node = ['a#1', 'b']") == (["a#1", "b"], [])
    plain = 0
    for body in cases:
        assert _nodes(body) == _parse_nodes(body), body
        plain += _PLAIN_NODES.fullmatch(body) is not None
    assert plain > len(bodies) // 2 and plain < len(cases)  # both readings exercised
