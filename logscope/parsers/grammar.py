"""Loading Lark grammars from `grammars/` (shipped inside the wheel as `logscope/grammars`).

Line grammars describe a log as lines, each a logger prefix followed by a body, or a bare line; each
body shape is one whole-line terminal whose fields are named regex groups. Lark checks the grammar
and resolves the terminals (priorities, fragments); the LALR parser with Lark's contextual lexer is
the reference reading of a log (`reference_kinds`).

For speed the same grammar is compiled into a `LineLexer`: per lexer context (line start, after a
native prefix, after a Python-logger prefix) one alternation of the allowed terminals, ordered exactly
as Lark orders them, with every field group renamed `TERMINAL__field` so a single `re.match` per line
yields both the kind of line and its fields. A whole-file Lark parse with fine-grained tokens ran at
~1.6 MB/s; this classifier runs at ~31 MB/s, 0.43x a per-line regex scanner (docs/performance.md).
tests/test_grammars.py checks that both readings agree on every line of every fixture.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from lark import Lark
from lark.grammar import Rule
from lark.lexer import TerminalDef

from logscope.errors import LogscopeError

_NAMED_GROUP = re.compile(r"\(\?P<([A-Za-z_][A-Za-z0-9_]*)>")
_PREFIX_SUFFIX = "_PREFIX"


def grammar_text(name: str) -> str:
    """Return the text of `grammars/<name>.lark`, installed or from a source checkout."""
    filename = f"{name}.lark"
    packaged = resources.files("logscope").joinpath("grammars", filename)
    if packaged.is_file():
        return packaged.read_text(encoding="utf-8")
    # Editable installs and plain checkouts: grammars/ sits beside the package.
    checkout = Path(__file__).resolve().parents[2] / "grammars" / filename
    if checkout.is_file():
        return checkout.read_text(encoding="utf-8")
    raise LogscopeError(f"grammar {filename} is missing from this installation")


Fields = dict[str, str | None]


@dataclass(frozen=True)
class _Context:
    regex: re.Pattern[str]
    fields: dict[str, tuple[tuple[str, str], ...]]  # terminal -> ((field, group name), ...)


class LineLexer:
    """Classifies single lines with the grammar's terminals, one regex match per context."""

    def __init__(self, lark: Lark) -> None:
        terminals = {t.name: t for t in lark.terminals}
        order = sorted(
            terminals.values(),
            key=lambda t: (-t.priority, -t.pattern.max_width, -len(t.pattern.value), t.name),
        )
        rank = {t.name: i for i, t in enumerate(order)}
        firsts = _first_terminals(lark.rules)
        line_start = sorted(firsts["_line"] - {"_NL"}, key=rank.__getitem__)
        self._start = self._compile(line_start, terminals)
        self._after: dict[str, _Context] = {}
        for rule in lark.rules:
            head = rule.expansion[0] if rule.expansion else None
            if (
                head is not None
                and head.is_term
                and head.name.endswith(_PREFIX_SUFFIX)
                and len(rule.expansion) > 1
            ):
                nxt = rule.expansion[1]
                allowed = {nxt.name} if nxt.is_term else firsts[nxt.name]
                self._after[head.name] = self._compile(sorted(allowed, key=rank.__getitem__), terminals)
        self.kinds = frozenset(terminals) - {"_NL"}

    @staticmethod
    def _compile(names: list[str], terminals: dict[str, TerminalDef]) -> _Context:
        parts: list[str] = []
        fields: dict[str, tuple[tuple[str, str], ...]] = {}
        for name in names:
            regexp = terminals[name].pattern.to_regexp()
            found = tuple((g, f"{name}__{g}") for g in dict.fromkeys(_NAMED_GROUP.findall(regexp)))
            fields[name] = found
            renamed = _NAMED_GROUP.sub(f"(?P<{name}__\\1>", regexp)
            # A body terminal must cover the whole line: a partial match is not a classification.
            end = "" if name.endswith(_PREFIX_SUFFIX) else r"\Z"
            parts.append(f"(?P<{name}>{renamed}){end}")
        return _Context(re.compile("|".join(parts)), fields)

    def classify(self, line: str) -> tuple[str, Fields]:
        """Return (terminal name, fields) for one line (no newline inside)."""
        ctx = self._start
        m = ctx.regex.match(line)
        if m is None:
            return "", {}
        kind = m.lastgroup or ""
        after = self._after.get(kind)
        if after is None:
            return kind, {f: m.group(g) for f, g in ctx.fields[kind]}
        fields = {f: m.group(g) for f, g in ctx.fields[kind]}
        body = after.regex.match(line, m.end())
        if body is None:  # a prefix with no body the grammar knows: Lark would stop here too
            return "", fields
        body_kind = body.lastgroup or ""
        fields.update({f: body.group(g) for f, g in after.fields[body_kind]})
        return body_kind, fields


def _first_terminals(rules: Iterable[Rule]) -> dict[str, set[str]]:
    """FIRST sets (terminal names) of every nonterminal, by fixed-point iteration."""
    by_origin: dict[str, list[list[tuple[str, bool]]]] = {}
    for rule in rules:
        by_origin.setdefault(rule.origin.name, []).append([(s.name, s.is_term) for s in rule.expansion])
    first: dict[str, set[str]] = {name: set() for name in by_origin}
    changed = True
    while changed:
        changed = False
        for origin, expansions in by_origin.items():
            for expansion in expansions:
                if not expansion:
                    continue
                name, is_term = expansion[0]
                new = {name} if is_term else first.get(name, set())
                if not new <= first[origin]:
                    first[origin] |= new
                    changed = True
    return first


@dataclass(frozen=True)
class LineGrammar:
    """A line grammar: Lark's reference parser and the fast per-line lexer compiled from it."""

    name: str
    reference: Lark
    lexer: LineLexer

    def reference_kinds(self, lines: list[str]) -> Iterator[tuple[int, str]]:
        """(line index, body terminal) for each non-blank line, as Lark's LALR parser reads them."""
        text = "\n".join(lines) + "\n"
        tree = self.reference.parse(text)
        for line_tree in tree.children:
            tokens = list(line_tree.scan_values(lambda _: True))  # type: ignore[union-attr]
            body = tokens[-1]
            yield body.line - 1, body.type


@functools.cache
def load_line_grammar(name: str) -> LineGrammar:
    """Build (once per process) Lark's parser and the fast lexer of a line grammar."""
    text = grammar_text(name)
    with_fields = Lark(text, parser="lalr", lexer="contextual")  # the scanner is built lazily: never used
    reference = Lark(_NAMED_GROUP.sub("(?:", text), parser="lalr", lexer="contextual")
    return LineGrammar(name=name, reference=reference, lexer=LineLexer(with_fields))


@functools.cache
def load_value_parser() -> Lark:
    """The LALR parser for structured payloads inside single lines (node lists, settings)."""
    return Lark(grammar_text("values"), parser="lalr", lexer="contextual")
