"""Baselines: a recorded set of verdicts and findings, so that CI fails only on changes.

A baseline file is JSON, one per model, written by `check --update-baseline`:

    {"turnproof_baseline": 1, "model": "wtactics", "params": {"DECK": 6},
     "config": {"engine": "auto", "max-depth": null, "timeout": 600.0, ...},
     "variants": [{"variant": "strict",
                   "claims": {"hand-limit": "HOLDS", ...},
                   "findings": ["dead-rule:pay_upkeep", ...],
                   "acknowledged": {"dead-rule:pay_upkeep": "the reason the model gives"}}]}

It holds no paths, times or state counts, so it only changes when a verdict, a
finding or the options the verdicts depend on do. A pull request brings its
baselines, so a baseline is read as untrusted input: a regular file of the project,
checked against its shape (`check_shape`, exit 2 with the place in the file), and
everything it holds printed through `diagnostics.printable`. `check --baseline FILE`
compares a run with it:

- a claim whose decided verdict differs from the recorded one fails the gate
  (exit 1), whichever way it moved; a verdict left open this time (UNKNOWN, or
  HOLDS_TO_DEPTH nobody accepted) is reported as left open, exit 3 (a budget, not a
  rule, changed the answer); a verdict decided where UNKNOWN was recorded is judged
  by its expectation;
- a changed gate option (engine, depths, budgets, reductions, --accept-bounded,
  from the command line or [tool.turnproof]) fails (exit 1): configuration cannot
  soften the gate;
- a finding not in the baseline fails (exit 1), acknowledged or not: an
  acknowledgement is configuration too, recorded with --update-baseline; so does a
  recorded finding whose acknowledgement (its reason) changed;
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

from verifier.diagnostics import Diagnostic, Span, UsageError, printable
from verifier.files import NotAnInput, read_input, write_atomic
from verifier.result import CheckResult, Finding, ModelRun, Verdict

FORMAT_VERSION = 1
EXIT_OK, EXIT_FAILED, EXIT_UNKNOWN = 0, 1, 3


def baseline_path(path: str, model_path: str) -> Path:
    """The baseline file for `model_path`: `path` itself, or `path/<stem>.json` for a folder."""
    p = Path(path)
    if p.is_dir() or path.endswith(("/", "\\")):
        return p / f"{Path(model_path).stem}.json"
    return p


def record(runs: Sequence[ModelRun], previous: dict[str, Any] | None = None,
           config: dict[str, Any] | None = None) -> dict[str, Any]:
    """The baseline document of `runs`, checked under the gate options `config` (recorded when
    given); variants of `previous` not run here are kept."""
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
            "acknowledged": {f.key: f.acknowledged for f in sorted(run.findings, key=lambda f: f.key)
                             if f.acknowledged is not None},
        }
    ordered = sorted(entries.values(), key=lambda e: (e["variant"] is not None, e["variant"] or ""))
    doc = {"turnproof_baseline": FORMAT_VERSION, "model": model.name,
           "params": dict(model.param_values), "variants": ordered}
    if config is not None:
        doc["config"] = dict(config)
    return doc


def dumps(doc: dict[str, Any]) -> str:
    return json.dumps(doc, indent=2, sort_keys=True) + "\n"


MAX_BYTES = 5_000_000       # a baseline records a few verdicts and finding keys per claim
VERDICTS = tuple(v.value for v in Verdict)


def load(path: Path) -> dict[str, Any]:
    """The baseline at `path`, read as an untrusted input (a pull request brings its baselines):
    a regular file of the project, JSON, and the shape `check_shape` accepts; anything else is a
    usage error (exit 2) naming the file and the place in it, never quoting it."""
    regenerate = "regenerate it with --update-baseline"
    try:
        raw = read_input(path, limit=MAX_BYTES)
    except FileNotFoundError:
        raise UsageError(Diagnostic(f"baseline {path} does not exist",
                                    hint="record it first: turnproof check MODEL --baseline FILE --update-baseline")) \
            from None
    except NotAnInput as refused:
        raise UsageError(Diagnostic(str(refused), hint="a baseline is a regular file of the project")) from None
    except OSError as err:
        raise UsageError(Diagnostic(f"cannot read baseline {path}: {err.strerror}")) from None
    if len(raw) > MAX_BYTES:
        raise UsageError(Diagnostic(f"baseline {path} is larger than {MAX_BYTES // 1_000_000} MB", hint=regenerate))
    try:
        doc = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise UsageError(Diagnostic(f"baseline {path} is not UTF-8 text", hint=regenerate)) from None
    except json.JSONDecodeError as err:
        raise UsageError(Diagnostic(f"baseline {path} is not JSON: {err.msg}",
                                    Span(str(path), err.lineno, err.colno), hint=regenerate)) from None
    except RecursionError:
        raise UsageError(Diagnostic(f"baseline {path} is nested too deeply to be a baseline", hint=regenerate)) \
            from None
    problem = check_shape(doc)
    if problem is not None:
        where, what = problem
        raise UsageError(Diagnostic(f"baseline {path}: {where}: {what}", hint=regenerate))
    return doc


def check_shape(doc: Any) -> tuple[str, str] | None:
    """(where, what) of the first way `doc` is not a baseline of this format, or None. Every
    string must be printable text (no control character), every verdict one of `VERDICTS`."""
    if not isinstance(doc, dict) or doc.get("turnproof_baseline") != FORMAT_VERSION:
        return "the top level", f"not a turnproof baseline (format {FORMAT_VERSION})"
    checks: list[tuple[str, Any, str]] = [("model", doc.get("model"), "text"), ("params", doc.get("params", {}), "params"),
                                          ("variants", doc.get("variants"), "list")]
    if "config" in doc:
        checks.append(("config", doc["config"], "config"))
    variants = doc.get("variants")
    for n, entry in enumerate(variants if isinstance(variants, list) else []):
        where = f"variants[{n}]"
        if not isinstance(entry, dict):
            return where, f"must be a mapping, not {_kind(entry)}"
        checks += [(f"{where}.variant", entry.get("variant"), "name"),
                   (f"{where}.claims", entry.get("claims", {}), "claims"),
                   (f"{where}.findings", entry.get("findings", []), "keys"),
                   (f"{where}.acknowledged", entry.get("acknowledged", {}), "acknowledged")]
    for where, value, shape in checks:
        problem = _shape_problem(value, shape)
        if problem is not None:
            return where + problem[0], problem[1]
    return None


def _shape_problem(value: Any, shape: str) -> tuple[str, str] | None:
    if shape == "text":
        return None if _is_text(value) else ("", f"must be printable text, not {_kind(value)}")
    if shape == "name":
        return None if value is None or _is_text(value) else ("", f"must be printable text or null, not {_kind(value)}")
    if shape == "list":
        return None if isinstance(value, list) else ("", f"must be a list, not {_kind(value)}")
    if shape == "keys":
        if not isinstance(value, list):
            return "", f"must be a list of finding keys, not {_kind(value)}"
        bad = next((n for n, key in enumerate(value) if not _is_text(key)), None)
        return None if bad is None else (f"[{bad}]", f"must be printable text, not {_kind(value[bad])}")
    if not isinstance(value, dict):
        return "", f"must be a mapping, not {_kind(value)}"
    for key, item in value.items():
        if not _is_text(key):
            return "", f"has a key that is not printable text ({key!a:.40})"
        ok = {"claims": lambda v: v in VERDICTS, "acknowledged": _is_text,
              "params": lambda v: v is None or (isinstance(v, int) and not isinstance(v, bool)),
              "config": lambda v: v is None or _is_text(v) or (isinstance(v, (int, float)) and not isinstance(v, bool))
              or isinstance(v, bool)}[shape]
        if not ok(item):
            wanted = {"claims": f"a verdict ({', '.join(VERDICTS)})", "params": "an integer or null",
                      "acknowledged": "the reason, printable text",
                      "config": "a number, text, true, false or null"}[shape]
            return f".{_printed_key(key)}", f"must be {wanted}, not {_kind(item)}"
    return None


def _is_text(value: Any) -> bool:
    return isinstance(value, str) and printable(value, keep_newlines=False) == value


def _printed_key(key: str) -> str:
    return key if len(key) <= 40 else key[:37] + "..."


def _kind(value: Any) -> str:
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, (int, float)):
        return f"the number {value}" if abs(value) < 1e15 else "a number"
    if isinstance(value, str):
        return "text with a control character" if not _is_text(value) else "text"
    return "a mapping" if isinstance(value, dict) else "a list" if isinstance(value, list) else type(value).__name__


@dataclass(frozen=True)
class ClaimChange:
    variant: str | None
    claim: str
    old: str | None          # None: not in the baseline
    new: str | None          # None: no longer checked
    as_expected: bool = True
    open: bool = False       # the new verdict decides nothing for the gate (`CheckResult.is_open`)


@dataclass
class Comparison:
    """What changed between a baseline and a run."""

    model: str
    changed: list[ClaimChange] = field(default_factory=list)     # a decided verdict differs
    left_open: list[ClaimChange] = field(default_factory=list)   # now UNKNOWN, or bounded and not accepted
    decided: list[ClaimChange] = field(default_factory=list)     # recorded UNKNOWN, decided now
    added: list[ClaimChange] = field(default_factory=list)       # claims not in the baseline
    removed: list[ClaimChange] = field(default_factory=list)     # recorded claims no longer checked
    new_findings: list[tuple[str | None, Finding]] = field(default_factory=list)
    gone_findings: list[tuple[str | None, str]] = field(default_factory=list)
    new_variants: list[str | None] = field(default_factory=list)
    config_changes: list[tuple[str, Any, Any]] = field(default_factory=list)   # (option, recorded, now)
    notes: list[str] = field(default_factory=list)
    _claims: dict[tuple[str | None, str], str] = field(default_factory=dict, repr=False)
    _findings: dict[str | None, set[str]] = field(default_factory=dict, repr=False)

    @property
    def exit_code(self) -> int:
        """1 on a change of a decided verdict, of the gate's configuration, or a new finding
        (acknowledged or not: an acknowledgement is configuration), or a new or newly decided
        claim not as expected; 3 where only verdicts were left open; else 0."""
        judged = self.added + self.decided
        if self.changed or self.config_changes or self.new_findings:
            return EXIT_FAILED
        if any(not c.as_expected and c.new != Verdict.UNKNOWN.value and not c.open for c in judged):
            return EXIT_FAILED
        if self.left_open or any(not c.as_expected for c in judged):
            return EXIT_UNKNOWN
        return EXIT_OK

    @property
    def unchanged(self) -> bool:
        return not (self.changed or self.left_open or self.decided or self.added or self.removed
                    or self.new_findings or self.gone_findings or self.config_changes)

    # SARIF baselineState of a result
    def claim_state(self, variant: str | None, r: CheckResult) -> str:
        old = self._claims.get((variant, r.property.id))
        if old is None:
            return "new"
        return "unchanged" if old == r.verdict.value else "updated"

    def finding_state(self, variant: str | None, f: Finding) -> str:
        return "unchanged" if f.key in self._findings.get(variant, set()) else "new"

    def text(self) -> str:
        """The comparison for a terminal or a log: everything the baseline file brought (claim ids,
        verdicts, finding keys) made printable, as model text is (`diagnostics.printable`)."""
        def v(variant: str | None) -> str:
            return f" [variant {variant}]" if variant else ""

        lines = [f"baseline of {self.model}: " + ("no change" if self.unchanged else "changes found")]
        lines += [f"  note: {n}" for n in self.notes]
        lines += [f"  configuration changed: {option}: {_option(old, option)} -> {_option(new, option)}"
                  for option, old, new in self.config_changes]
        lines += [f"  changed: {c.claim}{v(c.variant)}: {c.old} -> {c.new}" for c in self.changed]
        lines += [f"  left open: {c.claim}{v(c.variant)}: {c.old} -> {c.new} (nothing decided this time: not a "
                  "change of the rules)" for c in self.left_open]
        lines += [f"  decided now: {c.claim}{v(c.variant)}: {c.old} -> {c.new}"
                  + ("" if c.as_expected else " (not as expected)") for c in self.decided]
        lines += [f"  new claim: {c.claim}{v(c.variant)}: {c.new}" + ("" if c.as_expected else " (not as expected)")
                  for c in self.added]
        lines += [f"  claim no longer checked: {c.claim}{v(c.variant)} (was {c.old})" for c in self.removed]
        lines += [f"  new finding: {f.key}{v(var)}: {f.message}"
                  + (f" (acknowledged: {f.acknowledged})" if f.acknowledged else "") for var, f in self.new_findings]
        lines += [f"  finding gone: {key}{v(var)}" for var, key in self.gone_findings]
        verdict = {EXIT_OK: "gate passes", EXIT_FAILED: "gate fails (exit 1)",
                   EXIT_UNKNOWN: "undecided (exit 3)"}[self.exit_code]
        lines.append(f"  {verdict}")
        return printable("\n".join(lines)) + "\n"

    def to_json(self) -> dict[str, Any]:
        def claim(c: ClaimChange) -> dict[str, Any]:
            return {"variant": c.variant, "claim": c.claim, "old": c.old, "new": c.new, "as_expected": c.as_expected}

        return {"model": self.model, "exit_code": self.exit_code, "unchanged": self.unchanged,
                "changed": [claim(c) for c in self.changed], "left_open": [claim(c) for c in self.left_open],
                "decided": [claim(c) for c in self.decided], "added": [claim(c) for c in self.added],
                "removed": [claim(c) for c in self.removed],
                "new_findings": [{"variant": var, "key": f.key, "message": f.message,
                                  "acknowledged": f.acknowledged} for var, f in self.new_findings],
                "gone_findings": [{"variant": var, "key": key} for var, key in self.gone_findings],
                "configuration_changed": [{"option": option, "old": old, "new": new}
                                          for option, old, new in self.config_changes],
                "notes": list(self.notes)}


def _option(value: Any, option: str = "") -> str:
    if value is None:
        return "(none)" if option.startswith("acknowledgement") else "(default)"
    return json.dumps(value)


def compare(runs: Sequence[ModelRun], doc: dict[str, Any], config: dict[str, Any] | None = None) -> Comparison:
    """Compare `runs`, checked under the gate options `config`, with the baseline `doc`."""
    model = runs[0].model
    out = Comparison(model.name)
    if doc.get("model") != model.name:
        raise UsageError(Diagnostic(f"the baseline records model '{doc.get('model')}', not '{model.name}'",
                                    hint="give the baseline file of this model"))
    params = dict(model.param_values)
    if doc.get("params", {}) != params:
        out.notes.append(f"the baseline was recorded with parameters {doc.get('params')}, this run uses {params}")
    if config is not None and "config" in doc:
        recorded = doc["config"]
        out.config_changes = [(k, recorded.get(k), config.get(k)) for k in sorted(recorded.keys() | config.keys())
                              if recorded.get(k) != config.get(k)]
    elif config is not None:
        out.notes.append("the baseline records no options (engine, depths, budgets); --update-baseline records them")
    recorded_variants = {e.get("variant"): e for e in doc["variants"]}
    for run in runs:
        variant = run.model.variant
        entry = recorded_variants.get(variant)
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
            change = ClaimChange(variant, cid, old, r.verdict.value, r.as_expected, r.is_open)
            if old is None:
                out.added.append(change)
            elif old == r.verdict.value:
                continue
            elif r.is_open:
                out.left_open.append(change)
            elif old == Verdict.UNKNOWN.value:
                out.decided.append(change)
            else:
                out.changed.append(change)
        out.removed += [ClaimChange(variant, cid, old, None) for cid, old in claims.items() if cid not in seen]
        keys = {f.key for f in run.findings}
        if "acknowledged" in entry:           # recorded since the baselines hold the acknowledgements
            acks = entry["acknowledged"]
            out.config_changes += [(f"acknowledgement of {f.key}{f' [variant {variant}]' if variant else ''}",
                                    acks.get(f.key), f.acknowledged)
                                   for f in run.findings if f.key in findings and acks.get(f.key) != f.acknowledged]
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


def apply(runs: Sequence[ModelRun], path: str, update: bool = False,
          config: dict[str, Any] | None = None) -> Outcome:
    """Compare `runs` with the baseline at `path`; with `update`, (re)write it from `runs`.

    After an update the gate passes (exit 0): the file now records this run. The
    comparison with the previous file (when there was one) is kept for display.
    """
    if not runs:
        raise UsageError(Diagnostic("nothing was checked, so there is no baseline to compare"))
    target = baseline_path(path, runs[0].path)
    if update:
        previous = _replaceable(target)
        comparison = compare(runs, previous, config) \
            if previous is not None and previous.get("model") == runs[0].model.name else None
        write_atomic(target, dumps(record(runs, previous, config)))
        return Outcome(comparison, target, True)
    return Outcome(compare(runs, load(target), config), target, False)


def preflight(path: str, model_path: str, update: bool) -> None:
    """Fail early (exit 2) on a missing or unreadable baseline, before a long check (with
    `update`, one that does not read is replaced, as its error's hint says)."""
    target = baseline_path(path, model_path)
    if not update:
        load(target)


def _replaceable(target: Path) -> dict[str, Any] | None:
    """The baseline --update-baseline rewrites, when it reads as one (its other variants are
    kept); None when there is none or it does not read (it is then replaced whole; a symbolic
    link is replaced by the file, never written through)."""
    if not (target.exists() or target.is_symlink()):
        return None
    try:
        return load(target)
    except UsageError:
        return None
