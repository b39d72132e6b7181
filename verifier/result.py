"""Verdicts and check results: what every engine returns and every report consumes."""
from __future__ import annotations

import builtins
from dataclasses import dataclass, field
from typing import Any

from verifier.diagnostics import Diagnostic
from verifier.ir.props import Property
from verifier.ir.verdict import Verdict
from verifier.resources import Stop, StopKind
from verifier.trace import Trace


def satisfies(verdict: Verdict, expected: Verdict | None) -> bool:
    """Does `verdict` meet the expectation written in a property file?

    No expectation: anything but VIOLATED (UNKNOWN is handled by its own exit code).
    HOLDS is met by PROVED too; HOLDS_TO_DEPTH only by itself or stronger.
    """
    if expected is None:
        return verdict is not Verdict.VIOLATED
    want = Verdict(expected)
    if want is Verdict.VIOLATED:
        return verdict is Verdict.VIOLATED
    if want is Verdict.UNKNOWN:
        return verdict is Verdict.UNKNOWN
    if verdict in (Verdict.VIOLATED, Verdict.UNKNOWN):
        return False
    return verdict.rank <= want.rank


@dataclass(frozen=True)
class Stats:
    states: int | None = None
    transitions: int | None = None
    seconds: float = 0.0
    z3_units: int | None = None       # Z3 resource units spent (they vary a little with what Z3 was asked before
                                      # in the same process, so no output shows them)


@dataclass(frozen=True)
class CheckResult:
    """One engine's answer to one claim."""

    property: Property
    verdict: Verdict
    engine: str                          # the method (and store) that decided: "explicit/python", "explicit/compact",
                                         # "k-induction", "pdr", "bmc", "ranking"...
    depth: int | None = None             # BFS depth explored, BMC bound, or k
    stats: Stats = Stats()
    trace: Trace | None = None
    reason: str = ""                     # a short explanation for people (for UNKNOWN: `stop.words` and more)
    params: tuple[tuple[str, int | None], ...] = ()
    variant: str | None = None
    evidence: dict[str, Any] = field(default_factory=dict)   # invariant found, ranking function...
    reductions: tuple[str, ...] = ()     # state-space reductions the search used ("symmetry")
    scale: str | None = None             # see `scale_of`: at which numbers the verdict is known
    accept_bounded: int | None = None    # --accept-bounded N: a HOLDS_TO_DEPTH from depth N counts as holding
    stop: Stop | None = None             # why the claim is undecided (None when decided): read this, never `reason`

    @builtins.property          # the field `property` shadows the builtin in this class body
    def bounded_accepted(self) -> bool:
        """A bounded verdict someone accepted explicitly: the claim's `expected: HOLDS_TO_DEPTH`,
        or --accept-bounded N on the command line with this verdict's depth at least N (never the
        configuration, which a pull request can change)."""
        return self.verdict is Verdict.HOLDS_TO_DEPTH and (
            self.property.expected is Verdict.HOLDS_TO_DEPTH
            or (self.accept_bounded is not None and self.depth is not None and self.depth >= self.accept_bounded))

    @builtins.property
    def is_open(self) -> bool:
        """Nothing decided for the gate: UNKNOWN, or a bounded verdict nobody accepted (exit 3)."""
        return self.verdict is Verdict.UNKNOWN or (self.verdict is Verdict.HOLDS_TO_DEPTH and not self.bounded_accepted)

    @builtins.property
    def model_error(self) -> bool:
        """The model itself failed on the way (an index out of range, a pop of an empty sequence):
        not a budget; the trace reaches the state where it fails."""
        return self.stop is not None and self.stop.kind is StopKind.MODEL_ERROR

    @builtins.property
    def as_expected(self) -> bool:
        if self.model_error:
            return False
        if self.verdict is Verdict.HOLDS_TO_DEPTH:     # accepted, it meets no expectation, HOLDS or itself
            return self.bounded_accepted and self.property.expected in (None, Verdict.HOLDS, Verdict.HOLDS_TO_DEPTH)
        return satisfies(self.verdict, self.property.expected)


SCALE_EVERY = "every-value"   # PROVED: for every value of the parameters it leaves free
SCALE_PRINTED = "printed"     # decided with every parameter the rules print at its printed value
SCALE_SCALED = "scaled"       # decided only at scaled-down values
SCALE_WORDS = {SCALE_EVERY: "for every value", SCALE_PRINTED: "at the printed values",
               SCALE_SCALED: "only at scaled values"}


def scale_of(verdict: Verdict, params: tuple[tuple[str, int | None], ...],
             printed: tuple[tuple[str, int], ...] | None) -> str | None:
    """At which numbers a verdict is known, given the values the rules print (None: the model
    does not declare them). An UNKNOWN is known nowhere."""
    if verdict is Verdict.UNKNOWN:
        return None
    if verdict is Verdict.PROVED:
        return SCALE_EVERY
    if printed is None:
        return None
    values = dict(params)
    return SCALE_PRINTED if all(values.get(k) == v for k, v in printed) else SCALE_SCALED


@dataclass(frozen=True)
class Finding:
    """A rules-consistency finding: where the rules are dead, stuck, silent, conflicting
    or ambiguous. `traces` replay on the model; `evidence` holds the rest (a Z3 model,
    the two outcomes of an order-dependence, the verdicts per variant...)."""

    kind: str                     # dead-rule | deadlock | gap | conflict | order-dependence |
                                  # nondeterministic-must | variant-difference
    subject: str                  # the action, phase, variable or pair ("a|b") concerned
    message: str                  # one sentence in the rulebook's terms
    rules: tuple[str, ...] = ()   # citations concerned ("Discard: ...")
    traces: tuple[Trace, ...] = ()
    evidence: dict[str, Any] = field(default_factory=dict)
    engine: str = "explicit"      # what established it
    scope: str = ""               # "for these parameters" / "for all parameter values"
    acknowledged: str | None = None   # the model's stated reason, when acknowledged
    variant: str | None = None
    span: Any = None              # verifier.diagnostics.Span of the model element, for SARIF

    @property
    def key(self) -> str:
        """Stable identity for baselines and diffs."""
        return f"{self.kind}:{self.subject}"


@dataclass(frozen=True)
class ModelRun:
    """Everything one `check` of one model (one variant) produced: what reports consume."""

    model: Any                    # verifier.ir.Model (loaded, with param values)
    path: str
    results: tuple[CheckResult, ...] = ()
    findings: tuple[Finding, ...] = ()
    seconds: float = 0.0
    properties_path: str | None = None
    analyses_unknown: str = ""    # why a budget cut the consistency analyses short ("": complete or off)
    analyses_beyond: str = ""     # how the analyses decided past the states their search stored ("": not needed)
    vacuous: tuple[Any, ...] = ()   # verifier.analysis.vacuity.Vacuity: claims that hold without saying anything
    warnings: tuple[Diagnostic, ...] = ()   # what loading the model file warned of (deprecated forms, ...)
    analyses_stop: Stop | None = None   # what stopped the analyses' search short (None: complete or off)

    @property
    def model_errors(self) -> tuple[str, ...]:
        """The model errors met, in words: each claim's and the analyses' (a model error is never
        a budget: exit 2, never 'left UNKNOWN by the budget')."""
        errors = [f"claim {r.property.id}: {r.stop.words}" for r in self.results if r.model_error and r.stop]
        if self.analyses_stop is not None and self.analyses_model_error:
            errors.append(f"the consistency analyses: {self.analyses_stop.words}")
        return tuple(errors)

    @property
    def analyses_model_error(self) -> bool:
        """The analyses' search stopped at a model error (their UNKNOWN is the model's, not a budget's)."""
        return self.analyses_stop is not None and self.analyses_stop.kind is StopKind.MODEL_ERROR

    @property
    def as_expected(self) -> bool:
        """Every claim as expected, no new finding, and the analyses ran to the end (findings
        beyond where a budget stopped them are UNKNOWN, not absent)."""
        return all(r.as_expected for r in self.results) and not self.new_findings and not self.analyses_unknown

    @property
    def new_findings(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.acknowledged is None)


def accepting_bounded(runs: list[ModelRun], depth: int | None) -> list[ModelRun]:
    """`runs` with --accept-bounded `depth` noted on every result (None: no bounded verdict is
    accepted but where its claim expects one)."""
    from dataclasses import replace

    if depth is None:
        return list(runs)
    return [replace(run, results=tuple(replace(r, accept_bounded=depth) for r in run.results)) for run in runs]
