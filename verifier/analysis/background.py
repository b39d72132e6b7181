"""One reading's analyses in a forked child while the parent checks the next reading's claims.

The analyses of a reading need its state space, which the claims' search has
just kept (`explicit.keeping_searches`); a child forked at that moment sees it
without copying, runs `analyse_model` and sends back its findings, whether its
scan saw every state, and the order-dependence answers it found (so later
readings do not ask Z3 again). The parent then rebuilds a light `Context` on
the same kept space for the comparisons across readings. Without `fork` (not
POSIX) or a second CPU, or when a child fails, the analyses run in the parent
as before: the findings are the same either way.
"""
from __future__ import annotations

import multiprocessing
import os
from typing import Callable

from verifier.analysis.context import Context, Deadline
from verifier.engines.base import Budget
from verifier.ir.model import Model
from verifier.result import Finding

Analyse = Callable[[Model, Budget, dict], tuple[Context, list[Finding]]]


def can_fork() -> bool:
    if "fork" not in multiprocessing.get_all_start_methods():
        return False
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return cpus >= 2


class Job:
    """The analyses of one reading, started at once (forked) or run when asked for (inline)."""

    def __init__(self, analyse: Analyse, model: Model, budget: Budget, memo: dict, fork: bool):
        self.analyse, self.model, self.budget, self.memo = analyse, model, budget, memo
        self.reply: tuple | None = None
        self.process = None
        if fork:
            context = multiprocessing.get_context("fork")
            self.pipe, child_end = context.Pipe(duplex=False)
            self.process = context.Process(target=self._child, args=(child_end,), daemon=True)
            self.process.start()
            child_end.close()

    def _child(self, pipe) -> None:
        try:
            ctx, findings = self.analyse(self.model, self.budget, self.memo)
            pipe.send((findings, ctx.scan_complete, ctx.memo))
        except BaseException as err:  # noqa: BLE001 - reported to the parent, which runs it again
            pipe.send(repr(err))
        finally:
            pipe.close()

    def poll(self) -> None:
        """Take the child's reply if it is there (its Z3 answers then serve the next readings)."""
        if self.process is not None and self.reply is None and self.pipe.poll():
            self._receive()

    def _receive(self) -> None:
        try:
            reply = self.pipe.recv()
        except (EOFError, OSError):
            reply = None
        self.process.join()
        self.pipe.close()
        if isinstance(reply, tuple):
            self.reply = reply
            for key, answers in reply[2].items():
                self.memo.setdefault(key, {}).update(answers)
        else:
            self.process = None            # failed: `result` runs the analyses here

    def result(self) -> tuple[Context, list[Finding]]:
        if self.process is not None and self.reply is None:
            self._receive()
        if self.reply is None:
            return self.analyse(self.model, self.budget, self.memo)
        findings, scan_complete, _memo = self.reply
        ctx = Context.create(self.model, self.budget, Deadline(self.budget.timeout), self.memo)
        if ctx.explicit:
            ctx.explore()                  # the kept space: no search
            ctx.scan_complete = scan_complete
        return ctx, findings
