"""The content of the report pages: one page per game and an index, as `doc.Document`s.

`build_game` gathers what a page shows (the runs of a model, its phase diagram,
its explored state graph, every trace with its diagram); `game_document` and
`index_document` lay it out. Markdown and HTML are renderings of the same
documents (`markdown.py`, `html.py`); `site.py` writes them to a folder.
"""
from __future__ import annotations

import hashlib
import re
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import Any

from verifier import __version__
from verifier.files import file_stem
from verifier.ir.expr import Const, pretty
from verifier.ir.model import Action, EnumType, IntType, Model
from verifier.report import diagrams, explain, fixlist, playouts, trace_view
from verifier.report.bounds import bound_traces
from verifier.report.doc import (
    Bullets,
    Defs,
    Document,
    Figure,
    Heading,
    Inline,
    Note,
    Para,
    Pre,
    Span,
    Table,
    b,
    bad,
    code,
    link,
    muted,
    ok,
    verdict,
)
from verifier.report.links import claim_page, slugify
from verifier.report.phase_actions import MODALITY_WORDS, action_words
from verifier.report.playouts import PlayoutView
from verifier.report.plots import Plot
from verifier.result import SCALE_WORDS, CheckResult, Finding, ModelRun, Verdict
from verifier.stategraph import StateGraph
from verifier.trace import Trace

VERDICT_ORDER = [v.value for v in Verdict]


@dataclass
class Diagram:
    """A diagram of a page: DOT text, rendered to SVG on first use."""

    stem: str          # file name without extension: <stem>.dot, <stem>.svg
    title: str
    dot: str
    alt: str = ""

    @cached_property
    def svg(self) -> str:
        return diagrams.render_svg(self.dot)


@dataclass
class TraceView:
    """A trace with its diagram: a claim's on the claim's page, a finding's on a page of its own,
    beside the game's page."""

    anchor: str        # its heading's anchor on `page`
    title: str
    trace: Trace
    diagram: Diagram | None
    page: str          # the page that shows it, without extension: its claim's page, or its own
    same_as: TraceView | None = None     # an identical trace shown earlier: shown there, not again
    back: str = ""     # a trace on a page of its own: the anchor of its finding on the game's page
    reads: tuple[str, ...] = ()          # a step claim's variables: those its last step left unchanged are shown

    @property
    def shown(self) -> TraceView:
        """The view whose page shows the trace (itself, or the earlier identical one)."""
        return self.same_as or self


@dataclass
class StateGraphView:
    diagram: Diagram
    kind: str                  # whole | phase | depth
    states: int
    transitions: int
    complete: bool
    reason: str
    variant: str | None
    params: tuple[tuple[str, int | None], ...]


@dataclass
class GamePage:
    slug: str
    runs: list[ModelRun]
    phase_diagram: Diagram
    state_graph: StateGraphView | None = None
    state_graph_note: str = ""
    traces_note: str = ""                                      # the traces the page's bound left out (`bounds`)
    claim_traces: dict[tuple[str, str | None], TraceView] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)
    finding_traces: dict[tuple[int, int], TraceView] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)     # path -> sha256
    playouts: PlayoutView | None = None                        # random playouts' statistics and plots

    @property
    def model(self) -> Model:
        return self.runs[0].model

    @property
    def results(self) -> list[CheckResult]:
        return [r for run in self.runs for r in run.results]

    def diagrams(self) -> list[Diagram | Plot]:
        out: list[Diagram | Plot] = [self.phase_diagram]
        if self.state_graph is not None:
            out.append(self.state_graph.diagram)
        views = list(self.claim_traces.values()) + list(self.finding_traces.values())
        out += [t.diagram for t in views if t.diagram is not None and t.same_as is None]
        return out + (list(self.playouts.plots) if self.playouts is not None else [])

    def trace_pages(self) -> list[TraceView]:
        """The traces with a page of their own: the findings' (an identical trace shown earlier has none)."""
        return [t for t in self.finding_traces.values() if t.same_as is None]

    def claim_ids(self) -> list[str]:
        """The claims, each with a page of its own (`claim_page`)."""
        return claim_ids(self.results)


def file_digest(path: str | None) -> str | None:
    if not path or not Path(path).is_file():
        return None
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def build_game(runs: Sequence[ModelRun], slug: str | None = None, state_graph: StateGraph | str | None = None,
               graph_limit: int = diagrams.WHOLE_GRAPH_LIMIT) -> GamePage:
    """Everything one game's page shows. `runs` are one model's runs (one per variant);
    `state_graph` is the first reading's explored graph (`stategraph.game_graph`), or why
    there is none; None leaves the graph off the page. The page, its diagrams and its traces'
    pages are files of the game's own folder (`slug`), so their names are short. Its traces are
    bounded (`bounds`)."""
    bounded = bound_traces(runs)
    runs = bounded.runs
    model = runs[0].model
    slug = slug or slugify(model.name)
    page = GamePage(slug, runs, Diagram("phases", f"Turn structure of {model.name}", diagrams.phase_dot(
        model, name=f"{model.name} phases"), alt=f"Phase diagram of {model.name}"), traces_note=bounded.note)
    for path in dict.fromkeys([runs[0].path, runs[0].properties_path]):
        digest = file_digest(path)
        if path and digest:
            page.sources[path] = digest
    if isinstance(state_graph, str):
        page.state_graph_note = state_graph
    elif state_graph is not None:
        page.state_graph = _state_graph(state_graph, graph_limit)
    shown: dict[str, TraceView] = {}

    def view(anchor: str, title: str, trace: Trace, variant: str | None, stem: str, where: str,
             back: str = "") -> TraceView:
        """A trace's view; one already shown (same start, same moves) is referred to, not redrawn."""
        key = repr((trace.initial, trace.steps, trace.loop_start))
        if key in shown:
            return TraceView(anchor, title, trace, None, where, same_as=shown[key], back=back)
        shown[key] = TraceView(anchor, title, trace, _trace_diagram(_run_model(runs, variant), trace, stem, title),
                               where, back=back)
        return shown[key]

    claim_order = {cid: k for k, cid in enumerate(claim_ids(page.results))}
    for r in sorted(page.results, key=lambda r: claim_order[r.property.id]):   # the order the page shows them
        if r.trace is not None:
            anchor = f"trace-{r.property.id}" + (f"-{r.variant}" if r.variant else "")
            title = f"Trace for claim {r.property.id}" + (f" (reading {r.variant})" if r.variant else "")
            stem = f"trace.{file_stem(r.property.id)}" + (f".{file_stem(r.variant)}" if r.variant else "")
            page.claim_traces[(r.property.id, r.variant)] = replace(
                view(anchor, title, r.trace, r.variant, stem, claim_page(r.property.id)), reads=trace_view.step_reads(r.property))
    page.findings = sorted({id(f): f for run in runs for f in run.findings}.values(),
                           key=lambda f: (f.acknowledged is not None, f.kind, f.subject, f.variant or ""))
    for n, f in enumerate(page.findings, 1):
        for k, t in enumerate(f.traces, 1):
            stem = f"finding{n}" + (f".{k}" if len(f.traces) > 1 else "")
            title = f"Trace for finding {n} ({f.kind} {f.subject})" + (f", {k} of {len(f.traces)}" if len(f.traces) > 1 else "")
            page.finding_traces[(n, k)] = view(f"finding-{n}-trace-{k}", title, t, f.variant, stem, stem,
                                               f"finding-{n}")
    return page


def _run_model(runs: Sequence[ModelRun], variant: str | None) -> Model:
    for run in runs:
        if run.model.variant == variant:
            return run.model
    return runs[0].model


def _trace_diagram(model: Model, trace: Trace, stem: str, title: str) -> Diagram | None:
    if not model.phases:
        return None
    return Diagram(stem, title, diagrams.phase_dot(model, trace, name=title),
                   alt=f"{title}, drawn on the phase diagram")


def _state_graph(sg: StateGraph, limit: int) -> StateGraphView:
    model = sg.model
    kind = diagrams.state_graph_kind(sg, limit)
    dot = diagrams.state_dot(sg, limit, name=f"{model.name} states")
    title = {"boxes": "Every reachable state", "whole": "Every reachable state", "phase": "Reachable states grouped by phase",
             "depth": "Reachable states grouped by depth"}[kind]
    view = StateGraphView(Diagram("states", title, dot, alt=f"State graph of {model.name}: {title.lower()}"),
                          kind, sg.states, sg.transitions, sg.complete, sg.reason, model.variant,
                          sg.model.param_values)
    return view


# ---------------------------------------------------------------- shared pieces

def _n(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def _params_text(params: Sequence[tuple[str, int | None]]) -> str:
    return ", ".join(f"{k}={'any' if v is None else v}" for k, v in params) or "none"


def _fmt(v: Any) -> str:
    return str(v).lower() if isinstance(v, bool) else str(v)


def verdict_counts(results: Sequence[CheckResult]) -> dict[str, int]:
    counts = dict.fromkeys(VERDICT_ORDER, 0)
    for r in results:
        counts[r.verdict.value] += 1
    return counts


def counts_text(counts: dict[str, int]) -> str:
    return ", ".join(f"{n} {v}" for v, n in counts.items() if n) or "no claims"


def claim_ids(results: Sequence[CheckResult]) -> list[str]:
    return list(dict.fromkeys(r.property.id for r in results))


def trace_table(trace: Trace, reads: Sequence[str] = ()) -> Table:
    """One row per step, or per run of repeated steps ("times n"); a rule's text at its first step only
    (`report.trace_view`). `reads`: a step claim's variables; the last row also gives those its move
    left unchanged, so that the value that broke the claim is on it."""
    rows: list[list[Inline]] = []
    anchors: list[str | None] = []
    for row in trace_view.rows(trace):
        move: list = []
        if row.loop_start:
            move += [bad("↻ loop starts:"), " "]
        move.append(code(row.move))
        rows.append([row.steps, move, "" if row.player is None else str(row.player), row.rule or "—",
                     row.changes_text(" → ") or "nothing"])
        anchors.append(None)
    kept = trace_view.unchanged_read(trace, reads)
    if rows and kept:
        rows[-1][-1] = f"{rows[-1][-1]}; unchanged: {kept}"
    return Table(["step", "move", "player", "rule it follows", "what changed"], rows, anchors, cls="trace")


def trace_link(view: TraceView) -> Para:
    """Where a game's page mentions a trace shown on another page."""
    t = view.trace
    shown = view.shown
    loop = "; the last steps repeat forever" if t.loop_start is not None else ""
    if view.same_as is not None:
        return Para([b(view.title), " — the same moves as the ",
                     link(shown.title.lower(), page=shown.page, anchor=shown.anchor), f" ({len(t)} steps{loop})."])
    what = f"{len(t)} steps" + (", drawn on the phase diagram" if shown.diagram is not None else "")
    return Para([b(view.title), " — ", link(what, page=shown.page), f"{loop}."])


def trace_document(page: GamePage, view: TraceView) -> Document:
    """A finding's trace on a page of its own, beside its game's page."""
    model = page.model
    doc = Document(f"{view.title} — {model.name}", page.slug, meta={"generator": f"turnproof {__version__}"})
    doc.add(Para([link(f"← {model.name}", page="index", anchor=view.back or None), " · ",
                  link("all games", page="../index")]))
    doc.blocks += trace_blocks(view, 1)
    return doc


def claim_document(page: GamePage, cid: str, timings: bool = True) -> Document:
    """A claim's page, beside its game's page: its verdict in each reading, how each was
    checked, and its traces."""
    model = page.model
    doc = Document(f"Claim {cid} — {model.name}", page.slug, meta={"generator": f"turnproof {__version__}"})
    doc.add(Para([link(f"← {model.name}", page="index", anchor="claims"), " · ", link("all games", page="../index")]))
    doc.blocks += _claim_blocks(page, cid, timings)
    doc.blocks += _legend_blocks(2)
    return doc


def trace_blocks(view: TraceView, level: int) -> list:
    t = view.trace
    out: list = [Heading(level, view.title, view.anchor)]
    if view.same_as is not None:
        same = view.same_as
        return out + [Para(["The same moves as the ", link(same.title.lower(), page=None if same.page == view.page
                                                           else same.page, anchor=same.anchor), f" ({len(t)} steps)."])]
    start = trace_view.start_text(t)
    summary = f"{len(t)} steps" + (f"; from step {t.loop_start + 1} on, the loop repeats forever"
                                   if t.loop_start is not None else "")
    out.append(Para([b("Starting state:"), " ", start or "—", f" ({summary})."]))
    if view.diagram is not None:
        out.append(Figure(view.diagram, "The trace drawn on the phase diagram: visited phases in red, "
                                        "each arrow taken with its step numbers."))
    out.append(trace_table(t, view.reads))
    if t.loop_start is not None:
        steps = (f"step {len(t)} can" if t.loop_start + 1 == len(t)
                 else f"steps {t.loop_start + 1} to {len(t)} can")
        out.append(Para(f"After the last step the game is back where step {t.loop_start + 1} started: "
                        f"{steps} repeat forever."))
    return out


def _legend_blocks(level: int) -> list:
    return [
        Heading(level, "How to read this report", "how-to-read"),
        Para("Each claim is a sentence about the rules that turnproof checked by exploring every situation "
             "the game can reach. Its verdict says what was shown:"),
        Defs([(verdict(v), text) for v, text in explain.VERDICT_LEGEND]),
        Defs([(b(k), text) for k, text in explain.EXPECTATION_LEGEND]),
        Para("A trace is a sequence of legal moves from the start of the game, one row per move, with the rule "
             "each move follows and what it changed. Findings are places where the rules themselves look "
             "dead, stuck, silent, contradictory or ambiguous; an acknowledged finding is one the model's "
             "authors know of and explain."),
    ]


def _diagram_legend(level: int) -> list:
    return [Heading(level, "Diagram legend", "diagram-legend"),
            Defs([(b(k), text) for k, text in explain.DIAGRAM_LEGEND])]


# ---------------------------------------------------------------- the game page

def _warnings_blocks(runs: Sequence[ModelRun]) -> list:
    """What loading the model warned of (as `check` prints it on standard error), each once."""
    shown: list = []
    for run in runs:
        shown += [w for w in run.warnings if w not in shown]
    if not shown:
        return []
    return [Note([bad("Warnings:"), f" loading the model warned of {_n(len(shown), 'thing')} (it still "
                                     "loads; the verdicts stand)."], "warn"),
            Bullets([[code(str(w.span)) if w.span else "", f" {w.message}" + (f" ({w.hint})" if w.hint else "")]
                     for w in shown])]


def game_document(page: GamePage, timings: bool = True) -> Document:
    model = page.model
    runs = page.runs
    results = page.results
    doc = Document(f"{model.name} — turn structure and verification", page.slug,
                   meta={"generator": f"turnproof {__version__}", "model": runs[0].path,
                         **{f"sha256 {p}": d for p, d in page.sources.items()}})
    doc.add(Heading(1, [f"{model.name}: turn structure and verification"], "top"))
    doc.add(Para([link("← all games", page="../index")]))
    paras = [p.strip("\n") for p in re.split(r"\n\s*\n", model.doc or "") if p.strip()]
    if paras:
        doc.add(Para(" ".join(paras[0].split())))
    new = [f for f in page.findings if f.acknowledged is None]
    not_expected = [r for r in results if not r.as_expected and not explain.undecided(r)]
    facts: list = [
        (b("Model"), [code(runs[0].path)] + ([" with claims in ", code(runs[0].properties_path)]
                                            if runs[0].properties_path else [" (no claim file)"])),
        (b("Players"), str(model.players)),
        (b("Parameters"), _params_text(model.param_values)),
        (b("Readings checked"), ", ".join(r.model.variant for r in runs if r.model.variant) or
         "one (the model declares no alternative readings)"),
        (b("Claims"), f"{len(claim_ids(results))} claims, {len(results)} verdicts: "
                      f"{counts_text(verdict_counts(results))}"),
        (b("Findings"), f"{len(page.findings)} ({len(new)} new, {len(page.findings) - len(new)} acknowledged)"),
    ]
    doc.add(Defs(facts))
    open_ = sum(1 for r in results if explain.undecided(r))
    undecided_words = f" {_n(open_, 'verdict')} undecided (UNKNOWN): a limit was reached." if open_ else ""
    if not_expected or new:
        doc.add(Note([bad("Attention:"), f" {_n(len(not_expected), 'verdict')} not as expected and "
                                         f"{_n(len(new), 'finding')} not acknowledged (listed below)."
                                         f"{undecided_words}"], "warn"))
    else:
        doc.add(Note([ok("Every decided verdict is as expected" if open_ else "Every verdict is as expected"),
                      (" and every finding is acknowledged." if page.findings else " and there are no findings.")
                      + undecided_words]))
    doc.blocks += _warnings_blocks(runs)
    doc.blocks += _to_fix_blocks(page)
    doc.add(Bullets([link("Turn structure", anchor="turn-structure"), link("Explored states", anchor="states")]
                    + ([link("Playouts", anchor=playouts.ANCHOR)] if page.playouts is not None else [])
                    + [link("Claims and verdicts", anchor="claims"), link("Findings", anchor="findings")]
                    + ([link("Modelling notes", anchor="notes")] if len(paras) > 1 else [])
                    + [link("How to read this report", anchor="how-to-read")]))

    # -- turn structure
    doc.add(Heading(2, "Turn structure", "turn-structure"))
    if model.phases:
        doc.add(Para("The phases and steps of a turn as the rules state them, with the actions each allows. "
                     "See the diagram legend below the figure."))
        doc.add(Figure(page.phase_diagram, f"Phase diagram of {model.name}.", inline=True))
        doc.blocks += _diagram_legend(3)
        doc.blocks += _phase_table(model)
    else:
        doc.add(Para("This model has no phases: its actions are plain guarded commands, any of which may "
                     "fire whenever its condition holds."))
    doc.blocks += _actions_table(model)
    doc.blocks += _variables_table(model)
    doc.blocks += _params_variants(model)

    # -- states
    doc.add(Heading(2, "Explored states", "states"))
    sgv = page.state_graph
    if sgv is None:
        doc.add(Para(page.state_graph_note or "Not drawn."))
    else:
        doc.add(Para(explain.STATE_GRAPH_LEGEND[sgv.kind]))
        where = f"reading {sgv.variant}, " if sgv.variant else ""
        status = ("complete" if sgv.complete else f"partial ({sgv.reason}): only the states found before "
                                                  f"the limit are counted")
        doc.add(Para(f"{sgv.states:,} states and {sgv.transitions:,} transitions ({where}parameters "
                     f"{_params_text(sgv.params)}); exploration {status}."))
        doc.add(Figure(sgv.diagram, sgv.diagram.title + ".", inline=True))
        if len(runs) > 1:
            doc.add(Para("Other readings have their own state counts, listed with each verdict below."))

    if page.playouts is not None:
        doc.blocks += playouts.playout_blocks(page.playouts)

    # -- claims
    doc.add(Heading(2, "Claims and verdicts", "claims"))
    if not results:
        doc.add(Para("No claims were checked (the model has no claim file)."))
    else:
        doc.blocks += _claims_summary(page)
        doc.blocks += vacuity_blocks(runs)
        doc.add(Para("Each claim's page (follow its name) gives its verdict in every reading, what the "
                     "verdict means, how it was checked, and its traces drawn on the phase diagram."))
        if page.traces_note:
            doc.add(Para(page.traces_note[0].upper() + page.traces_note[1:] + "."))

    # -- findings
    doc.add(Heading(2, "Findings", "findings"))
    doc.blocks += _findings_blocks(page, timings)
    if len(paras) > 1:
        doc.add(Heading(2, "Modelling notes", "notes"))
        doc.add(Para("What the model's authors wrote about how it abstracts the rules (sizes, what is left "
                     "out and why, readings): useful to judge what the verdicts cover."))
        doc.add(Pre(textwrap.dedent("\n\n".join(paras[1:])).strip("\n")))
    doc.blocks += _legend_blocks(2)
    return doc


def vacuity_blocks(runs: Sequence[ModelRun]) -> list:
    """A note per claim part never reached (`analysis.vacuity`): the claim holds without saying anything."""
    seen: dict[tuple[str, str, str], list[str]] = {}
    for run in runs:
        for v in run.vacuous:
            seen.setdefault((v.claim, v.part, v.text), []).append(run.model.variant or "")
    blocks = []
    for (claim, part, text), readings in seen.items():
        where = "" if readings == [""] or len(readings) == len(runs) else \
            f" (reading{'s' if len(readings) > 1 else ''} {', '.join(readings)})"
        blocks.append(Note([b("Vacuous: "), link(claim, page=claim_page(claim)), f"{where}: its {part} ",
                            code(text), " is never reached, so what the claim says under it holds without saying "
                                        "anything (for these parameters)."]))
    return blocks


def _phase_table(model: Model) -> list:
    acts: dict[str | None, list] = {}
    for a in model.rule_actions():
        for phase in a.phase_names or (None,):
            acts.setdefault(phase, []).append(a)
    leaves = {p.name for p in model.leaf_phases()}
    out_edges: dict[str, list[str]] = {}
    for e in model.phase_edges:
        if e.turn_end:
            words = "end of turn" + (f" ({e.label})" if e.label and e.label != "next turn" else "")
        else:
            words = e.dst + (f" ({e.label})" if e.label else "")
        out_edges.setdefault(e.src, []).append(words)
    rows: list[list[Inline]] = []
    for p in model.phases:
        name = ("  " * _depth(model, p.name)) + p.name
        actions = ", ".join(action_words(acts.get(p.name, []))) or "—"
        then = "; ".join(out_edges.get(p.name, [])) if p.name in leaves else "its steps, in order"
        rows.append([b(name) if p.parent is None else name, p.parent or "—",
                     "mandatory" if p.mandatory else "optional", str(p.rule) if p.rule else "—",
                     actions, then or "—"])
    return [Heading(3, "Phases and steps", "phases"),
            Table(["phase or step", "part of", "must it happen?", "rule", "actions", "then"], rows)]


def _depth(model: Model, name: str) -> int:
    parents = {p.name: p.parent for p in model.phases}
    d, node = 0, parents.get(name)
    while node is not None:
        d, node = d + 1, parents.get(node)
    return d


def _modality(a: Action) -> str:
    """`must`, `may`, `must not`; `one of group G` for an action of a `must: {once: G}` group."""
    return f"one of group {a.once_group}" if a.once_group else MODALITY_WORDS[a.modality]


def _type_text(t: Any) -> str:
    if isinstance(t, EnumType):
        return " | ".join(t.values)
    if isinstance(t, IntType):
        return f"{pretty(t.lo)} to {pretty(t.hi)}"
    return "yes / no"


def _actions_table(model: Model) -> list:
    rows: list[list[Inline]] = []
    for a in model.rule_actions():
        choices = ", ".join(f"{c.name} in {_type_text(c.type)}" for c in a.choices) or "—"
        rows.append([code(a.name), ", ".join(a.phase_names) or "any phase", _modality(a), choices,
                     str(a.rule) if a.rule else "—"])
    if not rows:
        return []
    return [Heading(3, "Actions", "actions"),
            Para("What a player may (or must) do, where, and which rule says so. 'must' actions have to be "
                 "taken while possible before the phase can end; 'must not' ones state a prohibition."),
            Table(["action", "where", "modality", "choices", "rule"], rows)]


def _variables_table(model: Model) -> list:
    rows: list[list[Inline]] = []
    for v in model.variables:
        if v.implicit:
            continue
        per = "—" if v.index is None else ("each player" if v.by_player else _type_text(v.index)) if not v.dims \
            else " and ".join(["each player" if v.rows_by_player else _type_text(v.dims[0]), _type_text(v.dims[1])])
        inits = [pretty(x) if x is not None else "any" for x in v.init]
        init = inits[0] if len(set(inits)) == 1 else ", ".join(inits)
        policy = {"unspecified": "not stated by the rules", "clamp": "capped (excess discarded)",
                  "forbid": "the move is not allowed"}[v.overflow.value]
        if v.overflow_rule:
            policy += f" — {v.overflow_rule}"
        extra = "reset at the end of each turn" if v.reset.value == "turn" else ""
        shown = f"shown as “{v.label}”" if v.label else ""
        values = _type_text(v.type)
        if v.value_names and isinstance(v.type, IntType) and isinstance(v.type.lo, Const):
            values += " (" + ", ".join(f"{k} {name}" for k, name in enumerate(v.value_names, v.type.lo.value)) + ")"
        rows.append([code(v.name), values, per, init, policy if not isinstance(v.type, EnumType) and
                     not _is_bool(v.type) else "—", "; ".join(x for x in (shown, v.doc, extra) if x) or "—"])
    if not rows:
        return []
    return [Heading(3, "What the model keeps track of", "variables"),
            Table(["variable", "values", "one per", "starts at", "past its limit", "notes"], rows)]


def _is_bool(t: Any) -> bool:
    return not isinstance(t, (EnumType, IntType))


def _params_variants(model: Model) -> list:
    out: list = []
    if model.params:
        values = model.params_dict
        rows: list[list[Inline]] = [
                [code(p.name), "any" if values.get(p.name, p.default) is None else str(values.get(p.name, p.default)),
                 "—" if p.lo is None and p.hi is None else f"{'' if p.lo is None else p.lo}..{'' if p.hi is None else p.hi}",
                 p.doc or "—"] for p in model.params]
        out += [Heading(3, "Parameters", "parameters"),
                Para("Sizes the rules leave open or that were scaled down to keep the search exhaustive; "
                     "the verdicts hold for the values used unless they say PROVED."),
                Table(["parameter", "value used", "allowed", "meaning"], rows)]
    if model.variants:
        readings: list[list[Inline]] = [[b(v.name), v.description or "—", str(v.rule) if v.rule else "—"] for v in model.variants]
        out += [Heading(3, "Readings of ambiguous rules", "readings"),
                Para("Where the rules can be read in more than one way, each reading is checked separately."),
                Table(["reading", "what it assumes", "rule"], readings)]
    return out


def _claims_summary(page: GamePage) -> list:
    runs = page.runs
    variants = [run.model.variant for run in runs]
    by: dict[tuple[str, str | None], CheckResult] = {(r.property.id, r.variant): r for r in page.results}
    header = ["claim", "what it says", "rule"] + ([f"verdict ({v})" for v in variants] if len(runs) > 1
                                                  else ["verdict"]) + ["as expected?"]
    rows: list[list[Inline]] = []
    anchors: list[str | None] = []
    for cid in claim_ids(page.results):
        first = next(r for r in page.results if r.property.id == cid)
        cells: list = [link(cid, page=claim_page(cid)), first.property.statement or "—", first.property.rule or "—"]
        for v in variants:
            r = by.get((cid, v))
            cells.append(verdict(explain.verdict_label(r)) if r else muted("—"))
        cells.append(_claim_status([r for r in page.results if r.property.id == cid]))
        rows.append(cells)
        anchors.append(None)
    return [Table(header, rows, anchors, cls="claims")]


def _claim_blocks(page: GamePage, cid: str, timings: bool) -> list:
    results = [r for r in page.results if r.property.id == cid]
    p = results[0].property
    from verifier.props.describe import describe

    out: list = [Heading(1, [f"Claim {cid}"], f"claim-{cid}"), Para(b(p.statement or cid))]
    formal = describe(p)
    facts: list = [(b("Kind"), f"{p.kind} ({explain.kind_words(p.kind)})")]
    if formal and formal != p.statement:
        facts.append((b("Formally"), formal))
    facts.append((b("Rule"), p.rule or "—"))
    expected = {r.property.expected or "anything but VIOLATED" for r in results}
    if len(expected) == 1:
        facts.append((b("Expected verdict"), expected.pop()))
    else:
        facts.append((b("Expected verdict"), "; ".join(f"{r.variant}: {r.property.expected or 'anything but VIOLATED'}"
                                                       for r in results)))
    whys = list(dict.fromkeys(r.property.why for r in results if r.property.why and r.property.expected == "VIOLATED"))
    if whys:
        facts.append((b("Known flaw"), " / ".join(whys)))
    params = {r.params for r in results}
    if len(params) == 1:
        facts.append((b("Parameters"), _params_text(next(iter(params)))))
    out.append(Defs(facts))
    multi = any(r.variant for r in results)
    header = (["reading"] if multi else []) + ["verdict", "as expected?", "what it means", "how it was checked"] \
        + (["parameters"] if len(params) > 1 else []) + ["notes"]
    rows: list[list[Inline]] = []
    for r in results:
        row: list = [b(r.variant or "")] if multi else []
        row += [verdict(explain.verdict_label(r)),
                _expectation_cell(r),
                explain.explain_result(r), _how(r, timings)]
        if len(params) > 1:
            row.append(_params_text(r.params))
        row.append(_notes(r))
        rows.append(row)
    out.append(Table(header, rows, cls="results"))
    for r in results:
        view = page.claim_traces.get((cid, r.variant))
        if view is not None:
            out += trace_blocks(view, 2)
    return out


def _expectation_cell(r: CheckResult):
    text = explain.expectation_short(r)
    if explain.undecided(r):
        return muted(text)
    return ok(text) if r.as_expected else bad(text)


def _claim_status(results: Sequence[CheckResult]):
    """NO where a decided verdict is not the one expected; undecided (UNKNOWN, exit 3) is never NO."""
    if any(not r.as_expected and not explain.undecided(r) for r in results):
        return bad("NO")
    if any(explain.undecided(r) for r in results):
        return muted("undecided")
    return ok("yes")


def _how(r: CheckResult, timings: bool) -> str:
    parts = [r.engine]
    if r.reductions:
        parts.append("reduced by " + " and ".join(r.reductions))
    if r.scale:
        parts.append(f"known {SCALE_WORDS[r.scale]}")
    if r.stats.states is not None:
        parts.append(f"{r.stats.states:,} states")
    if r.stats.transitions is not None:
        parts.append(f"{r.stats.transitions:,} transitions")
    if r.depth is not None:
        parts.append(f"depth {r.depth}")
    if timings:
        parts.append(f"{r.stats.seconds:.2f} s")
    return ", ".join(parts)


def _notes(r: CheckResult) -> str:
    notes = [r.reason] if r.reason else []
    for k, v in r.evidence.items():
        if isinstance(v, (str, int, float, bool)):
            notes.append(f"{k.replace('_', ' ')}: {_fmt(v)}")
    return "; ".join(notes) or "—"


def _to_fix_blocks(page: GamePage) -> list:
    """What a designer must fix first (`fixlist`): one row per item, most urgent kind first, each once
    across readings; the behaviours the claims show on purpose are counted, and listed with the claims."""
    g = fixlist.game_findings(page.runs)
    out: list = [Heading(2, "What to fix", "to-fix")]
    if not g.to_fix:
        out.append(Para("Nothing: no claim is broken unexpectedly, and no contradiction, gap, ambiguity or "
                        "dead rule was found" + (" in what was analysed." if g.analyses_open else ".")))
    else:
        heads = dict(fixlist.KINDS)
        rows: list[list[Inline]] = []
        for item in g.to_fix:
            ev = item.evidence
            target = (link(item.title, page=claim_page(ev.claim)) if ev is not None and ev.claim is not None
                      else link(item.title, anchor="findings"))
            where = ", ".join(item.readings) or (" · ".join(f"{r} {v}" for r, v in item.side_by_side
                                                           if v in Verdict.__members__)
                                                 or " and ".join(r for r, _t in item.side_by_side) or "all")
            text = item.text or " / ".join(f"{r}: {t}" for r, t in item.side_by_side)
            rows.append([heads[item.kind], target, where, text,
                         muted("documented") if item.acknowledged else bad("new")])
        out.append(Table(["kind", "what", "readings", "finding", "status"], rows, cls="findings"))
    out.append(Para(f"{_n(len(g.shown), 'behaviour')} the claims show on purpose (what the page allows: a "
                    f"violation they expect, or a witness) {'is' if len(g.shown) == 1 else 'are'} listed with the "
                    f"claims, not here."))
    return out


def _findings_blocks(page: GamePage, timings: bool) -> list:
    findings = page.findings
    if not findings:
        return [Para("No consistency findings: no dead rule, stuck state, silent rule, conflict or order "
                     "dependence was found with these parameters.")]
    out: list = [Para("Places where the rules look dead, stuck, silent, contradictory or ambiguous. "
                      "Acknowledged findings are known to the model's authors, who give their reason.")]
    kinds = list(dict.fromkeys(f.kind for f in findings))
    out.append(Defs([(b(k), explain.finding_words(k)) for k in kinds]))
    rows: list[list[Inline]] = []
    for n, f in enumerate(findings, 1):
        status = muted(f"acknowledged: {f.acknowledged}") if f.acknowledged is not None else bad("new")
        rows.append([link(str(n), anchor=f"finding-{n}"), b(f.kind), code(f.subject), f.message,
                     f.variant or "all", status])
    out.append(Table(["#", "kind", "concerns", "finding", "reading", "status"], rows, cls="findings"))
    for n, f in enumerate(findings, 1):
        title = f"Finding {n}: {f.kind} — {f.subject}" + (" (acknowledged)" if f.acknowledged is not None else "")
        out.append(Heading(3, title, f"finding-{n}"))
        out.append(Para(b(f.message)))
        facts: list = [(b("What this means"), explain.finding_words(f.kind)),
                       (b("Rules concerned"), "; ".join(f.rules) or "—"),
                       (b("Established by"), f.engine + (f", {f.scope}" if f.scope else "")),
                       (b("Reading"), f.variant or "every reading checked")]
        if f.span is not None:
            facts.append((b("Model element"), f"line {getattr(f.span, 'line', '?')}"))
        if f.acknowledged is not None:
            facts.append((b("Acknowledged"), [ok("yes"), f" — {f.acknowledged}"]))
        else:
            facts.append((b("Acknowledged"), bad("no")))
        out.append(Defs(facts))
        plain = [(k, v) for k, v in f.evidence.items() if isinstance(v, (str, int, float, bool))]
        nested = [(k, v) for k, v in f.evidence.items() if isinstance(v, (list, tuple, dict)) and v]
        if plain or nested:
            rows = [[k.replace("_", " "), _fmt(v)] for k, v in plain]
            rows += [[k.replace("_", " "), _nested(v)] for k, v in nested]
            out.append(Table(["evidence", "value"], rows, cls="stats"))
        for k in range(1, len(f.traces) + 1):
            out.append(trace_link(page.finding_traces[(n, k)]))
    return out


def _nested(v: Any) -> str:
    if isinstance(v, dict):
        return "; ".join(f"{k}: {_nested(x)}" for k, x in v.items())
    if isinstance(v, (list, tuple)):
        return ", ".join(_nested(x) for x in v)
    return _fmt(v)


# ---------------------------------------------------------------- the index

def index_document(pages: Sequence[GamePage], title: str = "Turn structures and their verification") -> Document:
    doc = Document(title, "index", meta={"generator": f"turnproof {__version__}"})
    doc.add(Heading(1, title, "top"))
    doc.add(Para("For each game: its turn structure drawn as a diagram, the claims checked against its rules "
                 "with their verdicts, and the findings where the rules look dead, stuck, silent, "
                 "contradictory or ambiguous. Open a game's page for the diagrams, the traces and the "
                 "evidence."))
    rows: list[list[Inline]] = []
    for page in pages:
        results = page.results
        counts = verdict_counts(results)
        new = sum(1 for f in page.findings if f.acknowledged is None)
        wrong = sum(1 for r in results if not r.as_expected and not explain.undecided(r))
        tally: list = []
        for v in VERDICT_ORDER:
            if counts[v]:
                tally += ([", "] if tally else []) + [f"{counts[v]} ", verdict(v)]
        rows.append([link(page.model.name, page=f"{page.slug}/index"), str(page.model.players),
                     str(max(1, len(page.runs))), str(len(claim_ids(results))), tally or muted("none"),
                     bad(str(wrong)) if wrong else ok("0"),
                       f"{new} new, {len(page.findings) - new} acknowledged",
                       [link("HTML", href=f"{page.slug}/index.html"), " · ",
                        link("Markdown", href=f"{page.slug}/index.md")]])
    doc.add(Table(["game", "players", "readings", "claims", "verdicts (claims × readings)",
                   "not as expected", "findings", "pages"], rows, cls="games"))
    doc.blocks += _legend_blocks(2)
    for page in pages:
        doc.add(Heading(2, [link(page.model.name, page=f"{page.slug}/index")], f"game-{page.slug}"))
        results = page.results
        variants = [run.model.variant for run in page.runs]
        by = {(r.property.id, r.variant): r for r in results}
        crow = []
        for cid in claim_ids(results):
            first = by.get((cid, variants[0])) or next(r for r in results if r.property.id == cid)
            cells = [verdict(explain.verdict_label(by[(cid, v)])) if (cid, v) in by else muted("—")
                     for v in variants]
            joined: list = []
            for k, c in enumerate(cells):
                if k:
                    joined.append(" / ")
                joined.append(c)
            crow.append([link(cid, page=f"{page.slug}/{claim_page(cid)}"), first.property.statement or "—",
                         joined, _claim_status([r for r in results if r.property.id == cid])])
        if crow:
            head = "verdict" if len(variants) < 2 else "verdicts (" + " / ".join(str(v) for v in variants) + ")"
            doc.add(Table(["claim", "what it says", head, "as expected?"], crow, cls="claims"))
        else:
            doc.add(Para("No claims checked."))
        if page.findings:
            items: list[Inline] = []
            for n, f in enumerate(page.findings, 1):
                status: list[str | Span] = ([muted(f" (acknowledged: {f.acknowledged})")] if f.acknowledged is not None
                                            else [" ", bad("(new)")])
                items.append([link(f"{f.kind} {f.subject}", page=f"{page.slug}/index", anchor=f"finding-{n}"), ": ", f.message,
                              *status])
            doc.add(Bullets(items))
        else:
            doc.add(Para("No consistency findings."))
    return doc
