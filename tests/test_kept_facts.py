"""Facts about the grammars' regexes kept on disk: read back they are what proving them gives, and
anything off with the file only means proving them again."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

from logscope.parsers import kept
from logscope.parsers.grammar import (
    load_line_grammar,
    most_matched,
    possessive_lead,
    required_substrings,
    requires_outside,
)
from logscope.parsers.rknn.table_runs import table_readers, tensor_row_regex
from tests.conftest import FIXTURES

REPO = Path(__file__).resolve().parents[1]
FIXTURE_09 = FIXTURES / "rknn" / "09-build-verbose-mobilenetv1-rv1106-tk2-1.5.2-simulator.log"


@pytest.fixture
def fresh_store(tmp_path):
    """A store reading and writing `facts.json` under `tmp_path`; the process's own store afterwards."""
    path = tmp_path / "facts.json"
    yield lambda: kept.reset(path)
    kept.reset(kept.facts_file())


def _prove_everything() -> None:
    """Every kept fact a parse of either grammar asks for, and then some: each terminal of both."""
    for name in ("rknn", "mcu"):
        plan = load_line_grammar(name).lexer.plan
        for regexp in plan.terminals.values():
            possessive_lead(regexp)
            required_substrings(regexp)
            requires_outside(regexp, frozenset("abc XYZ_0123456789"))
            most_matched(regexp, frozenset(" \t"))
    # (each cached once per lexer: cleared, so every store of a test asks for the same facts)
    table_readers.cache_clear()
    tensor_row_regex.cache_clear()
    table_readers(load_line_grammar("rknn").lexer)


def _call_each(tables: dict[str, dict[str, object]]) -> list[tuple[str, tuple[object, ...], object]]:
    """(function, arguments, stored result) of every fact in `tables`."""
    out = []
    for function, table in tables.items():
        for key, value in table.items():
            out.append((function, kept._decode(json.loads(key)), kept._decode(value)))
    return out


def test_facts_read_back_are_what_proving_them_gives(fresh_store):
    store = fresh_store()
    _prove_everything()
    proven = store.added
    assert proven > 100
    store.save()
    functions = {
        f"{f.__module__}.{f.__qualname__}": f.__wrapped__  # type: ignore[attr-defined]
        for f in (possessive_lead, required_substrings, requires_outside, most_matched)
    }
    from logscope.parsers.rknn import table_runs

    for name in ("_joined_pattern", "_fields_read_exactly", "optional_groups_as_branches"):
        function = getattr(table_runs, name)
        functions[f"{function.__module__}.{function.__qualname__}"] = function.__wrapped__
    loaded = kept._read(store.path)
    assert set(loaded) == set(functions), "a kept function proved nothing, or an unknown one was stored"
    facts = _call_each(loaded)
    assert len(facts) == proven
    for function, args, value in facts:
        proven = functions[function](*args)
        assert proven == value and type(proven) is type(value), (function, args)


def test_a_second_store_answers_every_fact_from_the_file(fresh_store):
    store = fresh_store()
    _prove_everything()
    store.save()
    second = fresh_store()
    _prove_everything()
    assert second.added == 0, "a fact the file holds was proven again"


@pytest.mark.parametrize("damage", ["flip", "truncate", "other-format", "not-json", "empty"])
def test_a_damaged_file_is_proven_again_with_the_same_facts(fresh_store, damage):
    store = fresh_store()
    _prove_everything()
    proven = store.added
    store.save()
    path = store.path
    before = kept._read(path)
    raw = path.read_bytes()
    head, _, body = raw.partition(b"\n")
    damaged = {
        "flip": head + b"\n" + body[:100] + bytes([body[100] ^ 1]) + body[101:],
        "truncate": raw[: len(raw) // 2],
        "other-format": head.replace(b" 1 ", b" 99 ") + b"\n" + body,
        "not-json": b"logscope-kept-facts 1 " + f"{zlib.crc32(b'{nope'):08x}".encode() + b"\n{nope",
        "empty": b"",
    }[damage]
    path.write_bytes(damaged)
    assert kept._read(path) == {}
    again = fresh_store()
    _prove_everything()
    assert again.added == proven
    again.save()
    assert kept._read(path) == before


def test_a_changed_source_names_another_file(tmp_path, monkeypatch):
    first = kept.facts_file(tmp_path)
    real = kept.source_of

    def edited(path: str) -> bytes:
        data = real(path)
        return data + b"\n# edited" if Path(path).name == "table_runs.py" else data

    monkeypatch.setattr(kept, "source_of", edited)
    second = kept.facts_file(tmp_path)
    assert first is not None and second is not None
    assert first.parent == second.parent and first != second


def test_a_folder_that_cannot_be_written_only_costs_the_proofs(tmp_path):
    blocker = tmp_path / "a-file"  # a folder cannot be made under a file, whoever runs the test
    blocker.write_text("")
    try:
        store = kept.reset(blocker / "sub" / "facts.json")
        _prove_everything()
        assert store.added > 0
        store.save()  # no error
        assert store.added > 0, "nothing was written, so the facts still count as new"
        assert blocker.read_text() == "" and list(tmp_path.iterdir()) == [blocker]
    finally:
        kept.reset(kept.facts_file())


def test_values_and_arguments_survive_the_file():
    values = [None, True, False, 0, 3, 2.5, math.inf, "x\n\\y", ("a", None), frozenset({"b", "a"})]
    values.append((frozenset({"é", "z"}), True))
    for value in values:
        back = kept._decode(json.loads(json.dumps(kept._encode(value))))
        assert back == value and type(back) is type(value)
    with pytest.raises(TypeError):
        kept._encode(["a list"])
    with pytest.raises(ValueError):
        kept._decode(["a list"])
    assert json.dumps(kept._encode((frozenset({"b", "a"}),))) == json.dumps(
        kept._encode((frozenset({"a", "b"}),))
    )


def test_a_kept_function_must_live_in_a_listed_module():
    def proof(text: str) -> str:
        return text

    with pytest.raises(ValueError, match=r"kept\.SOURCES"):
        kept.kept(proof)


def test_processes_keep_the_facts_and_the_next_one_proves_nothing(tmp_path):
    """A process writes at exit what it proved; the next reads it all and writes nothing."""
    env = {**os.environ, "LOGSCOPE_CACHE_DIR": str(tmp_path)}
    code = (
        "import logscope; from logscope.parsers import kept; "
        f"logscope.parse({str(FIXTURE_09)!r}); print(kept._store().added)"
    )
    runs = [
        subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True, cwd=REPO
        )
        for _ in range(2)
    ]
    (path,) = tmp_path.rglob("facts-*.json")
    assert int(runs[0].stdout) > 50 and int(runs[1].stdout) == 0
    assert kept._read(path)
