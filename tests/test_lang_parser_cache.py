"""The expression parser's tables kept in the cache folder (`expressions._parser`): a parser loaded
from them parses, and fails, as one built anew; a file that does not load, or keeps another
grammar's tables, is never used (built again and written over)."""
from __future__ import annotations

from pathlib import Path

import pytest
from lark import Lark, Token
from lark.exceptions import UnexpectedInput

from verifier.files import CACHE_ENV
from verifier.lang import expressions

TEXTS = {"start": ["a and not b", "x + 2 * h[p] >= 3", "forall p in player: h[p] <= x", "if a then 1 else 2",
                   "a and", "x + * 2", "(a", "h[p", "a ==> b", "a $ b", ""],
         "range": ["0..N + 2", "1 .. max(a, b)", "0..", ".. 3", "0 .. 1 .. 2", "x"]}


def _outcome(start: str, text: str) -> tuple:
    """What parsing `text` from rule `start` gives: the tree with every position, or the error."""
    try:
        tree = expressions._parser(start).parse(text)
    except UnexpectedInput as err:
        expected = getattr(err, "expected", None) or getattr(err, "allowed", None) or ()
        return "error", type(err).__name__, str(err), sorted(expected), err.line, err.column
    spans = [(t.data, t.meta.line, t.meta.column, t.meta.end_line, t.meta.end_column)
             for t in tree.iter_subtrees() if not t.meta.empty]
    tokens = [(v.type, str(v), v.line, v.column, v.end_column) for v in tree.scan_values(lambda v: isinstance(v, Token))]
    return "tree", tree, spans, tokens


def _outcomes() -> dict:
    return {start: [_outcome(start, text) for text in texts] for start, texts in TEXTS.items()}


@pytest.fixture
def folder(monkeypatch, tmp_path) -> Path:
    """The cache folder, empty; `_parser` builds or loads its parsers anew (after the test too)."""
    monkeypatch.setenv(CACHE_ENV, str(tmp_path))
    expressions._parser.cache_clear()
    yield tmp_path
    expressions._parser.cache_clear()


def _loaded(monkeypatch) -> dict:
    """`_outcomes` of parsers that must load their tables from the folder (a build fails the test)."""
    expressions._parser.cache_clear()
    with monkeypatch.context() as patched:
        patched.setattr(Lark, "_build_parser", lambda self: pytest.fail("built again: the tables kept were not used"))
        return _outcomes()


def test_a_parser_loaded_from_its_tables_parses_and_fails_as_one_built_anew(folder, monkeypatch):
    built = _outcomes()
    assert len(list(folder.glob("lark-*.tables"))) == len(TEXTS)
    assert _loaded(monkeypatch) == built


def test_tables_that_do_not_load_or_are_another_grammars_are_not_used(folder, monkeypatch):
    built = _outcomes()
    for kept in folder.glob("lark-*.tables"):
        whole = kept.read_bytes()
        kept.write_bytes(whole[:len(whole) // 2])                 # half written
        expressions._parser.cache_clear()
        assert _outcomes() == built
        assert _loaded(monkeypatch) == built                      # written again, whole
        Lark('start: "x"', parser="lalr", cache=str(kept))       # another grammar's tables in its place
        expressions._parser.cache_clear()
        assert _outcomes() == built
        assert _loaded(monkeypatch) == built
