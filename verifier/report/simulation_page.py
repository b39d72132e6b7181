"""A playout run as a report page (HTML): the tables of the text output and the plots."""
from __future__ import annotations

from verifier.playout.result import CUT, ENDED, STUCK, Simulation, summary
from verifier.report import html
from verifier.report.doc import Document, Figure, Heading, Inline, Note, Para, Table, bad, code
from verifier.report.pages import slugify, trace_table
from verifier.report.plots import Plot


def simulation_document(sim: Simulation, plots: list[Plot]) -> Document:
    title = f"Playouts of {sim.model}" + (f" (variant {sim.variant})" if sim.variant else "")
    doc = Document(title, slugify(f"{sim.model}-playouts"), meta={"generator": "turnproof simulate"})
    params = ", ".join(f"{k}={v}" for k, v in sim.params.items()) or "no parameters"
    doc.add(Heading(1, title),
            Para(f"{sim.games} random playouts ({params}), seed {sim.seed}, policy {sim.policy.name}, "
                 f"at most {sim.max_steps} steps each: {sim.outcomes[ENDED]} ended, {sim.outcomes[STUCK]} stuck, "
                 f"{sim.outcomes[CUT]} cut short."
                 + (f" Stopped by the timeout after {sim.games} of {sim.requested} games." if sim.timed_out else "")),
            Note("A claim not violated in playouts was only not seen violated: turnproof check decides it. "
                 "Every violation below is a trace replayed on the model."))
    turns = [k for k, n in sim.turn_lengths.items() for _ in range(n)]
    rows: list[list[Inline]] = []
    for label, values in (("games", list(sim.game_lengths)), ("games that ended", sim.ended_lengths),
                          ("turns", turns)):
        s = summary(values)
        row: list[Inline] = [label]
        row += ["-" if s[k] is None else str(s[k]) for k in ("count", "min", "median", "mean", "p90", "max")]
        rows.append(row)
    doc.add(Heading(2, "Lengths (steps)"), Table(["", "count", "min", "median", "mean", "p90", "max"], rows,
                                                 cls="stats"))
    for plot in plots:
        doc.add(Figure(plot, plot.title))
    total = sum(sim.actions.values()) or 1
    doc.add(Heading(2, "Actions"), Table(["action", "taken", "share"],
                                         [[code(a), f"{n:,}", f"{100 * n / total:.1f}%"]
                                          for a, n in sim.actions.items()]))
    if sim.phase_entries:
        doc.add(Heading(2, "Phases"), Table(["phase", "entered", "steps in it"],
                                            [[p, f"{n:,}", f"{sim.phase_steps.get(p, 0):,}"]
                                             for p, n in sim.phase_entries.items()]))
    if sim.claims:
        doc.add(Heading(2, "Claims on the playouts"),
                Table(["claim", "kind", "evaluated on", "violated in", "reached in", "expected"],
                      [[code(c.id), c.kind, c.how,
                        (bad(f"{c.violated} (not expected)") if c.unexpected else str(c.violated))
                        if c.evaluated and c.how != "witness" else "-",
                        (bad(f"{c.witnessed} (expected unreachable)") if c.unexpected else str(c.witnessed))
                        if c.how == "witness" else "-", c.expected or "-"] for c in sim.claims]))
        for c in sim.claims:
            if c.trace is not None:
                what = "first game that reached it" if c.how == "witness" else "first violation"
                doc.add(Heading(3, [code(c.id), f": {what} (game {c.first_game})"]), trace_table(c.trace))
    return doc


def simulation_html(sim: Simulation, plots: list[Plot]) -> str:
    return html.render(simulation_document(sim, plots))
