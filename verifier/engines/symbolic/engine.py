"""The symbolic engine: claims decided with Z3 by BMC, k-induction, PDR and ranking functions.

Strategies: ``bmc`` (bounded: VIOLATED or HOLDS_TO_DEPTH k), ``kind``
(k-induction), ``pdr`` (Spacer) and ``all`` (k-induction with a small k, then
PDR, then BMC to the depth limit). `CheckResult.engine` names the method that
decided: "bmc", "k-induction", "pdr" or "ranking".

A proof is reported as PROVED when it covers every value of the parameters
left free (or the model has none); with every parameter fixed, the same proof
covers only those values and is reported as HOLDS, with the method named.
Counterexamples are replayed on the reference semantics before they are
reported; one that does not replay is an engine bug, UNKNOWN "internal: ...".
"""
from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import z3

from verifier.engines.base import Budget, ProgressFn
from verifier.engines.explicit import explore
from verifier.engines.memory import bound_z3, z3_out_of_memory
from verifier.engines.symbolic import monitor_proof
from verifier.engines.symbolic.bmc import bmc
from verifier.engines.symbolic.core import Deadline, Outcome, Safety
from verifier.engines.symbolic.encode import FALSE, Encoding, Term, Unsupported, conj, disj, negate
from verifier.engines.symbolic.kinduction import kinduction
from verifier.engines.symbolic.mined import MINED, RUN_SECONDS, Mined, mine, prove
from verifier.engines.symbolic.pdr import pdr
from verifier.engines.symbolic.ranking import synthesize
from verifier.engines.symbolic.render import render
from verifier.engines.symbolic.witness import Concrete, InternalError, concretise, raises, stuck
from verifier.ir.model import Model
from verifier.ir.props import DeadlockFree, Invariant, Obligation, Property, Reachable, Terminates, map_claim
from verifier.props.monitor import MONITOR_PREFIX
from verifier.resources import model_error
from verifier.result import CheckResult, Stats, Verdict
from verifier.semantics import EvalError, evaluate

STRATEGIES = ("bmc", "kind", "pdr", "all")
DEFAULT_TIMEOUT = 60.0        # seconds per claim when the budget sets none
DEFAULT_DEPTH = 20            # BMC bound / largest k when the budget sets none
ALL_K = 8                     # k-induction's share of strategy "all" ...
MINED_K = 4                   # ... when lemmas mined from explored states follow it (they make it cheaper)
LEMMA_SHARE = 0.4             # of a monitored claim's time, for its proof with lemmas (`monitor_proof`)
LEMMAS_SHOWN = 6              # lemmas named in a result's reason
MINE_SHARE = 0.1              # of a claim's time, for mining the lemmas (once per model) ...
MINE_LEAST = 2.0              # ... this many seconds at least: a claim with less leaves it to a later one
FREE_STATES = 40_000          # with free parameters: states of a search at their defaults, to mine lemmas from
MINED_SHARE = 0.6             # of the time left after k-induction, for induction and PDR with mined lemmas (when given)


class SymbolicEngine:
    """Decides invariants, reachability, deadlock freedom, termination and obligations with Z3."""

    name = "symbolic"

    def __init__(self, strategy: str = "all", default_timeout: float = DEFAULT_TIMEOUT,
                 default_depth: int = DEFAULT_DEPTH, explored: np.ndarray | None = None,
                 memo: dict | None = None):
        """`explored`: reachable states of the (concrete) model, one column per slot, that an
        explicit search has seen; strategy "all" then mines lemmas from them (`mined.py`), once
        per `memo` (a dict kept by the caller: later engines given it start where this one left)."""
        if strategy not in STRATEGIES:
            raise ValueError(f"unknown symbolic strategy {strategy!r}; choose one of {', '.join(STRATEGIES)}")
        self.strategy = strategy
        self.default_timeout = default_timeout
        self.default_depth = default_depth
        self.explored = explored
        self.memo = {} if memo is None else memo

    # ---- the Engine protocol
    def check(self, model: Model, properties: Sequence[Property], budget: Budget,
              progress: ProgressFn | None = None) -> list[CheckResult]:
        if budget.time_left() == 0:
            return [self._unknown(model.instantiate(), p, "--timeout reached before Z3 could start")
                    for p in properties]
        try:
            bound_z3()
            enc = Encoding(model)
            enc.deadline = budget.deadline
            setup_error = self._initial_error(enc, budget)
        except Unsupported as err:
            return [self._unknown(model.instantiate(), p, f"the symbolic engine cannot encode this model: {err}")
                    for p in properties]
        except z3.Z3Exception as err:
            return [self._unknown(model.instantiate(), p, z3_out_of_memory(err) or f"internal: Z3 failed: {err}")
                    for p in properties]
        if setup_error is not None:
            return [replace(self._unknown(enc.model, p, setup_error), stop=model_error(setup_error))
                    for p in properties]
        run = _Run(self, enc, budget)
        if len(properties) == 1:
            return [run.claim(properties[0])]
        if budget.time_left() is None:            # each claim its own default time: none starves another
            return [run.claim(p, CLAIM_SHARE) for p in properties]
        return run.in_rounds(properties)

    def _initial_error(self, enc: Encoding, budget: Budget) -> str | None:
        s = z3.Solver()
        left = budget.time_left()
        s.set("timeout", 30000 if left is None else max(1, int(min(30.0, left) * 1000)))
        s.add(enc.init_error(enc.cur))
        if s.check() != z3.sat:
            return None
        m = s.model()
        where = ", ".join(f"{n}={m.eval(p, model_completion=True)}" for n, p in enc.params.items())
        return ("model error in the initial states" + (f" when {where}" if where else "") +
                ": an initial value is outside its variable's range or cannot be evaluated"
                + ("; narrow the parameter's declared min/max" if where else ""))

    @staticmethod
    def _unknown(model: Model, p: Property, reason: str, method: str = "symbolic") -> CheckResult:
        return CheckResult(p, Verdict.UNKNOWN, method, reason=reason, params=model.param_values,
                           variant=model.variant)


CLAIM_SHARE = 0.5              # of its default time, for each claim of a call with several and no time limit
FIRST_ROUND = 0.5              # under a time limit: of the time left, for a first round over every claim
ROUND_MIN_SECONDS = 1.0        # a claim's time in the first round at least, while the round has it
STATES_PER_SECOND = 50_000     # what --max-states N is worth in Z3 time: N / this, at least a second


def claim_seconds(budget: Budget, default: float) -> float:
    """Z3's time for one claim: what is left of --timeout; under --max-states alone, about the
    time an explicit search of that many states takes, so that Z3 is bounded too."""
    left = budget.time_left()
    if left is not None:
        return left
    if budget.max_states is not None:
        return min(default, max(1.0, budget.max_states / STATES_PER_SECOND))
    return default


class _Run:
    """One `check` call: the encoding, the budget, and invariants proved so far (they
    strengthen later ranking-function searches)."""

    def __init__(self, engine: SymbolicEngine, enc: Encoding, budget: Budget):
        self.engine = engine
        self.enc = enc
        self.budget = budget
        self.known: list[Term] = []
        self._error: Term | None = None
        self._stuck: Outcome | None = None
        self.free_memo: dict = {}          # the lemmas mined for free parameters (this call's model only)

    @property
    def depth(self) -> int:
        return self.budget.max_depth if self.budget.max_depth is not None else self.engine.default_depth

    @property
    def model_error(self) -> Term:
        if self._error is None:
            err = self.enc.error
            self._error = FALSE if self.enc.statically_false(err) else err
        return self._error

    def claim_error(self, e) -> Term:
        err = self.enc.claim_error(e)
        return FALSE if self.enc.statically_false(err) else err

    def in_rounds(self, properties: Sequence[Property]) -> list[CheckResult]:
        """The claims under a time limit: a first round gives each an even part of FIRST_ROUND of
        the time (what one leaves goes to the next), a second round gives the claims still open
        the rest, again evenly; so one hard claim cannot starve the others, nor what the run does
        after them. A claim checked twice starts afresh (with the invariants proved meanwhile)."""
        results = self._round(list(enumerate(properties)), FIRST_ROUND, ROUND_MIN_SECONDS)
        still_open = [(k, properties[k]) for k, r in results.items()
                      if r.verdict in (Verdict.UNKNOWN, Verdict.HOLDS_TO_DEPTH)]
        if still_open and self.budget.time_left() != 0:
            for k, again in self._round(still_open, 1.0, 0.0).items():
                if again.verdict is not Verdict.UNKNOWN or results[k].verdict is Verdict.UNKNOWN:
                    results[k] = again
        return [results[k] for k in range(len(properties))]

    def _round(self, claims: list[tuple[int, Property]], pool: float, least: float) -> dict[int, CheckResult]:
        """Each claim in turn, with an even part of what is left of `pool` of the time left now
        (`least` seconds at least while the round has them; the last one all that is left)."""
        end = time.perf_counter() + pool * (self.budget.time_left() or 0.0)
        out = {}
        for i, (k, p) in enumerate(claims):
            round_left = max(0.0, end - time.perf_counter())
            last = i == len(claims) - 1
            seconds = round_left if last else max(round_left / (len(claims) - i), min(least, round_left))
            left = self.budget.time_left() or 0.0
            out[k] = self.claim(p, min(1.0, seconds / left) if left > 0 else 0.0)
        return out

    # ---- one claim
    def claim(self, original: Property, share: float = 1.0) -> CheckResult:
        """Decide one claim within `share` of the time left (of --timeout, or of the default)."""
        start = time.perf_counter()
        deadline = Deadline(share * claim_seconds(self.budget, self.engine.default_timeout))
        p = map_claim(original, self.enc.model.fix_params)
        try:
            bound_z3()
            if isinstance(p, Invariant):
                result = self.invariant(original, p, deadline)
            elif isinstance(p, Reachable):
                result = self.reachable(original, p, deadline)
            elif isinstance(p, DeadlockFree):
                result = self.deadlock(original, deadline)
            elif isinstance(p, (Terminates, Obligation)):
                result = self.liveness(original, p, deadline)
            else:
                result = self.unknown(original, f"the symbolic engine does not decide {p.kind} claims")
        except Unsupported as err:
            result = self.unknown(original, f"the symbolic engine cannot encode this claim: {err}")
        except InternalError as err:
            result = self.unknown(original, f"internal: {err}")
        except z3.Z3Exception as err:
            result = self.unknown(original, z3_out_of_memory(err) or f"internal: Z3 failed: {err}")
        return _with_time(result, time.perf_counter() - start)

    def invariant(self, original: Property, p: Invariant, deadline: Deadline) -> CheckResult:
        enc = self.enc
        good = enc.predicate(p.expr, enc.cur)
        problem = Safety(enc, negate(good), disj(self.model_error, self.claim_error(p.expr)))
        outcome = self.with_lemmas(problem, deadline) or self.safety(problem, deadline)
        if outcome.status == "reached":
            def confirm(c: Concrete) -> None:
                if _holds(c, p.expr, c.states[-1]):
                    raise InternalError("the counterexample's last state satisfies the invariant")
            return self.reached(original, outcome, Verdict.VIOLATED, confirm, "a counterexample breaks it")
        if outcome.status == "safe":
            self.remember(problem, outcome)
            return self.proved(original, outcome)
        if outcome.status == "bounded":
            return self.result(original, Verdict.HOLDS_TO_DEPTH, outcome, reason=_bounded(outcome))
        return self.result(original, Verdict.UNKNOWN, outcome, reason=outcome.reason)

    def reachable(self, original: Property, p: Reachable, deadline: Deadline) -> CheckResult:
        enc = self.enc
        if p.expr is not None:
            target, extra = enc.predicate(p.expr, enc.cur), []
            error = disj(self.model_error, self.claim_error(p.expr))
        else:
            extra = enc.action_indices(p.action or "")
            target, error = enc.firing_of(extra), self.model_error
        outcome = self.safety(Safety(enc, target, error, extra), deadline)
        if outcome.status == "reached":
            def confirm(c: Concrete) -> None:
                if p.expr is not None and not _holds(c, p.expr, c.states[-1]):
                    raise InternalError("the witness's last state does not satisfy the target")
            return self.reached(original, outcome, Verdict.HOLDS, confirm, "a witness reaches it")
        if outcome.status == "safe":
            what = "unreachable" if p.expr is not None else "it never fires"
            return self.result(original, Verdict.VIOLATED, outcome, evidence=self.evidence(outcome),
                               reason=f"{what} {self.param_words()} ({_how(outcome)})")
        if outcome.status == "bounded":
            return self.result(original, Verdict.UNKNOWN, outcome,
                               reason=f"no witness within {outcome.depth} steps; {outcome.reason}".rstrip("; "))
        return self.result(original, Verdict.UNKNOWN, outcome, reason=outcome.reason)

    def stuck(self, deadline: Deadline) -> tuple[Safety, Outcome]:
        """Is a stuck state (no move, the game not over) or a model error reachable? Deadlock
        freedom and every termination claim ask it; a decided answer is kept for the others."""
        problem = Safety(self.enc, self.enc.deadlock, self.model_error)
        if self._stuck is None:
            outcome = self.safety(problem, deadline)
            if outcome.status not in ("reached", "safe"):
                return problem, outcome
            self._stuck = outcome
        return problem, self._stuck

    def deadlock(self, original: Property, deadline: Deadline) -> CheckResult:
        problem, outcome = self.stuck(deadline)
        if outcome.status == "reached":
            return self.reached(original, outcome, Verdict.VIOLATED, _confirm_stuck,
                                "play stops here: no legal move and the game is not over")
        if outcome.status == "safe":
            self.remember(problem, outcome)
            return self.proved(original, outcome)
        if outcome.status == "bounded":
            return self.result(original, Verdict.HOLDS_TO_DEPTH, outcome, reason=_bounded(outcome))
        return self.result(original, Verdict.UNKNOWN, outcome, reason=outcome.reason)

    def liveness(self, original: Property, p: Terminates | Obligation, deadline: Deadline) -> CheckResult:
        """No stuck (or, for obligations, final) state in the region is reachable, and a ranking
        function shows that no run stays in the region forever."""
        enc = self.enc
        if isinstance(p, Terminates):
            region = negate(enc.end)
            actions = [a for a in enc.actions if p.scope != "turn" or a not in enc.turn_end_actions()]
            scope_words = "a turn (every transition but the turn end)" if p.scope == "turn" else "the game"
            what = "the turn never ends" if p.scope == "turn" else "the game never ends"
        else:
            region = enc.predicate(p.pending, enc.cur)
            actions = list(enc.actions)
            scope_words = "the obligation's open states"
            what = "the obligation stays open forever"
        if isinstance(p, Terminates):
            problem, outcome = self.stuck(deadline.share(0.6))
        else:
            problem = Safety(enc, conj(region, disj(enc.end, enc.deadlock)), disj(self.model_error, self.claim_error(p.pending)))
            outcome = self.safety(problem, deadline.share(0.6))
        if outcome.status == "reached":
            def confirm(c: Concrete) -> None:
                if isinstance(p, Terminates):
                    _confirm_stuck(c)
            return self.reached(original, outcome, Verdict.VIOLATED, confirm,
                                f"{what}: {'play stops' if isinstance(p, Terminates) else 'it is still open'} here")
        if outcome.status != "safe":
            return self.result(original, Verdict.UNKNOWN, outcome,
                               reason=f"could not show that no run gets stuck in {scope_words}: "
                                      f"{outcome.reason or _bounded(outcome)}; the explicit engine decides it")
        support = conj(enc.param_constraints(), enc.ranges(enc.cur), negate(problem.bad),
                       *([outcome.invariant] if outcome.invariant is not None else []), *self.known)
        ranking = synthesize(enc, actions, region, support, deadline, refine=self.unreachable(deadline))
        if ranking.components is None:
            return self.result(original, Verdict.UNKNOWN, outcome, method="ranking",
                               reason=f"no ranking function found: {ranking.reason}; the explicit engine's "
                                      f"lasso search decides it")
        text = ranking.describe(enc, scope_words)
        verdict, scope = self.proof_scope()
        evidence = {**self.evidence(outcome), "ranking": text,
                    "ranking_components": [c.text for c in ranking.components]}
        if ranking.reason:
            evidence["ranking_support"] = ranking.reason
        return self.result(original, verdict, outcome, method="ranking", evidence=evidence,
                           reason=f"{scope}: {text}; no stuck state is reachable ({_how(outcome)})")

    def unreachable(self, deadline: Deadline):
        """For the ranking search: an invariant (PDR) excluding a given state, if it is unreachable."""
        enc = self.enc

        def refine(values: list[int]) -> Term | None:
            symbols = list(enc.cur.slots) + list(enc.params.values())
            target = conj(*(x == v for x, v in zip(symbols, values)))
            outcome = pdr(Safety(enc, target, FALSE), deadline.share(0.25))
            return outcome.invariant if outcome.status == "safe" else None

        return refine

    def with_lemmas(self, problem: Safety, deadline: Deadline) -> Outcome | None:
        """On a monitor product (strategy `all`, every parameter fixed): the claim and lemmas tying
        the monitor to the game, proved inductive together (`monitor_proof`), within
        LEMMA_SHARE of the claim's time; None when no proof was found (the reason is kept for
        the note of the methods that follow)."""
        enc = self.enc
        focus = {i for i, s in enumerate(enc.slots) if s.var.startswith(MONITOR_PREFIX)}
        if not focus or enc.free or self.engine.strategy != "all":
            return None
        found = monitor_proof.prove(enc, problem.bad, focus, deadline.share(LEMMA_SHARE))
        if isinstance(found, str):
            return None
        tying = sorted(found.lemmas, key=lambda c: (not any(lit.slot in focus for lit in c), len(c)))
        shown = [monitor_proof.describe(enc, c) for c in tying[:LEMMAS_SHOWN]]
        more = len(found.lemmas) - len(shown)
        return Outcome("safe", "lemmas", 1, invariant=found.term(enc),
                       reason=f"inductive with {len(found.lemmas)} lemma(s) tying the monitor to the game: "
                              + "; ".join(shown) + (f"; and {more} more" if more > 0 else ""))

    # ---- methods by strategy
    def safety(self, problem: Safety, deadline: Deadline) -> Outcome:
        strategy = self.engine.strategy
        if strategy == "bmc":
            return bmc(problem, self.depth, deadline)
        if strategy == "kind":
            return kinduction(problem, self.depth, deadline)
        if strategy == "pdr":
            return pdr(problem, deadline)
        explored = self.engine.explored is not None
        first = kinduction(problem, min(self.depth, MINED_K if explored else ALL_K), deadline.share(0.3))
        if first.status in ("reached", "safe"):
            return first
        notes = [f"k-induction: {first.reason}"]
        mined = self.mined(deadline)
        if mined is not None:
            strengthened = prove(problem, mined, deadline.share(MINED_SHARE))
            if strengthened.status in ("reached", "safe"):
                return strengthened
            notes.append(f"induction and PDR with mined lemmas: {strengthened.reason}")
        second = pdr(problem, deadline.share(0.85))
        if second.status in ("reached", "safe"):
            return second
        notes.append(f"PDR: {second.reason}")
        third = bmc(problem, self.depth, deadline)
        if third.status in ("reached", "safe"):
            return third
        if third.reason:
            notes.append(f"BMC: {third.reason}")
        third.reason = "; ".join(n for n in notes if not n.endswith(": "))
        return third

    def mined(self, deadline: Deadline) -> Mined | None:
        """Candidate lemmas (mined once per memo, within MINE_SHARE of the deadline) from the
        explored states, if any were given; with free parameters, from a search capped at
        FREE_STATES at their default values (what holds there only, Houdini drops: the proof
        is for every value)."""
        enc = self.enc
        memo = self.free_memo if enc.free else self.engine.memo
        if "mined" not in memo:
            seconds = deadline.left()
            if seconds is not None and seconds < MINE_LEAST:
                return None
            share = None if seconds is None else max(MINE_SHARE * seconds, MINE_LEAST)
            until = None if share is None else time.perf_counter() + share
            params = {n: enc.param_decls[n].default for n in enc.free if n in enc.param_decls}
            explored = self.free_states(params, share) if enc.free else self.engine.explored
            if explored is None or explored.shape[1] != len(enc.slots) or len(params) < len(enc.free):
                return None
            memo["mined"] = mine(enc, explored, min(RUN_SECONDS, share or RUN_SECONDS), until, params)
        return memo.get("mined")

    def free_states(self, params: dict[str, int], seconds: float | None) -> np.ndarray | None:
        """States of a search of the model at `params` (the free parameters' values), capped at
        FREE_STATES and half of `seconds`; None where the model errs there."""
        try:
            model = self.enc.source.instantiate(dict[str, int | None](params))
            budget = Budget(max_states=FREE_STATES, deadline=None if seconds is None else time.monotonic() + seconds / 2)
            return explore(model, budget).sample(FREE_STATES)
        except (EvalError, ValueError):
            return None

    def remember(self, problem: Safety, outcome: Outcome) -> None:
        self.known.append(negate(problem.bad))
        if outcome.invariant is not None:
            self.known.append(outcome.invariant)

    # ---- verdicts
    def proof_scope(self) -> tuple[Verdict, str]:
        enc = self.enc
        if enc.free:
            ranges = []
            for n in enc.free:
                d = enc.param_decls.get(n)
                lo, hi = (None, None) if d is None else (d.lo, d.hi)
                if lo is not None and hi is not None:
                    ranges.append(f"{n} in {lo}..{hi}")
                elif lo is not None or hi is not None:
                    ranges.append(f"{n} >= {lo}" if lo is not None else f"{n} <= {hi}")
                else:
                    ranges.append(n)
            return Verdict.PROVED, f"holds for every value of {', '.join(ranges)}"
        if not enc.model.params:
            return Verdict.PROVED, "holds in every reachable state (unbounded)"
        return Verdict.HOLDS, ("holds for these parameter values (unbounded; leave a parameter free "
                               "with --param NAME=* to prove it for all values)")

    def param_words(self) -> str:
        if self.enc.free:
            return f"for every value of {', '.join(self.enc.free)} (proved for all parameter values)"
        if not self.enc.model.params:
            return "in every behaviour (unbounded proof)"
        return "for these parameter values (unbounded proof)"

    def proved(self, original: Property, outcome: Outcome) -> CheckResult:
        verdict, scope = self.proof_scope()
        return self.result(original, verdict, outcome, evidence=self.evidence(outcome),
                           reason=f"{scope} ({_how(outcome)})")

    def evidence(self, outcome: Outcome) -> dict:
        out: dict = {"method": outcome.method}
        if outcome.method == "k-induction" and not outcome.exhausted:
            out["k"] = outcome.depth
        if outcome.exhausted:
            out["longest_run"] = outcome.depth
        if outcome.invariant is not None:
            out["invariant"] = render(self.enc, outcome.invariant)
        if self.enc.free:
            out["free_params"] = list(self.enc.free)
        return out

    def reached(self, original: Property, outcome: Outcome, verdict: Verdict, confirm, reason: str) -> CheckResult:
        assert outcome.path is not None
        concrete = concretise(self.enc, outcome.path)
        last = concrete.states[-1]
        if outcome.error:
            message = raises(concrete.lay, last)
            if message is None:
                message = self._claim_raises(original, concrete)
            if message is None:
                raise InternalError("the path was said to end in a model error, but none occurs")
            words = f"model error: {message} (after {len(concrete.trace)} steps)"
            return CheckResult(original, Verdict.UNKNOWN, outcome.method, outcome.depth, Stats(), concrete.trace,
                               words, concrete.model.param_values, concrete.model.variant, stop=model_error(words))
        try:
            confirm(concrete)
        except EvalError as err:
            raise InternalError(f"the path's last state cannot be evaluated: {err}") from None
        evidence: dict[str, Any] = {"method": outcome.method}
        if self.enc.free:
            evidence["free_params"] = list(self.enc.free)
            reason = f"{reason} (for {', '.join(f'{k}={v}' for k, v in sorted(outcome.path.params.items()))})"
        return CheckResult(original, verdict, outcome.method, len(concrete.trace), Stats(), concrete.trace,
                           reason, concrete.model.param_values, concrete.model.variant, evidence)

    def _claim_raises(self, original: Property, concrete: Concrete) -> str | None:
        p = map_claim(original, concrete.model.fix_params)
        for e in (getattr(p, "expr", None), getattr(p, "pending", None)):
            if e is not None:
                try:
                    evaluate(concrete.lay, e, concrete.states[-1])
                except EvalError as err:
                    return f"the claim cannot be evaluated: {err}"
        return None

    def result(self, original: Property, verdict: Verdict, outcome: Outcome, reason: str = "",
               evidence: dict | None = None, method: str | None = None) -> CheckResult:
        return CheckResult(original, verdict, method or outcome.method, outcome.depth, Stats(), None, reason,
                           self.enc.model.param_values, self.enc.model.variant,
                           evidence if evidence is not None else {"method": outcome.method})

    def unknown(self, original: Property, reason: str) -> CheckResult:
        return CheckResult(original, Verdict.UNKNOWN, "symbolic", reason=reason,
                           params=self.enc.model.param_values, variant=self.enc.model.variant)


def _with_time(result: CheckResult, seconds: float) -> CheckResult:
    return replace(result, stats=Stats(result.stats.states, result.stats.transitions, seconds))


def _holds(c: Concrete, expr, state) -> bool:
    return bool(evaluate(c.lay, c.model.fix_params(expr), state))


def _confirm_stuck(c: Concrete) -> None:
    last = c.states[-1]
    if not stuck(c.lay, last) or _holds(c, c.model.end, last):
        raise InternalError("the path's last state is not a deadlock of the concrete semantics")


def _how(outcome: Outcome) -> str:
    if outcome.exhausted:
        return f"{outcome.method}: every behaviour ends within {outcome.depth} steps"
    if outcome.method == "k-induction":
        return f"k-induction, k={outcome.depth}"
    if outcome.method == "pdr":
        return "PDR: inductive invariant"
    if outcome.method == "lemmas":
        return outcome.reason
    if outcome.method == MINED:
        return f"induction with {outcome.reason}"
    return outcome.method


def _bounded(outcome: Outcome) -> str:
    text = f"no counterexample within {outcome.depth} steps"
    return f"{text}; {outcome.reason}" if outcome.reason else text
