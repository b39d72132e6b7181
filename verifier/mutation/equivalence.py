"""Proving a mutant equivalent: the same reachable transition system as the original.

`behaviour` explores an instantiated model completely with the explicit engine
and digests what it reached: the initial states, every reachable state and
each state's labelled transitions (action name, choice, target state, or the
blocked firing of a gap), states as packed under the model's own encoding
(mutants never change the variables, so original and mutant pack alike). Two
equal digests (BLAKE2b, 32 bytes) mean the same reachable behaviour for these
parameter values: every claim and every finding that reads only behaviour
agrees. An incomplete search proves nothing (None); one stopped by a model error
raises it (`ModelError`): the model fails, no budget cut it short.
"""
from __future__ import annotations

import hashlib
from dataclasses import replace

from verifier.diagnostics import Diagnostic, ModelError
from verifier.engines.explicit import explore
from verifier.engines.ledger import Ledger
from verifier.ir.model import Model
from verifier.portfolio.stores import Store, cap_of
from verifier.resources import Budget, StopKind


def behaviour(model: Model, budget: Budget | None = None, ledger: Ledger | None = None) -> bytes | None:
    """The digest of `model`'s reachable transition system, or None when the search was cut short
    (the complete search the claims' check kept in `ledger`, when there is one; else a search in
    the python store, capped as the portfolio caps it)."""
    concrete = model.instantiate()
    budget = budget or Budget()
    capped = replace(budget, max_states=cap_of(Store.PYTHON, budget))       # the python store's cap, as a search's
    space = (ledger.search_of(concrete) if ledger is not None else None) or explore(concrete, capped)
    if not space.complete:
        if space.stop is not None and space.stop.kind is StopKind.MODEL_ERROR:
            raise ModelError(Diagnostic(space.stop.words, hint="the model itself fails in a state it reaches"))
        return None
    names = [a.name for a in concrete.actions]
    expand = space.expander().expand
    digest = hashlib.blake2b(digest_size=32)
    initial = sorted(x for x, parent in zip(space.packed, space.parent) if parent == -1)
    digest.update(repr(initial).encode())
    for x in sorted(space.packed):
        moves = sorted((names[a], tuple(choice), -1 if t is None else t, repr(gap))
                       for a, choice, t, gap in expand(x))
        digest.update(repr((x, moves)).encode())
    return digest.digest()
