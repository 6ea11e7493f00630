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

Building a lexer (Lark's analysis, then `re` compiling the alternations) cost 0.5 s of CPU per process,
more than a small log's whole parse. What it produces is stored on disk by `logscope.parsers.compiled`
(keyed on the grammar text and this code), alternations are compiled on first use, and Lark itself is
imported only when a grammar has to be built or the reference parser is asked for.
"""

from __future__ import annotations

import functools
import math
import operator
import re
import re._constants as _sre_constants
import re._parser as _sre_parser
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from logscope.errors import LogscopeError
from logscope.parsers.compiled import CompiledGrammar, cache_file
from logscope.parsers.kept import kept

if TYPE_CHECKING:  # Lark is imported only to build a grammar the stored form does not hold
    from lark import Lark
    from lark.grammar import Rule

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

    def read(self, names: tuple[str, ...]) -> tuple[str | None, ...]:
        """`get(name)` of each of `names` (None where this line's kind lacks the field), in one call.

        Where each name is read from is worked out once per (body alternation, prefix alternation,
        names): a message line reads five fields, and five `get` calls were a third of its parse. The
        plan reads the body's fields and the prefix's in one `group` call each and picks them in order
        (`itemgetter`), with no Python step per field.
        """
        plans = getattr(self._body_groups, "plans", None)
        key = (names, id(self._prefix_groups))
        plan = plans.get(key) if plans is not None else None
        if plan is None:
            plan = self._plan(names)
            if plans is not None:
                plans[key] = plan
        body_indices, prefix_indices, pick = plan
        values: tuple[str | None, ...] = (None,)
        if body_indices:
            values += self._body.group(0, *body_indices)  # type: ignore[union-attr]
        if prefix_indices:
            values += self._prefix.group(0, *prefix_indices)  # type: ignore[union-attr]
        return pick(values)

    def _plan(self, names: tuple[str, ...]) -> tuple[tuple[int, ...], tuple[int, ...], Callable[[Any], Any]]:
        """(body group indices, prefix group indices, a function picking `names` in order out of
        `(None, body group 0, *body fields, prefix group 0, *prefix fields)`), as `get` would read them."""
        body: list[int] = []
        prefix: list[int] = []
        sides: list[tuple[bool | None, int]] = []
        for name in names:
            group = self._body_groups.get(name)
            if group is not None and self._body is not None:
                sides.append((True, len(body)))
                body.append(group)
                continue
            group = self._prefix_groups.get(name)
            if group is not None and self._prefix is not None:
                sides.append((False, len(prefix)))
                prefix.append(group)
            else:
                sides.append((None, 0))
        prefix_at = 1 + (1 + len(body) if body else 0) + 1
        positions = [0 if side is None else (2 + k if side else prefix_at + k) for side, k in sides]
        if len(positions) == 1:
            only = positions[0]
            return tuple(body), tuple(prefix), lambda values: (values[only],)
        return tuple(body), tuple(prefix), operator.itemgetter(*positions)

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
_NEWLINE = ord("\n")


class _KindGroups(dict[str, int]):
    """{field: group index} of one terminal in one alternation, with the index tuples `take` asked for."""

    __slots__ = ("plans", "takes")

    def __init__(self) -> None:
        super().__init__()
        self.takes: dict[tuple[str, ...], tuple[int, ...]] = {}
        self.plans: dict[tuple[tuple[str, ...], int], Any] = {}


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


class _Pending:
    """An alternation not compiled yet: compiled on first use, then put in its context's slots in its
    place, so a process compiles only the alternations of the first characters its lines start with."""

    __slots__ = ("_build", "_context", "_real", "_slots")

    def __init__(self, build: Callable[[], _Alternation], context: list[Any], slots: list[int]) -> None:
        self._build, self._context, self._slots = build, context, slots
        self._real: _Alternation | None = None

    def _resolve(self) -> _Alternation:
        # A caller holding this object (classify's `alt`) asks for `regex`, then `groups`: build once.
        if self._real is None:
            self._real = self._build()
            for slot in self._slots:
                self._context[slot] = self._real
        return self._real

    @property
    def regex(self) -> re.Pattern[str]:
        return self._resolve().regex

    @property
    def groups(self) -> dict[str, _KindGroups]:
        return self._resolve().groups


# A lexer context: first-character bucket -> the alternation of the terminals that can start there.
_Context = list[_Alternation | _Pending | None]


class LineLexer:
    """Classifies single lines with the grammar's terminals, one regex match per context.

    Each context holds, per possible first character, the alternation of just those terminals that can
    begin with it (in Lark's order), so a line never tries the ~20 alternatives that cannot match it.
    The result is the same as trying every terminal in order: an alternative left out could not have
    matched at all.
    """

    def __init__(
        self,
        plan: LexerPlan,
        compile: Callable[[str], re.Pattern[str]] = re.compile,
        compiled: Callable[[], None] = lambda: None,
    ) -> None:
        """`compile` compiles a regex (a stored program's loader); `compiled` is told when a regex asked
        for after construction (a row matcher, a terminal) was compiled, so it can be stored too."""
        self.plan = plan  # (read by the joined-run readers, which prove their reads exact from it)
        self._compile_regex = compile
        self._compiled = compiled
        self._order = plan.order
        self._start = self._compile(plan.order[""])
        self._after: dict[str, _Context] = {
            context: self._compile(names) for context, names in plan.order.items() if context
        }
        self.kinds = frozenset(plan.terminals) - {"_NL"}
        self._row_matchers: dict[tuple[str, str], RowMatcher] = {}
        self._known: dict[str, tuple[str, Fields]] = {}  # `classify`'s answers by line (`KNOWN_LINES`)
        # `classify(line)` when that line's answer is remembered, else None, classifying nothing: a caller
        # about to try a row matcher can tell from a remembered kind that the matcher cannot match. The
        # memory's own `get` (no Python call per line); the dict is only ever cleared, never replaced.
        self.remembered: Callable[[str], tuple[str, Fields] | None] = self._known.get

    def _compile(self, names: list[str]) -> _Context:
        firsts = self.plan.firsts
        by_bucket: list[list[str]] = [[] for _ in range(_BUCKETS)]
        for name in names:  # in order, so each bucket's list keeps Lark's order
            first = firsts[name]
            for bucket in range(_BUCKETS) if first is None else first:
                by_bucket[bucket].append(name)
        context: _Context = [None] * _BUCKETS
        slots: dict[tuple[str, ...], list[int]] = {}
        for bucket, bucket_names in enumerate(by_bucket):
            if bucket_names:
                slots.setdefault(tuple(bucket_names), []).append(bucket)
        for allowed, buckets in slots.items():
            pending = _Pending(functools.partial(self._alternation, allowed), context, buckets)
            for bucket in buckets:
                context[bucket] = pending
        return context

    def _alternation(self, names: tuple[str, ...]) -> _Alternation:
        alternation = _alternation(names, {n: self._alternative(n) for n in names}, self._compile_regex)
        self._compiled()
        return alternation

    def compile_all(self) -> None:
        """Compile every alternation now (to store a grammar's compiled form whole, once)."""
        told, self._compiled = self._compiled, lambda: None  # one save at the end, not one per regex
        try:
            for context in (self._start, *self._after.values()):
                for alt in context:
                    if isinstance(alt, _Pending):
                        alt.regex  # noqa: B018 - resolving compiles it
        finally:
            self._compiled = told

    @functools.cache  # noqa: B019 - one lexer per grammar and process
    def _alternative(self, name: str) -> str:
        """Terminal `name` as one branch of an alternation: named after it, fields renamed `NAME__field`."""
        renamed = _NAMED_GROUP.sub(lambda m: f"(?P<{name}__{m.group(1)}>", self._regexp(name))
        # A body terminal must cover the whole line: a partial match is not a classification.
        end = "" if name.endswith(_PREFIX_SUFFIX) else r"\Z"
        return f"(?P<{name}>{renamed}){end}"

    def row_matcher(self, prefix: str, body: str, rivals: int = 2) -> RowMatcher:
        """A one-regex matcher for lines `prefix` + `body` that agrees with `classify` by construction.

        For the hot table rows of a verbose log (`D RKNN: [ts]` + a tensor or layer row) `classify`
        costs two regex calls and a dispatch. This compiles one regex that encodes exactly the
        conditions under which `classify` returns `body`: no terminal ranked before `prefix` at the
        line start matches (each as `classify` would try it), `prefix` takes its first match
        (atomic group), the body starts with a character whose alternation tries `body`, no terminal
        ranked before `body` in those alternations matches, and `body` covers the rest of the line.
        Its `match` returns None when the line is anything else; the caller then uses `classify`.
        tests/test_grammars.py checks the agreement on every fixture line. Built once per lexer.
        """
        key = (prefix, body if rivals == 2 else f"{body}/{rivals}")
        known = self._row_matchers.get(key)
        if known is not None:
            return known
        start, after = self._order[""], self._order[prefix]
        firsts = self.plan.firsts
        body_first = firsts[body]
        earlier = [(name, firsts[name]) for name in after[: after.index(body)]]
        # Only first characters whose alternation tries few terminals before `body` (`rivals` at most,
        # each a look-ahead tried on every line): a body starting elsewhere (a blank, say, which every
        # `[ \t]*` terminal accepts) goes to classify.
        chars: list[int] = []
        earlier_bodies: set[str] = set()
        for bucket in range(_NON_ASCII):
            if bucket == _NEWLINE or (body_first is not None and bucket not in body_first):
                continue  # (no line holds a newline: leaving it out lets the pattern read joined lines)
            tried = {name for name, first in earlier if first is None or bucket in first}
            if len(tried) <= rivals:
                chars.append(bucket)
                earlier_bodies |= tried
        guards = "".join(f"(?!{self.anchored(n)})" for n in start[: start.index(prefix)])
        body_guards = "".join(f"(?!{self.anchored(n)})" for n in after if n in earlier_bodies)
        char_class = "".join(re.escape(chr(b)) for b in chars)
        prefix_re = _NAMED_GROUP.sub(f"(?P<{prefix}__\\1>", self._regexp(prefix))
        body_re = _NAMED_GROUP.sub(f"(?P<{body}__\\1>", self._regexp(body))
        regex = self._compile_regex(f"{guards}(?>{prefix_re})(?=[{char_class}]){body_guards}(?:{body_re})\\Z")
        prefix_groups, body_groups = _KindGroups(), _KindGroups()
        for group, index in regex.groupindex.items():
            name, _, field_name = group.rpartition("__")
            (prefix_groups if name == prefix else body_groups)[field_name] = index
        matcher = self._row_matchers[key] = RowMatcher(regex.match, prefix_groups, body_groups)
        self._compiled()
        return matcher

    def either_matcher(self, prefix: str, counted: str, read: str) -> RowMatcher:
        """One regex for the lines `row_matcher(prefix, counted)` or `row_matcher(prefix, read)` matches:
        their two regexes as alternatives, `counted`'s first and with no groups, so a match whose `read`
        fields are all None is a `counted` line. Both regexes must cover the whole line, so a line
        matches the alternation exactly when it matches one of them; the two never both match (each
        agrees with `classify`, which gives a line one kind). Lets a run of noise lines and pass marks
        be matched with one call per line."""
        known = self._row_matchers.get((prefix, f"{counted}|{read}"))
        if known is not None:
            return known
        first = _NAMED_GROUP.sub("(?:", self.row_pattern(prefix, counted))
        regex = self._compile_regex(f"(?:{first})|(?:{self.row_pattern(prefix, read)})")
        prefix_groups, body_groups = _KindGroups(), _KindGroups()
        for group, index in regex.groupindex.items():
            name, _, field_name = group.rpartition("__")
            (prefix_groups if name == prefix else body_groups)[field_name] = index
        matcher = RowMatcher(regex.match, prefix_groups, body_groups)
        self._row_matchers[prefix, f"{counted}|{read}"] = matcher
        self._compiled()
        return matcher

    def row_pattern(self, prefix: str, body: str, rivals: int = 2) -> str:
        """The regex of `row_matcher(prefix, body, rivals)`, as text."""
        pattern: str = self.row_matcher(prefix, body, rivals).match.__self__.pattern  # type: ignore[attr-defined]
        return pattern

    def stored_regex(self, pattern: str) -> re.Pattern[str]:
        """`re.compile(pattern)` through the grammar's store of compiled programs (a regex derived from
        this grammar's, such as a fast path's, is compiled once, not in every process)."""
        regex = self._compile_regex(pattern)
        self._compiled()
        return regex

    def terminal_regex(self, name: str) -> re.Pattern[str]:
        """Terminal `name` alone, as a regex that must cover the whole line (prefixes: its start)."""
        end = "" if name.endswith(_PREFIX_SUFFIX) else r"\Z"
        regex = self._compile_regex(self._regexp(name) + end)
        self._compiled()
        return regex

    @functools.cache  # noqa: B019 - one lexer per grammar and process
    def _regexp(self, name: str) -> str:
        return possessive_lead(self.plan.terminals[name])

    def anchored(self, name: str) -> str:
        """A terminal as its alternation tries it: prefixes match a start, bodies the whole line."""
        regexp = _NAMED_GROUP.sub("(?:", self._regexp(name))
        return f"(?:{regexp})" + ("" if name.endswith(_PREFIX_SUFFIX) else r"\Z")

    def tries_after(self, context: str, name: str) -> bool:
        """Whether terminal `name` is one of those tried after `context` (`""`: at the line start): a
        reader built for it has lines to read only then."""
        return name in self.kinds and name in self._order.get(context, ())

    def classify(self, line: str) -> tuple[str, Fields]:
        """Return (terminal name, fields) for one line (no newline inside).

        Answers are remembered by line: the lines that reach `classify` (optimiser steps, script prints,
        fusion results, `I ` separators, progress bars) repeat within a build and from build to build of
        one log or audit, and one dict look-up costs a tenth of the two alternations. Exact, because the
        answer depends on the line alone, and the match objects in `Fields` are only ever read. At most
        `KNOWN_LINES` lines of at most `MAX_BLANK_RUN` characters are kept, then the memory starts
        again, so it stays bounded."""
        known = self._known.get(line)
        if known is not None:
            return known
        answer = self._classify(line)
        if len(line) <= MAX_BLANK_RUN:
            if len(self._known) >= KNOWN_LINES:
                self._known.clear()
            self._known[line] = answer
        return answer

    def _classify(self, line: str) -> tuple[str, Fields]:
        # The bucket lookups are inlined: this runs once per line of a 50 MB log.
        if len(line) > MAX_BLANK_RUN and refused(line):
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


# Lines whose `classify` answer a lexer remembers at most (a few MB with their match objects).
KNOWN_LINES = 4096


# No line of any format logscope reads is this long (the longest in the fixtures and the shared logs:
# 1,354 characters); the alternations backtrack on some long lines (a 300 KB heap-trace line took 54 s),
# so a longer line is matched by no terminal: it stays an unparsed line with its number.
MAX_LINE_CHARS = 16 * 1024
# Nor does any hold a run of blanks this long (the longest in the fixtures and the shared logs: 161, an ST
# report's padding). Every terminal that may start with a blank, or that looks for a word anywhere in the
# line, walks such a run again (30-60 of them per context): a line of 16 KB of blanks cost 6 ms, 7-11
# times a real log's cost per byte. A longer run is matched by no terminal, like an over-long line. The
# search starts only where a run starts (the look-behind), so it is linear in the line however the
# blanks are laid out.
MAX_BLANK_RUN = 1024
_LONG_BLANK_RUN = re.compile(rf"(?<![ \t])[ \t]{{{MAX_BLANK_RUN + 1}}}")


def refused(line: str) -> bool:
    """True for a line no terminal may match (too long, or a blank run too long). Fast paths that match
    a terminal without `classify` ask this first for lines over `MAX_BLANK_RUN` characters, so they agree."""
    return len(line) > MAX_LINE_CHARS or _LONG_BLANK_RUN.search(line) is not None


def _alternation(
    names: tuple[str, ...], alternatives: dict[str, str], compile: Callable[[str], re.Pattern[str]]
) -> _Alternation:
    regex = compile("|".join(alternatives[n] for n in names))
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


@kept
def possessive_lead(regexp: str) -> str:
    """The regex with a leading blank run (`[ \t]*`, ` +`, ...) made possessive when that changes no match.

    Most terminals start with optional indentation. On a line that is a long run of blanks, the greedy
    run gives its blanks back one at a time, and what follows is tried after each: 30-60 terminals per
    context did that on every blank line. When what follows can neither start with a blank nor match
    nothing (its first characters, `_first_buckets`), giving a blank back can never let it match, so the
    possessive form matches exactly the same strings, in one pass.
    """
    lead = _LEADING_BLANKS.match(regexp)
    if lead is None or lead.end() == len(regexp):
        return regexp
    firsts = _first_buckets(regexp[lead.end() :])
    if firsts is None or _END in firsts or ord(" ") in firsts or ord("\t") in firsts:
        return regexp
    return f"{lead.group(1)}{lead.group(2)}+{regexp[lead.end() :]}"


# `[ \t]*`, `[ \t]+`, ` *`, ` +` (tab written as a tab or as `\t`), not already possessive or lazy.
_LEADING_BLANKS = re.compile(r"(\[ (?:\t|\\t)\]|\[(?:\t|\\t) \]| )([*+])(?![*+?{])")


@kept
def requires_outside(regexp: str, allowed: frozenset[str]) -> bool:
    """True when every string the regex matches holds a character that is not in `allowed`.

    The proof that lets a fast path skip a terminal: a line made only of `allowed` characters can never
    be that terminal. Computed from sre's parse, conservatively: a construct this does not model
    (backreferences, conditionals, case folding of a character outside `allowed`) proves nothing, so
    the answer is False. Lookarounds that must match count as required (what they match is in the
    line, wherever they look); negative ones require nothing.
    """
    try:
        parsed = _sre_parser.parse(regexp)
    except re.error:
        return False
    return _sequence_requires(list(parsed), allowed)


def _sequence_requires(items: list[Any], allowed: frozenset[str]) -> bool:
    return any(_item_requires(op, arg, allowed) for op, arg in items)


def _item_requires(op: Any, arg: Any, allowed: frozenset[str]) -> bool:
    c = _sre_constants
    if op is c.LITERAL:
        return chr(arg) not in allowed
    if op is c.IN:
        return not any(_class_admits(arg, ch) for ch in allowed)
    if op in (c.MAX_REPEAT, c.MIN_REPEAT, getattr(c, "POSSESSIVE_REPEAT", c.MAX_REPEAT)):
        low, _high, sub = arg
        return low >= 1 and _sequence_requires(list(sub), allowed)
    if op is c.SUBPATTERN:
        _group, add_flags, _del_flags, sub = arg
        if add_flags & re.IGNORECASE and not _folds_closed(allowed):
            return False
        return _sequence_requires(list(sub), allowed)
    if op is getattr(c, "ATOMIC_GROUP", None):
        return _sequence_requires(list(arg), allowed)
    if op is c.BRANCH:
        return all(_sequence_requires(list(branch), allowed) for branch in arg[1])
    if op is c.ASSERT:
        _direction, sub = arg
        return _sequence_requires(list(sub), allowed)
    return False  # AT, ASSERT_NOT, ANY, NOT_LITERAL, GROUPREF, ...: no character proven


@kept
def most_matched(regexp: str, chars: frozenset[str]) -> float:
    """The most characters of `chars` a match of the regex can consume (`math.inf`: unbounded, or not
    shown). A whole-line terminal with a bound under what a line holds cannot match that line."""
    try:
        parsed = _sre_parser.parse(regexp)
    except re.error:
        return math.inf
    if parsed.state.flags & re.IGNORECASE and not _folds_closed(chars):
        return math.inf
    return _sequence_most(list(parsed), chars)


def _sequence_most(items: list[Any], chars: frozenset[str]) -> float:
    return sum((_item_most(op, arg, chars) for op, arg in items), 0.0)


def _item_most(op: Any, arg: Any, chars: frozenset[str]) -> float:
    c = _sre_constants
    if op is c.LITERAL:
        return 1.0 if chr(arg) in chars else 0.0
    if op is c.IN:
        return 1.0 if any(_class_admits(arg, ch) for ch in chars) else 0.0
    if op in (c.MAX_REPEAT, c.MIN_REPEAT, getattr(c, "POSSESSIVE_REPEAT", c.MAX_REPEAT)):
        _low, high, sub = arg
        most = _sequence_most(list(sub), chars)
        return 0.0 if most == 0 else (math.inf if high is c.MAXREPEAT else high * most)
    if op is c.SUBPATTERN:
        if arg[1] & re.IGNORECASE and not _folds_closed(chars):
            return math.inf
        return _sequence_most(list(arg[3]), chars)
    if op is getattr(c, "ATOMIC_GROUP", None):
        return _sequence_most(list(arg), chars)
    if op is c.BRANCH:
        return max(_sequence_most(list(branch), chars) for branch in arg[1])
    if op in (c.AT, c.ASSERT, c.ASSERT_NOT):  # consume nothing
        return 0.0
    return math.inf  # ANY, NOT_LITERAL, GROUPREF, ...


@kept
def required_substrings(regexp: str) -> tuple[frozenset[str], bool] | None:
    """Strings one of which occurs in every match of the regex, and whether to look for them ignoring
    case; None when none can be shown (sre's parse: a run of literals in a sequence is required, a
    branch requires one of its branches' strings). Lets a fast path try `str.find` before the regex."""
    try:
        parsed = _sre_parser.parse(regexp)
    except re.error:
        return None
    folded = [bool(parsed.state.flags & re.IGNORECASE)]
    found = _sequence_substrings(list(parsed), folded)
    return None if found is None else (frozenset(found), folded[0])


def _sequence_substrings(items: list[Any], folded: list[bool]) -> set[str] | None:
    c = _sre_constants
    candidates: list[set[str]] = []
    run = ""
    for op, arg in items:
        if op is c.LITERAL:
            run += chr(arg)
            continue
        if run:
            candidates.append({run})
            run = ""
        found: set[str] | None = None
        if op is c.SUBPATTERN:
            folded[0] = folded[0] or bool(arg[1] & re.IGNORECASE)
            found = _sequence_substrings(list(arg[3]), folded)
        elif op is getattr(c, "ATOMIC_GROUP", None):
            found = _sequence_substrings(list(arg), folded)
        elif (
            op in (c.MAX_REPEAT, c.MIN_REPEAT, getattr(c, "POSSESSIVE_REPEAT", c.MAX_REPEAT)) and arg[0] >= 1
        ):
            found = _sequence_substrings(list(arg[2]), folded)
        elif op is c.BRANCH:
            branches = [_sequence_substrings(list(branch), folded) for branch in arg[1]]
            found = None if any(b is None for b in branches) else set().union(*branches)  # type: ignore[arg-type]
        if found:
            candidates.append(found)
    if run:
        candidates.append({run})
    if not candidates:
        return None
    return max(candidates, key=lambda strings: min(map(len, strings)))


def _class_admits(items: list[Any], ch: str) -> bool:
    """Whether the character class `items` (sre's IN argument) matches `ch`; unknown parts admit it."""
    c = _sre_constants
    code, negate, hit = ord(ch), False, False
    for op, arg in items:
        if op is c.NEGATE:
            negate = True
        elif op is c.LITERAL:
            hit = hit or arg == code
        elif op is c.RANGE:
            hit = hit or arg[0] <= code <= arg[1]
        elif op is c.CATEGORY and arg in _CATEGORY_TESTS:
            hit = hit or _CATEGORY_TESTS[arg](ch)
        else:
            return True
    return hit != negate


def _folds_closed(allowed: frozenset[str]) -> bool:
    """Case folding keeps a literal inside `allowed` iff `allowed` holds both cases of its letters."""
    return all(ch.swapcase() in allowed for ch in allowed)


_CATEGORY_TESTS: dict[Any, Callable[[str], bool]] = {
    _sre_constants.CATEGORY_DIGIT: lambda ch: ch.isdecimal(),
    _sre_constants.CATEGORY_NOT_DIGIT: lambda ch: not ch.isdecimal(),
    _sre_constants.CATEGORY_SPACE: lambda ch: ch.isspace(),
    _sre_constants.CATEGORY_NOT_SPACE: lambda ch: not ch.isspace(),
    _sre_constants.CATEGORY_WORD: lambda ch: ch.isalnum() or ch == "_",
    _sre_constants.CATEGORY_NOT_WORD: lambda ch: not (ch.isalnum() or ch == "_"),
}


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
class LexerPlan:
    """What a `LineLexer` is built from, read off Lark's analysis of the grammar: plain data, so it can
    be stored (`logscope.parsers.compiled`) and the next process skips Lark.

    `terminals`: each terminal's regex (field groups named); `order`: per lexer context ("" = line
    start, else a prefix terminal) the terminals that can come there, in the order Lark tries them
    (priority, then longest pattern, then name); `firsts`: each terminal's first-character buckets
    (None: it may start anywhere).
    """

    terminals: dict[str, str]
    order: dict[str, list[str]]
    firsts: dict[str, frozenset[int] | None]

    @classmethod
    def from_lark(cls, lark: Lark) -> LexerPlan:
        terminals = {t.name: t for t in lark.terminals}
        order = sorted(
            terminals.values(),
            key=lambda t: (-t.priority, -t.pattern.max_width, -len(t.pattern.value), t.name),
        )
        rank = {t.name: i for i, t in enumerate(order)}
        first_of = _first_terminals(lark.rules)
        contexts: dict[str, list[str]] = {"": sorted(first_of["_line"] - {"_NL"}, key=rank.__getitem__)}
        for rule in lark.rules:
            head = rule.expansion[0] if rule.expansion else None
            if (
                head is not None
                and head.is_term
                and head.name.endswith(_PREFIX_SUFFIX)
                and len(rule.expansion) > 1
            ):
                nxt = rule.expansion[1]
                allowed = {nxt.name} if nxt.is_term else first_of[nxt.name]
                contexts[head.name] = sorted(allowed, key=rank.__getitem__)
        regexps = {name: str(t.pattern.to_regexp()) for name, t in terminals.items()}
        return cls(regexps, contexts, {name: _first_buckets(r) for name, r in regexps.items()})

    def to_data(self) -> dict[str, Any]:
        firsts = {k: None if v is None else sorted(v) for k, v in self.firsts.items()}
        return {"terminals": self.terminals, "order": self.order, "firsts": firsts}

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> LexerPlan:
        """The plan stored by `to_data`; raises KeyError/TypeError/ValueError when it is not one."""
        terminals = {str(k): str(v) for k, v in data["terminals"].items()}
        order = {str(k): [str(n) for n in v] for k, v in data["order"].items()}
        firsts = {
            str(k): None if v is None else frozenset(int(b) for b in v) for k, v in data["firsts"].items()
        }
        named = set(terminals)
        if "" not in order or any(not set(v) <= named for v in order.values()) or set(firsts) != named:
            raise ValueError("inconsistent lexer plan")
        return cls(terminals, order, firsts)


@dataclass(frozen=True)
class LineGrammar:
    """A line grammar: the fast per-line lexer, and Lark's reference parser (built only when asked for)."""

    name: str
    text: str
    lexer: LineLexer

    @functools.cached_property
    def reference(self) -> Lark:
        """Lark's LALR parser of the grammar without field groups: the reference reading (tests)."""
        from lark import Lark

        return Lark(_NAMED_GROUP.sub("(?:", self.text), parser="lalr", lexer="contextual")

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
    """The line grammar `name` with its fast lexer, once per process: from the compiled form stored on
    disk when it is current (`logscope.parsers.compiled`), else built with Lark and then stored."""
    text = grammar_text(name)
    return build_line_grammar(name, text, CompiledGrammar.load(cache_file(name, text)))


def build_line_grammar(name: str, text: str, store: CompiledGrammar) -> LineGrammar:
    """The line grammar of `text`, reusing what `store` holds and saving what it did not."""
    plan = None
    if store.plan is not None:
        try:
            plan = LexerPlan.from_data(store.plan)
        except (KeyError, TypeError, ValueError, AttributeError):
            plan = None
    if plan is None:
        from lark import Lark

        # The scanner of this Lark instance is built lazily and never used: only its analysis is read.
        plan = LexerPlan.from_lark(Lark(text, parser="lalr", lexer="contextual"))
        store.set_plan(plan.to_data())
    lexer = LineLexer(plan, store.compile, store.save)
    if store.dirty:  # built now: store every alternation, so the next processes find them all
        lexer.compile_all()
    store.save()
    return LineGrammar(name=name, text=text, lexer=lexer)


@functools.cache
def load_value_parser() -> Lark:
    """The LALR parser for structured payloads inside single lines (node lists, settings)."""
    from lark import Lark

    text = grammar_text("values")
    # Lark's own cache (its tables, keyed by Lark on the grammar and options; a bad file is rebuilt).
    stored = cache_file("values", text, suffix=".lark")
    if stored is not None:
        try:
            stored.parent.mkdir(parents=True, exist_ok=True)
        except OSError:
            stored = None
    return Lark(text, parser="lalr", lexer="contextual", cache=str(stored) if stored else False)
