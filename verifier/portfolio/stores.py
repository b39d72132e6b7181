"""The one store policy: which store an explicit search keeps its states in, and how many.

Used by the claims' searches (`auto.AutoEngine`) and by the analyses' own exploration
(`analysis.context`), so that both stop at the same states on every machine. The rule
(`choose_store`), in order:

1. a store the user named (--store, --workers) is used as given;
2. a model whose state does not fit the compact store's 64-bit words (a variable wider
   than a word) stays in the python store;
3. a model that extends one whose search here went on past the python store (a monitor
   product of it) starts in the store where that search ended (or the one past it), the
   compiled store's cap at least PRODUCT_FACTOR times the states that search found
   (`Caps.for_product`);
4. else a plan of at most two stages (`StorePlan.stages`), each a store and the states at which the
   search hands over to the next (`StorePlan.after`), which starts again there (the same
   states in the same order, so the same verdicts and shortest traces):
   - the python store (the reference) up to SWITCH_STATES;
   - then the compiled store (`engines/compiled/`) up to COMPILED_STATES where it can hold
     the model (`compiles`), else the compact store up to COMPACT_STATES where its levels are
     wide enough for it to pay off (`compact.pays_off`; a deep, narrow search of a model the
     compiled store cannot hold stops at the switch). The compiled store cannot hold a model
     with a predicate it cannot compile or more than MAX_WORDS words
     (`compiled.search.why_not`). The analyses' scan of 1 M states or more is compiled too
     (`analysis.compiled_scan`).
   The termination and obligation claims go with the state claims to the compiled store
   (its state graph, `compiled/graph.py`), but not to the compact store (they need the
   python store's edges: `auto` keeps them there under PYTHON_STATES).
5. but a search expected to pass the switch (`passes_switch`) leaves the python stage out and
   starts in the compiled store (`StorePlan.skipped`): a model checked above its declared
   defaults (`above_defaults`: the values its checks are sized for; `--printed`, `-p`) whose
   slots allow more states than the switch (`states_bound`, the product of their ranges).
   Every store finds the same states in the same order, so the verdicts, reasons, depths and
   traces are the stages'; what changes for a claim the python stage used to decide is the
   engine named (explicit/compiled), its search's stats and the evidence's words. A monitor
   product of such a search starts there too (rule 3, where it found at least the switch's
   states), and Z3 mines, where the search stops, the states the python stage would have stored
   (`auto.FirstStates`). The rule reads the model and the options only: a misjudged search (one
   that ends under the switch) costs time (a compile), never a verdict. The shipped games at
   their printed numbers (Alice, Shadow Era, Aeon's End, WTactics) leave it out; at their
   defaults (the main job's) none does, so the main job compiles nothing.

The rule reads sizes only (states, depth, words) and what the model is (`compiles` reads
the model, not the compile cache): never whether the compiled code is in the disk cache, nor
how fast the machine is, so a verdict names the same store on every machine. The thresholds,
measured (bench/README.md, "The store policy" and "The plan without the compact stage"): the
compiled search expands about 4.5 M states a CPU second, the compact store 0.3 to 0.45 M on
game-shaped models and the python store 0.2 to 0.3 M; a cold compile of a model's module
costs 4 to 8 s of CPU, a warm start under 1 s. A search that passes the switch would, in
the compact store, have spent about a cold compile's CPU by 2 M states and then searched
again compiled, so a compiling model goes from the python store to the compiled store
directly. SWITCH_STATES is a trade-off: the python stage's search to 250 k states costs 1.1
to 1.6 s of CPU a reading of a shipped game at its printed numbers (Shadow Era, Alice; 1.3 to
1.9 s before the search loop's watches and code generation were made cheaper, bench/README.md
"The python stage"), which rule 5 now saves there; but the shipped games'
searches at their defaults (the main job's) reach 180 k states (a WTactics monitor product;
Alpha Clash 123 k, Shadow Era 116 k, Alice 109 k, Aeon's End 50 k), and below that every one
of them would compile a module cold in CI (4 to 8 s of CPU each) for a search the python
store finishes in under a second. At 250 k the main job compiles none.

Every cap is a number of states (`cap_of`), never past --max-states, and the same at any
load. With --max-memory the compiled store's cap follows it (`states_in`): never more than the
states whose arrays (16 bytes a state of one word of the cap at the search's peak, 8.5 more a
further word: `engines/compiled/arrays.py`) take MEMORY_SHARE of it, so that a search stops at a cap
the option and the model decide (never the memory free, the CPUs or the load) before the memory
guard would cut it; it never raises a cap: searching on past 16 M was measured to cost more than
it saves (WTactics 7/7/13, bench/README "The new user's large WTactics line"). The memory guard
still bounds the whole run, and what it stops is UNKNOWN with its reason.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from enum import StrEnum

from verifier.ir.model import Model
from verifier.resources import Budget

PYTHON_STATES = 2_000_000       # the python store's cap
SWITCH_STATES = 250_000         # a python-store search that passes this many states goes on in the compiled store
#                                 (the compact store where the compiled one cannot hold the model)
COMPACT_STATES = 16_000_000     # the compact store's cap (8 bytes a state and the table)
COMPILED_STATES = 16_000_000    # the compiled store's cap
PRODUCT_FACTOR = 3              # a monitor product of a search of N states: the compiled store's cap at least N times
PRODUCT_STATES = 48_000_000     # this (the monitors only observe, so its states are N times the monitors' states
#                                 reached together, at most; Aeon's End's 41 monitors: 2.2 times), up to this many
MEMORY_SHARE = 0.08             # with --max-memory: the share of it one compiled search's states may take at most. A reading
#                                 whose search completes holds about 100 bytes a one-word state in all (the search's
#                                 16, the state graph's 22 and 8 a transition, the states pickled for the parent, the
#                                 analyses' own search beside it) and two readings may run at once: WTactics 7/7/13's
#                                 literal reading with 0.4 under --max-memory 5000 (131 M states held; its 128.6 M
#                                 searched) took 243 s of CPU and 4.9 GB where stopping at 16 M took 119 s and 1.7 GB,
#                                 and the analyses' child ran out of memory sending its states
STATE_BYTES = 16.0              # the compiled store's bytes a state of one word of its cap at its peak (compiled/arrays.py)
WORD_BYTES = 8.5                # and a further word's
MAX_COMPILED_STATES = 3_400_000_000   # the most one visited table indexes (2^32 slots, 80 % full)
MB = 1 << 20


class Store(StrEnum):
    """The explicit search's stores (`SearchOptions.store`, `--store`)."""

    PYTHON = "python"           # the reference: states as Python ints, edges on demand
    COMPACT = "compact"         # packed states in numpy arrays, level at a time
    COMPILED = "compiled"       # packed states, searched state by state in Numba-compiled code


@dataclass(frozen=True)
class Caps:
    """The state caps of the stores and the switch between them (tests lower them)."""

    python: int = PYTHON_STATES
    switch: int = SWITCH_STATES
    compact: int = COMPACT_STATES
    compiled: int = COMPILED_STATES
    by_memory: bool = True      # with --max-memory, the compiled store's cap is at most what it holds (`compiled_for`)

    @classmethod
    def every_store(cls, states: int) -> Caps:
        """One cap for every store (the switch where it was)."""
        return cls(python=states, compact=states, compiled=states)

    def of(self, store: Store) -> int:
        return {Store.PYTHON: self.python, Store.COMPACT: self.compact, Store.COMPILED: self.compiled}[store]

    def compiled_for(self, words: int, max_memory_mb: int | None) -> int:
        """The compiled store's cap for states of `words` 64-bit words: `compiled`, and with
        --max-memory (and `by_memory`) at most what it holds (`states_in`)."""
        if max_memory_mb is None or not self.by_memory:
            return self.compiled
        return min(self.compiled, states_in(max_memory_mb, words))

    def follows_memory(self, store: Store, budget: Budget) -> bool:
        """Whether a search in `store` under `budget` is capped at what --max-memory holds."""
        return store is Store.COMPILED and budget.max_memory_mb is not None and self.by_memory

    def for_product(self, states: int) -> Caps:
        """The caps of a monitor product of a model whose search found `states` states: the
        compiled store's at least PRODUCT_FACTOR times that (up to PRODUCT_STATES), so that a
        product that is a few times its model completes rather than stopping at the cap a search
        of the model itself has."""
        return replace(self, compiled=max(self.compiled, min(PRODUCT_FACTOR * states, PRODUCT_STATES)))

    def hand_over(self, store: Store) -> int | None:
        """The states at which a search in `store` goes on in the next store of a plan (None: the last)."""
        return self.switch if store is Store.PYTHON else None


@dataclass(frozen=True)
class Stage:
    """One store of a plan and the states its search stops at (where the next stage goes on)."""

    store: Store
    cap: int


@dataclass(frozen=True)
class StorePlan:
    """Where one search keeps its states: the first stage's store up to its cap; a search that
    reaches a stage's cap goes on in a later stage (`after`). `skipped`: the switch of the python
    stage the plan leaves out (`passes_switch`; 0 where it leaves none out): a search of the plan
    that stores that many states is one the python stage would have handed over."""

    stages: tuple[Stage, ...]
    skipped: int = 0

    @property
    def first(self) -> Store:
        return self.stages[0].store

    @property
    def cap(self) -> int:
        """The first stage's cap."""
        return self.stages[0].cap

    @property
    def why(self) -> str:
        """The rule that chose it, in words (a verdict's evidence)."""
        if len(self.stages) == 1:
            return f"the {self.first} store, capped at {self.cap:,} states"
        steps = [f"the {s.store} store up to {s.cap:,} states" for s in self.stages]
        return ", then ".join(steps)

    def after(self, k: int, states: int, depth: int) -> int | None:
        """The stage a search in stage `k` that stopped with `states` states in `depth` levels goes on
        in: none where it stopped short of the stage's cap (it finished, or something else stopped
        it); the next, unless that is the compact store and the levels are too narrow for it to pay
        off (`compact.pays_off`: a level costs it as much however few states it holds)."""
        if k + 1 >= len(self.stages) or states < self.stages[k].cap:
            return None
        if self.stages[k + 1].store is Store.COMPACT:
            from verifier.engines.compact import pays_off  # numpy, once a search is this large

            if not pays_off(states, depth):
                return None
        return k + 1

    def finishes_in(self, states: int, python_depth: Callable[[int], int]) -> int | None:
        """The stage in which the plan's search of a model that has `states` reachable states
        (an unreduced search: every store finds the same states in the same order) finishes;
        None where a stage's cap stops it and no stage goes on. Each earlier stage stops at its
        cap (`after`), the python store's in the depth `python_depth(cap)` gives."""
        k = 0
        while states > self.stages[k].cap:
            cap = self.stages[k].cap
            nxt = self.after(k, cap, python_depth(cap) if self.stages[k].store is Store.PYTHON else 0)
            if nxt is None:
                return None
            k = nxt
        return k


ORDER = (Store.PYTHON, Store.COMPACT, Store.COMPILED)


def states_in(max_memory_mb: int, words: int) -> int:
    """The compiled store's states of `words` words whose arrays take MEMORY_SHARE of `max_memory_mb`
    (at least one, at most what one visited table indexes)."""
    held = STATE_BYTES + WORD_BYTES * (max(1, words) - 1)
    return max(1, min(MAX_COMPILED_STATES, int(max_memory_mb * MB * MEMORY_SHARE / held)))


def cap_of(store: Store, budget: Budget, caps: Caps = Caps(), words: int = 1) -> int:
    """The state cap of a search in `store` of states of `words` words: the store's own (the
    compiled store's follows --max-memory, `Caps.compiled_for`), never past --max-states."""
    cap = caps.compiled_for(words, budget.max_memory_mb) if store is Store.COMPILED else caps.of(store)
    return cap if budget.max_states is None else min(cap, budget.max_states)


def choose_store(model: Model, budget: Budget, named: Store | None = None, extends: Store | None = None,
                 caps: Caps = Caps()) -> StorePlan:
    """The store plan of an explicit search of `model` (the module doc's rule): `named` the store
    the user gave, `extends` the store where the search of a model `model` extends ended here."""
    concrete = model.instantiate() if named in (None, Store.COMPILED) else None
    words = 0 if concrete is None else words_of(concrete)
    if named is not None:
        return StorePlan((Stage(named, cap_of(named, budget, caps, words)),))
    assert concrete is not None
    if not words:
        return StorePlan((Stage(Store.PYTHON, cap_of(Store.PYTHON, budget, caps)),))
    stores = [Store.PYTHON, Store.COMPILED if compiles(concrete) else Store.COMPACT]
    if extends is not None:      # from the store where the search it extends ended, or the one past it
        stores = [s for s in stores if ORDER.index(s) >= ORDER.index(extends)] or stores
    elif stores[1] is Store.COMPILED and caps.switch < cap_of(Store.PYTHON, budget, caps) \
            and passes_switch(concrete, caps.switch):
        compiled = Stage(Store.COMPILED, cap_of(Store.COMPILED, budget, caps, words))
        return StorePlan((compiled,), skipped=caps.switch)
    stages: list[Stage] = []
    for i, store in enumerate(stores):
        cap, hand_over = cap_of(store, budget, caps, words), caps.hand_over(store)
        if i + 1 == len(stores) or hand_over is None or hand_over >= cap:
            stages.append(Stage(store, cap))
            break
        stages.append(Stage(store, hand_over))
    return StorePlan(tuple(stages))


def passes_switch(model: Model, switch: int = SWITCH_STATES) -> bool:
    """Whether a search of this instantiated model is expected to pass `switch` states, from the
    model alone: its parameter values are above its declared defaults (`above_defaults`), and its
    slots' ranges allow more than `switch` states (a bound no search passes)."""
    return above_defaults(model) and states_bound(model, switch) > switch


def above_defaults(model: Model) -> bool:
    """Some parameter of `model` has a value above its declared default."""
    values = model.params_dict
    return any((v := values.get(p.name)) is not None and v > p.default for p in model.params)


def states_bound(model: Model, past: int) -> int:
    """The states this instantiated model's slots can hold together (the product of their ranges),
    counted up to the first product past `past`."""
    from verifier.semantics import layout

    bound = 1
    for slot in layout(model).slots:
        bound *= max(1, slot.hi - slot.lo + 1)
        if bound > past:
            break
    return bound


def words_of(model: Model) -> int:
    """The 64-bit words a state of this instantiated model takes in the compact and compiled stores
    (0: a variable wider than a word, which only the python store holds)."""
    from verifier.engines.bfsgen import packing_of  # numpy only once a search is planned (the CLI help reads the caps)
    from verifier.semantics import layout

    return packing_of(layout(model)).words


def compiles(model: Model) -> bool:
    """Whether the compiled store can search this instantiated model (`compiled.search.why_not`)."""
    from verifier.engines.compiled.search import why_not  # numpy and the code generator, once a search is planned

    return why_not(model) == ""
