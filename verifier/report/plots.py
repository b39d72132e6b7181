"""Plots of playout statistics (matplotlib, headless): SVG text to inline, PNG bytes to save."""
from __future__ import annotations

import io
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

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
    plots = [_bars("game-lengths", "Game length", "steps in a game", "games", _items(lengths), png),
             _bars("turn-lengths", "Turn length", "steps in a turn", "turns", _items(sim.turn_lengths), png),
             _barh("actions", "Actions taken", "times taken", _items(sim.actions), png)]
    if sim.phase_entries:
        plots.append(_barh("phases", "Phases entered", "times entered", _items(sim.phase_entries), png))
    if sim.hand_var:
        plots.append(_bars("hand-sizes", f"Value of {sim.hand_var}", sim.hand_var, "states",
                           _items(sim.hand_sizes), png))
    return plots


def _items(counts: dict[Any, int]) -> tuple[tuple[Any, int], ...]:
    return tuple(counts.items())


# A chart is a pure function of its words and counts: drawn once per process (a report of several
# models whose playouts give the same statistics, a report run twice, draws it once; matplotlib
# takes a tenth of a second or more per chart).
@lru_cache(maxsize=32)
def _bars(stem: str, title: str, xlabel: str, ylabel: str, histogram: tuple[tuple[int, int], ...],
          png: bool) -> Plot:
    plt, (fig, ax) = _figure()
    ax.bar([x for x, _ in histogram], [n for _, n in histogram], width=0.9, color="#1f5fbf")
    ax.set(title=title, xlabel=xlabel, ylabel=ylabel)
    return _save(plt, fig, stem, title, f"{title}: {ylabel} per {xlabel}", png)


@lru_cache(maxsize=32)
def _barh(stem: str, title: str, xlabel: str, counts: tuple[tuple[str, int], ...], png: bool) -> Plot:
    plt, (fig, ax) = _figure(height=max(2.5, 0.25 * len(counts) + 1))
    names = [name for name, _ in counts]
    ax.barh(range(len(names)), [n for _, n in counts], color="#1e7d3c")
    ax.set_yticks(range(len(names)), [n.replace("$", r"\$") for n in names], fontsize=8)
    ax.invert_yaxis()
    ax.set(title=title, xlabel=xlabel)
    return _save(plt, fig, stem, title, f"{title}: {xlabel} per name", png)


def forget_drawn() -> None:
    """Draw every chart anew from now on (a test of the drawing's own determinism)."""
    _bars.cache_clear()
    _barh.cache_clear()


def _figure(height: float = 3.2):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams["svg.hashsalt"] = "turnproof"        # the same SVG for the same data
    return plt, plt.subplots(figsize=(7, height), dpi=100)


def _save(plt, fig, stem: str, title: str, alt: str, png: bool) -> Plot:
    fig.tight_layout()
    svg, image = io.StringIO(), io.BytesIO()
    fig.savefig(svg, format="svg", metadata={"Date": None})
    if png:
        fig.savefig(image, format="png", metadata={"Software": None})
    plt.close(fig)
    return Plot(stem, title, alt, svg.getvalue(), image.getvalue())
