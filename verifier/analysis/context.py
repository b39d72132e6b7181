"""What every analysis of one model shares: one exploration, one scan, and the words.

`Context.scan` runs one pass over the explored states and hands each state,
with its firings (`bfsgen.compile_expander`: action index, choice, successor or
None, gap or None), to the visitors of the explicit analyses, so that a model
is explored once and every state expanded once however many analyses run. The
scan stays on packed states (ints); visitors unpack (`Context.unpack`) only the
few states a finding shows.
"""
from __future__ import annotations

import itertools
from abc import ABC, abstractmethod
from bisect import bisect_right
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from typing import TYPE_CHECKING, Any

from verifier.engines.bfsgen import compile_expander, packed_predicate
from verifier.engines.ledger import KeptCompact
from verifier.engines.statespace import StateSpace
from verifier.ir.expr import App, Expr, Op, conj, neg, state_vars
from verifier.ir.model import ACTIVE_VAR, PHASE_VAR, Action, ActionKind, Model, Phase
from verifier.portfolio.stores import Stage, Store, choose_store
from verifier.resources import Budget
from verifier.result import Finding
from verifier.semantics import Layout, State
from verifier.trace import Names, Trace, build_trace

if TYPE_CHECKING:
    from verifier.analysis.beyond import Beyond

EXPAND_CACHE = 200_000         # successor lists kept for look-ahead checks
SCAN_STATES = 1_000_000        # explored states from which the scan is compiled (`compiled_scan`): the Python scan
                               # costs about 8 us a state, a cold compile of the scan module 5 to 8 s of CPU, a warm
                               # start under 1 s (bench/README.md, "Where a warm check's CPU goes")

Firing = tuple   # (action index, choice tuple, packed target or None, raw gap or None)


class Visitor(ABC):
    """An explicit analysis: sees every explored state once, in BFS order (shortest first),
    as its index `i`, its packed value `s` and its firings; then says what it found."""

    @abstractmethod
    def visit(self, i: int, s: int, firings: list[Firing]) -> None: ...

    @property
    def done(self) -> bool:
        """Nothing more to learn from further states (the scan stops handing them over)."""
        return False

    @abstractmethod
    def findings(self) -> list[Finding]: ...


@dataclass
class Context:
    """One model (one variant) under analysis."""

    model: Model                         # as loaded (parameters may be free)
    budget: Budget
    concrete: Model | None = None        # instantiated, when every parameter is fixed
    lay: Layout | None = None
    space: Any = None                    # verifier.engines.explicit.StateSpace
    scan_complete: bool = False          # every explored state was scanned
    memo: dict = field(default_factory=dict)   # answers shared by the readings of one model file
    cut_short: str = ""                  # why a budget cut the analyses short ("": it did not)
    scan_fallback: str = ""              # why the compiled scan could not scan the states ("": it did, or was not asked)
    beyond: Beyond | None = None         # the questions decided past the explored states
    kept: Any = field(default=None, repr=False)   # the claims' complete search of `concrete` (their ledger's)
    capped: Any = field(default=None, repr=False)   # the claims' compiled search of `concrete` its cap stopped
    mined: Any = field(default=None, repr=False)    # the states the claims' Z3 mined lemmas of `concrete` from, and
    # its memo (their ledger's `mined_of`)
    _expand: Callable | None = field(default=None, repr=False)
    _cache: dict = field(default_factory=dict, repr=False)
    _preds: dict = field(default_factory=dict, repr=False)

    def __getstate__(self) -> dict:
        """Pickled without generated code and caches (a reading analysed in another process)."""
        return {**self.__dict__, "_expand": None, "_cache": {}, "_preds": {}, "capped": None, "mined": None}

    # ---- setup
    @classmethod
    def create(cls, model: Model, budget: Budget, memo: dict | None = None, kept: Any = None,
               capped: Any = None, mined: Any = None) -> Context:
        """`kept`: the complete search of the instantiated model the claims' check ran (its ledger's);
        `capped`: their compiled search of it that its state cap stopped; `mined`: the states their Z3
        mined lemmas of it from, and its memo (both their ledger's)."""
        ctx = cls(model, budget, memo={} if memo is None else memo, kept=kept, capped=capped, mined=mined)
        concrete = model.instantiate()
        if concrete.is_concrete:
            ctx.concrete = concrete
        return ctx

    @property
    def instance(self) -> Model:
        """The instantiated model; only explicit analyses (every parameter fixed) ask for it."""
        assert self.concrete is not None, "an explicit analysis of a model with free parameters"
        return self.concrete

    @property
    def layout(self) -> Layout:
        """The explored model's layout; only asked for after `explore`."""
        assert self.lay is not None, "the layout is known once the model is explored"
        return self.lay

    @property
    def explicit(self) -> bool:
        return self.concrete is not None

    @property
    def complete(self) -> bool:
        """The exploration saw every reachable state and the scan visited each of them."""
        return self.space is not None and self.space.complete and self.scan_complete

    @property
    def unknown_reason(self) -> str:
        """Why the explicit analyses did not see every reachable state ("" when they did, or
        when only the symbolic analyses ran and finished)."""
        if self.cut_short:
            return f"the consistency analyses were {self.cut_short}: findings are UNKNOWN"
        if not self.explicit or self.complete:
            return ""
        if self.beyond is not None:
            undecided = self.beyond.undecided
            if not undecided:
                return ""
            return (f"the consistency analyses stopped after {self.beyond.explored:,} states "
                    f"({self.space.reason or 'budget reached'}), and beyond them {len(undecided)} "
                    f"question{'s' if len(undecided) > 1 else ''} stayed undecided: " + "; ".join(undecided[:8])
                    + (f"; and {len(undecided) - 8} more" if len(undecided) > 8 else ""))
        if self.space is not None and not self.space.complete:
            return (f"the consistency analyses stopped after {len(self.space.packed):,} states "
                    f"({self.space.reason or 'budget reached'}): findings beyond them are UNKNOWN")
        return "a model error stopped the consistency analyses' scan of the states: findings beyond it are UNKNOWN"

    def cut(self, reason: str) -> None:
        """A budget cut an analysis short (the first reason is kept)."""
        self.cut_short = self.cut_short or reason

    def explore(self) -> None:
        """One breadth-first exploration, in the stores and under the caps of the one store policy
        (`portfolio.stores.choose_store`, as the claims' search: the same states on the same
        machine or any other); the complete one the claims' check already ran when the runner
        kept it and the plan would end in its store (`taken`), or the claims' compiled search that
        stopped at the cap of a compiled stage of the plan (the same states). One that reaches a stage's
        cap starts again in the stage the plan names next (`compact_states`: the compact or compiled
        store, no Python object per state)."""
        assert self.concrete is not None
        self.space = taken(self.concrete, self.budget, self.kept)
        self.kept = None                 # read through `space` now (a compiled search's module does not pickle)
        if self.space is None:
            plan = choose_store(self.concrete, self.budget)
            k = 0
            self.space = self._explore_in(plan.stages[0])
            while not self.space.complete and self.space.error is None:
                depth = self.space.max_depth if plan.stages[k].store is Store.PYTHON else 0
                after = plan.after(k, len(self.space.packed), depth)
                if after is None:
                    break
                k = after
                self.space = self._explore_in(plan.stages[k])
        self.capped = None
        self.lay = self.space.lay
        self._expand = compile_expander(self.lay).expand

    def _explore_in(self, stage: Stage):
        """The exploration in one stage of the store plan: the python store's `StateSpace`, else a
        `compact_states.CompactStates` (the compact store where the compiled one cannot compile it; the
        claims' `capped` compiled search where it stopped at this stage's cap)."""
        assert self.concrete is not None
        if stage.store is Store.PYTHON:
            return self._explore_python(stage.cap)
        from verifier.analysis import compact_states
        budget = replace(self.budget, owner=self._cap_owner())
        if stage.store is Store.COMPILED:
            from verifier.engines.compiled.search import CompileError
            if compact_states.stops_at(self.capped, stage.cap):
                return compact_states.CompiledStates.stopped(self.capped, budget, stage.cap)
            try:
                return compact_states.explore_compiled_states(self.concrete, budget, stage.cap)
            except CompileError:
                pass
        return compact_states.explore_big(self.concrete, budget, stage.cap)

    def _explore_python(self, cap: int):
        from verifier.engines.explicit import explore

        assert self.concrete is not None
        return explore(self.concrete, Budget(max_states=cap, max_depth=self.budget.max_depth,
                                             max_memory_mb=self.budget.max_memory_mb, owner=self._cap_owner()))

    def _cap_owner(self) -> str:
        """Whose state cap the analyses' exploration stops at, in the user's words (the compiled
        store's follows --max-memory: `stores.states_in`)."""
        if self.budget.max_states is not None:
            return self.budget.owner
        held = f" (the compiled store's for --max-memory {self.budget.max_memory_mb})" \
            if self.budget.max_memory_mb is not None else ""
        return f"the analyses' state cap{held}"

    def scan(self, visitors: Sequence[Visitor]) -> None:
        """Hand every explored state with its firings to each visitor: from SCAN_STATES states on through
        the compiled scan (`compiled_scan`), which names the few states the visitors need; in
        Python where it cannot (`scan_fallback` says why)."""
        assert self.space is not None
        packed = self.space.packed
        n = len(packed)
        if self.space.error is not None:       # a model error stopped the search at this state
            n = min(n, self.space.error[0])
        if n >= SCAN_STATES:
            from verifier.analysis import compiled_scan
            self.scan_fallback = compiled_scan.scan(self, visitors, n)
            if not self.scan_fallback:
                self.scan_complete = n == len(packed)
                return
        expand = self._expand
        assert expand is not None, "explore() compiles the expander"
        active = [v for v in visitors if not v.done]
        for i, s in enumerate(itertools.islice(packed, n)):
            if i & 1023 == 1023:
                active = [v for v in active if not v.done]
            firings = expand(s)
            for v in active:
                v.visit(i, s, firings)
        self.scan_complete = n == len(packed)

    def release(self) -> None:
        """Drop what only the scan needed (the successor cache, the state index); the states,
        their parents and depths stay for traces and the comparison of variants."""
        self._cache.clear()
        if self.space is not None:
            self.space.release_lookups()

    # ---- concrete helpers (states packed, as the scan sees them)
    def expand(self, s: int) -> list[Firing]:
        """The firings of packed state `s` (cached: look-ahead checks revisit successors)."""
        out = self._cache.get(s)
        if out is None:
            if self._expand is None:        # a context sent from another process
                self._expand = compile_expander(self.layout).expand
            out = self._expand(s)
            if len(self._cache) >= EXPAND_CACHE:
                self._cache.clear()
            self._cache[s] = out
        return out

    def expand_uncached(self, s: int) -> list[Firing]:
        """The firings of packed state `s`, not kept (states visited once)."""
        if self._expand is None:
            self._expand = compile_expander(self.layout).expand
        return self._expand(s)

    def predicate(self, e: Expr) -> Callable[[int], bool]:
        """A compiled predicate of a packed state (cached by expression)."""
        fn = self._preds.get(e)
        if fn is None:
            fn = self._preds[e] = packed_predicate(self.layout, e)
        return fn

    def is_final(self, s: int) -> bool:
        return self.predicate(self.instance.end)(s)

    def unpack(self, s: int) -> State:
        """A packed state as a `semantics` state tuple."""
        return self.space.packing.unpack(s)

    def action(self, index: int) -> Action:
        return self.concrete.actions[index] if self.concrete is not None else self.model.actions[index]

    def trace_to(self, i: int, then: Iterable[tuple[int, tuple, int]] = ()) -> Trace:
        """Shortest trace to explored state `i`, extended by firings (action index, choice,
        packed target)."""
        states, firings = self.space.path_to(i)
        for a, choice, target in then:
            firings.append((self.action(a), choice))
            states.append(self.unpack(target))
        return build_trace(self.layout, states, firings)

    def show(self, state: State, slots: Iterable[str] | None = None) -> dict[str, Any]:
        """Slot name -> display value (true/false, enum names), optionally only some slots."""
        values = self.layout.as_dict(state)
        if slots is None:
            return dict(values.items())
        wanted = set(slots)
        return {k: v for k, v in values.items() if k in wanted}

    def slots_of(self, var_names: Iterable[str]) -> list[str]:
        names = set(var_names)
        return [s.name for s in self.layout.slots if s.var in names]

    # ---- words
    @property
    def variant(self) -> str | None:
        return self.model.variant

    def params_words(self) -> str:
        model = self.concrete or self.model.instantiate()
        return ", ".join(f"{k}={'*' if v is None else v}" for k, v in model.param_values)

    def scope_concrete(self) -> str:
        params = self.params_words()
        if not params:
            return "for all parameter values (the model has none)"
        return f"for these parameter values ({params})"

    def scope_search(self) -> str:
        """Scope words for a finding that rests on the whole explored space (e.g. "never fires")."""
        return self.scope_concrete() + f"; exhaustive search of {len(self.space.states):,} states"

    def phase(self, name: str | None) -> Phase | None:
        for p in self.model.phases:
            if p.name == name:
                return p
        return None

    def section(self, action: Action) -> str:
        """The rule section an action cites (or its phase's), for messages."""
        if action.rule is not None:
            return action.rule.section
        phase = self.phase(action.phase)
        if phase is not None and phase.rule is not None:
            return phase.rule.section
        return "the rules"

    def citations(self, *actions: Action) -> tuple[str, ...]:
        out: list[str] = []
        for a in actions:
            cite = a.rule
            if cite is None:
                phase = self.phase(a.phase)
                cite = phase.rule if phase is not None else None
            if cite is not None and str(cite) not in out:
                out.append(str(cite))
        return tuple(out)

    def phase_citation(self, phase: Phase) -> tuple[str, ...]:
        return (str(phase.rule),) if phase.rule is not None else ()

    def action_words(self, action: Action) -> str:
        if action.kind is ActionKind.ADVANCE:
            return f"leaving {action.phase}" + (f" for {action.target_phase}" if action.target_phase else "")
        if action.kind is ActionKind.TURN_END:
            return "passing the turn"
        return f"'{action.name}'"

    def relevant_slots(self, actions: Iterable[Action], limit: int = 6, effects: bool = False) -> list[str]:
        """The slots the guards of `actions` read (as written: without the phase and end-of-game
        conditions the phase sugar adds), and with `effects` what their effects read, but not
        the implicit phase and active player."""
        names: list[str] = []
        for a in actions:
            used = set(state_vars(own_guard(a, self.model)))
            if effects:
                for e in a.effects:
                    used |= state_vars(e.value)
            for v in sorted(used):
                if v not in names and v not in (PHASE_VAR, ACTIVE_VAR):
                    names.append(v)
        return self.slots_of(names)[:limit]

    def state_words(self, state: State, slots: Sequence[str]) -> str:
        """`cards in hand[0] = 3, mode = defend`: the slots in the model's display names (`Names`)."""
        said = self.names
        return ", ".join(f"{said.slot(k)} = {_word(said.value(k, v))}" for k, v in self.show(state, slots).items())

    @property
    def names(self) -> Names:
        """The model's display names (`label:`, `values:`), for the findings' sentences."""
        return Names.of(self.concrete or self.model)

    def who(self, state: State) -> str:
        if self.model.players > 1 and ACTIVE_VAR in self.layout.offsets:
            return f"player {state[self.layout.offsets[ACTIVE_VAR][0]]}"
        return "the player"

    def where(self, state: State) -> str:
        if PHASE_VAR in self.layout.offsets:
            return f" in {self.phase_of(state)}"
        return ""

    def phase_of(self, state: State) -> str | None:
        if PHASE_VAR not in self.layout.offsets:
            return None
        k = slot_index(self.layout, PHASE_VAR)
        return str(self.layout.display(self.layout.slots[k], state[k]))

    def finding(self, kind: str, subject: str, message: str, **kw) -> Finding:
        kw.setdefault("variant", self.variant)
        return Finding(kind, subject, message, **kw)


def taken(concrete: Model, budget: Budget, kept: Any) -> Any:
    """The claims' complete search `kept` (their ledger's) as the analyses read it (`takes`): a
    python-store `StateSpace` as it is, a compact-store one as `compact_states.CompactStates`, a
    compiled-store one as `compact_states.CompiledStates`; None where they explore themselves."""
    if not takes(concrete, budget, kept):
        return None
    if isinstance(kept, StateSpace):
        return kept
    from verifier.analysis.compact_states import CompactStates, CompiledStates
    if isinstance(kept, KeptCompact):
        return CompactStates(kept.space, kept.levels)
    return CompiledStates(kept)


def takes(concrete: Model, budget: Budget, kept: Any) -> bool:
    """Whether the analyses read the claims' complete search `kept` (None: there is none) instead of
    exploring: a python-store search always (their plan finishes in the python store too); a compact-
    or compiled-store one (`KeptCompact`, `CompiledSpace`) where their store plan finishes past the
    python store (not where --store compiled searched a model their plan keeps in the python store):
    every store finds the same states in the same order, so each stage before it stops where it would
    (the python store's while expanding the parent of the first state past its cap), and the stage it
    finishes in finds what the kept search found."""
    if kept is None:
        return False
    if isinstance(kept, StateSpace):
        return True
    plan = choose_store(concrete, budget)
    depth_of = kept.depth_of if not isinstance(kept, KeptCompact) else \
        partial(bisect_right, list(itertools.accumulate(len(level) for level in kept.levels)))
    k = plan.finishes_in(len(kept), lambda cap: max(0, depth_of(cap) - 1))
    return k is not None and plan.stages[k].store is not Store.PYTHON


def own_guard(action: Action, model: Model) -> Expr:
    """The guard as the designer wrote it: without the conjuncts the phase sugar adds
    (``not end``, and conditions on the implicit `phase` / `active` alone; a constant is the
    designer's, `when: "false"`)."""
    end = neg(model.end)
    parts = action.guard.args if isinstance(action.guard, App) and action.guard.op is Op.AND else (action.guard,)
    kept = [p for p in parts if p != end and not ((read := state_vars(p)) and read <= {PHASE_VAR, ACTIVE_VAR})]
    return conj(*kept)


def slot_index(lay: Layout, var: str) -> int:
    return lay.offsets[var][0]


def _word(v: Any) -> str:
    return str(v).lower() if isinstance(v, bool) else str(v)
