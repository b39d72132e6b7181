"""What `turnproof diff` found (data only; `report.diff` writes it): claims whose decided verdict
changed, claims left open in a version, changes of what the gate counts (a claim's expectation,
an acknowledgement, the [tool.turnproof] settings), claims and findings only in one version,
and reachable states only in one version."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from verifier.diffing.versions import Version
from verifier.result import CheckResult, Finding
from verifier.trace import Trace

EXIT_SAME, EXIT_CHANGED, EXIT_MODEL_ERROR, EXIT_INCOMPLETE = 0, 1, 2, 3


@dataclass(frozen=True)
class ClaimDiff:
    variant: str | None
    claim: str
    kind: str
    statement: str
    old: CheckResult | None
    new: CheckResult | None

    @property
    def old_verdict(self) -> str | None:
        return None if self.old is None else self.old.verdict.value

    @property
    def new_verdict(self) -> str | None:
        return None if self.new is None else self.new.verdict.value


@dataclass(frozen=True)
class ReadingPair:
    """A reading of OLD compared with one of NEW (None: a model without readings), and what paired
    them: "name", "no readings" (one version declares none), "the same rules" or "the same doc and
    rule citation" (a renamed reading)."""

    old: str | None
    new: str | None
    paired_by: str


@dataclass(frozen=True)
class NewState:
    """A projected state one version allows and the other does not."""

    state: tuple[tuple[str, Any], ...]          # shared slot -> display value
    novel: tuple[tuple[str, Any], ...]          # slots whose value the other version never takes
    depth: int
    trace: Trace
    why: str = ""                               # how the last step differs in the other version


@dataclass(frozen=True)
class OneWay:
    count: int = 0                   # projected states allowed here and not there
    departures: int = 0              # of which: where this version first departs
    listed: tuple[NewState, ...] = ()


@dataclass(frozen=True)
class BehaviourDiff:
    variant: str | None
    shared: tuple[str, ...]
    only_old_vars: tuple[str, ...] = ()
    only_new_vars: tuple[str, ...] = ()
    old_states: int = 0
    new_states: int = 0
    complete: bool = True
    reason: str = ""
    new_only: OneWay = OneWay()      # NEW allows, OLD does not
    old_only: OneWay = OneWay()      # OLD allows, NEW does not
    notes: tuple[str, ...] = ()

    @property
    def changed(self) -> bool:
        return bool(self.new_only.count or self.old_only.count or self.only_old_vars or self.only_new_vars)


@dataclass
class ModelDiff:
    old: Version
    new: Version
    model_old: str
    model_new: str
    claims_changed: list[ClaimDiff] = field(default_factory=list)      # a decided verdict changed
    claims_left_open: list[ClaimDiff] = field(default_factory=list)    # open in a version (`CheckResult.is_open`)
    gate_changes: list[str] = field(default_factory=list)              # expectations, acknowledgements, settings
    claims_added: list[ClaimDiff] = field(default_factory=list)
    claims_removed: list[ClaimDiff] = field(default_factory=list)
    findings_appeared: list[tuple[str | None, Finding]] = field(default_factory=list)
    findings_gone: list[tuple[str | None, Finding]] = field(default_factory=list)
    variants_added: list[str | None] = field(default_factory=list)
    variants_removed: list[str | None] = field(default_factory=list)
    readings_compared: list[ReadingPair] = field(default_factory=list)    # a reading nothing pairs: not in it
    behaviours: list[BehaviourDiff] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    model_errors: list[str] = field(default_factory=list)    # "OLD claim x: model error: ..." (exit 2)
    limit: int = 10

    @property
    def changed(self) -> bool:
        return bool(self.claims_changed or self.gate_changes or self.claims_added or self.claims_removed
                    or self.findings_appeared or self.findings_gone or self.variants_added or self.variants_removed
                    or any(b.changed for b in self.behaviours))

    @property
    def incomplete(self) -> bool:
        """A comparison left open: a budget stopped an exploration, or a claim's verdict differs
        where one version decided nothing (UNKNOWN, or a bounded verdict nobody accepted)."""
        return bool(self.claims_left_open) or any(not b.complete for b in self.behaviours)

    @property
    def exit_code(self) -> int:
        if self.changed:
            return EXIT_CHANGED
        if self.model_errors:
            return EXIT_MODEL_ERROR
        return EXIT_INCOMPLETE if self.incomplete else EXIT_SAME
