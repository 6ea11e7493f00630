"""Compiled grammars kept on disk: the same lexer as a fresh build, rebuilt when anything is off."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

import logscope.io
from logscope.parsers.compiled import CompiledGrammar, cache_file
from logscope.parsers.grammar import LexerPlan, LineLexer, build_line_grammar, grammar_text
from tests.conftest import FIXTURES

REPO = Path(__file__).resolve().parents[1]
RKNN = sorted((FIXTURES / "rknn").glob("*.log"))[:6]
LINES = [line for path in RKNN for line in logscope.io.read_log(path).lines if line]
MCU_LINES = [
    line
    for path in sorted((FIXTURES / "mcu").glob("*.txt"))[:8]
    for line in logscope.io.read_log(path).lines
    if line
]


def _readings(lexer: LineLexer, lines: list[str]) -> list[tuple[str, dict[str, str | None]]]:
    return [(kind, dict(fields)) for kind, fields in map(lexer.classify, lines)]


def _build(name: str, root: Path, text: str | None = None):  # type: ignore[no-untyped-def]
    text = grammar_text(name) if text is None else text
    store = CompiledGrammar.load(cache_file(name, text, root))
    return build_line_grammar(name, text, store), store


@pytest.fixture(scope="module")
def fresh_rknn() -> LineLexer:
    """The lexer built without any cache, as the reference."""
    from lark import Lark

    text = grammar_text("rknn")
    return LineLexer(LexerPlan.from_lark(Lark(text, parser="lalr", lexer="contextual")))


def test_second_build_reads_everything_from_the_file_and_reads_lines_the_same(tmp_path, fresh_rknn):
    rows = [("NATIVE_PREFIX", "TENSOR_ROW"), ("NATIVE_PREFIX", "LAYER_ROW")]
    first, store = _build("rknn", tmp_path)
    assert store.misses > 0 and store.hits == 0
    for prefix, body in rows:  # asked for after the build: stored as well
        first.lexer.row_matcher(prefix, body)
    (stored,) = tmp_path.rglob("rknn-*.json")
    second, store2 = _build("rknn", tmp_path)
    second.lexer.compile_all()
    for prefix, body in rows:
        second.lexer.row_matcher(prefix, body)
    assert store2.hits > 0 and store2.misses == 0, "a regex was recompiled instead of loaded"
    expected = _readings(fresh_rknn, LINES)
    assert _readings(second.lexer, LINES) == expected
    assert _readings(first.lexer, LINES) == expected
    assert stored.stat().st_size > 0


def test_mcu_grammar_through_the_file_reads_lines_the_same(tmp_path):
    from lark import Lark

    text = grammar_text("mcu")
    fresh = LineLexer(LexerPlan.from_lark(Lark(text, parser="lalr", lexer="contextual")))
    _build("mcu", tmp_path)
    loaded, store = _build("mcu", tmp_path)
    assert _readings(loaded.lexer, MCU_LINES) == _readings(fresh, MCU_LINES)
    assert store.misses == 0


def test_a_changed_grammar_gets_another_file(tmp_path):
    text = grammar_text("rknn")
    changed = text + "\n// a comment\n"
    assert cache_file("rknn", text, tmp_path) != cache_file("rknn", changed, tmp_path)
    _build("rknn", tmp_path)
    _, store = _build("rknn", tmp_path, changed)
    assert store.plan is None or store.hits == 0  # nothing of the old grammar's file is reused
    assert len(list(tmp_path.rglob("rknn-*.json"))) == 2


@pytest.mark.parametrize(
    "damage",
    [
        lambda raw: raw[: len(raw) // 2],  # cut short
        lambda raw: raw.replace(b'"plan"', b'"PLAN"', 1),  # altered: the checksum no longer matches
        lambda raw: b"",
        lambda raw: b"\x00\xff" * 100,
    ],
    ids=["truncated", "altered", "empty", "binary"],
)
def test_a_damaged_file_is_rebuilt(tmp_path, fresh_rknn, damage):
    _build("rknn", tmp_path)
    (stored,) = tmp_path.rglob("rknn-*.json")
    stored.write_bytes(damage(stored.read_bytes()))
    grammar, store = _build("rknn", tmp_path)
    assert store.hits == 0
    assert _readings(grammar.lexer, LINES[:500]) == _readings(fresh_rknn, LINES[:500])
    assert CompiledGrammar.load(stored).plan is not None  # written again, whole


def test_a_program_that_sre_refuses_falls_back_to_compiling(tmp_path, fresh_rknn):
    """A file with a valid checksum but a wrong program (another Python's, say) is not trusted blindly."""
    import base64

    _build("rknn", tmp_path)
    (stored,) = tmp_path.rglob("rknn-*.json")
    store = CompiledGrammar.load(stored)
    bogus = base64.b64encode(b"\xff\xff\xff\x7f" * 4).decode()
    for key, program in list(store._programs.items()):
        decoded = json.loads(program) if isinstance(program, bytes) else program
        store._programs[key] = [decoded[0], bogus, *decoded[2:]]
    store.set_plan(store.plan or {})
    store.save()  # written whole, with a valid checksum
    grammar, reread = _build("rknn", tmp_path)
    assert reread.plan is not None
    assert _readings(grammar.lexer, LINES[:500]) == _readings(fresh_rknn, LINES[:500])
    assert reread.hits == 0 and reread.misses > 0  # every alternation it needed was compiled afresh


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_a_read_only_folder_only_costs_time(tmp_path, fresh_rknn):
    tmp_path.chmod(stat.S_IRUSR | stat.S_IXUSR)
    try:
        grammar, _ = _build("rknn", tmp_path)
        assert _readings(grammar.lexer, LINES[:300]) == _readings(fresh_rknn, LINES[:300])
        assert list(tmp_path.iterdir()) == []
    finally:
        tmp_path.chmod(stat.S_IRWXU)


def test_a_folder_that_cannot_be_created_only_costs_time(tmp_path, fresh_rknn):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    grammar, _ = _build("rknn", blocker / "cache")  # mkdir fails: a file is in the way
    assert _readings(grammar.lexer, LINES[:300]) == _readings(fresh_rknn, LINES[:300])


def _run(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={**os.environ, **env},
        timeout=120,
        check=False,
    )


def test_the_cache_folder_is_configurable_and_can_be_turned_off(tmp_path):
    log = FIXTURES / "rknn" / "09-build-verbose-mobilenetv1-rv1106-tk2-1.5.2-simulator.log"
    code = f"import logscope; print(logscope.parse({str(log)!r}).line_counts['total'])"
    on = _run(code, LOGSCOPE_CACHE_DIR=str(tmp_path / "c"))
    assert on.returncode == 0 and on.stdout.strip() == "303", on.stderr
    assert list((tmp_path / "c").rglob("rknn-*.json"))
    off = _run(code, LOGSCOPE_CACHE_DIR="off", HOME=str(tmp_path / "home"), XDG_CACHE_HOME="")
    assert off.returncode == 0 and off.stdout.strip() == "303", off.stderr
    assert not (tmp_path / "home").exists()


def test_importing_logscope_and_its_cli_leaves_the_heavy_libraries_alone():
    """`import logscope` and `import logscope.cli` pay for nothing heavy: the library's names load on
    first use and each command imports what it uses, so `logscope --help` never loads pandas, pyarrow, numpy,
    the grammars, plotting, the store, ONNX, jinja2 or dask."""
    heavy = [
        "matplotlib",
        "duckdb",
        "onnx",
        "jinja2",
        "dask",
        "pandas",
        "pyarrow",
        "numpy",
        "lark",
        "pydantic",
    ]
    for module, names in {"logscope": heavy, "logscope.cli": heavy}.items():
        out = _run(f"import sys, {module}; print(' '.join(m for m in {names!r} if m in sys.modules))")
        assert out.returncode == 0, out.stderr
        assert out.stdout.strip() == "", f"import {module} imported {out.stdout.strip()}"
    help_run = _run(
        "import sys; from logscope.cli import main; sys.argv = ['logscope', '--help']\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        f"print('HEAVY', ' '.join(m for m in {heavy!r} if m in sys.modules))"
    )
    assert help_run.returncode == 0, help_run.stderr
    assert help_run.stdout.strip().splitlines()[-1].strip() == "HEAVY"


def test_parsing_a_log_leaves_plotting_the_store_and_onnx_alone():
    log = FIXTURES / "rknn" / "09-build-verbose-mobilenetv1-rv1106-tk2-1.5.2-simulator.log"
    heavy = ["matplotlib", "duckdb", "onnx", "jinja2", "dask"]
    code = (
        "import sys; from logscope.cli import app\n"
        f"sys.argv = ['logscope', 'parse', {str(log)!r}]\n"
        "try:\n    app()\nexcept SystemExit:\n    pass\n"
        f"print('HEAVY', ' '.join(m for m in {heavy!r} if m in sys.modules))"
    )
    out = _run(code)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1].strip() == "HEAVY"


def test_the_lazy_public_names_are_the_library_objects():
    """`logscope.reference` stays the analyzer function even once the subpackage of that name is loaded."""
    code = (
        "import logscope.reference.check, logscope\n"
        "from logscope.api import parse\n"
        "from logscope.reference import analyze_model\n"
        "assert logscope.reference is analyze_model, logscope.reference\n"
        "assert logscope.parse is parse and logscope.ParsedLog.__name__ == 'ParsedLog'\n"
        "assert set(logscope.__all__) <= set(dir(logscope))\n"
        "print('ok')"
    )
    out = _run(code)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr
    missing = _run("import logscope; logscope.no_such_name")
    assert missing.returncode == 1 and "has no attribute 'no_such_name'" in missing.stderr
