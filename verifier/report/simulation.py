"""Playout statistics as text tables (rich), and as a report page with plots."""
from __future__ import annotations

import io

from rich.console import Console
from rich.table import Table
from rich.text import Text

from verifier.playout.result import CUT, ENDED, STUCK, ClaimTally, Simulation, summary
from verifier.report.text import plain, trace_table

BAR = 30         # width of the widest bar of a text histogram


def render_simulation(sim: Simulation, color: bool = False, width: int = 120, brief: bool = False,
                      traces: str = "unexpected") -> str:
    """The statistics as text; `brief` (`simulate -q`): the summary lines alone, no tables or traces.
    `traces`: the first violation of each claim not as expected ("unexpected"), of every violated
    claim ("all"), or none."""
    buf = io.StringIO()
    console = Console(file=buf, force_terminal=color, width=width, highlight=False)
    for block in (summary_blocks(sim) if brief else simulation_blocks(sim, traces)):
        console.print(block)
    return buf.getvalue()


def header(sim: Simulation) -> str:
    params = ", ".join(f"{k}={v}" for k, v in sim.params.items())
    variant = f" [variant {sim.variant}]" if sim.variant else ""
    return (f"== {sim.model}{variant}  ({sim.path}; {params or 'no parameters'})\n"
            f"{sim.games} playouts, seed {sim.seed}, policy {sim.policy.name}, at most {sim.max_steps} steps each")


def opening_blocks(sim: Simulation) -> list:
    """The header, the outcomes and the backstop's note: what every rendering starts with."""
    out: list = [plain(header(sim), style="bold"),
                 Text(f"outcomes: {sim.outcomes[ENDED]} ended, {sim.outcomes[STUCK]} stuck (no move left), "
                      f"{sim.outcomes[CUT]} cut at --max-steps")]
    if sim.timed_out:
        out.append(Text(f"stopped by the backstop (--timeout, or the default deadline) after {sim.games} of "
                        f"{sim.requested} games: the figures cover "
                        f"those played", style="magenta"))
    return out


def summary_blocks(sim: Simulation) -> list:
    """`simulate -q`: the opening lines, game lengths and the claims in one line each."""
    out = opening_blocks(sim)
    s = summary(list(sim.game_lengths))
    if s["count"]:
        out.append(Text(f"game length: median {s['median']}, max {s['max']} steps"))
    if sim.claims:
        unexpected = sim.unexpected_violations
        out.append(plain(f"claims: {len(sim.claims)} evaluated, {len(unexpected)} not as expected"
                         + (": " + ", ".join(c.id for c in unexpected) if unexpected else ""),
                         style="bold red" if unexpected else ""))
    return out


def simulation_blocks(sim: Simulation, traces: str = "unexpected") -> list:
    out = opening_blocks(sim)
    out.append(lengths_table(sim))
    out.append(counts_table("action", sim.actions, "taken"))
    never = [a for a, n in sim.actions.items() if n == 0]
    if never:
        out.append(plain("never taken: " + ", ".join(never), style="yellow"))
    if sim.phase_entries:
        out.append(phases_table(sim))
    if sim.hand_var:
        out.append(histogram_table(plain(f"{sim.hand_var} (every state, every element)"), sim.hand_sizes))
    if sim.claims:
        out.append(claims_table(sim.claims))
        for c in sim.claims:
            if c.trace is not None and (traces == "all" or (traces == "unexpected" and c.unexpected)):
                expected = "expected" if not c.unexpected else "NOT expected"
                what = (f"reached in {c.witnessed} of {sim.games} playouts although expected unreachable"
                        if c.how == "witness" else f"violated in {c.violated} of {sim.games} playouts ({expected})")
                out.append(plain(f"\n{c.id}: {what}; the first, game {c.first_game}, replayed:",
                                 style="bold red" if c.unexpected else "bold"))
                out.append(trace_table(c.trace))
    rate = f"{sim.steps / sim.seconds:,.0f} steps/s" if sim.seconds else "-"
    out.append(Text(f"{sim.steps:,} steps in {sim.seconds:.2f} s ({rate}); a claim not violated here was not seen "
                    f"violated in these playouts, which proves nothing (turnproof check decides it)"))
    return out


def lengths_table(sim: Simulation) -> Table:
    table = Table(title="lengths (steps)", title_justify="left", header_style="bold")
    for col in ("", "count", "min", "median", "mean", "p90", "max"):
        table.add_column(col, justify="left" if not col else "right")
    turns = [k for k, n in sim.turn_lengths.items() for _ in range(n)]
    for label, values in (("games", list(sim.game_lengths)), ("games that ended", sim.ended_lengths),
                          ("turns", turns)):
        s = summary(values)
        table.add_row(label, *("-" if s[k] is None else str(s[k]) for k in ("count", "min", "median", "mean",
                                                                            "p90", "max")))
    return table


def counts_table(what: str, counts: dict[str, int], verb: str) -> Table:
    total = sum(counts.values()) or 1
    table = Table(header_style="bold")
    table.add_column(what)
    table.add_column(verb, justify="right")
    table.add_column("share", justify="right")
    for name, n in counts.items():
        table.add_row(plain(name), f"{n:,}", f"{100 * n / total:.1f}%")
    return table


def phases_table(sim: Simulation) -> Table:
    table = Table(header_style="bold")
    for col in ("phase", "entered", "steps in it"):
        table.add_column(col, justify="left" if col == "phase" else "right")
    for phase, n in sim.phase_entries.items():
        table.add_row(plain(phase), f"{n:,}", f"{sim.phase_steps.get(phase, 0):,}")
    return table


def histogram_table(title: Text, histogram: dict[int, int]) -> Table:
    table = Table(title=title, title_justify="left", header_style="bold")
    for col in ("value", "states", ""):
        table.add_column(col, justify="right" if col != "" else "left")
    top = max(histogram.values(), default=0) or 1
    for value, n in histogram.items():
        table.add_row(str(value), f"{n:,}", "█" * max(1, round(BAR * n / top)) if n else "")
    return table


def claims_table(claims: tuple[ClaimTally, ...]) -> Table:
    table = Table(title="claims on the playouts", title_justify="left", header_style="bold")
    for col in ("claim", "kind", "evaluated on", "violated in", "reached in", "expected"):
        table.add_column(col, justify="right" if col in ("violated in", "reached in") else "left")
    for c in claims:
        violated = Text(f"{c.violated} ✗" if c.unexpected else str(c.violated),
                        style="bold red" if c.unexpected else "") if c.evaluated and c.how != "witness" else Text("-")
        reached = Text(f"{c.witnessed} ✗" if c.unexpected else str(c.witnessed),
                       style="bold red" if c.unexpected else "") if c.how == "witness" else Text("-")
        table.add_row(plain(c.id), c.kind, c.how, violated, reached,
                      plain(c.expected or "-"))
    return table
