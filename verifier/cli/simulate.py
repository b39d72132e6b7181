"""`turnproof simulate`: random playouts of a model and their statistics."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from verifier.cli.common import (
    EXIT_BUG_HELP,
    EXIT_FAILED,
    EXIT_OK,
    EXIT_UNKNOWN,
    add_budget_options,
    concrete_model,
    parse_params,
    run_backstop,
    wants_progress,
    write_output,
)
from verifier.cli.config import Commands
from verifier.diagnostics import Diagnostic, UsageError
from verifier.files import write_atomic

MAX_GAMES = 10_000_000
MAX_STEPS = 10_000_000

EPILOG = """\
examples:
  turnproof simulate models/aeons_end.yaml --games 1000 --seed 7
  turnproof simulate models/wtactics.yaml -D HAND_LIMIT=7 -D OPENING=7 -D DRAW_PILE=13 --games 500
  turnproof simulate models/shadow_era.yaml --printed --games 500        (the numbers the rules print)
  turnproof simulate models/alice.yaml --policy weights.yaml --format json -o alice-playouts.json
  turnproof simulate models/shadow_era.yaml --html out/shadow-playouts     (page with plots)

A policy file weighs the actions (default 1; 0: only when nothing else is enabled):
  weights:
    play_gem: 3
    "end Main": 0.5
  default: 1

Each game is seeded with (--seed, game number): the same command gives the same
statistics and the same traces. Claims are evaluated on every state of every
game: invariants, the safety part of ordering and bounded-response claims,
deadlock freedom (a game stuck outside an end of game), and reachable claims
(how many games reached them). A violation not as expected comes with the first
game's trace, replayed on the model (--traces all: every violation's). Termination and other claims about infinite behaviour
cannot be refuted by a finite playout; `turnproof check` decides them.

exit codes:
  0  no claim violated unless the property file expects it
  1  a claim violated in a playout that the property file does not expect to be
  2  model, property, policy or usage error
  3  --timeout stopped the run before --games were played
""" + EXIT_BUG_HELP


def register(sub: Commands) -> None:
    p = sub.add_parser("simulate", help="play random games on the model and report how it plays",
                       formatter_class=argparse.RawDescriptionHelpFormatter,
                       description="Play random games on MODEL's semantics (no state is stored, so the printed "
                                   "numbers play too) and report game and turn lengths, how often each action "
                                   "and phase fires, a hand-size histogram and the claims violated on the way.",
                       epilog=EPILOG)
    p.add_argument("model", help="a model file (YAML, see docs/LANGUAGE.md)")
    p.add_argument("--games", "-n", type=int, default=100, metavar="N", help="games to play (default 100)")
    p.add_argument("--seed", type=int, default=0, metavar="S", help="random seed (default 0)")
    p.add_argument("--policy", default="uniform", metavar="uniform|FILE",
                   help="how moves are picked: uniform (default: an enabled action uniformly, then one of "
                        "its choices) or a YAML file of action weights")
    p.add_argument("--max-steps", type=int, default=1000, metavar="N",
                   help="stop a game after N steps (counted as 'cut'; default 1000)")
    add_budget_options(p, "start no game after S seconds, the figures covering the games played (exit 3); "
                          "a game still running past S and a grace is cut, UNKNOWN (exit 3)")
    p.add_argument("--hand", metavar="VAR",
                   help="variable of the hand-size histogram (default: 'hand' when the model declares it)")
    p.add_argument("--param", "-D", action="append", default=[], metavar="NAME=VALUE",
                   help="override a parameter (repeatable)")
    p.add_argument("--printed", action="store_true",
                   help="play at the values the rules print (the model's `printed:` map; --param still overrides)")
    p.add_argument("--variant", metavar="NAME", help="the reading to play (default: the model's first variant)")
    p.add_argument("-p", "--properties", metavar="FILE", help="property file (default: properties/<model>.yaml)")
    p.add_argument("--no-properties", action="store_true", help="evaluate no claims")
    p.add_argument("--format", "-f", choices=("text", "json"), default="text", help="output format (default text)")
    p.add_argument("--output", "-o", metavar="FILE", help="write the output to FILE (atomically)")
    p.add_argument("--html", metavar="DIR", help="also write DIR/index.html with the plots (SVG and PNG files)")
    p.add_argument("--traces", choices=("unexpected", "all", "none"), default="unexpected",
                   help="which first violations to replay: of the claims not as expected (default), of every "
                        "violated claim (those the property file expects too), or none")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar, and only the summary lines (no tables or traces)")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from verifier.lang import default_properties_path, load_properties
    from verifier.playout.play import PlayoutOptions, simulate
    from verifier.playout.policy import UNIFORM, load_policy

    _check_counts(args)
    model = concrete_model(args.model, parse_params(args.param), args.variant, args.printed)
    claims = []
    props_path = args.properties or (None if args.no_properties else default_properties_path(args.model))
    if props_path and not args.no_properties:
        claims = load_properties(props_path, model)
    policy = UNIFORM if args.policy == "uniform" else load_policy(args.policy, model)
    options = PlayoutOptions(args.games, args.seed, args.max_steps, policy, args.hand, run_backstop(args))
    with _progress(args.games, args.quiet) as done:
        sim = simulate(model, claims, options, args.model, done)
    if args.format == "json":
        text = json.dumps(sim.to_json(), indent=2) + "\n"
    else:
        from verifier.report.simulation import render_simulation
        text = render_simulation(sim, color=args.output is None and sys.stdout.isatty(), brief=args.quiet,
                                 traces=args.traces)
    if args.html:
        _write_html(sim, Path(args.html))
    write_output(text, args.output)
    if sim.unexpected_violations:
        return EXIT_FAILED
    return EXIT_UNKNOWN if sim.timed_out else EXIT_OK


def _check_counts(args: argparse.Namespace) -> None:
    for name, value, top in (("--games", args.games, MAX_GAMES), ("--max-steps", args.max_steps, MAX_STEPS)):
        if not 1 <= value <= top:
            raise UsageError(Diagnostic(f"{name} {value} is out of range", hint=f"give 1 to {top:,}"))


def _write_html(sim, folder: Path) -> None:
    from verifier.report.plots import simulation_plots
    from verifier.report.simulation_page import simulation_html

    plots = simulation_plots(sim)
    page = simulation_html(sim, plots)
    for plot in plots:
        write_output(plot.svg, str(folder / f"{plot.stem}.svg"))
        write_atomic(folder / f"{plot.stem}.png", plot.png)
    write_output(page, str(folder / "index.html"))


class _progress:
    """A rich progress bar over the games on an interactive terminal; nothing otherwise."""

    def __init__(self, games: int, quiet: bool):
        self.games = games
        self.enabled = wants_progress(quiet) and games >= 50
        self.bar = None

    def __enter__(self):
        if not self.enabled:
            return None
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TimeRemainingColumn,
        )

        self.bar = Progress("playouts", BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                            console=Console(file=sys.stderr), transient=True)
        self.bar.start()
        task = self.bar.add_task("playouts", total=self.games)
        return lambda n: self.bar.update(task, completed=n) if n % 10 == 0 or n == self.games else None

    def __exit__(self, *_: object) -> None:
        if self.bar is not None:
            self.bar.stop()
