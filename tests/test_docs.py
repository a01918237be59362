"""Every example in README.md and docs/*.md runs and prints what the text says."""

import doctest
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
FILES = [p for p in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))] if ">>> " in p.read_text()]


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_doc_examples(path):
    result = doctest.testfile(
        str(path), module_relative=False, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, verbose=False
    )
    assert result.attempted > 0, f"{path.name} has no examples"
    assert result.failed == 0, f"{result.failed} example(s) failed in {path.name}"
