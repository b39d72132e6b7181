"""The compiled store's generated code made cheaper to compile: repeated reads and terms computed once."""
import itertools

from verifier.engines.compiled.numbagen import shared_reads, shared_terms

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
