"""Plots of playout statistics (matplotlib, headless): SVG text to inline, PNG bytes to save."""
from __future__ import annotations

import io
from dataclasses import dataclass

from verifier.playout.result import Simulation


@dataclass(frozen=True)
class Plot:
    """One chart; `stem` names its files (``<stem>.svg``, ``<stem>.png``)."""

    stem: str
    title: str
    alt: str
    svg: str
    png: bytes
    dot: str = ""           # a plot has no DOT source (report/html.py links it only when present)


def simulation_plots(sim: Simulation, png: bool = True) -> list[Plot]:
    """Game lengths, turn lengths, actions taken and, when chosen, the hand-size histogram (the
    same SVG for the same statistics); `png` False leaves the PNG out (empty), which is quicker."""
    lengths: dict[int, int] = {}
    for n in sim.game_lengths:
        lengths[n] = lengths.get(n, 0) + 1
    plots = [_bars("game-lengths", "Game length", "steps in a game", "games", lengths, png),
             _bars("turn-lengths", "Turn length", "steps in a turn", "turns", sim.turn_lengths, png),
             _barh("actions", "Actions taken", "times taken", sim.actions, png)]
    if sim.phase_entries:
        plots.append(_barh("phases", "Phases entered", "times entered", sim.phase_entries, png))
    if sim.hand_var:
        plots.append(_bars("hand-sizes", f"Value of {sim.hand_var}", sim.hand_var, "states", sim.hand_sizes, png))
    return plots


def _figure(height: float = 3.2):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams["svg.hashsalt"] = "turnproof"        # the same SVG for the same data
    return plt, plt.subplots(figsize=(7, height), dpi=100)


def _bars(stem: str, title: str, xlabel: str, ylabel: str, histogram: dict[int, int], png: bool) -> Plot:
    plt, (fig, ax) = _figure()
    ax.bar(list(histogram), list(histogram.values()), width=0.9, color="#1f5fbf")
    ax.set(title=title, xlabel=xlabel, ylabel=ylabel)
    return _save(plt, fig, stem, title, f"{title}: {ylabel} per {xlabel}", png)


def _barh(stem: str, title: str, xlabel: str, counts: dict[str, int], png: bool) -> Plot:
    plt, (fig, ax) = _figure(height=max(2.5, 0.25 * len(counts) + 1))
    names = list(counts)
    ax.barh(range(len(names)), list(counts.values()), color="#1e7d3c")
    ax.set_yticks(range(len(names)), [n.replace("$", r"\$") for n in names], fontsize=8)
    ax.invert_yaxis()
    ax.set(title=title, xlabel=xlabel)
    return _save(plt, fig, stem, title, f"{title}: {xlabel} per name", png)


def _save(plt, fig, stem: str, title: str, alt: str, png: bool) -> Plot:
    fig.tight_layout()
    svg, image = io.StringIO(), io.BytesIO()
    fig.savefig(svg, format="svg", metadata={"Date": None})
    if png:
        fig.savefig(image, format="png", metadata={"Software": None})
    plt.close(fig)
    return Plot(stem, title, alt, svg.getvalue(), image.getvalue())
