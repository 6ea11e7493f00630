"""Loading Lark grammars from `grammars/` (shipped inside the wheel as `logscope/grammars`).

Line grammars describe a log as lines, each a logger prefix followed by a body, or a bare line; each
body shape is one whole-line terminal whose fields are named regex groups. Lark checks the grammar
and resolves the terminals (priorities, fragments); the LALR parser with Lark's contextual lexer is
the reference reading of a log (`reference_kinds`).

For speed the same grammar is compiled into a `LineLexer`: per lexer context (line start, after a
native prefix, after a Python-logger prefix) and per first character, one alternation of the terminals
that can start there, ordered exactly as Lark orders them, with every field group renamed
`TERMINAL__field` so one `re.match` per context yields both the kind of line and its fields. A
whole-file Lark parse with fine-grained tokens ran at ~1.6 MB/s; this classifier runs at ~85 MB/s on
the benchmark log (0.59 s for 50 MB, docs/performance.md). For the hottest lines (table rows and
compiler noise behind the `D RKNN:` prefix) `LineLexer.row_matcher` compiles prefix and body into one
regex whose guards encode exactly when `classify` would pick that body; tests/test_grammars.py checks
that both agree on every fixture line.
tests/test_grammars.py checks that both readings agree on every line of every fixture.
"""

from __future__ import annotations

import functools
import re
import re._constants as _sre_constants
import re._parser as _sre_parser
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

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


class Fields(Mapping[str, str | None]):
    """The named fields of one classified line, read from its match objects only when asked for.

    Most lines of a verbose log are noise whose fields nobody reads; building a dict of every group
    for each of them cost more than matching the line. Body fields shadow prefix fields of the same name.
    """

    __slots__ = ("_body", "_body_groups", "_prefix", "_prefix_groups")

    def __init__(
        self,
        prefix: re.Match[str] | None = None,
        prefix_groups: Mapping[str, int] | None = None,
        body: re.Match[str] | None = None,
        body_groups: Mapping[str, int] | None = None,
    ) -> None:
        self._prefix, self._prefix_groups = prefix, prefix_groups or _NO_GROUPS
        self._body, self._body_groups = body, body_groups or _NO_GROUPS

    def __getitem__(self, key: str) -> str | None:
        group = self._body_groups.get(key)
        if group is not None and self._body is not None:
            return self._body.group(group)
        group = self._prefix_groups.get(key)
        if group is not None and self._prefix is not None:
            return self._prefix.group(group)
        raise KeyError(key)

    def get(self, key: str, default: Any = None) -> Any:
        # `__getitem__` without the KeyError: a message line asks for several fields its kind lacks, and
        # raising and catching one per field made one-word message lines the slowest lines per byte.
        group = self._body_groups.get(key)
        if group is not None and self._body is not None:
            return self._body.group(group)
        group = self._prefix_groups.get(key)
        if group is not None and self._prefix is not None:
            return self._prefix.group(group)
        return default

    def take(self, names: tuple[str, ...]) -> tuple[str | None, ...]:
        """The body fields `names`, in order, in one call: the hot path for table rows."""
        if self._body is None:
            raise KeyError(names[0])
        groups = self._body_groups
        takes = getattr(groups, "takes", None)
        indices = takes.get(names) if takes is not None else None
        if indices is None:
            indices = tuple(groups[name] for name in names)
            if takes is not None:
                takes[names] = indices
        values = self._body.group(*indices)
        return values if isinstance(values, tuple) else (values,)

    def __iter__(self) -> Iterator[str]:
        return iter(dict.fromkeys([*self._prefix_groups, *self._body_groups]))

    def __len__(self) -> int:
        return len(dict.fromkeys([*self._prefix_groups, *self._body_groups]))


_NO_GROUPS: Mapping[str, int] = {}
_NO_FIELDS = Fields()
# First-character buckets of a lexer context: 0-127 ASCII, 128 any other character, 129 end of line.
_NON_ASCII, _END, _BUCKETS = 128, 129, 130


class _KindGroups(dict[str, int]):
    """{field: group index} of one terminal in one alternation, with the index tuples `take` asked for."""

    __slots__ = ("takes",)

    def __init__(self) -> None:
        super().__init__()
        self.takes: dict[tuple[str, ...], tuple[int, ...]] = {}


@dataclass(frozen=True)
class _Alternation:
    regex: re.Pattern[str]
    groups: dict[str, _KindGroups]  # terminal -> {field: group index in this regex}


@dataclass(frozen=True)
class RowMatcher:
    """`match(line)` for one (prefix, body) pair; `indices(names)` are the body fields' group numbers,
    so a hot loop reads a row with one `m.group(*indices)` and no `Fields` object."""

    match: Callable[[str], re.Match[str] | None]
    prefix_groups: _KindGroups
    body_groups: _KindGroups

    def indices(self, names: tuple[str, ...]) -> tuple[int, ...]:
        return tuple(self.body_groups[name] for name in names)

    def fields(self, m: re.Match[str]) -> Fields:
        return Fields(m, self.prefix_groups, m, self.body_groups)


# A lexer context: first-character bucket -> the alternation of the terminals that can start there.
_Context = tuple[_Alternation | None, ...]


class LineLexer:
    """Classifies single lines with the grammar's terminals, one regex match per context.

    Each context holds, per possible first character, the alternation of just those terminals that can
    begin with it (in Lark's order), so a line never tries the ~20 alternatives that cannot match it.
    The result is the same as trying every terminal in order: an alternative left out could not have
    matched at all.
    """

    def __init__(self, lark: Lark) -> None:
        terminals = {t.name: t for t in lark.terminals}
        order = sorted(
            terminals.values(),
            key=lambda t: (-t.priority, -t.pattern.max_width, -len(t.pattern.value), t.name),
        )
        rank = {t.name: i for i, t in enumerate(order)}
        firsts = _first_terminals(lark.rules)
        line_start = sorted(firsts["_line"] - {"_NL"}, key=rank.__getitem__)
        self._terminals = terminals
        self._order: dict[str, list[str]] = {"": line_start}  # context ("" = line start) -> terminals
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
                self._order[head.name] = sorted(allowed, key=rank.__getitem__)
                self._after[head.name] = self._compile(self._order[head.name], terminals)
        self.kinds = frozenset(terminals) - {"_NL"}

    @staticmethod
    def _compile(names: list[str], terminals: dict[str, TerminalDef]) -> _Context:
        alternatives: dict[str, str] = {}
        starts: dict[str, frozenset[int] | None] = {}
        for name in names:
            regexp = terminals[name].pattern.to_regexp()
            renamed = _NAMED_GROUP.sub(f"(?P<{name}__\\1>", regexp)
            # A body terminal must cover the whole line: a partial match is not a classification.
            end = "" if name.endswith(_PREFIX_SUFFIX) else r"\Z"
            alternatives[name] = f"(?P<{name}>{renamed}){end}"
            starts[name] = _first_buckets(regexp)
        compiled: dict[tuple[str, ...], _Alternation | None] = {}
        by_first: list[_Alternation | None] = []
        for bucket in range(_BUCKETS):
            allowed = tuple(n for n in names if (s := starts[n]) is None or bucket in s)
            if allowed not in compiled:
                compiled[allowed] = _alternation(allowed, alternatives) if allowed else None
            by_first.append(compiled[allowed])
        return tuple(by_first)

    def row_matcher(self, prefix: str, body: str) -> RowMatcher:
        """A one-regex matcher for lines `prefix` + `body` that agrees with `classify` by construction.

        For the hot table rows of a verbose log (`D RKNN: [ts]` + a tensor or layer row) `classify`
        costs two regex calls and a dispatch. This compiles one regex that encodes exactly the
        conditions under which `classify` returns `body`: no terminal ranked before `prefix` at the
        line start matches (each as `classify` would try it), `prefix` takes its first match
        (atomic group), the body starts with a character whose alternation tries `body`, no terminal
        ranked before `body` in those alternations matches, and `body` covers the rest of the line.
        Its `match` returns None when the line is anything else; the caller then uses `classify`.
        tests/test_grammars.py checks the agreement on every fixture line.
        """
        start, after = self._order[""], self._order[prefix]
        body_first = _first_buckets(self._regexp(body))
        earlier = [(name, _first_buckets(self._regexp(name))) for name in after[: after.index(body)]]
        # Only first characters whose alternation tries few terminals before `body` (two at most): a
        # body starting elsewhere (a blank, say, which every `[ \t]*` terminal accepts) goes to classify.
        chars: list[int] = []
        earlier_bodies: set[str] = set()
        for bucket in range(_NON_ASCII):
            if body_first is not None and bucket not in body_first:
                continue
            rivals = {name for name, first in earlier if first is None or bucket in first}
            if len(rivals) <= 2:
                chars.append(bucket)
                earlier_bodies |= rivals
        guards = "".join(f"(?!{self._anchored(n)})" for n in start[: start.index(prefix)])
        body_guards = "".join(f"(?!{self._anchored(n)})" for n in after if n in earlier_bodies)
        char_class = "".join(re.escape(chr(b)) for b in chars)
        prefix_re = _NAMED_GROUP.sub(f"(?P<{prefix}__\\1>", self._regexp(prefix))
        body_re = _NAMED_GROUP.sub(f"(?P<{body}__\\1>", self._regexp(body))
        regex = re.compile(f"{guards}(?>{prefix_re})(?=[{char_class}]){body_guards}(?:{body_re})\\Z")
        prefix_groups, body_groups = _KindGroups(), _KindGroups()
        for group, index in regex.groupindex.items():
            name, _, field_name = group.rpartition("__")
            (prefix_groups if name == prefix else body_groups)[field_name] = index
        return RowMatcher(regex.match, prefix_groups, body_groups)

    def _regexp(self, name: str) -> str:
        return str(self._terminals[name].pattern.to_regexp())

    def _anchored(self, name: str) -> str:
        """A terminal as its alternation tries it: prefixes match a start, bodies the whole line."""
        regexp = _NAMED_GROUP.sub("(?:", self._regexp(name))
        return f"(?:{regexp})" + ("" if name.endswith(_PREFIX_SUFFIX) else r"\Z")

    def classify(self, line: str) -> tuple[str, Fields]:
        """Return (terminal name, fields) for one line (no newline inside)."""
        # The bucket lookups are inlined: this runs once per line of a 50 MB log.
        if len(line) > MAX_LINE_CHARS:
            return "", _NO_FIELDS
        code = ord(line[0]) if line else _END
        alt = self._start[code if code < _NON_ASCII else (_NON_ASCII if line else _END)]
        m = None if alt is None else alt.regex.match(line)
        if m is None or alt is None:
            return "", _NO_FIELDS
        kind = m.lastgroup or ""
        after = self._after.get(kind)
        if after is None:
            return kind, Fields(None, None, m, alt.groups[kind])
        pos = m.end()
        code = ord(line[pos]) if pos < len(line) else _END
        body_alt = after[code if code < _NON_ASCII else (_NON_ASCII if pos < len(line) else _END)]
        body = None if body_alt is None else body_alt.regex.match(line, pos)
        if body is None or body_alt is None:  # a prefix with no body the grammar knows: Lark stops here too
            return "", Fields(m, alt.groups[kind])
        body_kind = body.lastgroup or ""
        return body_kind, Fields(m, alt.groups[kind], body, body_alt.groups[body_kind])


# No line of any format logscope reads is this long (the longest in the fixtures and the shared logs:
# 1,354 characters); the alternations backtrack on some long lines (a 300 KB heap-trace line took 54 s),
# so a longer line is matched by no terminal: it stays an unparsed line with its number.
MAX_LINE_CHARS = 16 * 1024


def _alternation(names: tuple[str, ...], alternatives: dict[str, str]) -> _Alternation:
    regex = re.compile("|".join(alternatives[n] for n in names))
    groups: dict[str, _KindGroups] = {n: _KindGroups() for n in names}
    for group, index in regex.groupindex.items():
        name, sep, field_name = group.rpartition("__")
        if sep and name in groups:
            groups[name][field_name] = index
    return _Alternation(regex, groups)


def _first_buckets(regexp: str) -> frozenset[int] | None:
    """The first-character buckets a regex can match at, or None when it may start anywhere.

    Computed from the parsed regex (sre's own parser). Anything this does not model exactly (case
    folding, negated classes, backreferences) answers None: a bucket too many is only slower, a bucket
    too few would misclassify, so every doubt widens.
    """
    try:
        parsed = _sre_parser.parse(regexp)
    except re.error:
        return None
    if parsed.state.flags & re.IGNORECASE:
        return None
    chars, nullable = _first_of_sequence(list(parsed))
    if chars is None:
        return None
    return frozenset(chars | {_END}) if nullable else frozenset(chars)


def _first_of_sequence(items: list[Any]) -> tuple[set[int] | None, bool]:
    out: set[int] = set()
    for op, arg in items:
        chars, nullable = _first_of_item(op, arg)
        if chars is None:
            return None, True
        out |= chars
        if not nullable:
            return out, False
    return out, True


def _first_of_item(op: Any, arg: Any) -> tuple[set[int] | None, bool]:
    c = _sre_constants
    if op is c.LITERAL:
        return {_bucket(arg)}, False
    if op is c.IN:
        chars: set[int] = set()
        for sub_op, sub_arg in arg:
            if sub_op is c.LITERAL:
                chars.add(_bucket(sub_arg))
            elif sub_op is c.RANGE:
                low, high = sub_arg
                chars.update(_bucket(x) for x in range(low, min(high, _NON_ASCII) + 1))
                if high >= _NON_ASCII:
                    chars.add(_NON_ASCII)
            elif sub_op is c.CATEGORY and sub_arg in _CATEGORY_BUCKETS:
                chars |= _CATEGORY_BUCKETS[sub_arg]
            else:  # NEGATE, unknown categories
                return None, True
        return chars, False
    if op in (c.MAX_REPEAT, c.MIN_REPEAT, getattr(c, "POSSESSIVE_REPEAT", c.MAX_REPEAT)):
        low, _high, sub = arg
        chars_or_none, nullable = _first_of_sequence(list(sub))
        return chars_or_none, nullable or low == 0
    if op is c.SUBPATTERN:
        _group, add_flags, _del_flags, sub = arg
        if add_flags & re.IGNORECASE:
            return None, True
        return _first_of_sequence(list(sub))
    if op is getattr(c, "ATOMIC_GROUP", None):
        return _first_of_sequence(list(arg))
    if op is c.BRANCH:
        out: set[int] = set()
        any_nullable = False
        for branch in arg[1]:
            chars_or_none, nullable = _first_of_sequence(list(branch))
            if chars_or_none is None:
                return None, True
            out |= chars_or_none
            any_nullable = any_nullable or nullable
        return out, any_nullable
    if op in (c.AT, c.ASSERT, c.ASSERT_NOT):  # anchors and lookarounds consume nothing, only narrow
        return set(), True
    return None, True  # ANY, NOT_LITERAL, GROUPREF, lookarounds...: could start anywhere


def _bucket(code: int) -> int:
    return code if code < _NON_ASCII else _NON_ASCII


def _ascii_where(test: Any) -> set[int]:
    return {i for i in range(_NON_ASCII) if test(chr(i))}


_CATEGORY_BUCKETS: dict[Any, set[int]] = {
    # str patterns are Unicode-aware: \d, \s and \w also match non-ASCII characters.
    _sre_constants.CATEGORY_DIGIT: _ascii_where(str.isdigit) | {_NON_ASCII},
    _sre_constants.CATEGORY_SPACE: _ascii_where(str.isspace) | {_NON_ASCII},
    _sre_constants.CATEGORY_WORD: _ascii_where(lambda ch: ch.isalnum() or ch == "_") | {_NON_ASCII},
}


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
