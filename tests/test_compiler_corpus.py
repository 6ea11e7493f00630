"""The RKNN compiler corpus (fixtures/rknn-compiler/, built by `make corpus` with rknn-toolkit2 2.2.0
to 2.5.0): every log parses faithfully, and the generated accuracy section of docs/reference.md is
what the prediction measures today.

Faithful means: no unparsed line except the corpus script's own `[corpus]` step lines; the layer,
feature-tensor, const-tensor, fusion-result and accuracy-table row counts, the build status and the
printed totals equal what the script counted in the log text with its own regexes (manifest.json).
"""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path
from typing import Any

import pytest

import logscope

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "fixtures" / "rknn-compiler"
sys.path.insert(0, str(ROOT / "tools" / "corpus"))

import rknn_accuracy  # noqa: E402

BUILDS: list[dict[str, Any]] = json.loads((CORPUS / "manifest.json").read_text())["builds"]


@pytest.fixture(scope="module")
def parsed() -> dict[str, Any]:
    return {b["id"]: logscope.parse(CORPUS / b["log"]) for b in BUILDS}


def test_the_corpus_is_committed_and_small():
    size = sum(p.stat().st_size for p in CORPUS.rglob("*") if p.is_file())
    assert size < 15 * 1024 * 1024
    assert {b["toolkit"] for b in BUILDS} == {"2.2.0", "2.3.0", "2.3.2", "2.5.0"}
    assert len(BUILDS) == 918 and sum(b["built"] for b in BUILDS) == 724
    assert all((CORPUS / b["log"]).exists() for b in BUILDS)
    refused = [b for b in BUILDS if b["model"].startswith("refused_")]
    assert refused and not any(b["built"] for b in refused)


def test_every_log_parses_with_nothing_unparsed_but_the_script_lines(parsed):
    leftovers = {
        bid: [
            (int(r.line), str(r.text))
            for r in log.frames["unparsed"].itertuples()
            if not str(r.text).startswith("[corpus]")
        ]
        for bid, log in parsed.items()
    }
    assert {bid: rows for bid, rows in leftovers.items() if rows} == {}
    for b in BUILDS:  # and every one of the script's step lines is counted as unparsed, none elsewhere
        with gzip.open(CORPUS / b["log"], "rt") as fh:
            script_lines = sum(line.startswith("[corpus]") for line in fh)
        assert parsed[b["id"]].unparsed_lines == script_lines, b["id"]


def _count(log: Any, table: str) -> int:
    t = log.frames["tensors"]
    return int((t["table"] == table).sum())


def test_counts_status_and_totals_equal_the_manifest(parsed):
    for b in BUILDS:
        log, want = parsed[b["id"]], b["counts"]
        got = {
            "layers": len(log.frames["layers"]),
            "feature_tensors": _count(log, "feature"),
            "const_tensors": _count(log, "const"),
            "fusion_results": len(log.frames["fusions"]),
            "accuracy_rows": len(log.frames["accuracy"]),
        }
        assert got == {k: want[k] for k in got}, b["id"]
        statuses = set(log.frames["builds"]["status"])
        assert ("done" in statuses) == (want["status"] == "done"), b["id"]
        memory = log.frames["memory"]
        for key in ("internal", "weight"):
            printed = b["totals"][key]
            values = memory[f"{key}_bytes"].dropna()
            if printed is None:
                assert values.empty, b["id"]
            else:
                assert int(values.iloc[0]) == printed["bytes"], b["id"]


def test_the_printed_internal_total_is_the_feature_table_span(parsed):
    """The printed KiB total (up to four decimals) equals the table's byte-exact span at that precision."""
    for b in BUILDS:
        if not b["built"]:
            continue
        t = parsed[b["id"]].frames["tensors"]
        rows = t[t["table"] == "feature"]
        span = int(rows["end_offset"].max() - rows["start_offset"].min())
        printed = b["totals"]["internal"]["printed"]  # `238.625KB`, `68.4375KB`, `2107KB`
        assert printed.endswith("KB") and abs(float(printed[:-2]) - span / 1024) <= 0.0005 + 1e-9, b["id"]


def test_accuracy_tables_have_line_provenance(parsed):
    rows = [log.frames["accuracy"] for bid, log in parsed.items() if len(log.frames["accuracy"])]
    assert len(rows) == 16  # chain_75, dw_odd, unet_128, transformer on rk3588 int8, four toolkits
    for frame in rows:
        assert frame["line"].notna().all()
        scored = frame[frame["entire_cos"].notna()]
        assert len(scored) and (scored["entire_cos"] <= 1.0).all() and (scored["single_euc"] >= 0).all()


def test_the_generated_accuracy_section_is_current(parsed):
    outcomes = rknn_accuracy.measure(BUILDS, parsed)
    assert rknn_accuracy.render(outcomes) == rknn_accuracy.current_doc(), "run tools/corpus/rknn_accuracy.py"
    assert all(o.cause for o in outcomes if not o.exact)  # every miss names its cause


def test_check_names_the_targets_and_versions_that_reproduce_a_log_naming_neither(tmp_path):
    """A 2.5.0 unet_128 build log with its version lines removed: only 2.5.0 splits Concat(Resize) ->
    Conv, so the note names rk3588 with that version alone (rk3576 and rv1126b store the ConvTranspose
    output differently and do not reproduce it)."""
    import rknn_models

    from logscope.reference.check import check_log_against_model

    with gzip.open(CORPUS / "2.5.0" / "unet_128-rk3588-int8.log.gz", "rt") as fh:
        text = "".join(line for line in fh if "version" not in line.lower())
    log_path = tmp_path / "unet.log"
    log_path.write_text(text)
    model = tmp_path / "unet.onnx"
    model.write_bytes(rknn_models.build("unet_128", "zeros").SerializeToString())
    result = check_log_against_model(logscope.parse(log_path), model)
    (note,) = [n for n in result.notes if "reproduces the logged" in n]
    assert note.endswith("reproduces the logged 1,622,016 B (int8): rk3588 (2.5.0)")
