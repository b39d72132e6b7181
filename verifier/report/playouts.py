"""The playout section of a game's report page: random playouts' statistics and their plots.

What the designer asks besides the verdicts: how long a game and a turn run, how often
each action and phase comes up, how big hands get. The numbers come from seeded random
playouts (`playout.play.simulate`), so the same model gives the same section; they
describe random play, not the rules' every play.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from verifier.playout.result import CUT, ENDED, STUCK, Simulation, summary
from verifier.report.doc import Figure, Heading, Inline, Note, Para, Table, code
from verifier.report.plots import Plot, simulation_plots

ANCHOR = "playouts"


@dataclass(frozen=True)
class PlayoutView:
    simulation: Simulation
    plots: tuple[Plot, ...]


def playout_view(sim: Simulation) -> PlayoutView:
    """The statistics with their plots (SVG only), named `playouts.<plot>` in the game's folder."""
    return PlayoutView(sim, tuple(replace(p, stem=f"playouts.{p.stem}")
                                  for p in simulation_plots(sim, png=False)))


def playout_blocks(view: PlayoutView) -> list:
    sim = view.simulation
    params = ", ".join(f"{k}={v}" for k, v in sim.params.items()) or "no parameters"
    reading = f", reading {sim.variant}" if sim.variant else ""
    blocks: list = [
        Heading(2, "Playouts", ANCHOR),
        Para(f"{sim.games} random playouts ({params}{reading}), seed {sim.seed}, each move drawn uniformly "
             f"among the enabled actions and their choices, at most {sim.max_steps} steps a game: "
             f"{sim.outcomes[ENDED]} ended, {sim.outcomes[STUCK]} stuck, {sim.outcomes[CUT]} cut short."
             + (f" The time budget stopped them after {sim.games} of {sim.requested} games."
                if sim.timed_out else "")),
        Note("These figures describe random play, not every play the rules allow, nor how people play: "
             "the verdicts above are what holds for every play. Run turnproof simulate for more games, "
             "another seed or a weighted policy."),
    ]
    turns = [k for k, n in sim.turn_lengths.items() for _ in range(n)]
    rows: list[list[Inline]] = []
    for label, values in (("game", list(sim.game_lengths)), ("game that ended", sim.ended_lengths),
                          ("turn", turns)):
        s = summary(values)
        cells: list[Inline] = [label]
        cells += ["-" if s[k] is None else f"{s[k]:g}" for k in ("count", "min", "median", "mean", "p90", "max")]
        rows.append(cells)
    blocks.append(Table(["length in steps of a", "count", "min", "median", "mean", "p90", "max"], rows,
                        cls="stats"))
    total = sum(sim.actions.values()) or 1
    blocks.append(Table(["action", "taken", "share"],
                        [[code(a), f"{n:,}", f"{100 * n / total:.1f}%"] for a, n in sim.actions.items()]))
    if sim.phase_entries:
        blocks.append(Table(["phase", "entered", "steps in it"],
                            [[p, f"{n:,}", f"{sim.phase_steps.get(p, 0):,}"] for p, n in sim.phase_entries.items()]))
    blocks += [Figure(plot, plot.title + ".") for plot in view.plots]
    return blocks
