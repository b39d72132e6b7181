"""`turnproof diff` written out: text for the terminal, Markdown for a pull-request comment, JSON.

The text is a summary unless asked in `full`: one line per changed claim, finding and
behaviour, then the shortest trace of each change once (repeated steps folded, as in every
trace; a trace two changes share is written once). In full it lists every departure (up to
the diff's limit) with the state it reaches and its trace.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from verifier import __version__
from verifier.diffing.changes import ClaimDiff, ModelDiff, OneWay
from verifier.report.escaping import markdown_code, markdown_text
from verifier.report.findings_md import trace_markdown
from verifier.report.json_out import finding_json, trace_json
from verifier.report.junit import trace_text, wrap_items
from verifier.report.trace_view import fmt
from verifier.result import Verdict
from verifier.trace import Trace


def summary_line(d: ModelDiff) -> str:
    """The changes in one line (also the JSON `summary`)."""
    parts = []
    if d.gate_changes:
        parts.append(_n(len(d.gate_changes), "gate setting") + " changed")
    if d.claims_changed:
        parts.append(_n(len(d.claims_changed), "claim verdict") + " changed")
    if d.claims_left_open:
        parts.append(_n(len(d.claims_left_open), "claim") + " left open")
    if d.claims_added or d.claims_removed:
        parts.append(f"{_n(len(d.claims_added), 'claim')} added, {len(d.claims_removed)} removed")
    if d.findings_appeared or d.findings_gone:
        parts.append(f"{_n(len(d.findings_appeared), 'finding')} appeared, "
                     f"{len(d.findings_gone)} disappeared")
    if d.variants_added or d.variants_removed:
        parts.append(f"readings added: {_readings(d.variants_added)}; removed: {_readings(d.variants_removed)}")
    for b in d.behaviours:
        if b.changed:
            parts.append(f"behaviours{_v(b.variant)}: NEW allows {b.new_only.count} states OLD does not, "
                         f"OLD allows {b.old_only.count} states NEW does not")
    if not parts:
        return "nothing changed" + (" (behaviours not fully compared)" if d.incomplete else "")
    return "; ".join(parts)


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}" + ("" if count == 1 else "s")


def _v(variant: str | None) -> str:
    return f" [variant {variant}]" if variant else ""


def _state_text(items: Sequence[tuple[str, Any]]) -> str:
    return ", ".join(f"{k}={fmt(v)}" for k, v in items)


def _claim_trace(c: ClaimDiff) -> tuple[str, Trace] | None:
    """The trace that explains a verdict change: NEW's counterexample or witness, else OLD's."""
    if c.new is not None and c.new.trace is not None:
        return ("NEW " + ("counterexample" if c.new.verdict is Verdict.VIOLATED else "witness"), c.new.trace)
    if c.old is not None and c.old.trace is not None:
        return ("OLD " + ("counterexample" if c.old.verdict is Verdict.VIOLATED else "witness")
                + ", which NEW no longer has", c.old.trace)
    return None


def _grouped(changes: Sequence[ClaimDiff]) -> list[tuple[ClaimDiff, list[str | None]]]:
    """Claim changes that are the same in several variants, once each: (first, variants)."""
    return [(members[0], [c.variant for c in members]) for members in _groups(changes)]


def _groups(changes: Sequence[ClaimDiff]) -> list[list[ClaimDiff]]:
    """Claim changes grouped by (claim, OLD verdict, NEW verdict), in order of appearance."""
    groups: dict[tuple, list[ClaimDiff]] = {}
    for c in changes:
        groups.setdefault((c.claim, c.old_verdict, c.new_verdict), []).append(c)
    return list(groups.values())


def _shortest_claim_trace(members: Sequence[ClaimDiff]) -> tuple[str, Trace, str | None] | None:
    """The shortest trace explaining a group's verdict change: (what it is, trace, its variant)."""
    found = [(why[0], why[1], c.variant) for c in members if (why := _claim_trace(c)) is not None]
    return min(found, key=lambda f: len(f[1])) if found else None


def _variants(variants: Sequence[str | None]) -> str:
    named = [v for v in variants if v]
    if not named:
        return ""
    return f" [variant{'s' if len(named) > 1 else ''} {', '.join(named)}]"


def _wrapped_state(items: Sequence[tuple[str, Any]], indent: str, width: int = 100) -> list[str]:
    return [indent + line for line in wrap_items([f"{k}={fmt(v)}" for k, v in items], width)]


def render_text(d: ModelDiff, full: bool = False) -> str:
    """The terminal's text: the summary (see the module doc), or everything with `full`."""
    return _full_text(d) if full else _summary_text(d)


class _Traces:
    """The traces a summary refers to by number; a trace met twice keeps its first number."""

    def __init__(self) -> None:
        self.numbers: dict[Trace, int] = {}
        self.lines: list[str] = []

    def ref(self, title: str, trace: Trace) -> str:
        if trace not in self.numbers:
            self.numbers[trace] = len(self.numbers) + 1
            self.lines += [f"  [{self.numbers[trace]}] {title} ({_n(len(trace), 'step')}):", trace_text(trace, "      ")]
        return f"trace [{self.numbers[trace]}]"


def _summary_text(d: ModelDiff) -> str:
    traces = _Traces()
    out = [f"turnproof diff {d.old.label} -> {d.new.label}  (model {d.model_new})", f"= {summary_line(d)}"]
    out += [f"note: {n}" for n in d.notes]
    if d.claims_changed:
        out.append("\nclaims that changed verdict:")
        for members in _groups(d.claims_changed):
            c = members[0]
            expected = c.new.property.expected if c.new is not None else None
            line = f"  {c.claim}{_variants([m.variant for m in members])}: {c.old_verdict} -> {c.new_verdict}" \
                   + (f" (expected {expected})" if expected else "")
            shortest = _shortest_claim_trace(members)
            if shortest is not None:
                what, trace, variant = shortest
                title = f"{c.claim}{_v(variant) if len(members) > 1 else ''}: {what}"
                line += f"; {traces.ref(title, trace)}"
            out.append(line)
    out += _one_sided_lines(d)
    if d.behaviours:
        out.append("\nreachable behaviour (states compared on the slots both versions share):")
    for b in d.behaviours:
        out.append(f"  {b.variant or 'the model'}: OLD {b.old_states:,} states, NEW {b.new_states:,}"
                   + ("" if b.changed or not b.complete else "; the same states"))
        if b.only_old_vars or b.only_new_vars:
            out.append(f"    variables only in OLD: {', '.join(b.only_old_vars) or '-'}; "
                       f"only in NEW: {', '.join(b.only_new_vars) or '-'}")
        out += [f"    {n}" for n in b.notes]
        if not b.complete:
            out.append(f"    not compared: exploration incomplete ({b.reason})")
            continue
        for title, side in (("NEW allows", b.new_only), ("OLD allows", b.old_only)):
            if side.count:
                out.append("    " + _side_line(title, side, b.variant, traces))
    if traces.lines:
        out.append("\ntraces (the shortest of each change; --full lists every departure with its trace):")
        out += traces.lines
    return "\n".join(out) + "\n"


def _one_sided_lines(d: ModelDiff) -> list[str]:
    """Claims left open, changed gate settings, and claims, findings and variants present in
    one version only (summary and full alike)."""
    out: list[str] = []
    if d.model_errors:
        out.append("\nmodel errors (the model itself fails in a state a trace reaches; not a budget; exit 2):")
        out += [f"  {error}" for error in d.model_errors]
    if d.claims_left_open:
        out.append("\nclaims left open (a version decided nothing: a budget or a bound, not a change; exit 3):")
        out += [f"  {c.claim}{_variants(vs)}: {c.old_verdict} -> {c.new_verdict}" for c, vs in _grouped(d.claims_left_open)]
    if d.gate_changes:
        out.append("\nwhat the gate counts changed (exit 1):")
        out += [f"  {line}" for line in d.gate_changes]
    if d.claims_added or d.claims_removed:
        out.append("\nclaims only in one version:")
        out += [f"  + {c.claim}{_variants(vs)} (NEW): {c.new_verdict}" for c, vs in _grouped(d.claims_added)]
        out += [f"  - {c.claim}{_variants(vs)} (OLD): {c.old_verdict}" for c, vs in _grouped(d.claims_removed)]
    if d.findings_appeared or d.findings_gone:
        out.append("\nfindings:")
        out += [f"  + {f.key}{_v(v)}: {f.message}" for v, f in d.findings_appeared]
        out += [f"  - {f.key}{_v(v)}: {f.message}" for v, f in d.findings_gone]
    if d.variants_added or d.variants_removed:
        out.append(f"\nreadings only in NEW: {_readings(d.variants_added)}; only in OLD: {_readings(d.variants_removed)}")
    return out


def _readings(names: list[str | None]) -> str:
    """Readings by name, `-` for none; a model that declares no readings has one, unnamed."""
    return ", ".join(name if name is not None else "the one reading of a model without variants"
                     for name in names) or "-"


def _side_line(title: str, side: OneWay, variant: str | None, traces: _Traces) -> str:
    """One side of a behaviour change on one line, its shortest departure's trace referred to."""
    other = "OLD" if title.startswith("NEW") else "NEW"
    line = f"{title} {side.count:,} state{'' if side.count == 1 else 's'} {other} does not " \
           f"({side.departures:,} where it first departs)"
    if not side.listed:
        return line
    s = side.listed[0]
    last = s.trace.steps[-1].label if s.trace.steps else "(initial state)"
    ref = traces.ref(f"{title} a state {other} does not{_v(variant)}: {_state_text(s.state)}", s.trace)
    return f"{line}; the shortest: after {last} (step {len(s.trace)}): {s.why}; {ref}"


def _full_text(d: ModelDiff) -> str:
    out = [f"turnproof diff {d.old.label} -> {d.new.label}  (model {d.model_new})", f"= {summary_line(d)}"]
    out += [f"note: {n}" for n in d.notes]
    if d.claims_changed:
        out.append("\nclaims that changed verdict:")
        for c, variants in _grouped(d.claims_changed):
            expected = c.new.property.expected if c.new is not None else None
            out.append(f"  {c.claim}{_variants(variants)}: {c.old_verdict} -> {c.new_verdict}"
                       + (f" (expected {expected})" if expected else ""))
            if c.statement:
                out.append(f"    says: {c.statement}")
            why = _claim_trace(c)
            if why:
                variant = f" in variant {c.variant}" if len(variants) > 1 else ""
                out += [f"    {why[0]}{variant} ({len(why[1])} steps):", trace_text(why[1], "      ")]
    out += _one_sided_lines(d)
    for b in d.behaviours:
        out.append(f"\nreachable behaviour{_v(b.variant)}: OLD {b.old_states:,} states, NEW {b.new_states:,} states; "
                   f"compared on {len(b.shared)} shared slots")
        if b.only_old_vars or b.only_new_vars:
            out.append(f"  variables only in OLD: {', '.join(b.only_old_vars) or '-'}; "
                       f"only in NEW: {', '.join(b.only_new_vars) or '-'}")
        out += [f"  {n}" for n in b.notes]
        if not b.complete:
            out.append(f"  not compared: exploration incomplete ({b.reason})")
            continue
        for title, side in (("NEW allows", b.new_only), ("OLD allows", b.old_only)):
            other = "OLD" if title.startswith("NEW") else "NEW"
            if not side.count:
                out.append(f"  {title} no state {other} does not.")
                continue
            out.append(f"  {title} {_n(side.count, 'state')} {other} does not; it first departs from {other} in "
                       f"{side.departures}" + (f" ({len(side.listed)} listed)" if len(side.listed) < side.departures
                                               else "") + ":")
            for i, s in enumerate(side.listed, 1):
                last = s.trace.steps[-1].label if s.trace.steps else "(initial state)"
                out.append(f"    {i}. after {last} (step {len(s.trace)}): {s.why}")
                if s.novel:
                    out.append(f"       never in {other}: {_state_text(s.novel)}")
                out.append("       state reached:")
                out += _wrapped_state(s.state, "         ")
                out += [f"       shortest trace ({len(s.trace)} steps):", trace_text(s.trace, "         ")]
    return "\n".join(out) + "\n"


_cell = markdown_text          # model text in Markdown: escaped, one line
_code = markdown_code


def _details(summary: str, trace: Trace) -> list[str]:
    return ["<details>", f"<summary>{summary}</summary>", "", *trace_markdown(trace), "", "</details>", ""]


def render_markdown(d: ModelDiff, full: bool = False) -> str:
    """For a pull-request comment: headline, tables, traces folded in <details> (a claim change's
    shortest); each side of a behaviour change lists its first departure only, unless `full`
    (then up to the diff's limit)."""
    out = [f"## turnproof diff: {_code(d.old.label)} → {_code(d.new.label)}", "",
           f"**{'No change' if not d.changed else 'Changes'}** in model {_code(d.model_new)}: {_cell(summary_line(d))}.",
           ""]
    out += [f"> note: {_cell(n)}" for n in d.notes]
    if d.notes:
        out.append("")
    if d.claims_changed:
        out += ["### Claims that changed verdict", "", "| claim | variants | OLD | NEW | expected | says |",
                "|---|---|---|---|---|---|"]
        groups = _grouped(d.claims_changed)
        for c, variants in groups:
            exp = c.new.property.expected if c.new is not None else None
            out.append(f"| {_code(c.claim)} | {_cell(', '.join(v for v in variants if v))} | {c.old_verdict} | "
                       f"**{c.new_verdict}** | {_cell(exp or '-')} | {_cell(c.statement)} |")
        out.append("")
        for members in _groups(d.claims_changed):
            shortest = _shortest_claim_trace(members)
            if shortest is not None:
                what, trace, variant = shortest
                out += _details(_cell(f"{members[0].claim}{_v(variant)}: {what} ({len(trace)} steps)"), trace)
    if d.model_errors:
        out += ["### Model errors", "", "The model itself fails in a state a trace reaches (not a budget).", ""]
        out += [f"- {_cell(error)}" for error in d.model_errors]
        out.append("")
    if d.claims_left_open:
        out += ["### Claims left open", "", "A version decided nothing (a budget or a bound): not a change.", ""]
        out += [f"- {_code(c.claim, False)}{_cell(_v(c.variant))}: {c.old_verdict} → {c.new_verdict}"
                for c in d.claims_left_open]
        out.append("")
    if d.gate_changes:
        out += ["### What the gate counts", ""]
        out += [f"- {_cell(line)}" for line in d.gate_changes]
        out.append("")
    if d.claims_added or d.claims_removed:
        out += ["### Claims only in one version", ""]
        out += [f"- added {_code(c.claim, False)}{_cell(_v(c.variant))}: {c.new_verdict}" for c in d.claims_added]
        out += [f"- removed {_code(c.claim, False)}{_cell(_v(c.variant))} (was {c.old_verdict})"
                for c in d.claims_removed]
        out.append("")
    if d.findings_appeared or d.findings_gone:
        out += ["### Findings", "", "| | finding | variant | message |", "|---|---|---|---|"]
        out += [f"| new | {_code(f.key)} | {_cell(v or '')} | {_cell(f.message)} |" for v, f in d.findings_appeared]
        out += [f"| gone | {_code(f.key)} | {_cell(v or '')} | {_cell(f.message)} |" for v, f in d.findings_gone]
        out.append("")
    for b in d.behaviours:
        if not b.changed and b.complete:
            continue
        out += [f"### Reachable behaviour{_cell(_v(b.variant))}", "",
                f"OLD reaches {b.old_states:,} states, NEW {b.new_states:,}; compared on {len(b.shared)} shared "
                f"slots.", ""]
        if b.only_old_vars or b.only_new_vars:
            out += [_cell(f"Variables only in OLD: {', '.join(b.only_old_vars) or '-'}; "
                          f"only in NEW: {', '.join(b.only_new_vars) or '-'}."), ""]
        out += [f"- {_cell(n)}" for n in b.notes]
        if not b.complete:
            out += [f"Not compared: exploration incomplete ({_cell(b.reason)}).", ""]
            continue
        for title, side in (("NEW allows", b.new_only), ("OLD allows", b.old_only)):
            other = "OLD" if title.startswith("NEW") else "NEW"
            if not side.count:
                continue
            listed = side.listed if full else side.listed[:1]
            out += [f"**{title} {_n(side.count, 'state')} that {other} does not**; it first departs in "
                    f"{side.departures} (shortest first, {len(listed)} listed):", ""]
            for i, s in enumerate(listed, 1):
                novel = f" ({', '.join(_code(f'{k}={fmt(v)}', False) for k, v in s.novel)} never in {other})" \
                    if s.novel else ""
                last = s.trace.steps[-1].label if s.trace.steps else "(initial state)"
                out.append(f"{i}. after {_code(last, False)} (step {len(s.trace)}): {_cell(s.why)}{novel}")
                out += ["", f"   state reached: {_code(_state_text(s.state), False)}"]
                out += ["", *["   " + line if line else "" for line in
                              _details(f"shortest trace ({len(s.trace)} steps)", s.trace)]]
    return "\n".join(out).rstrip() + "\n"


def diff_json(d: ModelDiff) -> dict[str, Any]:
    """Everything the comparison found (every listed departure, with its trace)."""
    def claim(c: ClaimDiff) -> dict[str, Any]:
        return {"claim": c.claim, "variant": c.variant, "kind": c.kind, "statement": c.statement,
                "old": c.old_verdict, "new": c.new_verdict,
                "expected": c.new.property.expected if c.new is not None else None,
                "old_trace": trace_json(c.old.trace) if c.old is not None else None,
                "new_trace": trace_json(c.new.trace) if c.new is not None else None}

    def one_way(side: OneWay) -> dict[str, Any]:
        return {"count": side.count, "departures": side.departures,
                "listed": [{"state": dict(s.state), "novel": dict(s.novel), "depth": s.depth, "why": s.why,
                            "trace": trace_json(s.trace)} for s in side.listed]}

    return {
        "turnproof": __version__, "old": d.old.label, "new": d.new.label,
        "model": {"old": d.model_old, "new": d.model_new},
        "changed": d.changed, "exit_code": d.exit_code, "summary": summary_line(d), "notes": list(d.notes),
        "gate_changes": list(d.gate_changes), "model_errors": list(d.model_errors),
        "claims": {"changed": [claim(c) for c in d.claims_changed], "left_open": [claim(c) for c in d.claims_left_open],
                   "added": [claim(c) for c in d.claims_added],
                   "removed": [claim(c) for c in d.claims_removed]},
        "findings": {"appeared": [dict(finding_json(f), variant=v) for v, f in d.findings_appeared],
                     "disappeared": [dict(finding_json(f), variant=v) for v, f in d.findings_gone]},
        "variants": {"added": d.variants_added, "removed": d.variants_removed},
        "readings_compared": [{"old": r.old, "new": r.new, "paired_by": r.paired_by} for r in d.readings_compared],
        "behaviours": [{"variant": b.variant, "complete": b.complete, "reason": b.reason,
                        "shared": list(b.shared), "only_old_vars": list(b.only_old_vars),
                        "only_new_vars": list(b.only_new_vars), "old_states": b.old_states,
                        "new_states": b.new_states, "notes": list(b.notes),
                        "new_only": one_way(b.new_only), "old_only": one_way(b.old_only)} for b in d.behaviours],
        "limit": d.limit,
    }
