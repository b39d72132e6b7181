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

from collections.abc import Sequence
from dataclasses import replace
from functools import partial
from typing import Any

import numpy as np
import z3

from verifier.engines.base import ProgressFn
from verifier.engines.explicit import explore
from verifier.engines.symbolic import monitor_proof
from verifier.engines.symbolic.blocking import Prove
from verifier.engines.symbolic.bmc import bmc
from verifier.engines.symbolic.core import Effort, Outcome, Safety
from verifier.engines.symbolic.encode import FALSE, Encoding, Term, Unsupported, conj, disj, negate
from verifier.engines.symbolic.kinduction import kinduction
from verifier.engines.symbolic.mined import MINED, Mined, mine, prove
from verifier.engines.symbolic.pdr import pdr
from verifier.engines.symbolic.ranking import synthesize
from verifier.engines.symbolic.render import render
from verifier.engines.symbolic.seen import Seen
from verifier.engines.symbolic.total import failing
from verifier.engines.symbolic.units import UNITS_PER_SECOND
from verifier.engines.symbolic.witness import Concrete, InternalError, concretise, raises, stuck
from verifier.ir.model import Model
from verifier.ir.props import DeadlockFree, Invariant, Obligation, Property, Reachable, Terminates, map_claim
from verifier.props import moves
from verifier.props.monitor import MONITOR_PREFIX
from verifier.resources import Budget, Stop, StopKind, UnitsSpent, model_error
from verifier.resources.memory import bound_z3, z3_out_of_memory
from verifier.result import CheckResult, Stats, Verdict
from verifier.semantics import EvalError, evaluate

STRATEGIES = ("bmc", "kind", "pdr", "all")
DEFAULT_RLIMIT = 120_000_000  # Z3 resource units per claim when the budget sets none (about a minute of one core)
DEFAULT_DEPTH = 20            # BMC bound / largest k when the budget sets none
ALL_K = 8                     # k-induction's share of strategy "all" ...
MINED_K = 4                   # ... when lemmas mined from explored states follow it (they make it cheaper)
LEMMA_SHARE = 0.4             # of a monitored claim's units, for its proof with lemmas (`monitor_proof`)
PDR_FIRST = 0.3               # of a monitored claim's units, for PDR before the lemmas, where it is not inductive as it
#                               stands (WTactics 7/7/20's draw-before-play: PDR 0.2 s of CPU, 0.3 M units; lemmas fail
#                               after 7 s, 10 M units; Shadow Era's se-before-triggers at its printed numbers: PDR 9.4 M
#                               units, lemmas 4.2 M; Alice's free-mode-never-collapses: 0.2 M, 1.1 M)
LEMMAS_SHOWN = 6              # lemmas named in a result's reason
MINE_LEAST = 2 * UNITS_PER_SECOND   # Z3 units a claim has left at least to mine lemmas (once per model)
FREE_STATES = 40_000          # with free parameters: states of a search at their defaults, to mine lemmas from
SEEN_STATES = 200_000         # without explored states: states of a search, for the ranking searches' filters (all
#                               82,534 of WTactics at its defaults: 40,000 left a reachable change of unmark_all unseen)
MINED_SHARE = 0.6             # of the units left after k-induction, for induction and PDR with mined lemmas (when given)
READING_CLAIMS = 4            # one reading's claims together spend at most this many claims' Z3 units (`reading_total`)


class SymbolicEngine:
    """Decides invariants, reachability, deadlock freedom, termination and obligations with Z3."""

    name = "symbolic"

    def __init__(self, strategy: str = "all", default_rlimit: int = DEFAULT_RLIMIT,
                 default_depth: int = DEFAULT_DEPTH, explored: np.ndarray | None = None,
                 memo: dict | None = None, reading: UnitsSpent | None = None):
        """`explored`: reachable states of the (concrete) model, one column per slot, that an
        explicit search has seen; strategy "all" then mines lemmas from them (`mined.py`), once
        per `memo` (a dict kept by the caller: later engines given it start where this one left).
        `reading`: the Z3 units the reading's claims have spent together, shared by every engine of
        one reading, against `reading_total`; None: no total, each claim its own units only."""
        if strategy not in STRATEGIES:
            raise ValueError(f"unknown symbolic strategy {strategy!r}; choose one of {', '.join(STRATEGIES)}")
        self.strategy = strategy
        self.default_rlimit = default_rlimit
        self.default_depth = default_depth
        self.explored = explored
        self.memo = {} if memo is None else memo
        self.reading = reading

    # ---- the Engine protocol
    def check(self, model: Model, properties: Sequence[Property], budget: Budget,
              progress: ProgressFn | None = None) -> list[CheckResult]:
        try:
            bound_z3()
            enc = Encoding(model)
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
        return [run.claim(p) for p in properties]         # each claim its own units: none starves another

    def _initial_error(self, enc: Encoding, budget: Budget) -> str | None:
        s = z3.Solver()
        s.set("rlimit", 30 * UNITS_PER_SECOND)
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


STATE_UNITS = 40               # what --max-states N alone is worth in Z3 units: N times this (about the time an
                              # explicit search of N states takes), at least a second's worth


def claim_units(budget: Budget, default: int) -> int:
    """Z3's resource units for one claim: --rlimit (`budget.rlimit`); under --max-states alone,
    about what an explicit search of that many states costs, so that Z3 is bounded too."""
    if budget.rlimit is not None:
        return budget.rlimit
    if budget.max_states is not None:
        return min(default, max(UNITS_PER_SECOND, budget.max_states * STATE_UNITS))
    return default


def reading_total(budget: Budget, default: int) -> int:
    """The Z3 resource units one reading's claims may spend together: READING_CLAIMS times one claim's
    (`claim_units`: 480,000,000 by default, about four minutes of one core; four times --rlimit where
    it is given). The units are counted on Z3's own counter and the claims come in the same order,
    so a claim the total leaves open is the same one on every machine at any load."""
    return READING_CLAIMS * claim_units(budget, default)


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
        # reachable states for the ranking searches' filters; no reference back to this run: a cycle would leave
        # its Z3 terms to the collector, whose passes come as other threads allocate, and Z3 gives a freed term's
        # id to the next one made, which changes Spacer's answers (same input, another invariant)
        self.seen = Seen(enc, partial(_seen_states, enc, engine.explored))

    @property
    def depth(self) -> int:
        return self.budget.max_depth if self.budget.max_depth is not None else self.engine.default_depth

    @property
    def model_error(self) -> Term:
        """The model-error predicate (`Encoding.error`), FALSE where no in-range state has one: asked
        first of the actions that may raise at all (`total.failing`), the whole predicate built
        only where some in-range state of theirs does."""
        if self._error is None:
            enc = self.enc
            end, actions = failing(enc.model, enc.actions, enc.free)
            if (end or actions) and not enc.statically_false(enc.error_of(actions, end)):
                err = enc.error
                self._error = FALSE if enc.statically_false(err) else err
            else:
                self._error = FALSE
        return self._error

    def claim_error(self, e) -> Term:
        err = self.enc.claim_error(e)
        return FALSE if self.enc.statically_false(err) else err

    # ---- one claim
    def claim(self, original: Property) -> CheckResult:
        """Decide one claim within its Z3 units (`claim_units`), and within what is left of the
        reading's total (`reading_total`). The claim that meets the total gets what is left of it and
        is the last one tried (how much of a smaller effort its methods spend before they give up is
        theirs to say); where it stays open having spent units, the total is named; a claim after it
        is UNKNOWN, "not tried", named."""
        per_claim = claim_units(self.budget, self.engine.default_rlimit)
        left = self.reading_left()
        if left is not None and left <= 0:
            words = f"not tried: {self.reading_owner()} were spent on the claims before it"
            return replace(self.unknown(original, words), stop=Stop(StopKind.RLIMIT, self.reading_owner(), words))
        meets_total = left is not None and left < per_claim
        effort = Effort(per_claim if left is None else min(per_claim, left))
        units = effort.left() or 0
        try:
            result = self.decide(original, effort, units)
        finally:
            if self.engine.reading is not None:
                spent = units - (effort.left() or 0)
                self.engine.reading.spent += units if meets_total else spent
        budget_like = result.stop is not None and result.stop.kind in (StopKind.RLIMIT, StopKind.INCOMPLETE)
        if meets_total and budget_like and units > (effort.left() or 0):
            words = f"{self.reading_owner()} ran out during this claim ({units:,} were left): {result.reason}"
            result = replace(result, stop=Stop(StopKind.RLIMIT, self.reading_owner(), words))
        return result

    def reading_left(self) -> int | None:
        """Units left of the reading's total (None: no total)."""
        if self.engine.reading is None:
            return None
        return reading_total(self.budget, self.engine.default_rlimit) - self.engine.reading.spent

    def reading_owner(self) -> str:
        """Who set the reading's total, in the user's words."""
        budget = self.budget
        per_claim = f"--rlimit {budget.rlimit}" if budget.rlimit is not None else \
            "--max-states" if budget.max_states is not None else "the default units per claim"
        return (f"the Z3 units of one reading's claims together ({reading_total(budget, self.engine.default_rlimit):,}: "
                f"{READING_CLAIMS} times {per_claim})")

    def decide(self, original: Property, effort: Effort, units: int) -> CheckResult:
        """One claim within `effort` (`units` at its start)."""
        p = map_claim(original, self.enc.model.fix_params)
        try:
            bound_z3()
            if isinstance(p, Invariant):
                result = self.invariant(original, p, effort)
            elif isinstance(p, Reachable):
                result = self.reachable(original, p, effort)
            elif isinstance(p, DeadlockFree):
                result = self.deadlock(original, effort)
            elif isinstance(p, (Terminates, Obligation)):
                result = self.liveness(original, p, effort)
            else:
                result = self.unknown(original, f"the symbolic engine does not decide {p.kind} claims")
        except Unsupported as err:
            result = self.unknown(original, f"the symbolic engine cannot encode this claim: {err}")
        except InternalError as err:
            result = self.unknown(original, f"internal: {err}")
        except z3.Z3Exception as err:
            out_of_memory = z3_out_of_memory(err)
            result = self.unknown(original, out_of_memory or f"internal: Z3 failed: {err}")
            if out_of_memory:
                result = replace(result, stop=Stop(StopKind.MEMORY, "the memory guard", out_of_memory))
        if result.verdict is Verdict.UNKNOWN and result.stop is None:
            result = replace(result, stop=Stop(StopKind.RLIMIT, self.units_owner(), f"Z3's resource units for this "
                                               f"claim ({units:,}) ran out: {result.reason}") if effort.expired()
                             else Stop(StopKind.INCOMPLETE, "the symbolic engine", result.reason))
        return _with_units(result, units - (effort.left() or 0))

    def units_owner(self) -> str:
        """Who set this claim's Z3 units, in the user's words."""
        if self.budget.rlimit is not None:
            return f"--rlimit {self.budget.rlimit}"
        return "--max-states" if self.budget.max_states is not None else "the default Z3 units per claim"

    def invariant(self, original: Property, p: Invariant, effort: Effort) -> CheckResult:
        enc = self.enc
        good = enc.predicate(p.expr, enc.cur)
        problem = Safety(enc, negate(good), disj(self.model_error, self.claim_error(p.expr)))
        outcome = self.with_lemmas(problem, effort) or self.safety(problem, effort)
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

    def reachable(self, original: Property, p: Reachable, effort: Effort) -> CheckResult:
        enc = self.enc
        goal = moves.fireable(enc.model, p.action, p.choice) if p.choice else p.expr   # a move with values: where
        if goal is not None:                                                         # it can be made, then made
            target, extra = enc.predicate(goal, enc.cur), []
            error = disj(self.model_error, self.claim_error(goal))
        else:
            extra = sorted({i for name in p.action for i in enc.action_indices(name)})
            target, error = enc.firing_of(extra), self.model_error
        outcome = self.safety(Safety(enc, target, error, extra), effort)
        if outcome.status == "reached":
            ends: list[Concrete] = []

            def confirm(c: Concrete) -> None:
                if goal is not None and not _holds(c, goal, c.states[-1]):
                    raise InternalError("the witness's last state does not satisfy the target")
                ends.append(c)
            result = self.reached(original, outcome, Verdict.HOLDS, confirm, "a witness reaches it")
            if not p.choice or not ends or result.trace is None:
                return result
            trace = moves.with_move(ends[0].lay, result.trace, p.action, p.choice)
            return replace(result, trace=trace, depth=len(trace), reason="a witness makes the move")
        if outcome.status == "safe":
            what = "unreachable" if p.expr is not None else "it never fires"
            return self.result(original, Verdict.VIOLATED, outcome, evidence=self.evidence(outcome),
                               reason=f"{what} {self.param_words()} ({_how(outcome)})")
        if outcome.status == "bounded":
            return self.result(original, Verdict.UNKNOWN, outcome,
                               reason=f"no witness within {outcome.depth} steps; {outcome.reason}".rstrip("; "))
        return self.result(original, Verdict.UNKNOWN, outcome, reason=outcome.reason)

    def stuck(self, effort: Effort) -> tuple[Safety, Outcome]:
        """Is a stuck state (no move, the game not over) or a model error reachable? Deadlock
        freedom and every termination claim ask it; a decided answer is kept for the others."""
        problem = Safety(self.enc, self.enc.deadlock, self.model_error)
        if self._stuck is None:
            outcome = self.safety(problem, effort)
            if outcome.status not in ("reached", "safe"):
                return problem, outcome
            self._stuck = outcome
        return problem, self._stuck

    def deadlock(self, original: Property, effort: Effort) -> CheckResult:
        problem, outcome = self.stuck(effort)
        if outcome.status == "reached":
            return self.reached(original, outcome, Verdict.VIOLATED, _confirm_stuck,
                                "play stops here: no legal move and the game is not over")
        if outcome.status == "safe":
            self.remember(problem, outcome)
            return self.proved(original, outcome)
        if outcome.status == "bounded":
            return self.result(original, Verdict.HOLDS_TO_DEPTH, outcome, reason=_bounded(outcome))
        return self.result(original, Verdict.UNKNOWN, outcome, reason=outcome.reason)

    def liveness(self, original: Property, p: Terminates | Obligation, effort: Effort) -> CheckResult:
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
            problem, outcome = self.stuck(effort.share(0.6))
        else:
            problem = Safety(enc, conj(region, disj(enc.end, enc.deadlock)), disj(self.model_error, self.claim_error(p.pending)))
            outcome = self.safety(problem, effort.share(0.6))
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
        ranking = synthesize(enc, actions, region, support, effort, prove=self.unreachable(effort), seen=self.seen)
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

    def unreachable(self, effort: Effort) -> Prove:
        """For the ranking search: PDR on a target (over the state, the next state and the
        choices: transitions), within a share of the units left."""
        return lambda target, share: pdr(Safety(self.enc, target, FALSE), effort.share(share))

    def with_lemmas(self, problem: Safety, effort: Effort) -> Outcome | None:
        """On a monitor product (strategy `all`, every parameter fixed): the claim inductive with its
        monitor as it stands, else proved by PDR within PDR_FIRST of the claim's units, else with
        lemmas tying the monitor to the game, proved inductive together (`monitor_proof`), within
        LEMMA_SHARE of what is left; None when no proof was found (the methods that follow go on)."""
        enc = self.enc
        focus = {i for i, s in enumerate(enc.slots) if s.var.startswith(MONITOR_PREFIX)}
        if not focus or enc.free or self.engine.strategy != "all":
            return None
        found = monitor_proof.prove(enc, problem.bad, focus, effort.share(LEMMA_SHARE), most=0)
        if isinstance(found, str):
            first = pdr(problem, effort.share(PDR_FIRST))
            if first.status == "safe":
                return first
            found = monitor_proof.prove(enc, problem.bad, focus, effort.share(LEMMA_SHARE))
        if isinstance(found, str):
            return None
        tying = sorted(found.lemmas, key=lambda c: (not any(lit.slot in focus for lit in c), len(c)))
        shown = [monitor_proof.describe(enc, c) for c in tying[:LEMMAS_SHOWN]]
        more = len(found.lemmas) - len(shown)
        reason = (f"inductive with {len(found.lemmas)} lemma(s) tying the monitor to the game: " + "; ".join(shown)
                  + (f"; and {more} more" if more > 0 else "")) if found.lemmas else \
            "inductive with its monitor as it stands: no lemma needed"
        return Outcome("safe", "lemmas", 1, invariant=found.term(enc), reason=reason)

    # ---- methods by strategy
    def safety(self, problem: Safety, effort: Effort) -> Outcome:
        strategy = self.engine.strategy
        if strategy == "bmc":
            return bmc(problem, self.depth, effort)
        if strategy == "kind":
            return kinduction(problem, self.depth, effort)
        if strategy == "pdr":
            return pdr(problem, effort)
        explored = self.engine.explored is not None
        first = kinduction(problem, min(self.depth, MINED_K if explored else ALL_K), effort.share(0.3))
        if first.status in ("reached", "safe"):
            return first
        notes = [f"k-induction: {first.reason}"]
        mined = self.mined(effort)
        if mined is not None:
            strengthened = prove(problem, mined, effort.share(MINED_SHARE))
            if strengthened.status in ("reached", "safe"):
                return strengthened
            notes.append(f"induction and PDR with mined lemmas: {strengthened.reason}")
        second = pdr(problem, effort.share(0.85))
        if second.status in ("reached", "safe"):
            return second
        notes.append(f"PDR: {second.reason}")
        third = bmc(problem, self.depth, effort)
        if third.status in ("reached", "safe"):
            return third
        if third.reason:
            notes.append(f"BMC: {third.reason}")
        third.reason = "; ".join(n for n in notes if not n.endswith(": "))
        return third

    def mined(self, effort: Effort) -> Mined | None:
        """Candidate lemmas (mined once per memo, where MINE_LEAST units are left) from the
        explored states, if any were given; with free parameters, from a search capped at
        FREE_STATES at their default values (what holds there only, Houdini drops: the proof
        is for every value)."""
        enc = self.enc
        memo = self.free_memo if enc.free else self.engine.memo
        if "mined" not in memo:
            left = effort.left()
            if left is not None and left < MINE_LEAST:
                return None
            params = {n: enc.param_decls[n].default for n in enc.free if n in enc.param_decls}
            explored = _free_states(enc, params) if enc.free else self.engine.explored
            if explored is None or explored.shape[1] != len(enc.slots) or len(params) < len(enc.free):
                return None
            memo["mined"] = mine(enc, explored, params)
        return memo.get("mined")

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



def _seen_states(enc: Encoding, explored: np.ndarray | None, params: tuple[int, ...]) -> np.ndarray | None:
    """Reachable states at these values of `enc.params`, for the ranking searches' filters
    (`seen.py`): the `explored` states given (a concrete model), else those of a search capped
    at SEEN_STATES."""
    if not enc.free and explored is not None and explored.shape[1] == len(enc.slots):
        return explored
    return _free_states(enc, dict(zip(enc.params, params)), SEEN_STATES)


def _free_states(enc: Encoding, params: dict[str, int], most: int = FREE_STATES) -> np.ndarray | None:
    """States of a search of `enc`'s model at `params` (the free parameters' values), capped at
    `most`; None where the model errs there."""
    try:
        model = enc.source.instantiate(dict[str, int | None](params))
        return explore(model, Budget(max_states=most)).sample(most)
    except (EvalError, ValueError):
        return None


def _with_units(result: CheckResult, units: int) -> CheckResult:
    """`result` with the Z3 resource units its claim spent."""
    return replace(result, stats=replace(result.stats, z3_units=units))


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
