"""Whether the readings of a model file are expected to search in the compiled store, or to run
the lasso search on the arrays, decided before the runner forks them, so that the compiled
code they share is loaded once, in the parent (`engines.compiled.ahead`), rather than in every
reading (0.6 to 0.7 s of CPU each).

A reading is expected to where its searches' store plan (`stores.choose_store`: the claims'
with `--engine auto` or a named store, the analyses') starts in the compiled store: a store named
so, or a search the plan expects to pass the python store's switch (`stores.passes_switch`: the
reading's parameter values are above the model's defaults, which its checks are sized for, and
its slots allow more states than the switch), so that it leaves the python stage out. Each
shipped game whose printed numbers are above its defaults searches in the compiled store there;
Alpha Clash, whose page prints no numbers, never does, and no shipped game does at its defaults.
The rule reads the models, the claims' kinds and the options only, never the time, the load or
the compile cache. It decides only what is loaded where, never a verdict: a reading the rule
misjudges loads the code itself (as every reading did before), or the parent loaded it for
nothing (once).

The lasso kernels (`compiled/cycles.py`) serve any store: termination and obligation claims are
decided on the arrays from `lasso.LARGE_REGION` states or transitions on, whichever store searched.
They are loaded ahead where some reading searched explicitly has such a claim and its slots' ranges
allow that many states or transitions (`states_bound`, times its actions: at most one transition
per action and state), as the shipped games' readings at their defaults do.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from verifier.engines.lasso import LARGE_REGION
from verifier.ir.model import Model
from verifier.ir.props import Obligation, Property, Terminates
from verifier.portfolio.stores import Store, choose_store, states_bound, words_of
from verifier.resources import Budget

SEARCHING = ("auto", "explicit")    # the engines that search explicitly (`decide.make_engine`)


@dataclass(frozen=True)
class CompiledAhead:
    """What the parent loads: the search loop for states of each of `words` words and, with
    `graphs` (termination or obligation claims), the state graph's code and lasso kernels; with
    `lasso`, the lasso kernels (also where no reading searches in the compiled store)."""

    words: tuple[int, ...]
    graphs: bool
    lasso: bool = False


def compiled_ahead(models: Sequence[Model], claims: Sequence[Sequence[Property]], budget: Budget,
                   engine: str = "auto", store: str | None = None, consistency: bool = True) -> CompiledAhead | None:
    """What of the compiled code the readings `models` (with their `claims`) are expected to use
    (the module doc's rule), None where none is expected to use any. `engine`, `store`:
    the claims' engine and the store named for them (--engine, --store); `consistency`: the
    analyses run (they explore with the store policy's own plan)."""
    words: set[int] = set()
    graphs = lasso = False
    for model, props in zip(models, claims):
        if not model.is_concrete:
            continue
        on_graphs = any(isinstance(p, (Terminates, Obligation)) for p in props)
        lasso = lasso or (on_graphs and engine in SEARCHING and _large_graph(model))
        if _expected(model, budget, engine, store, consistency):
            words.add(words_of(model.instantiate()))
            graphs = graphs or on_graphs
    return CompiledAhead(tuple(sorted(words)), graphs, lasso) if words or lasso else None


def _large_graph(model: Model) -> bool:
    """The reading's slots allow `LARGE_REGION` states or transitions (the lasso search on arrays)."""
    concrete = model.instantiate()
    return states_bound(concrete, LARGE_REGION) * max(1, len(concrete.actions)) >= LARGE_REGION


def _expected(model: Model, budget: Budget, engine: str, store: str | None, consistency: bool) -> bool:
    concrete = model.instantiate()
    plans = []
    if engine in SEARCHING and (store is not None or engine == "auto"):
        plans.append(choose_store(concrete, budget, None if store is None else Store(store)))
    if consistency:
        plans.append(choose_store(concrete, budget))
    return any(plan.first is Store.COMPILED for plan in plans)
