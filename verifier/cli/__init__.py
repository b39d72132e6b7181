"""The `turnproof` command: subcommands are the modules of this package that define `register`.

A subcommand module imports what its command runs inside `run`, so that `--help` and usage errors
stay fast; the commands whose --timeout bounds the whole run name those modules in the `imports`
default, loaded before the backstop is armed (as they were when every module was loaded up front)."""
from __future__ import annotations

import argparse
import importlib
import os
import pkgutil
import sys
import traceback
from contextlib import nullcontext
from pathlib import Path

from verifier import __version__
from verifier.cli import config
from verifier.cli.common import (
    EXIT_BUG,
    EXIT_CODES_HELP,
    EXIT_ERROR,
    EXIT_INTERRUPTED,
    EXIT_TERMINATED,
    EXIT_UNKNOWN,
    is_default_deadline,
    run_backstop,
)
from verifier.diagnostics import TurnproofError
from verifier.resources import memory, signals
from verifier.resources.signals import (
    OutOfTime,
    Terminated,
    cpu_deadline,
    hard_deadline,
    terminate_on_sigterm,
    was_terminated,
)

DESCRIPTION = """\
turnproof checks the turn structure of a card or tabletop game.

Write the turn structure as a model (models/<game>.yaml: phases, actions with
guards and effects, each citing its rule) and the claims about it as a property
file (properties/<game>.yaml). turnproof explores every reachable state, proves
or refutes each claim, prints counterexample traces that cite the rules they
broke, and finds where the rulebook is ambiguous, contradictory or silent.

start with:
  turnproof check models/wtactics.yaml     verdicts, traces and findings
  turnproof check MODEL --help             every option of a subcommand

project defaults: a [tool.turnproof] table in pyproject.toml (the nearest one from
the current folder up) sets options such as timeout, max-states or baseline; the
command line overrides them (README.md, "Project defaults").
"""


BUG_REPORT = ("a bug in turnproof, not in your files: please report it with the command line and the model "
              "and property files; --debug prints the traceback")
WHOLE_RUN_TIMEOUT = ("check", "lint", "report", "diff", "export", "testgen", "import_mermaid", "mutate",
                     "simulate")    # commands whose --timeout bounds the whole run (the backstop)
DEBUG_HELP = "on an internal error (exit 4), print the full traceback"


def build_parser() -> config.Parser:
    parser = config.Parser(prog="turnproof", description=DESCRIPTION, epilog=EXIT_CODES_HELP,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"turnproof {__version__}")
    parser.add_argument("--debug", action="store_true", help=DEBUG_HELP)
    sub: config.Commands = parser.add_subparsers(title="commands", metavar="COMMAND", required=True)
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{__name__}.{info.name}")
        if hasattr(module, "register"):
            module.register(sub)
    for name, command in parser.commands.items():     # also after the subcommand: `turnproof check M --debug`
        command.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help=DEBUG_HELP)
        command.epilog = (command.epilog or "") + config.help_line(name, command)
    return parser


def main(argv: list[str] | None = None, started: float | None = None) -> int:
    """Run one subcommand; every way out is an exit code (see EXIT_CODES_HELP), never a traceback
    unless --debug (or TURNPROOF_DEBUG=1) asks for one. `started`: when the run began on
    `time.monotonic()`'s clock (the process's start from `__main__`; default now), from which
    --timeout counts (and the default deadline's CPU seconds: from the process's start where
    `started` is given, else from now)."""
    from_process_start = started is not None
    started = signals.now() if started is None else started
    parser = build_parser()
    try:
        found = config.find(Path.cwd())
        if found is not None:
            config.apply(config.load(found), parser)
    except TurnproofError as err:
        print(err.render(), file=sys.stderr)
        return EXIT_ERROR
    args = parser.parse_args(argv)
    for module in getattr(args, "imports", ()):      # what the command runs, loaded before its --timeout counts
        importlib.import_module(module)
    debug = args.debug or os.environ.get("TURNPROOF_DEBUG") == "1"
    backstop = args.timeout if args.handler.__module__.rsplit(".", 1)[-1] in WHOLE_RUN_TIMEOUT else None
    in_cpu = backstop is not None and is_default_deadline(backstop)     # else wall clock, as the user asked
    with terminate_on_sigterm(), (cpu_deadline(started, from_process_start) if in_cpu else nullcontext(started)) \
            as started, hard_deadline(backstop, started), memory.watching(getattr(args, "max_memory", None)):
        args.started = started
        try:
            code = args.handler(args)
            if was_terminated():            # a Terminated that something swallowed: still a terminated run
                raise Terminated()
            return code
        except TurnproofError as err:
            print(err.render(), file=sys.stderr)
            return EXIT_ERROR
        except (MemoryError, memory.OutOfMemory) as err:
            why = f" ({err.words})" if isinstance(err, memory.OutOfMemory) else ""
            print(f"UNKNOWN: out of memory{why} before the run could finish: nothing was decided; "
                  "lower --max-states or raise --max-memory", file=sys.stderr)
            return EXIT_UNKNOWN
        except KeyboardInterrupt:
            print("interrupted", file=sys.stderr)
            return EXIT_INTERRUPTED
        except OutOfTime:
            if debug:
                traceback.print_exc()
            cut = run_backstop(args)
            default = cut is not None and cut.hang is not None
            what = cut.cut_by() if cut is not None and default else f"the --timeout of {args.timeout:g} s"
            more = "--timeout S (wall clock)" if default else "a larger --timeout"
            print(f"UNKNOWN: {what} ran out before the run could finish; nothing "
                  f"was decided (give {more}, or --timeout none for no limit)", file=sys.stderr)
            return EXIT_UNKNOWN
        except Terminated:
            print("terminated", file=sys.stderr)
            return EXIT_TERMINATED
        except Exception as err:
            if debug:
                traceback.print_exc()
            if _for_want_of_memory(err):
                print(f"UNKNOWN: out of memory: a library could not be loaded or a thread started ({type(err).__name__}: "
                      f"{_one_line(err)}); nothing was decided; raise the memory limit (ulimit -v, the "
                      "cgroup)", file=sys.stderr)
                return EXIT_UNKNOWN
            print(f"internal error ({BUG_REPORT}): {type(err).__name__}: {_one_line(err)}", file=sys.stderr)
            return EXIT_BUG


def _for_want_of_memory(err: BaseException) -> bool:
    """Whether `err`, or an error that caused it, is a library failing to load for want of
    memory (a lazy import of numpy's, Numba's or Z3's native code under a tight ulimit -v or
    cgroup), or a thread that could not start under ulimit -v: the run's budget, not a bug."""
    seen: set[int] = set()
    at: BaseException | None = err
    while at is not None and id(at) not in seen:
        seen.add(id(at))
        words = str(at).lower()
        if "failed to map segment" in words or "cannot allocate memory" in words:
            return True
        if "libz3" in words and "not found" in words and _address_space_limited():   # Z3's loader hides why
            return True
        if "can't start new thread" in words and _address_space_limited():           # no room for its stack
            return True
        at = at.__cause__ or at.__context__
    return False


def _address_space_limited() -> bool:
    import resource
    return resource.getrlimit(resource.RLIMIT_AS)[0] != resource.RLIM_INFINITY


def _one_line(err: BaseException) -> str:
    text = " ".join(str(err).split())
    return text[:200] + ("..." if len(text) > 200 else "")
