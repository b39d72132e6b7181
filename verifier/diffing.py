"""`turnproof diff`: what a rule change altered between two versions of a model.

Three comparisons, each per interpretation variant present in both versions:

- **claims**: the verdict of every claim (same id) in OLD and in NEW; claims only
  in one version are listed as added or removed;
- **findings**: rules-consistency findings (by `Finding.key`) that appeared or
  disappeared;
- **behaviours**: the reachable states of both versions, projected on the state
  slots both share (same variable, same element: `hand[1]`, `phase`), compared
  as sets of display values (enum names, booleans, integers), so that a
  renumbered enum or a widened range compares by meaning. For each projected
  state that NEW allows and OLD does not (and the reverse) the shortest trace
  reaching it is known from breadth-first search. Listed first, and limited, are
  the states where a version *first departs* from the other: the state's shortest
  trace reaches it from a state the other version also allows (or it is initial).
  Every other new state lies beyond one of those; the counts give them all.
  Values a slot never takes in the other version are pointed out ("novel").

A version is a file or `git:REV:path` (the file at a git revision; its default
property file `properties/<stem>.yaml` is read from the same revision).
Behaviours need a complete exploration of both versions: when a budget stops
either one, the behaviour comparison is reported incomplete (exit 3 when
nothing else changed).
"""
from __future__ import annotations

import re
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath
from typing import Any

from verifier import __version__
from verifier.diagnostics import Diagnostic, UsageError
from verifier.report.escaping import file_stem, markdown_code, markdown_text
from verifier.result import CheckResult, Finding, ModelRun, Verdict
from verifier.runner import RunOptions, check_model
from verifier.trace import Trace

EXIT_SAME, EXIT_CHANGED, EXIT_INCOMPLETE = 0, 1, 3


# ---------------------------------------------------------------- versions: files and git revisions

@dataclass(frozen=True)
class Version:
    spec: str            # as given on the command line
    path: str            # a file to load (a temporary copy for git:REV:path)

    @property
    def label(self) -> str:
        return self.spec


def _git(args: list[str], what: str) -> bytes:
    try:
        done = subprocess.run(["git", *args], capture_output=True, check=False)
    except OSError as err:
        raise UsageError(Diagnostic(f"cannot run git for {what}: {err}", hint="install git or give a file")) from None
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise UsageError(Diagnostic(f"{what}: {message[-1] if message else 'git failed'}",
                                    hint="write git:REV:path with a path from the repository root, "
                                         "e.g. git:origin/main:models/wtactics.yaml"))
    return done.stdout


GIT_REV = re.compile(r"[A-Za-z0-9_@][A-Za-z0-9_./~^@{}+-]*")

def resolve(spec: str, workdir: Path) -> Version:
    """A model version: a plain file, or `git:REV:path` copied (with its default property
    file from the same revision) under `workdir`."""
    if not spec.startswith("git:"):
        if not Path(spec).is_file():
            raise UsageError(Diagnostic(f"{spec}: no such model file",
                                        hint="give a model file or git:REV:path"))
        return Version(spec, spec)
    rev, sep, path = spec[4:].partition(":")
    if not sep or not rev or not path:
        raise UsageError(Diagnostic(f"'{spec}' is not git:REV:path", hint="e.g. git:HEAD~1:models/wtactics.yaml"))
    if not GIT_REV.fullmatch(rev):                 # never an option to git (git:--output=...)
        raise UsageError(Diagnostic(f"'{rev}' is not a git revision", hint="a branch, tag or commit, e.g. "
                                    "HEAD~1 or origin/main (it cannot start with '-')"))
    if path.startswith(("./", "../")):
        prefix = _git(["rev-parse", "--show-prefix"], spec).decode().strip()
        repo_path = PurePosixPath(*(PurePosixPath(prefix + path).parts))
        parts: list[str] = []
        for part in repo_path.parts:
            if part == "..":
                parts = parts[:-1]
            elif part != ".":
                parts.append(part)
        repo_path = PurePosixPath(*parts)
    else:
        repo_path = PurePosixPath(path)
    text = _git(["show", f"{rev}:{repo_path}"], spec)
    safe_rev = file_stem(rev)
    root = workdir / safe_rev
    target = root / repo_path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(text)
    props = repo_path.parent.parent / "properties" / f"{repo_path.stem}.yaml"
    try:
        props_text = _git(["show", f"{rev}:{props}"], spec)
    except UsageError:
        props_text = None
    if props_text is not None:
        (root / props).parent.mkdir(parents=True, exist_ok=True)
        (root / props).write_bytes(props_text)
    return Version(spec, str(target))


# ---------------------------------------------------------------- results

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
    claims_changed: list[ClaimDiff] = field(default_factory=list)
    claims_added: list[ClaimDiff] = field(default_factory=list)
    claims_removed: list[ClaimDiff] = field(default_factory=list)
    findings_appeared: list[tuple[str | None, Finding]] = field(default_factory=list)
    findings_gone: list[tuple[str | None, Finding]] = field(default_factory=list)
    variants_added: list[str | None] = field(default_factory=list)
    variants_removed: list[str | None] = field(default_factory=list)
    behaviours: list[BehaviourDiff] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    limit: int = 10

    @property
    def changed(self) -> bool:
        return bool(self.claims_changed or self.claims_added or self.claims_removed or self.findings_appeared
                    or self.findings_gone or self.variants_added or self.variants_removed
                    or any(b.changed for b in self.behaviours))

    @property
    def incomplete(self) -> bool:
        return any(not b.complete for b in self.behaviours)

    @property
    def exit_code(self) -> int:
        if self.changed:
            return EXIT_CHANGED
        return EXIT_INCOMPLETE if self.incomplete else EXIT_SAME

    def summary(self) -> str:
        parts = []
        if self.claims_changed:
            parts.append(_n(len(self.claims_changed), "claim verdict") + " changed")
        if self.claims_added or self.claims_removed:
            parts.append(f"{_n(len(self.claims_added), 'claim')} added, {len(self.claims_removed)} removed")
        if self.findings_appeared or self.findings_gone:
            parts.append(f"{_n(len(self.findings_appeared), 'finding')} appeared, "
                         f"{len(self.findings_gone)} disappeared")
        if self.variants_added or self.variants_removed:
            parts.append(f"variants added {self.variants_added or '-'}, removed {self.variants_removed or '-'}")
        for b in self.behaviours:
            if b.changed:
                parts.append(f"behaviours{_v(b.variant)}: NEW allows {b.new_only.count} states OLD does not, "
                             f"OLD allows {b.old_only.count} states NEW does not")
        if not parts:
            return "nothing changed" + (" (behaviours not fully compared)" if self.incomplete else "")
        return "; ".join(parts)


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}" + ("" if count == 1 else "s")


def _v(variant: str | None) -> str:
    return f" [variant {variant}]" if variant else ""


# ---------------------------------------------------------------- comparing

def compare_checks(old_runs: Sequence[ModelRun], new_runs: Sequence[ModelRun], diff: ModelDiff) -> None:
    """Fill in the claim, finding and variant differences of two checks."""
    old_by = {r.model.variant: r for r in old_runs}
    new_by = {r.model.variant: r for r in new_runs}
    diff.variants_removed = [v for v in old_by if v not in new_by]
    diff.variants_added = [v for v in new_by if v not in old_by]
    for variant in [v for v in new_by if v in old_by]:
        old, new = old_by[variant], new_by[variant]
        old_results = {r.property.id: r for r in old.results}
        new_results = {r.property.id: r for r in new.results}
        for cid, n in new_results.items():
            o = old_results.get(cid)
            item = ClaimDiff(variant, cid, n.property.kind, n.property.statement, o, n)
            if o is None:
                diff.claims_added.append(item)
            elif o.verdict is not n.verdict:
                diff.claims_changed.append(item)
        diff.claims_removed += [ClaimDiff(variant, cid, o.property.kind, o.property.statement, o, None)
                                for cid, o in old_results.items() if cid not in new_results]
        old_keys = {f.key for f in old.findings}
        new_keys = {f.key for f in new.findings}
        diff.findings_appeared += [(variant, f) for f in new.findings if f.key not in old_keys]
        diff.findings_gone += [(variant, f) for f in old.findings if f.key not in new_keys]


def _instantiated(model):
    if not model.is_concrete:
        free = ", ".join(k for k, v in model.param_values if v is None)
        raise UsageError(Diagnostic(f"diff compares reachable states, which needs every parameter fixed "
                                    f"({free} is free)",
                                    hint="give --param NAME=VALUE"))
    return model.instantiate()


class _Projection:
    """Display values of the shared slots of one explored state space."""

    def __init__(self, space, names: Sequence[str]):
        lay = space.lay
        where = {s.name: i for i, s in enumerate(lay.slots)}
        self.space = space
        self.idx = [where[n] for n in names]
        self.tables = []
        for i in self.idx:
            slot = lay.slots[i]
            self.tables.append((slot.lo, [lay.display(slot, v) for v in range(slot.lo, slot.hi + 1)]))
        self.first: dict[tuple, int] = {}
        for k, state in enumerate(space.states):       # BFS order: the first occurrence is the shallowest
            p = self(state)
            if p not in self.first:
                self.first[p] = k
        self.values: list[set[Any]] = [set() for _ in names]
        for p in self.first:
            for j, value in enumerate(p):
                self.values[j].add(value)

    def __call__(self, state) -> tuple:
        return tuple(table[state[i] - lo] for i, (lo, table) in zip(self.idx, self.tables))


def _one_way(mine: _Projection, other: _Projection, names: Sequence[str], limit: int,
             me: str, them: str) -> OneWay:
    space = mine.space
    only = [p for p in mine.first if p not in other.first]
    only.sort(key=lambda p: (space.depth[mine.first[p]], mine.first[p]))
    departures = []
    for p in only:
        i = mine.first[p]
        parent = space.parent[i]
        if parent == -1 or mine(space.states[parent]) in other.first:
            departures.append(p)
    listed = []
    for p in departures[:limit]:
        i = mine.first[p]
        novel = tuple((n, value) for j, (n, value) in enumerate(zip(names, p)) if value not in other.values[j])
        trace = space.trace_to(i)
        listed.append(NewState(tuple(zip(names, p)), novel, space.depth[i], trace,
                               _why(mine, other, i, p, names, trace, me, them)))
    return OneWay(len(only), len(departures), tuple(listed))


def _why(mine: _Projection, other: _Projection, i: int, p: tuple, names: Sequence[str], trace: Trace,
         me: str, them: str) -> str:
    """Why `them` does not reach the departure state `i` of `me`: the last step, taken in a state
    both versions allow, is not allowed there in `them`, or leads elsewhere."""
    from verifier.semantics import successors

    parent = mine.space.parent[i]
    if parent == -1:
        return f"an initial state {them} does not have"
    step = trace.steps[-1]
    j = other.first[mine(mine.space.states[parent])]
    moves = successors(other.space.lay, other.space.states[j])
    labels = sorted({_label(t.action.name, t.choice) for t in moves})
    same = [t for t in moves if t.action.name == step.action and tuple(t.choice) == tuple(step.choice)]
    if not same:
        allowed = f"{them} allows only {', '.join(labels)}" if labels else f"{them} has no move there"
        return f"{them} does not allow {step.label} in the state before it ({allowed})"
    diffs = []
    for t in same[:1]:
        q = other(t.target)
        diffs = [f"{n}={_fmt(b)} instead of {_fmt(a)}" for n, a, b in zip(names, p, q) if a != b]
    return f"in {them}, {step.label} from the state before it leads to " + ", ".join(diffs)


def _label(action: str, choice) -> str:
    return action if not choice else f"{action}({', '.join(f'{k}={v}' for k, v in choice)})"


def compare_behaviours(old_model, new_model, options: RunOptions, limit: int = 10) -> BehaviourDiff:
    """Reachable states of two versions (one variant), projected on the slots both share."""
    from verifier.engines.explicit import explore
    from verifier.semantics import layout

    old_m, new_m = _instantiated(old_model), _instantiated(new_model)
    old_slots = [s.name for s in layout(old_m).slots]
    new_slot_set = {s.name for s in layout(new_m).slots}
    shared = tuple(n for n in old_slots if n in new_slot_set)
    old_vars = {v.name: v for v in old_m.variables}
    new_vars = {v.name: v for v in new_m.variables}
    notes = []
    for name in old_vars.keys() & new_vars.keys():
        a, b = old_vars[name], new_vars[name]
        if str(a.type) != str(b.type) or a.size() != b.size():
            notes.append(f"variable {name} changed type: {a.type}{_size(a)} -> {b.type}{_size(b)}")
    base = BehaviourDiff(new_model.variant, shared,
                         tuple(sorted(old_vars.keys() - new_vars.keys())),
                         tuple(sorted(new_vars.keys() - old_vars.keys())), notes=tuple(sorted(notes)))
    old_space = explore(old_m, options.budget)
    new_space = explore(new_m, options.budget)
    base = replace(base, old_states=len(old_space.states), new_states=len(new_space.states))
    reasons = [f"{which}: {s.reason}" for which, s in (("OLD", old_space), ("NEW", new_space)) if not s.complete]
    if reasons:
        return replace(base, complete=False, reason="; ".join(reasons))
    old_p, new_p = _Projection(old_space, shared), _Projection(new_space, shared)
    return replace(base, new_only=_one_way(new_p, old_p, shared, limit, "NEW", "OLD"),
                   old_only=_one_way(old_p, new_p, shared, limit, "OLD", "NEW"))


def _size(v) -> str:
    return f" (per {v.index}, {v.size()} elements)" if v.index is not None else ""


def diff_versions(old_spec: str, new_spec: str, options: RunOptions = RunOptions(), limit: int = 10,
                  behaviours: bool = True, progress=None) -> ModelDiff:
    """Check both versions and compare them (see the module doc)."""
    with tempfile.TemporaryDirectory(prefix="turnproof-diff-") as tmp:
        old, new = resolve(old_spec, Path(tmp)), resolve(new_spec, Path(tmp))
        old_runs = check_model(old.path, options, progress)
        new_runs = check_model(new.path, options, progress)
        diff = ModelDiff(old, new, old_runs[0].model.name, new_runs[0].model.name, limit=limit)
        if diff.model_old != diff.model_new:
            diff.notes.append(f"the model is named {diff.model_old} in OLD and {diff.model_new} in NEW")
        old_params, new_params = dict(old_runs[0].model.param_values), dict(new_runs[0].model.param_values)
        if old_params != new_params:
            diff.notes.append(f"parameters differ: OLD {old_params}, NEW {new_params}")
        compare_checks(old_runs, new_runs, diff)
        if behaviours:
            old_models = {r.model.variant: r.model for r in old_runs}
            for run in new_runs:
                if run.model.variant in old_models:
                    diff.behaviours.append(compare_behaviours(old_models[run.model.variant], run.model,
                                                              options, limit))
    return diff


# ---------------------------------------------------------------- rendering

def _fmt(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def _state_text(items: Sequence[tuple[str, Any]]) -> str:
    return ", ".join(f"{k}={_fmt(v)}" for k, v in items)


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
    groups: dict[tuple, tuple[ClaimDiff, list[str | None]]] = {}
    for c in changes:
        key = (c.claim, c.old_verdict, c.new_verdict)
        if key in groups:
            groups[key][1].append(c.variant)
        else:
            groups[key] = (c, [c.variant])
    return list(groups.values())


def _variants(variants: Sequence[str | None]) -> str:
    named = [v for v in variants if v]
    if not named:
        return ""
    return f" [variant{'s' if len(named) > 1 else ''} {', '.join(named)}]"


def _wrapped_state(items: Sequence[tuple[str, Any]], indent: str, width: int = 100) -> list[str]:
    from verifier.report.junit import wrap_items
    return [indent + line for line in wrap_items([f"{k}={_fmt(v)}" for k, v in items], width)]


def render_text(d: ModelDiff) -> str:
    from verifier.report.junit import trace_text

    out = [f"turnproof diff {d.old.label} -> {d.new.label}  (model {d.model_new})", f"= {d.summary()}"]
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
    if d.claims_added or d.claims_removed:
        out.append("\nclaims only in one version:")
        out += [f"  + {c.claim}{_variants(vs)} (NEW): {c.new_verdict}" for c, vs in _grouped(d.claims_added)]
        out += [f"  - {c.claim}{_variants(vs)} (OLD): {c.old_verdict}" for c, vs in _grouped(d.claims_removed)]
    if d.findings_appeared or d.findings_gone:
        out.append("\nfindings:")
        out += [f"  + {f.key}{_v(v)}: {f.message}" for v, f in d.findings_appeared]
        out += [f"  - {f.key}{_v(v)}: {f.message}" for v, f in d.findings_gone]
    if d.variants_added or d.variants_removed:
        out.append(f"\nvariants only in NEW: {d.variants_added or '-'}; only in OLD: {d.variants_removed or '-'}")
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


def _md_trace(trace: Trace) -> list[str]:
    lines = ["| # | action | player | rule | changes |", "|---|---|---|---|---|",
             f"| 0 | (initial state) | | | {_cell(_state_text(trace.initial))} |"]
    for i, step in enumerate(trace.steps, 1):
        loop = "↻ " if trace.loop_start is not None and i - 1 == trace.loop_start else ""
        changes = ", ".join(f"{k}: {_fmt(a)}→{_fmt(b)}" for k, (a, b) in step.changes)
        lines.append(f"| {i} | {loop}{_cell(step.label)} | {'' if step.player is None else step.player} | "
                     f"{_cell(step.rule)} | {_cell(changes)} |")
    return lines


def _details(summary: str, trace: Trace) -> list[str]:
    return ["<details>", f"<summary>{summary}</summary>", "", *_md_trace(trace), "", "</details>", ""]


def render_markdown(d: ModelDiff) -> str:
    """For a pull-request comment: headline, tables, traces folded in <details>."""
    out = [f"## turnproof diff: {_code(d.old.label)} → {_code(d.new.label)}", "",
           f"**{'No change' if not d.changed else 'Changes'}** in model {_code(d.model_new)}: {_cell(d.summary())}.",
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
        for c, _ in groups:
            why = _claim_trace(c)
            if why:
                out += _details(_cell(f"{c.claim}{_v(c.variant)}: {why[0]} ({len(why[1])} steps)"), why[1])
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
            out += [f"**{title} {_n(side.count, 'state')} that {other} does not**; it first departs in "
                    f"{side.departures} (shortest first, {len(side.listed)} listed):", ""]
            for i, s in enumerate(side.listed, 1):
                novel = f" ({', '.join(_code(f'{k}={_fmt(v)}', False) for k, v in s.novel)} never in {other})" \
                    if s.novel else ""
                last = s.trace.steps[-1].label if s.trace.steps else "(initial state)"
                out.append(f"{i}. after {_code(last, False)} (step {len(s.trace)}): {_cell(s.why)}{novel}")
                out += ["", f"   state reached: {_code(_state_text(s.state), False)}"]
                out += ["", *["   " + line if line else "" for line in
                              _details(f"shortest trace ({len(s.trace)} steps)", s.trace)]]
    return "\n".join(out).rstrip() + "\n"


def to_json(d: ModelDiff) -> dict[str, Any]:
    from verifier.report.json_out import finding_json, trace_json

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
        "changed": d.changed, "exit_code": d.exit_code, "summary": d.summary(), "notes": list(d.notes),
        "claims": {"changed": [claim(c) for c in d.claims_changed], "added": [claim(c) for c in d.claims_added],
                   "removed": [claim(c) for c in d.claims_removed]},
        "findings": {"appeared": [dict(finding_json(f), variant=v) for v, f in d.findings_appeared],
                     "disappeared": [dict(finding_json(f), variant=v) for v, f in d.findings_gone]},
        "variants": {"added": d.variants_added, "removed": d.variants_removed},
        "behaviours": [{"variant": b.variant, "complete": b.complete, "reason": b.reason,
                        "shared": list(b.shared), "only_old_vars": list(b.only_old_vars),
                        "only_new_vars": list(b.only_new_vars), "old_states": b.old_states,
                        "new_states": b.new_states, "notes": list(b.notes),
                        "new_only": one_way(b.new_only), "old_only": one_way(b.old_only)} for b in d.behaviours],
        "limit": d.limit,
    }
