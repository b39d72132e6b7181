"""The JSON document of a check (the stable machine format; other formats extend it)."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from verifier import __version__
from verifier.diagnostics import Diagnostic
from verifier.report.bounds import bound_traces
from verifier.result import CheckResult, Finding, ModelRun
from verifier.trace import Trace


def trace_json(trace: Trace | None) -> dict[str, Any] | None:
    return None if trace is None else trace.to_json()


def result_json(r: CheckResult) -> dict[str, Any]:
    return {
        "id": r.property.id, "kind": r.property.kind, "statement": r.property.statement,
        "rule": r.property.rule, "verdict": r.verdict.value, "expected": r.property.expected,
        "as_expected": r.as_expected, "engine": r.engine, "depth": r.depth,
        "stats": {"states": r.stats.states, "transitions": r.stats.transitions,
                  "seconds": round(r.stats.seconds, 4)},
        "reason": r.reason, "model_error": r.model_error, "variant": r.variant, "params": dict(r.params),
        "stop": None if r.stop is None else {"kind": r.stop.kind.value, "owner": r.stop.owner, "words": r.stop.words},
        "scale": r.scale, "reductions": list(r.reductions),
        "evidence": {k: v for k, v in r.evidence.items() if _plain(v)},
        "trace": trace_json(r.trace),
    }


def finding_json(f: Finding) -> dict[str, Any]:
    return {
        "kind": f.kind, "subject": f.subject, "message": f.message, "rules": list(f.rules),
        "engine": f.engine, "scope": f.scope, "acknowledged": f.acknowledged, "variant": f.variant,
        "evidence": {k: v for k, v in f.evidence.items() if _plain(v)},
        "traces": [trace_json(t) for t in f.traces],
        "line": f.span.line if f.span else None,
    }


def _plain(value: Any) -> bool:
    return isinstance(value, (str, int, float, bool, type(None), list, dict, tuple))


def runs_json(runs: Sequence[ModelRun]) -> dict[str, Any]:
    """One model's runs (one per variant) as one document (its traces bounded: `bounds`)."""
    bounded = bound_traces(runs)
    runs = bounded.runs
    model = runs[0].model
    return {
        "turnproof": __version__,
        "model": {"name": model.name, "path": runs[0].path,
                  "variant": model.variant if len(runs) == 1 else None,
                  "variants": [r.model.variant for r in runs if r.model.variant is not None],
                  "params": dict(model.param_values),
                  "printed": None if model.printed is None else dict(model.printed)},
        "properties": runs[0].properties_path,
        "results": [result_json(r) for run in runs for r in run.results],
        "findings": [finding_json(f) for run in runs for f in run.findings],
        "analyses": [{"variant": r.model.variant, "complete": not r.analyses_unknown,
                      "reason": r.analyses_unknown, "beyond_explored": r.analyses_beyond} for r in runs],
        "vacuous": [{"claim": v.claim, "part": v.part, "text": v.text, "rule": v.rule, "message": v.message,
                     "variant": run.model.variant} for run in runs for v in run.vacuous],
        "warnings": [warning_json(w) for w in model_warnings(runs)],
        "as_expected": all(r.as_expected for r in runs),
        "traces_omitted": {"count": bounded.omitted, "message": bounded.note},
        "seconds": round(sum(r.seconds for r in runs), 4),
    }


def model_warnings(runs: Sequence[ModelRun]) -> list[Diagnostic]:
    """What loading the model warned of, each warning once across the readings."""
    out: list[Diagnostic] = []
    for run in runs:
        out += [w for w in run.warnings if w not in out]
    return out


def warning_json(w: Diagnostic) -> dict[str, Any]:
    span = w.span
    return {"message": w.message, "hint": w.hint, "file": span.file if span else None,
            "line": span.line if span else None, "col": span.col if span else None}
