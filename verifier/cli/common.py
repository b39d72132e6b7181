"""What every subcommand shares: model options, exit codes, atomic output, progress."""
from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

from verifier.diagnostics import Diagnostic, UsageError, printable
from verifier.engines.names import ENGINES, REDUCTIONS, STORES
from verifier.files import write_atomic
from verifier.portfolio.stores import COMPILED_STATES, MEMORY_SHARE, SWITCH_STATES
from verifier.resources.clock import HANG_FACTOR

if TYPE_CHECKING:                  # the subcommands import what they run when they run (a fast --help)
    from verifier.engines.base import ProgressInfo
    from verifier.ir.model import Model
    from verifier.resources import Backstop
    from verifier.result import ModelRun
    from verifier.runner import RunOptions

EXIT_OK = 0          # every claim as expected, no new finding
EXIT_FAILED = 1      # a claim violated or not as expected, or a new unacknowledged finding
EXIT_ERROR = 2       # model, property or usage error
EXIT_UNKNOWN = 3     # a budget left a claim UNKNOWN
EXIT_BUG = 4         # an internal error: a bug in turnproof, never a verdict
EXIT_INTERRUPTED = 130   # SIGINT (Ctrl-C)
EXIT_TERMINATED = 143    # SIGTERM

EXIT_BUG_HELP = "  4  internal error: a bug in turnproof, not in your files (--debug shows the traceback)"



class DefaultDeadline(float):
    """--timeout's value where neither the command line nor [tool.turnproof] gave one: the default
    deadline, counted in CPU seconds of the run and its workers (an explicit --timeout, even of the
    same number, is wall clock)."""


DEFAULT_TIMEOUT = DefaultDeadline(600.0)  # CPU seconds: check, lint, report, diff... end within it without --timeout


def is_default_deadline(timeout: float | None) -> bool:
    """Whether `timeout` is the default deadline (CPU seconds), not a --timeout somebody gave."""
    return isinstance(timeout, DefaultDeadline)


def seconds(text: str) -> float | None:
    """--timeout's value: a positive number of seconds, or 'none' (no limit)."""
    if text.strip().lower() == "none":
        return None
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a number of seconds (or 'none' for no limit)") from None
    if not 0 < value < 1e8:
        raise argparse.ArgumentTypeError(f"{text} is not a positive number of seconds (or 'none' for no limit)")
    return value


EXIT_CODES_HELP = """exit codes:
  0  every claim as expected and no unacknowledged finding
  1  a claim violated or not as expected, or a new unacknowledged finding
  2  model, property or usage error (file:line:col, the offending text and a hint), or a model
     error a reachable state meets (an index out of range, a pop of an empty sequence), with its trace
  3  a budget (--max-states, --rlimit, --max-memory) or the --timeout backstop left a claim or an
     analysis UNKNOWN, or a claim holds only to a depth (HOLDS_TO_DEPTH) that nothing accepted
     (see --accept-bounded)
""" + EXIT_BUG_HELP


def add_model_options(p: argparse.ArgumentParser, timeout: float | None = DEFAULT_TIMEOUT) -> None:
    """--param, --variant, --engine and the budgets; `timeout`: --timeout's default (None: no limit)."""
    p.add_argument("--param", "-D", action="append", default=[], metavar="NAME=VALUE",
                   help="override a parameter (repeatable); VALUE '*' leaves it free for the "
                        "symbolic engine, which then proves claims for every allowed value")
    p.add_argument("--variant", metavar="NAME",
                   help="check one interpretation variant (default: every variant the model declares)")
    p.add_argument("--engine", choices=ENGINES, default="auto",
                   help="auto (default): explicit search for small concrete instances, Z3 for free "
                        "parameters and proofs; explicit: breadth-first search; symbolic: Z3 "
                        "(k-induction, PDR, BMC); bmc / kind / pdr: one symbolic method")
    p.add_argument("--max-states", type=int, metavar="N",
                   help="stop each exploration after N states, Z3 included (what it leaves open is UNKNOWN)")
    p.add_argument("--rlimit", type=int, metavar="UNITS",
                   help="Z3 resource units (its `rlimit`) each claim's proof may spend (default: 120,000,000, "
                        "about a minute of one core); counted by Z3, so the same on every machine at any load")
    p.add_argument("--timeout", type=seconds, metavar="S", default=timeout,
                   help="the backstop: the whole run ends within S seconds of wall clock (and a tenth more plus "
                        "one second, counted from its start) whatever is left; what it cuts is UNKNOWN and the run "
                        "says so (exit 3). The effort itself is counted in states, "
                        "depth and Z3 units, never in seconds, so a run the backstop does not cut gives the "
                        "same answers on every machine. " + (
                            f"Default: {timeout:g} s of CPU (the default deadline: the CPU seconds of the run and "
                            "its workers, so a loaded machine does not cut it, with a wall-clock limit "
                            f"{HANG_FACTOR:g} times as long against hangs only); 'none': no limit"
                            if timeout is not None else "Default: none (no limit)"))
    p.add_argument("--max-memory", type=int, metavar="MB",
                   help="memory the whole run may use, forked workers included (default: 70%% of what the "
                        "cgroup, ulimit or machine allows); a search that reaches it stops, UNKNOWN. With it, "
                        f"the compiled store's state cap is at most what {MEMORY_SHARE * 100:.0f}%% of it holds (16 bytes "
                        f"a state of one 64-bit word, 8.5 more a further word; {COMPILED_STATES:,} at most)")
    p.add_argument("--store", choices=STORES, default=None,
                   help="how the explicit search keeps its states: python (the reference), compact: "
                        "packed states in numpy arrays (12-16 bytes each) expanded a batch at a time, for "
                        "state spaces of millions of states (a state wider than 63 bits takes several 64-bit "
                        "words; one with a variable wider than 63 bits stays in the python store), or "
                        "compiled: the search in machine code generated for the model (Numba; compiled once, "
                        "then cached in ~/.cache/turnproof/compiled or $TURNPROOF_CACHE_DIR; a state wider than 63 "
                        "bits takes several 64-bit words; one with a variable wider than 63 bits goes to the "
                        "python store). "
                        "Termination and obligation claims use the python store with --store compact, the compiled "
                        "store's state graph with --store compiled. "
                        "Default: python, but --engine auto goes on in the compiled store once a search "
                        f"passes {SWITCH_STATES:,} states (in the compact store where the compiled one cannot "
                        "hold the model; sizes only, the same on every machine); each verdict's evidence names "
                        "the store where it decided")
    p.add_argument("--workers", type=int, default=1, metavar="N",
                   help="split the search across N processes (a local Dask cluster); the states are "
                        "partitioned by hash and exchanged level by level, each worker expanding its share by "
                        "the model's compiled code (by the compact store's with --store compact, or where the "
                        "compiled store cannot hold the model)")
    p.add_argument("--scheduler", metavar="tcp://HOST:PORT",
                   help="run the --workers search on the workers of this Dask scheduler instead of a "
                        "local cluster")
    p.add_argument("--dashboard", action="store_true",
                   help="--workers: the local cluster serves Dask's dashboard on a free loopback port (default: "
                        "no HTTP route; the cluster listens on loopback only, TLS with a key made for the run)")
    p.add_argument("--max-depth", type=int, metavar="K", help="deepest BFS level / BMC bound / k")
    p.add_argument("--printed", action="store_true",
                   help="check at the values the rules print (the model's `printed:` map; --param still "
                        "overrides); a claim the budget leaves UNKNOWN there is checked again at the "
                        "defaults, and its verdict is marked as known only at scaled values")
    p.add_argument("--reduce", metavar="LIST", default="symmetry",
                   help="state-space reductions the explicit search may use where the model declares them "
                        "(comma-separated; default and only one so far: symmetry, for `symmetry: players`); "
                        "each verdict names the reductions it used")
    p.add_argument("--no-reduce", action="store_true", help="use no reduction (the same as --reduce none, "
                                                            "and --no-por)")
    p.add_argument("--por", action=argparse.BooleanOptionalAction, default=False,
                   help="partial-order reduction (default off): the explicit search of invariants, reachability "
                        "and deadlocks fires only a stubborn set of independent actions in each state, with "
                        "the visibility condition per claim and the cycle proviso, so the verdicts are those "
                        "of the full search (traces replay but may be longer than the shortest). Not used for "
                        "termination and obligation claims, with --store compact or --workers, or where "
                        "`symmetry: players` applies; a verdict it decided says 'por'")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress display")


def add_budget_options(p: argparse.ArgumentParser, timeout_help: str = "the whole run ends within S seconds; "
                       "past it the command ends UNKNOWN (exit 3) and writes nothing") -> None:
    """--timeout (default DEFAULT_TIMEOUT, the backstop `cli.main` arms) and --max-memory for a command
    without the model options: every command runs under one budget."""
    p.add_argument("--timeout", type=seconds, metavar="S", default=DEFAULT_TIMEOUT,
                   help=f"{timeout_help}. Default: {DEFAULT_TIMEOUT:g} s of CPU (the default deadline; a wall-clock "
                        f"limit {HANG_FACTOR:g} times as long against hangs only); 'none': no limit")
    p.add_argument("--max-memory", type=int, metavar="MB",
                   help="memory the command may use (default: 70%% of what the cgroup, ulimit or machine "
                        "allows); past it the command ends UNKNOWN (exit 3)")


def search_store(store: str | None, distributed: bool) -> str | None:
    """The explicit search's store: `store` as given, but a distributed search (--workers,
    --scheduler) keeps its states in the workers' partitions, which expand by the model's compiled
    code unless --store compact is given (`ExplicitEngine` falls back to the compact store's
    expansion where the compiled store cannot hold the model, and says so in the evidence)."""
    if not distributed:
        return store
    return "compact" if store == "compact" else "compiled"


def parse_reductions(text: str, off: bool) -> frozenset[str]:
    if off or text.strip() == "none":
        return frozenset()
    names = frozenset(x.strip() for x in text.split(",") if x.strip())
    unknown = sorted(names - set(REDUCTIONS))
    if unknown:
        raise UsageError(Diagnostic(f"unknown reduction '{unknown[0]}'",
                                    hint=f"--reduce takes a comma-separated list of: {', '.join(REDUCTIONS)}, "
                                         "or none"))
    return names


def add_output_options(p: argparse.ArgumentParser, formats: Sequence[str]) -> None:
    p.add_argument("--format", "-f", choices=formats, default="text", help="output format (default text)")
    p.add_argument("--output", "-o", metavar="FILE",
                   help="write the output to FILE (atomically) instead of standard output ('-': standard output)")


def parse_params(items: Sequence[str]) -> dict[str, int | None]:
    out: dict[str, int | None] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise UsageError(Diagnostic(f"--param '{item}' is not NAME=VALUE", hint="e.g. --param DECK=20"))
        if value.strip() == "*":
            out[name.strip()] = None
            continue
        try:
            out[name.strip()] = int(value)
        except ValueError:
            raise UsageError(Diagnostic(f"--param {name}: '{value}' is not an integer",
                                        hint="parameters are integers; '*' leaves one free")) from None
    return out


def model_params(path: str, params: dict[str, int | None], variant: str | None, printed: bool) -> dict[str, int | None]:
    """`params` with a derived value given as a parameter (`-D DECK=20`) read as the parameter it
    determines (`lang.derived`); what was read so, on standard error."""
    from verifier.lang import resolve_derived

    resolved = resolve_derived(path, params, variant, printed)
    sys.stderr.write("".join(note.render() + "\n" for note in resolved.notes))
    return resolved.params


def concrete_model(path: str, params: dict[str, int | None], variant: str | None, printed: bool) -> Model:
    """One reading of a model with every parameter fixed; with `printed`, at the values the
    rules print (the model's `printed:` map), which --param still overrides."""
    if any(v is None for v in params.values()):
        raise UsageError(Diagnostic("this command needs a value for every parameter", hint="drop '=*' from --param"))
    from verifier.lang import load_at_printed, load_model

    params = model_params(path, params, variant, printed)
    model = load_model(path, params, variant)
    if printed:
        if model.printed is None:
            raise UsageError(Diagnostic(f"{path} declares no printed values",
                                        hint="add printed: {NAME: value} to the model, or give --param NAME=VALUE"))
        model = load_at_printed(path, model, params, variant)
    return model.instantiate()


def run_backstop(args: argparse.Namespace) -> Backstop | None:
    """The engines' backstop: a little before --timeout after the run started (`signals.engines_stop`:
    the rest is for writing; `cli.main` sets `args.started`), on the run's clock (the one
    `resources.signals` rings its alarm by: wall clock for --timeout, CPU seconds for the default
    deadline)."""
    from verifier.resources import Backstop, signals

    if args.timeout is None:
        return None
    started = getattr(args, "started", signals.now())
    at = signals.engines_stop(args.timeout, started)
    if is_default_deadline(args.timeout):
        return Backstop.default_deadline(at, args.timeout, signals.clock())
    return Backstop(at, f"--timeout ({args.timeout:g} s)", signals.clock())


def deadline_words(timeout: float | None) -> str:
    """The run's backstop, in the words a user reads."""
    from verifier.resources import default_cpu_owner

    if timeout is None:
        return "no --timeout"
    return default_cpu_owner(timeout) if is_default_deadline(timeout) else f"--timeout {timeout:g} s"


def run_options(args: argparse.Namespace, consistency: bool = True) -> RunOptions:
    from verifier.engines.base import SearchOptions
    from verifier.resources import Budget
    from verifier.runner import RunOptions

    limits = (("--max-states", args.max_states), ("--max-depth", args.max_depth), ("--rlimit", args.rlimit),
              ("--max-memory", args.max_memory))
    for flag, value in limits:
        if value is not None and value < (0 if flag == "--max-depth" else 1):
            raise UsageError(Diagnostic(f"{flag} {value} is not a positive number", hint=f"e.g. {flag} 100"))
    given = [f"{flag} {value}" for flag, value in limits if value is not None]
    budget = Budget(max_states=args.max_states, max_depth=args.max_depth, rlimit=args.rlimit,
                    max_memory_mb=args.max_memory, owner=", ".join(given) or "the default budget",
                    backstop=run_backstop(args))
    if args.workers < 1:
        raise UsageError(Diagnostic(f"--workers {args.workers}: needs at least one worker", hint="e.g. --workers 2"))
    search = SearchOptions(search_store(args.store, args.workers > 1 or bool(args.scheduler)), args.workers,
                           args.scheduler, por=args.por and not args.no_reduce, dashboard=args.dashboard)
    return RunOptions(search=search, params=parse_params(args.param), variant=args.variant, engine=args.engine,
                      budget=budget, consistency=consistency,
                      properties=getattr(args, "properties", None),
                      use_properties=not getattr(args, "no_properties", False),
                      printed=args.printed, reductions=parse_reductions(args.reduce, args.no_reduce))


def exit_code(runs: Sequence[ModelRun]) -> int:
    results = [r for run in runs for r in run.results]
    failed = any(not r.as_expected and not r.is_open for r in results)
    if failed or any(run.new_findings for run in runs):
        return EXIT_FAILED
    if any(run.model_errors for run in runs):
        return EXIT_ERROR                 # the model itself fails: not a budget, not a verdict
    return EXIT_UNKNOWN if left_unknown(runs) else EXIT_OK


def left_unknown(runs: Sequence[ModelRun]) -> bool:
    """Whether a budget (or an engine giving up) left a claim or the analyses UNKNOWN where
    that was not the expected verdict, or a claim holds only to a depth nobody accepted (a
    model error is none of these: `ModelRun.model_errors`)."""
    results = [r for run in runs for r in run.results if not r.model_error]
    return any(r.is_open and (not r.as_expected or r.property.expected is None)
               for r in results) or any(run.analyses_unknown and not run.analyses_model_error for run in runs)


def model_error_note(runs: Sequence[ModelRun], code: int | None = None) -> str:
    """Closing lines (for standard error) naming each model error met: the model itself fails in
    a state its trace reaches (shown with the claim), which no budget changes (exit 2, or 1 where
    a claim or finding is not as expected too); `code`: the exit the command gives (default:
    `check`'s, `exit_code`)."""
    errors = [error for run in runs for error in run.model_errors]
    if not errors:
        return ""
    shown = errors[:10] + ([f"and {len(errors) - 10} more"] if len(errors) > 10 else [])
    code = exit_code(runs) if code is None else code
    why = "exit 2" if code == EXIT_ERROR else f"exit {code}: a claim or finding is not as expected as well"
    return "".join(f"{printable(e, keep_newlines=False)}\n" for e in shown) + (
        "the model itself fails there (not a budget: more time or memory changes nothing); fix the rule the trace "
        f"ends with ({why})\n")


def warnings_note(runs: Sequence[ModelRun]) -> str:
    """What loading the model warned of (for standard error): each warning once, `file:line:col:
    warning: ...` with its line and hint. A warning never changes the exit code."""
    shown: list[Diagnostic] = []
    for run in runs:
        shown += [w for w in run.warnings if w not in shown]
    return "".join(w.render() + "\n" for w in shown)


def budget_note(runs: Sequence[ModelRun], timeout: float | None, code: int | None = None) -> str:
    """A closing line (for standard error) where the budget left claims or analyses open:
    which budget it was and how to give more; and one for bounded verdicts the gate does not
    accept; after the model errors' lines (`model_error_note`, naming exit `code`)."""
    from verifier.result import Verdict

    if not left_unknown(runs):
        return model_error_note(runs, code)
    results = [r for run in runs for r in run.results if not r.as_expected]
    bounded = sum(r.verdict is Verdict.HOLDS_TO_DEPTH and r.is_open for r in results)
    note = "" if not bounded else (
        f"{bounded} claim{'s' * (bounded != 1)} HOLDS_TO_DEPTH only (no counterexample up to a depth), which the gate "
        "counts as UNKNOWN: write `expected: HOLDS_TO_DEPTH` on the claim, or give --accept-bounded N on the "
        "command line, to accept a bounded verdict\n")
    open_claims = sum(r.verdict is Verdict.UNKNOWN and not r.model_error for run in runs for r in run.results)
    analyses = any(run.analyses_unknown and not run.analyses_model_error for run in runs)
    what = " and ".join(x for x in (f"{open_claims} claim{'s' * (open_claims != 1)}" if open_claims else "",
                                    "the analyses" if analyses else "") if x)
    note = model_error_note(runs, code) + note
    if not what:
        return note
    stops = sorted({r.stop.owner for run in runs for r in run.results if r.verdict is Verdict.UNKNOWN
                    and r.stop is not None and r.stop.kind.is_budget})
    by = f"stopped by {', '.join(stops)}" if stops else "each reason says what stopped it"
    run = "--timeout S (wall clock; 'none': no limit) or a larger --max-memory" if is_default_deadline(timeout) \
        else "a larger --timeout or --max-memory"
    return note + (f"{what} left UNKNOWN ({by}; the backstop: {deadline_words(timeout)}): a larger --max-states or "
                   f"--rlimit gives the searches and Z3 more, {run} the run\n")


def add_gate_options(p: argparse.ArgumentParser) -> None:
    """--accept-bounded: on the command line only (never [tool.turnproof], which a pull request
    can change)."""
    p.add_argument("--accept-bounded", type=int, metavar="N",
                   help="count a bounded verdict (HOLDS_TO_DEPTH: no counterexample up to depth k) as holding "
                        "where k >= N; without it, only a claim that says `expected: HOLDS_TO_DEPTH` accepts "
                        "one, and any other is UNKNOWN for the gate (exit 3)")


GATE_OPTIONS = ("engine", "max_depth", "max_states", "timeout", "max_memory", "store", "workers", "por",
                "reduce", "printed", "accept_bounded")


def gate_config(args: argparse.Namespace) -> dict[str, object]:
    """The options a verdict depends on (engine, depths, budgets, reductions), as a baseline
    records them: a run under other ones is a change for the gate, whether the command line or
    [tool.turnproof] set them."""
    config = {name.replace("_", "-"): getattr(args, name, None) for name in GATE_OPTIONS}
    config["reduce"] = ",".join(sorted(parse_reductions(args.reduce, args.no_reduce))) or "none"
    return config


def accept_bounded(args: argparse.Namespace) -> int | None:
    depth = getattr(args, "accept_bounded", None)
    if depth is not None and depth < 0:
        raise UsageError(Diagnostic(f"--accept-bounded {depth} is not a depth", hint="e.g. --accept-bounded 20"))
    return depth


def write_output(text: str, output: str | None) -> None:
    """To standard output (no -o, or `-o -`), or atomically to a file (see `files.write_atomic`)."""
    if output is None or output == "-":
        sys.stdout.write(text)
        return
    write_atomic(output, text)


def wants_progress(quiet: bool) -> bool:
    """Whether to draw progress: on an interactive terminal, outside CI, unless --quiet."""
    return not quiet and sys.stderr.isatty() and os.environ.get("CI") != "true"


class StatusLine:
    """One progress line on standard error, redrawn in place; silent where `wants_progress` says no."""

    CLEAR_WIDTH = 70

    def __init__(self, quiet: bool):
        self.enabled = wants_progress(quiet)

    def show(self, text: str) -> None:
        if self.enabled:
            sys.stderr.write("\r" + text)
            sys.stderr.flush()

    def done(self) -> None:
        if self.enabled:                   # also what forked children wrote
            sys.stderr.write("\r" + " " * self.CLEAR_WIDTH + "\r")
            sys.stderr.flush()


def _progress_name(backstop: Backstop) -> str:
    return "the default CPU budget" if backstop.hang is not None else "the --timeout"


class Progress(StatusLine):
    """States, depth and rate of a search, and what is left of the run's backstop."""

    CLEAR_WIDTH = 110

    def __init__(self, quiet: bool, backstop: Backstop | None = None):
        super().__init__(quiet)
        self._last = 0.0
        self._backstop = backstop

    def __call__(self, info: ProgressInfo) -> None:
        now = time.monotonic()
        if not self.enabled or now - self._last < 0.2:
            return
        self._last = now
        left = "" if self._backstop is None else \
            f"  ({self._backstop.left():.0f} s of {_progress_name(self._backstop)} left)"
        self.show(f"  {info.states:,} states  depth {info.depth}  {info.rate:,.0f} states/s  {info.elapsed:.1f} s"
                  f"{left}   ")
