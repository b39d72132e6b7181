"""Baselines: a recorded set of verdicts and findings, so that CI fails only on changes.

A baseline file is JSON, one per model, written by `check --update-baseline`:

    {"turnproof_baseline": 1, "model": "wtactics", "params": {"DECK": 6},
     "variants": [{"variant": "strict",
                   "claims": {"hand-limit": "HOLDS", ...},
                   "findings": ["dead-rule:pay_upkeep", ...]}]}

It holds no paths, times or state counts, so it only changes when a verdict or
a finding does. `check --baseline FILE` compares a run with it:

- a claim whose verdict differs from the recorded one fails the gate (exit 1),
  whichever way it moved; a change *to* UNKNOWN gives exit 3 (a budget, not a rule,
  changed the answer);
- a finding not in the baseline fails (exit 1) unless the model acknowledges it;
- a claim not in the baseline is judged as without a baseline (its expectation);
- claims and findings that disappeared are reported and do not fail;
- variants not checked in this run are left alone, both in the comparison and
  when the file is updated.

`--baseline DIR` (an existing folder, or a path ending in '/') means DIR/<model file stem>.json.
"""
from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from verifier.diagnostics import Diagnostic, UsageError
from verifier.files import write_atomic
from verifier.result import CheckResult, Finding, ModelRun, Verdict

FORMAT_VERSION = 1
EXIT_OK, EXIT_FAILED, EXIT_UNKNOWN = 0, 1, 3


def baseline_path(path: str, model_path: str) -> Path:
    """The baseline file for `model_path`: `path` itself, or `path/<stem>.json` for a folder."""
    p = Path(path)
    if p.is_dir() or path.endswith(("/", "\\")):
        return p / f"{Path(model_path).stem}.json"
    return p


def record(runs: Sequence[ModelRun], previous: dict[str, Any] | None = None) -> dict[str, Any]:
    """The baseline document of `runs`; variants of `previous` not run here are kept."""
    model = runs[0].model
    entries: dict[str | None, dict[str, Any]] = {}
    if previous is not None and previous.get("model") == model.name:
        for entry in previous.get("variants", []):
            entries[entry.get("variant")] = entry
    for run in runs:
        entries[run.model.variant] = {
            "variant": run.model.variant,
            "claims": {r.property.id: r.verdict.value for r in run.results},
            "findings": sorted({f.key for f in run.findings}),
        }
    ordered = sorted(entries.values(), key=lambda e: (e["variant"] is not None, e["variant"] or ""))
    return {"turnproof_baseline": FORMAT_VERSION, "model": model.name,
            "params": dict(model.param_values), "variants": ordered}


def dumps(doc: dict[str, Any]) -> str:
    return json.dumps(doc, indent=2, sort_keys=True) + "\n"


def load(path: Path) -> dict[str, Any]:
    if not path.is_file():
        raise UsageError(Diagnostic(f"baseline {path} does not exist",
                                    hint="record it first: turnproof check MODEL --baseline FILE --update-baseline"))
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise UsageError(Diagnostic(f"baseline {path} is not readable JSON: {err}",
                                    hint="regenerate it with --update-baseline")) from None
    if not isinstance(doc, dict) or doc.get("turnproof_baseline") != FORMAT_VERSION \
            or not isinstance(doc.get("variants"), list):
        raise UsageError(Diagnostic(f"{path} is not a turnproof baseline (format {FORMAT_VERSION})",
                                    hint="regenerate it with --update-baseline"))
    return doc


@dataclass(frozen=True)
class ClaimChange:
    variant: str | None
    claim: str
    old: str | None          # None: not in the baseline
    new: str | None          # None: no longer checked
    as_expected: bool = True


@dataclass
class Comparison:
    """What changed between a baseline and a run."""

    model: str
    changed: list[ClaimChange] = field(default_factory=list)     # verdict differs
    added: list[ClaimChange] = field(default_factory=list)       # claims not in the baseline
    removed: list[ClaimChange] = field(default_factory=list)     # recorded claims no longer checked
    new_findings: list[tuple[str | None, Finding]] = field(default_factory=list)
    gone_findings: list[tuple[str | None, str]] = field(default_factory=list)
    new_variants: list[str | None] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    _claims: dict[tuple[str | None, str], str] = field(default_factory=dict, repr=False)
    _findings: dict[str | None, set[str]] = field(default_factory=dict, repr=False)

    @property
    def exit_code(self) -> int:
        if any(c.new != Verdict.UNKNOWN.value for c in self.changed):
            return EXIT_FAILED
        if any(f.acknowledged is None for _, f in self.new_findings):
            return EXIT_FAILED
        if any(not c.as_expected and c.new != Verdict.UNKNOWN.value for c in self.added):
            return EXIT_FAILED
        if self.changed or any(not c.as_expected for c in self.added):
            return EXIT_UNKNOWN
        return EXIT_OK

    @property
    def unchanged(self) -> bool:
        return not (self.changed or self.added or self.removed or self.new_findings or self.gone_findings)

    # SARIF baselineState of a result
    def claim_state(self, variant: str | None, r: CheckResult) -> str:
        old = self._claims.get((variant, r.property.id))
        if old is None:
            return "new"
        return "unchanged" if old == r.verdict.value else "updated"

    def finding_state(self, variant: str | None, f: Finding) -> str:
        return "unchanged" if f.key in self._findings.get(variant, set()) else "new"

    def text(self) -> str:
        def v(variant: str | None) -> str:
            return f" [variant {variant}]" if variant else ""

        lines = [f"baseline of {self.model}: " + ("no change" if self.unchanged else "changes found")]
        lines += [f"  note: {n}" for n in self.notes]
        lines += [f"  changed: {c.claim}{v(c.variant)}: {c.old} -> {c.new}" for c in self.changed]
        lines += [f"  new claim: {c.claim}{v(c.variant)}: {c.new}" + ("" if c.as_expected else " (not as expected)")
                  for c in self.added]
        lines += [f"  claim no longer checked: {c.claim}{v(c.variant)} (was {c.old})" for c in self.removed]
        lines += [f"  new finding: {f.key}{v(var)}: {f.message}"
                  + (f" (acknowledged: {f.acknowledged})" if f.acknowledged else "") for var, f in self.new_findings]
        lines += [f"  finding gone: {key}{v(var)}" for var, key in self.gone_findings]
        verdict = {EXIT_OK: "gate passes", EXIT_FAILED: "gate fails (exit 1)",
                   EXIT_UNKNOWN: "undecided (exit 3)"}[self.exit_code]
        lines.append(f"  {verdict}")
        return "\n".join(lines) + "\n"

    def to_json(self) -> dict[str, Any]:
        def claim(c: ClaimChange) -> dict[str, Any]:
            return {"variant": c.variant, "claim": c.claim, "old": c.old, "new": c.new, "as_expected": c.as_expected}

        return {"model": self.model, "exit_code": self.exit_code, "unchanged": self.unchanged,
                "changed": [claim(c) for c in self.changed], "added": [claim(c) for c in self.added],
                "removed": [claim(c) for c in self.removed],
                "new_findings": [{"variant": var, "key": f.key, "message": f.message,
                                  "acknowledged": f.acknowledged} for var, f in self.new_findings],
                "gone_findings": [{"variant": var, "key": key} for var, key in self.gone_findings],
                "notes": list(self.notes)}


def compare(runs: Sequence[ModelRun], doc: dict[str, Any]) -> Comparison:
    model = runs[0].model
    out = Comparison(model.name)
    if doc.get("model") != model.name:
        raise UsageError(Diagnostic(f"the baseline records model '{doc.get('model')}', not '{model.name}'",
                                    hint="give the baseline file of this model"))
    params = dict(model.param_values)
    if doc.get("params", {}) != params:
        out.notes.append(f"the baseline was recorded with parameters {doc.get('params')}, this run uses {params}")
    recorded = {e.get("variant"): e for e in doc["variants"]}
    for run in runs:
        variant = run.model.variant
        entry = recorded.get(variant)
        if entry is None:
            out.new_variants.append(variant)
            out.notes.append(f"variant {variant or '(none)'} is not in the baseline")
            entry = {"claims": {}, "findings": []}
        claims: dict[str, str] = dict(entry.get("claims", {}))
        findings = set(entry.get("findings", []))
        out._findings[variant] = findings
        for cid, verdict in claims.items():
            out._claims[(variant, cid)] = verdict
        seen = set()
        for r in run.results:
            cid = r.property.id
            seen.add(cid)
            old = claims.get(cid)
            if old is None:
                out.added.append(ClaimChange(variant, cid, None, r.verdict.value, r.as_expected))
            elif old != r.verdict.value:
                out.changed.append(ClaimChange(variant, cid, old, r.verdict.value, r.as_expected))
        out.removed += [ClaimChange(variant, cid, old, None) for cid, old in claims.items() if cid not in seen]
        keys = {f.key for f in run.findings}
        out.new_findings += [(variant, f) for f in run.findings if f.key not in findings]
        out.gone_findings += [(variant, key) for key in sorted(findings - keys)]
    return out


@dataclass(frozen=True)
class Outcome:
    comparison: Comparison | None
    path: Path
    written: bool

    @property
    def exit_code(self) -> int:
        return EXIT_OK if self.written or self.comparison is None else self.comparison.exit_code

    def text(self) -> str:
        if self.written:
            head = f"baseline written: {self.path}\n"
            return head + (self.comparison.text() if self.comparison and not self.comparison.unchanged else "")
        assert self.comparison is not None
        return self.comparison.text()

    def to_json(self) -> dict[str, Any]:
        doc = {"path": str(self.path), "written": self.written}
        if self.comparison is not None:
            doc.update(self.comparison.to_json())
        doc["exit_code"] = self.exit_code
        return doc


def apply(runs: Sequence[ModelRun], path: str, update: bool = False) -> Outcome:
    """Compare `runs` with the baseline at `path`; with `update`, (re)write it from `runs`.

    After an update the gate passes (exit 0): the file now records this run. The
    comparison with the previous file (when there was one) is kept for display.
    """
    if not runs:
        raise UsageError(Diagnostic("nothing was checked, so there is no baseline to compare"))
    target = baseline_path(path, runs[0].path)
    if update:
        previous = load(target) if target.is_file() else None
        comparison = compare(runs, previous) if previous is not None and previous.get("model") == runs[0].model.name \
            else None
        write_atomic(target, dumps(record(runs, previous)))
        return Outcome(comparison, target, True)
    return Outcome(compare(runs, load(target)), target, False)


def preflight(path: str, model_path: str, update: bool) -> None:
    """Fail early (exit 2) on a missing or unreadable baseline, before a long check."""
    target = baseline_path(path, model_path)
    if not update or target.is_file():
        load(target)
