"""The one store policy: which store an explicit search keeps its states in, and how many.

Used by the claims' searches (`auto.AutoEngine`) and by the analyses' own exploration
(`analysis.context`), so that both stop at the same states on every machine. The rule
(`choose_store`), in order:

1. a store the user named (--store, --workers) is used as given;
2. a model whose state does not fit the compact store's 64-bit words (a variable wider
   than a word) stays in the python store;
3. a model that extends one whose search here already passed the switch (a monitor
   product of it) goes to the compact store directly;
4. else the python store (the reference) first, up to SWITCH_STATES states; a search
   that passes them goes on in the compact store (the same states in the same order, so
   the same verdicts and traces), which the termination and obligation claims do not
   take (they need the python store's edges: `auto` keeps them there under PYTHON_STATES),
   where its levels are wide enough for the compact store to pay off (`goes_on`: a deep,
   narrow search, one variable counting up through a wide range, stays where it stopped).

Every cap is a number of states (`cap_of`), never past --max-states, and the same at any
load. A third store (the compiled one, `engines/compiled/`) joins by a rule here.
"""
from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from verifier.ir.model import Model
from verifier.resources import Budget

PYTHON_STATES = 2_000_000       # the python store's cap
SWITCH_STATES = 250_000         # a python-store search that passes this many states goes on in the compact store ...
COMPACT_STATES = 16_000_000     # ... capped there at this many (8 bytes a state and the table)
COMPILED_STATES = 16_000_000    # the compiled store's cap


class Store(StrEnum):
    """The explicit search's stores (`SearchOptions.store`, `--store`)."""

    PYTHON = "python"           # the reference: states as Python ints, edges on demand
    COMPACT = "compact"         # packed states in numpy arrays, level at a time
    COMPILED = "compiled"       # the Numba loop over one 63-bit word


@dataclass(frozen=True)
class Caps:
    """The state caps of the stores and the switch between them (tests lower them)."""

    python: int = PYTHON_STATES
    switch: int = SWITCH_STATES
    compact: int = COMPACT_STATES
    compiled: int = COMPILED_STATES

    @classmethod
    def every_store(cls, states: int) -> Caps:
        """One cap for every store (the switch where it was)."""
        return cls(python=states, compact=states, compiled=states)

    def of(self, store: Store) -> int:
        return {Store.PYTHON: self.python, Store.COMPACT: self.compact, Store.COMPILED: self.compiled}[store]


@dataclass(frozen=True)
class StorePlan:
    """Where one search keeps its states: `first` up to `cap` states; where `then` is set, a
    search that reaches `cap` goes on in `then` up to `then_cap` (the switch)."""

    first: Store
    cap: int
    then: Store | None = None
    then_cap: int = 0

    @property
    def why(self) -> str:
        """The rule that chose it, in words (a verdict's evidence)."""
        if self.then is None:
            return f"the {self.first} store, capped at {self.cap:,} states"
        return (f"the {self.first} store up to {self.cap:,} states, then the {self.then} store "
                f"up to {self.then_cap:,}")


def cap_of(store: Store, budget: Budget, caps: Caps = Caps()) -> int:
    """The state cap of a search in `store`: the store's own, never past --max-states."""
    cap = caps.of(store)
    return cap if budget.max_states is None else min(cap, budget.max_states)


def choose_store(model: Model, budget: Budget, named: Store | None = None, extends_big: bool = False,
                 caps: Caps = Caps()) -> StorePlan:
    """The store plan of an explicit search of `model` (the module doc's rule): `named` the store
    the user gave, `extends_big` whether `model` extends one whose search here passed the switch."""
    if named is not None:
        return StorePlan(named, cap_of(named, budget, caps))
    from verifier.engines.compact import fits  # numpy only once a search is planned (the CLI help reads the caps)

    python = cap_of(Store.PYTHON, budget, caps)
    if not fits(model.instantiate()):
        return StorePlan(Store.PYTHON, python)
    if extends_big:
        return StorePlan(Store.COMPACT, cap_of(Store.COMPACT, budget, caps))
    if caps.switch >= python:
        return StorePlan(Store.PYTHON, python)
    return StorePlan(Store.PYTHON, caps.switch, Store.COMPACT, cap_of(Store.COMPACT, budget, caps))


def goes_on(plan: StorePlan, states: int, depth: int) -> bool:
    """Whether a search in `plan.first` that stopped with `states` states in `depth` levels goes on
    in `plan.then`: it reached the switch, and (for the compact store) its levels are wide enough
    (`compact.pays_off`: a level costs the compact store as much however few states it holds)."""
    if plan.then is None or states < plan.cap:
        return False
    if plan.then is not Store.COMPACT:
        return True
    from verifier.engines.compact import pays_off  # numpy, once a search is this large

    return pays_off(states, depth)
