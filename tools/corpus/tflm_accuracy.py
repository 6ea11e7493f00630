"""Regenerate the TFLM accuracy table of docs/reference.md from the committed corpus.

    .venv/bin/python tools/corpus/tflm_accuracy.py [--corpus fixtures/tflm-corpus] [--write docs/reference.md]

Without --write it prints the table. tests/test_tflm_reference.py checks the committed table is current.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from logscope.reference.tflm_corpus import corpus_accuracy, render_accuracy_markdown, replace_accuracy_section


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=Path("fixtures/tflm-corpus"))
    parser.add_argument("--write", type=Path, default=None)
    args = parser.parse_args()
    table = render_accuracy_markdown(corpus_accuracy(args.corpus))
    if args.write is None:
        print(table)
        return 0
    text = args.write.read_text(encoding="utf-8")
    args.write.write_text(replace_accuracy_section(text, table), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
