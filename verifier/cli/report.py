"""`turnproof report MODEL... -o DIR`: HTML and Markdown pages, diagrams and an index."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from verifier.cli.common import (
    EXIT_BUG_HELP,
    EXIT_ERROR,
    EXIT_UNKNOWN,
    Progress,
    accept_bounded,
    add_gate_options,
    add_model_options,
    budget_note,
    exit_code,
    left_unknown,
    run_backstop,
    run_options,
    warnings_note,
)
from verifier.cli.config import Commands
from verifier.diagnostics import Diagnostic, TurnproofError, UsageError, printable
from verifier.report.diagrams import SMALL_GRAPH_LIMIT, WHOLE_GRAPH_LIMIT
from verifier.resources.signals import OutOfTime, after_cut, deadline_name, past_deadline

if TYPE_CHECKING:                  # imported where they run (a fast --help)
    from verifier.ir.model import Model
    from verifier.report.playouts import PlayoutView
    from verifier.result import ModelRun

PLAYOUTS = 200      # games per model in the Playouts section

EXIT_HELP = """exit codes:
  0  the report was written (whatever the verdicts: the pages show them)
  1  with --gate: a claim not as expected or an unacknowledged finding (the report is written)
  2  model, property or usage error: nothing is written and the previous report stays as it was
  3  a budget (--timeout, --max-states, --max-memory) left a claim or the analyses UNKNOWN
     (the report is written, saying what was left UNKNOWN)
""" + EXIT_BUG_HELP


def register(sub: Commands) -> None:
    p = sub.add_parser(
        "report", help="write HTML and Markdown reports with phase and state diagrams",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Check each MODEL (its claims from properties/<model>.yaml and the rules-consistency "
                    "analyses) and write a report folder: index.html and index.md listing every game, "
                    "FINDINGS.md and manifest.json, and a folder per game: <game>/index.html and index.md with "
                    "the phase diagram, the explored state graph, random playouts' statistics with plots "
                    "(--playouts), every verdict with its engine and statistics and every finding with its "
                    "evidence; beside them each trace on a page of its own, drawn on the phase diagram, and "
                    "the diagrams as SVG and DOT. HTML pages need no network and no JavaScript; diagrams "
                    "other than the phase diagram and the state graph load when scrolled to. turnproof writes "
                    "into the folder and removes only the files of its own earlier report (listed in "
                    "manifest.json, unchanged since); it refuses a folder holding its inputs or the project, "
                    "and files of the same names it did not write (unless --force). A failed run leaves the "
                    "previous report as it was.",
        epilog="examples:\n"
               "  turnproof report models/*.yaml -o reports\n"
               "  turnproof report models/wtactics.yaml -o out/wt --param DRAW_PILE=2\n"
               "  turnproof report models/alice.yaml -o out/alice --graph-limit 300\n\n" + EXIT_HELP)
    p.add_argument("models", nargs="+", metavar="MODEL", help="model files (YAML, see docs/LANGUAGE.md)")
    p.add_argument("-o", "--output", metavar="DIR",
                   help="the report folder to write into (required, unless output-dir is set in [tool.turnproof])")
    p.add_argument("-p", "--properties", metavar="FILE",
                   help="property file (only with one MODEL; default: properties/<model>.yaml)")
    p.add_argument("--no-properties", action="store_true", help="check no claims, only consistency")
    p.add_argument("--no-consistency", action="store_true", help="skip the rules-consistency analyses")
    add_model_options(p)
    add_gate_options(p)
    p.add_argument("--graph-limit", type=int, default=WHOLE_GRAPH_LIMIT, metavar="N",
                   help=f"draw every state when there are at most N (default {WHOLE_GRAPH_LIMIT}; up to "
                        f"{SMALL_GRAPH_LIMIT} each is a box listing the values that set it apart, beyond that a "
                        "numbered circle); otherwise group them by phase")
    p.add_argument("--graph-states", type=int, default=300_000, metavar="N",
                   help="explore at most N states for the state graph (default 300000; a larger space is "
                        "drawn partially, and says so)")
    p.add_argument("--no-graph", action="store_true", help="do not explore or draw the state graph")
    p.add_argument("--playouts", type=int, default=PLAYOUTS, metavar="N",
                   help=f"play N seeded random games of each model (its first reading) for the Playouts "
                        f"section: game and turn lengths, how often each action and phase comes up, hand "
                        f"sizes, with plots (default {PLAYOUTS}, seed 0, so the same model gives the same "
                        f"section; 0 leaves it out; turnproof simulate plays more)")
    p.add_argument("--timings", action="store_true",
                   help="show run times on the pages (they change on every run; without them the same "
                        "models give the same files, so a committed report folder stays unchanged)")
    p.add_argument("--force", action="store_true",
                   help="overwrite files of the report's names in DIR that turnproof did not write (nothing "
                        "else in DIR is touched)")
    p.add_argument("--gate", action=argparse.BooleanOptionalAction, default=False,
                   help="exit as `turnproof check` does (see exit codes); --no-gate overrides gate = true "
                        "in [tool.turnproof]")
    p.set_defaults(handler=run, imports=("verifier.runner", "verifier.report.pages", "verifier.report.site",
                                         "verifier.stategraph", "verifier.playout.play"))


def run(args: argparse.Namespace) -> int:
    from verifier.report.pages import build_game
    from verifier.report.site import check_output, write_site
    from verifier.result import accepting_bounded
    from verifier.runner import check_model

    if not args.output:
        raise UsageError(Diagnostic("report needs the folder to write: -o DIR",
                                    hint='e.g. -o reports, or output-dir = "reports" under [tool.turnproof] '
                                         "in pyproject.toml"))
    if args.properties and len(args.models) > 1:
        raise UsageError(Diagnostic("-p/--properties goes with a single MODEL",
                                    hint="each model's claims are read from properties/<model>.yaml"))
    if args.graph_limit < 0 or args.graph_states < 1:
        raise UsageError(Diagnostic("--graph-limit must be 0 or more and --graph-states at least 1"))
    if args.playouts < 0:
        raise UsageError(Diagnostic(f"--playouts {args.playouts}: the number of games is 0 or more",
                                    hint="0 leaves the Playouts section out"))
    options = run_options(args, consistency=not args.no_consistency)
    depth = accept_bounded(args)
    check_output(args.output, [*args.models, *([args.properties] if args.properties else [])], args.force)
    _check_names(args.models, options.params, options.printed)      # before minutes of checking: two pages of one name
    all_runs = []
    for path in args.models:                       # every model is checked before anything is written
        progress = Progress(args.quiet, run_backstop(args))
        try:
            all_runs.append(accepting_bounded(check_model(path, options, progress), depth))
        finally:
            progress.done()
        sys.stderr.write(warnings_note(all_runs[-1]))
    pages = [build_game(runs, state_graph=None if args.no_graph else _state_graph(runs[0].model, args),
                        graph_limit=args.graph_limit)
             for runs in all_runs]
    playout_errors = []
    for page in pages:
        page.playouts, error = _playouts(page.model, args.playouts)
        playout_errors += [error] if error else []
    left: list[str] = []
    written = write_site(pages, args.output, timings=args.timings, force=args.force, left=left)
    if left:
        sys.stderr.write(printable(f"{len(left)} file{'s' * (len(left) != 1)} of the earlier report in {args.output} "
                                   f"{'were' if len(left) != 1 else 'was'} left in place (changed since, or listed "
                                   f"without a SHA-256 by an older turnproof), e.g. {left[0]}: remove "
                                   f"{'them' if len(left) != 1 else 'it'} by hand if not wanted\n"))
    if not args.quiet:
        sys.stderr.write(f"wrote {len(written)} files to {args.output}: open {Path(args.output) / 'index.html'} "
                         f"({len(pages)} game{'s' if len(pages) != 1 else ''}, one folder each)\n")
    code = _exit(all_runs, bool(playout_errors), args.gate)
    sys.stderr.write("".join(playout_errors) + budget_note([run for runs in all_runs for run in runs], args.timeout,
                                                           code))
    return code


def _exit(all_runs: list[list[ModelRun]], playout_error: bool, gate: bool) -> int:
    """The exit of a report of `all_runs` (one list of runs per model; `playout_error`: a playout met a
    model error): with `gate`, the worst of each model's `check` exit; else 2 on a model error, 3
    where a budget cut it short, 0 otherwise."""
    if gate:
        codes = [exit_code(runs) for runs in all_runs] + [EXIT_ERROR] * playout_error
        return max(codes, key=lambda c: {0: 0, 3: 1, 1: 2}.get(c, 3))
    if playout_error or any(run.model_errors for runs in all_runs for run in runs):
        return EXIT_ERROR                               # the model itself fails: the pages and the message say where
    cut_short = past_deadline() or any(left_unknown(runs) for runs in all_runs)
    return EXIT_UNKNOWN if cut_short else 0            # a budget cut it short: the pages say where


def _playouts(model: Model, games: int) -> tuple[PlayoutView | None, str]:
    """`games` seeded random playouts of `model` and their plots, or None (none asked for, free
    parameters, the run's backstop passed, or nothing to play): all `games` of them, whatever the
    machine's speed, so that the page is the same on every machine; and the model error a game
    met, rendered ("" when none: the page then goes without the section, and the run exits 2)."""
    from verifier.playout.play import PlayoutModelError, PlayoutOptions, simulate
    from verifier.report.playouts import playout_view

    if games == 0 or not model.is_concrete or past_deadline():
        return None, ""
    try:
        sim = simulate(model.instantiate(), [], PlayoutOptions(games=games, seed=0),
                       path=model.path)
        return playout_view(sim), ""
    except PlayoutModelError as err:
        return None, err.render() + "\n"
    except TurnproofError:
        return None, ""
    except OutOfTime:                   # the --timeout's backstop: the page goes without the section
        after_cut()
        return None, ""


def _check_names(paths: list[str], params: dict, printed: bool) -> None:
    from verifier.lang import load_model, resolve_derived
    from verifier.report.pages import slugify
    from verifier.report.site import check_names

    check_names([(slugify(load_model(path, resolve_derived(path, params, None, printed).params).name), path)
                 for path in paths])


def _state_graph(model, args: argparse.Namespace):
    """The game's state graph for its page, or why there is none: past the --timeout none is
    explored (what was decided is written first), and one the backstop cuts is left out."""
    from verifier.stategraph import game_graph

    if past_deadline():
        return f"Not drawn: {deadline_name()} had passed."
    try:
        return game_graph(model, args.graph_limit, args.graph_states)
    except OutOfTime:
        after_cut()
        return f"Not drawn: {deadline_name()} passed while its states were explored."
