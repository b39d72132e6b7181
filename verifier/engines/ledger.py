"""One reading's ledger: the complete searches its engines ran, kept for the passes over the same
states that follow (the consistency analyses, vacuity, mutation's equivalence digest), and the results
decided so far (kept when the run's backstop cuts a later step). Made per reading by the runner and
handed explicitly to the engines, the analyses, vacuity and mutation: plain data, no context
variables and no callbacks (the runner reads it between the portfolio's steps, `Portfolio.steps`).

A search in the python store is kept as its `StateSpace` (`search_of`); one in the compact store
with its states in BFS order (`KeptCompact`, asked for with `wants_order`), and one in the compiled
store as its `CompiledSpace` (`compiled_search_of`), which the analyses read where their own store
plan would have ended past the python store (`analysis.context.takes`)."""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from verifier.engines.statespace import StateSpace
from verifier.ir.model import Model
from verifier.resources import StopKind
from verifier.result import CheckResult

if TYPE_CHECKING:
    import numpy as np

    from verifier.engines.compact import CompactSpace
    from verifier.engines.compiled.arrays import EdgeArrays
    from verifier.engines.compiled.product import GraphProduct
    from verifier.engines.compiled.search import CompiledSpace


@dataclass(frozen=True)
class KeptCompact:
    """A complete compact-store search and its states in BFS order, one array per level (the
    `order` its search filled)."""

    space: CompactSpace
    levels: list[np.ndarray]

    @property
    def complete(self) -> bool:
        return self.space.complete

    @property
    def reductions(self) -> tuple[str, ...]:
        return self.space.reductions

    def __len__(self) -> int:
        return len(self.space)


@dataclass
class Ledger:
    wanted: dict[Model, StateSpace | None] = field(default_factory=dict)   # instantiated models -> kept search
    compiled: dict[Model, CompiledSpace | KeptCompact] = field(default_factory=dict)   # ... their search past the
    # python store (the compiled store's, else the compact store's: the first one kept)
    record: dict[str, CheckResult] | None = None    # where final results go before their engine returns (by claim id)
    graph_wanted: set[Model] = field(default_factory=set)   # models whose compiled search records its graph for the
    # monitor products that follow (`compiled.product`), kept in `graphs` with the search
    graphs: dict[Model, EdgeArrays] = field(default_factory=dict)
    products: dict[Model, GraphProduct] = field(default_factory=dict)   # instantiated products offered to be searched
    # over their model's graph (by the portfolio, for one check)
    stored: dict[Model, int] = field(default_factory=dict)   # wanted models -> the most states a search of it offered
    # to `keep` stored, complete or not (so it has at least that many reachable states)
    keeps_capped: bool = False        # whether `capped` is kept (the analyses run after the claims, on this ledger)
    capped: dict[Model, CompiledSpace] = field(default_factory=dict)   # wanted models -> their first compiled-store
    # search that its state cap stopped (unreduced), which the analyses read where their own would stop at that cap
    mined: dict[Model, tuple[np.ndarray, dict]] = field(default_factory=dict)   # wanted models -> the states the
    # claims' Z3 mines lemmas from where their search stopped, and the memo it keeps what it mined in (kept with `capped`)

    @classmethod
    def keeping(cls, models: Iterable[Model], capped: bool = False) -> Ledger:
        """A ledger that keeps the complete searches of these (instantiated) models, and with `capped`
        their compiled searches a state cap stopped."""
        return cls(dict.fromkeys(models), keeps_capped=capped)

    def wants_order(self, model: Model) -> bool:
        """Whether a compact-store search of `model` should keep its states in BFS order for `keep`
        (it is wanted and no search past the python store is kept yet: 8 bytes a state)."""
        return model in self.wanted and model not in self.compiled

    def keep(self, model: Model, space: StateSpace | CompiledSpace | KeptCompact) -> None:
        """Keep `space` as `model`'s search where it is wanted, complete and unreduced (the first one
        of the python store, the first one past it), or as its `capped` search (a compiled one its state
        cap stopped); count its states in `stored` where it is wanted."""
        if model not in self.wanted:
            return
        self.stored[model] = max(self.stored.get(model, 0), len(space))
        if space.reductions:
            return
        if not space.complete:
            if self.keeps_capped and not isinstance(space, (StateSpace, KeptCompact)) and space.stop is not None \
                    and space.stop.kind is StopKind.STATES:
                self.capped.setdefault(model, space)
            return
        if isinstance(space, StateSpace):
            if self.wanted[model] is None:
                self.wanted[model] = space
        elif self.compiled.setdefault(model, space) is space and model in self.graph_wanted:
            edges = getattr(space, "edges", None)
            if edges is not None:
                self.graphs[model] = edges

    def wants_graph(self, model: Model) -> bool:
        """Whether a compiled search of `model` should record its state graph for the products after it."""
        return model in self.graph_wanted and model in self.wanted and model not in self.compiled

    def graph_of(self, model: Model) -> tuple[CompiledSpace, EdgeArrays] | None:
        """The complete compiled search of `model` kept here and the state graph it recorded, if any."""
        space, edges = self.compiled.get(model), self.graphs.get(model)
        if edges is None or space is None or isinstance(space, KeptCompact):
            return None
        return space, edges

    def mines_from(self, model: Model, states: np.ndarray, memo: dict) -> None:
        """The claims' Z3 mines lemmas of `model` from `states` into `memo` (a `symbolic.mined.Mined` under
        "mined", once mined): kept for the analyses beyond the search (`keeps_capped`), which mine the same states."""
        if self.keeps_capped and model in self.wanted:
            self.mined.setdefault(model, (states, memo))

    def mined_of(self, model: Model) -> tuple[np.ndarray, dict] | None:
        """The states the claims' Z3 mines lemmas of `model` from and its memo, kept here (`mines_from`), if any."""
        return self.mined.get(model)

    def capped_search_of(self, model: Model) -> CompiledSpace | None:
        """The compiled search of `model` its state cap stopped, kept here (`keeps_capped`), if any."""
        return self.capped.get(model)

    def search_of(self, model: Model) -> StateSpace | None:
        """The complete python-store search of `model` kept here, if any."""
        return self.wanted.get(model)

    def compiled_search_of(self, model: Model) -> CompiledSpace | KeptCompact | None:
        """The complete search of `model` past the python store kept here (compiled or compact), if any."""
        return self.compiled.get(model)

    def complete_search_of(self, model: Model) -> StateSpace | CompiledSpace | KeptCompact | None:
        """The complete search of `model` kept here in any store (the python store's first)."""
        return self.search_of(model) or self.compiled_search_of(model)

    def decided(self, results: Iterable[CheckResult]) -> None:
        """Final results an engine hands on before it returns: into `record` where the portfolio
        opened one (the first result of a claim stays)."""
        if self.record is not None:
            for r in results:
                self.record.setdefault(r.property.id, r)
