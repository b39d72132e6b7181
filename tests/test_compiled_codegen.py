"""The compiled store's generated code made cheaper to compile: repeated reads and terms computed once,
range checks as one test, no test of what holds where a firing runs."""
import itertools
from pathlib import Path

from verifier.engines.bfsgen import packing_of
from verifier.engines.codegen import simplify
from verifier.engines.compiled.numbagen import NumbaWriter, merged_checks, module_source, shared_reads, shared_terms
from verifier.ir.model import PHASE_VAR
from verifier.lang import load_model
from verifier.semantics import layout

BODY = [
    "    d = ((s >> (4 * v1 + 5)) & 15) + ((s >> (4 * v1 + 5)) & 15) + ((s >> (4 * v9 + 5)) & 15)",
    "    if ((v1 == 0) & ((s >> (4 * v1 + 5)) & 15) > 1):",
    "        x = (max(0, (v1 - 1)) + (v1 == 0))",
    "        y = _rd(s, (v1 + 2), 1) + (v1 + 2)",
    "    z = (_rd(s, (v1 + 2), 1) << sh)",
    "    w = ((v1 + 2) << sh) + ((v1 + 2) << sh)",
    "    q = _bad_index('(v1 == 0)') + (v1 == 0)",
]


def run(lines: list[str], s: int, v1: int) -> dict:
    scope = {"s": s, "v1": v1, "v9": 1, "sh": 3, "_rd": lambda s, i, k: (s >> i) & k, "_bad_index": lambda _x: 0}
    exec("\n".join(line[4:] for line in lines), scope)
    return {k: scope.get(k) for k in "dxyzwq"}


def test_repeated_reads_and_pure_terms_are_computed_once_with_the_same_values():
    reads, lines = shared_reads(BODY, itertools.count(), {"v1"})
    assert reads == ["    d0 = ((s >> (4 * v1 + 5)) & 15)"]             # v9 is not read before the lines
    terms, lines = shared_terms(lines, itertools.count(1))
    text = "\n".join(terms)
    assert "(v1 == 0)" in text and "(v1 + 2)" in text
    assert "(v1 - 1)" not in text                                    # written once
    assert "<< sh" not in text and "_rd" not in text                 # a computed shift, a call that may raise
    assert "max(0, " in "\n".join(lines)                              # a call's arguments stay where they are
    assert "_bad_index('(v1 == 0)')" in lines[-1]                     # a line quoting text is left as it is
    for s, v1 in itertools.product((0, 77, 1 << 40, (1 << 62) - 1), (0, 1)):
        assert run([*reads, *terms, *lines], s, v1) == run(BODY, s, v1)


CHECKS = [
    "    n1 = a - 1",
    "    if not 0 <= n1 <= 8:",
    "        pass",
    "    elif not -2 <= b <= 3:",
    "        pass",
    "    else:",
    "        t = n1 + b",
    "    if not 0 <= b <= 1:",          # a chain whose failure does something stays as it is
    "        g = 1",
    "    else:",
    "        t = 0",
]


def test_range_checks_that_do_nothing_on_failure_are_one_test_with_the_same_outcome():
    merged = merged_checks(CHECKS)
    assert "    if (0 <= n1) & (n1 <= 8) & (-2 <= b) & (b <= 3):" in merged and "pass" not in "\n".join(merged)
    assert merged[-4:] == CHECKS[-4:]
    for a, b in itertools.product(range(-2, 12), range(-4, 6)):
        scope, merged_scope = {"a": a, "b": b}, {"a": a, "b": b}
        exec("\n".join(line[4:] for line in CHECKS), scope)
        exec("\n".join(line[4:] for line in merged), merged_scope)
        assert scope == merged_scope


def test_a_firing_does_not_test_again_what_holds_where_it_runs():
    """`expand` returns where the game has ended and tests the phase once per value: the guards'
    `not end` and `phase == value` conjuncts are not written again under those tests."""
    lay = layout(load_model(str(Path(__file__).parent / "models" / "priority.yaml")).instantiate())
    w = NumbaWriter(lay, packing_of(lay))
    end = w.expr(simplify(lay.model.end, lay), {})
    phase = w.field(lay.offsets[PHASE_VAR][0])
    text = module_source(lay, ()).text
    assert text.count(end) == 1 and f"({phase} == 0)" not in text and "    if v == 0:" in text
